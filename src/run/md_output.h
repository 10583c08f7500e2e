/* run/md_output.h — what `putmd run` writes: NAME.log, NAME.csv (energies),
 * NAME.xtc, NAME.trr and NAME.gro, each only when the mdp asks for it
 * (the log and the final .gro always). Existing files are kept as
 * #NAME.ext.N# backups. Also the progress line on the terminal.
 */
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "io/energy_file.h"
#include "io/trajectory.h"

namespace putmd
{

/* One row of everything reported at a step. */
struct StepEnergies
{
    EnergyTerms terms;
    double      kinetic = 0, total = 0, conserved = 0, temperature = 0, pressure = 0;
    double      pressureDC = 0;
    Box         box;
    double      density = 0; // kg/m^3
};

class MdLog
{
public:
    /* An empty path writes nothing; append continues an existing log. */
    explicit MdLog(const std::string& path, bool append = false);
    ~MdLog();
    void line(const std::string& text);
    void energies(long step, double time, const StepEnergies& e);
    /* The averages block at the end of a run. */
    void averages(const std::vector<std::string>& names, const std::vector<double>& sums, long count);
    const std::string& path() const { return path_; }

private:
    std::FILE*  file_ = nullptr;
    std::string path_;
};

/* Column names of the energy file for the terms present. */
std::vector<std::string> energyColumns(const EnergyTerms& present, bool withPressureDC);
std::vector<double>      energyRow(const StepEnergies& e, bool withPressureDC);

class Progress
{
public:
    Progress(long nsteps, double dt);
    void update(long step, bool force = false);
    void finish();
    double nsPerDay(long stepsDone) const;
    double elapsedSeconds() const;
    /* Ranks other than the first print no progress. */
    void setQuiet(bool quiet) { quiet_ = quiet; }

private:
    bool                                  quiet_ = false;
    long                                  nsteps_;
    double                                dt_;
    bool                                  terminal_;
    std::chrono::steady_clock::time_point start_; // the run's clock (clockNow(): simulated under SMPI)
    // real time, for when to print and the time left: under SimGrid's SMPI
    // the run's clock is the simulated one, which a watching user does not
    // wait by (a simulated step of 70 ms can take minutes)
    std::chrono::steady_clock::time_point realStart_;
    std::chrono::steady_clock::time_point lastPrint_;
    int                                   lastPercent_ = -1;
};

} // namespace putmd
