/* run/md_run.h — the MD run's object, shared by the files that implement
 * it (inside run/ only; users call runMd in md_runner.h):
 *   md_runner.cpp     set-up, outputs, update, energies and the two
 *                     integrator loops;
 *   md_coupling.cpp   thermostats, barostats (Parrinello-Rahman's halves
 *                     around the update) and frozen atoms;
 *   md_finish.cpp     the end of the run: final state, summary, performance
 *                     report;
 *   md_checkpoint.cpp writing checkpoints and continuing from one;
 *   md_checks.cpp     blow-up checks and the last good frame;
 *   md_parallel.cpp   what domain decomposition adds: home-atom arrays,
 *                     reductions, collective counts (the performance report
 *                     with the communication table is timing/perf_report.h).
 */
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "comm/communicator.h"
#include "fft/fft3d.h"
#include "io/checkpoint.h"
#include "io/trajectory.h"
#include "io/edr_file.h"
#include "io/energy_file.h"
#include "domdec/dlb_switch.h"
#include "run/force_calculator.h"
#include "run/md_output.h"
#include "run/energy_groups.h"
#include "run/md_runner.h"
#include "run/md_setup.h"
#include "timing/stage_timer.h"
#include "update/constraints.h"
#include "update/coupling.h"

namespace putmd::md_detail
{

using RVec = Vec3<real>;

inline bool every(long step, int interval)
{
    return interval > 0 && step % interval == 0;
}

/* A seed from the clock (seed -1) differs between ranks: use rank 0's. */
uint64_t agreedSeed(comm::Communicator* comm, uint64_t seed);

class MdRun
{
public:
    MdRun(const SystemInputs& in, const RunOptions& options);
    void         run();
    MdFinalState finalState() const { return final_; }

private:
    void   openOutputs();
    void   writeHeader();
    void   writeTrajectory(long step, const ForceOutput& forces);
    double couplingLambdas(long step, std::vector<double>& lambda);
    void   leapFrogUpdate(const std::vector<double>& lambda, const ForceOutput& forces, bool computeE);
    void   pressureCoupling(long step, const Matrix3& pressure, double temperature, const Matrix3& virial,
                            const Matrix3& kinetic, bool apply);
    Matrix3 groupKinetic(std::vector<double>* perGroup) const;
    Matrix3 scaledKinetic(const Matrix3& unscaled, const std::vector<double>& lambda) const;
    StepEnergies energies(const ForceOutput& forces, const Matrix3& kinetic, const Matrix3& virial) const;

    const SystemInputs& in_;
    const MdpOptions& mdp_;
    const Topology&   top_;
    RunOptions        options_;
    long              nsteps_;
    MdSettings        settings_;
    std::vector<double> mass_;
    std::vector<real>   invMass_;
    std::unique_ptr<Constraints>     constraints_;
    std::unique_ptr<ForceCalculator> forces_;
    std::vector<RVec> x_, v_, xprime_;
    Box               box_;
    double            thermostatIntegral_ = 0, barostatIntegral_ = 0;
    // Parrinello-Rahman: the box's velocity, and this step's matrices when
    // it is a step that applies the barostat (see coupling.h)
    ParrinelloRahman pr_;
    bool             prApply_ = false;
    Matrix3          prM_, prMu_;
    Box              prNextBox_;
    void             parrinelloRahmanStart(long step);
    void             parrinelloRahmanFinish(long step, bool pressureComputed, const Matrix3& pressure);
    std::vector<NoseHooverState> noseHoover_;
    void              runLeapFrog();
    bool              stopHere(long step, const Progress& progress);
    std::string       stopReason_;
    void              finishRun(const Progress& progress);
    void              runVelocityVerlet();
    void              outputEnergies(long step, bool last, const ForceOutput& forces, const Matrix3& kinetic,
                                     const Matrix3& constraintVirial, bool computeE, Matrix3* pressureOut, double* temperatureOut,
                                     Matrix3* virialOut = nullptr, Matrix3* kineticOut = nullptr);
    double            totalMass_ = 0;
    Matrix3           constraintVirial_;
    std::unique_ptr<MdLog>      log_;
    std::unique_ptr<EnergyFile> energyFile_;
    std::unique_ptr<EdrFile>    edrFile_; // the same rows in GROMACS's .edr format
    std::unique_ptr<XtcWriter>  xtc_;
    std::vector<int>            xtcAtoms_; // compressed-x-grps; empty: all atoms
    std::vector<RVec>           xtcBuffer_;
    std::unique_ptr<TrrWriter>  trr_;
    mutable StageTimers         timers_; // mutable: the const reduce() times itself
    std::vector<std::string>    averageNames_;
    std::vector<double>         averageSums_;
    long                        averageCount_ = 0;
    long                        stepsDone_ = 0;

    // domain decomposition (null on one rank without -dd)
    comm::Communicator*                  comm_ = nullptr;
    std::unique_ptr<DomainDecomposition> dd_;
    EnergyGroups                         energyGroups_; // energygrps (one rank): group-pair terms in the outputs
    std::unique_ptr<PmeClient>           pmeClient_; // separate PME ranks
    bool                                 root_ = true; // writes the outputs
    ConstraintSettings                   constraintSettings_;
    std::vector<int>                     tcGroup_; // coupling group of each (home) atom
    std::vector<uint8_t>                 freeze_;  // frozen dimensions of each (home) atom; empty: none
    std::vector<int>                     comGroup_; // comm-grps group of each (home) atom; empty: one group
    void                                 zeroFrozenVelocities();
    MdFinalState                         final_;
    double                               steadyMark_ = -1; // clockSeconds() at the start of step nstlist
    void                                 steadyClock(long step, bool last);
    long warmUpSteps() const { return std::min<long>(settings_.nstlist, kWarmUpSteps); }

    // checkpoints
    std::optional<Checkpoint> restart_;          // the checkpoint this run continues
    FftPlanning               fftPlanning_ = FftPlanning::Estimate; // PME's FFT (set-up)
    long                      startStep_ = 0;
    bool                      skipFirstOutputs_ = false; // the first step's outputs are in the files already
    std::string               checkpointPath_;
    double                    lastCheckpointSeconds_ = 0;
    struct StepStart
    {
        std::vector<RVec>            x, v;
        double                       thermostat = 0, barostat = 0;
        std::vector<NoseHooverState> noseHoover;
        Matrix3                      constraintVirial; // md-vv: the last drift's, summed over the ranks
        // load balancing at the start of the step (before its balance)
        bool                               dlbActive = false;
        std::array<std::vector<double>, 3> dlbBounds;
        std::vector<double>                dlbLoads;
        DlbSwitchState                     dlbSwitch;
    };
    std::optional<StepStart> lastStepStart_; // the state at the start of the last step
    void                     continueFromCheckpoint();
    std::vector<std::string> outputFiles() const;
    bool                     checkpointDue(long step, const Progress& progress);
    void writeCheckpointFile(long step, bool outputsWritten, const StepStart& state);
    bool appendEnergyFile_ = false, appendEdrFile_ = false;

    // blow-up checks
    std::vector<RVec> xAtSearch_;          // home coordinates after the last search
    double            largestDisplacement_ = 0;
    std::string       writeLastGoodFrame(long step);
    void              checkForces(long step, const ForceOutput& forces);
    void              checkDisplacements(long step);
    void checkpointStage(long step, bool last, const Progress& progress);
    bool searchStage(long step);
    bool outputsSkipped(long step) const { return skipFirstOutputs_ && step == startStep_; }
    void                                 repartition();

    /* Dynamic load balancing (md_dlb.cpp, domdec/load_balance.h): at each
     * search step the work each PP rank measured since the last search
     * (nonbonded, listed, search, update and constraints seconds) is
     * summed over ranks in rank order, and, when on, moves the domain
     * boundaries before the repartition. */
    struct DlbState
    {
        bool                active       = false;
        long                turnedOnStep = -1, turnedOffStep = -1;
        std::string         why, offWhy;       // when and why it went on, and off (log)
        DlbSwitch           sw;                // auto's on and off (domdec/dlb_switch.h)
        std::optional<DlbSwitchState> restoredSwitch; // its state in the checkpoint this run continues
        bool                relaxing = false;  // off for good: boundaries on their way to equal domains
        bool                measuredOne = false; // this process has measured a window
        bool                marked   = false;  // a window is open
        long                markStep = 0;      // the step it opened at
        double              workMark = 0, wallMark = 0;
        std::vector<double> pendingLoads;      // exchanged early (checkpoint step) or restored
        bool                pendingRestored = false; // ... from the checkpoint (measured by the run it continues)
        long                windows = 0, balances = 0;
        double              firstImbalance = -1, lastImbalance = -1; // max/mean - 1 of the ranks' work
        double              firstLoss = -1, lastLoss = -1;           // percent of the wall time
        std::array<std::vector<double>, 3> firstWidths;              // slab widths (nm) at the start
        std::vector<std::pair<long, std::array<std::vector<double>, 3>>> history; // boundaries after each balance
    } dlb_;
    bool                dlbEnabled() const { return dd_ && options_.dd.dlb != DlbMode::No && dd_->grid().size() > 1; }
    double              dlbWork() const;
    std::vector<double> exchangeDlbLoads(long step);
    void                balanceStage(long step);
    void                dlbDecide(long step, const std::vector<double>& loads, bool measuredHere);
    void                openDlbWindow(long step); // after a repartition: the next window's marks
    void                restoreDlb();    // a continuation: the checkpointed boundaries and state
    std::array<std::vector<double>, 3> dlbWidthsNow() const;
    std::string         dlbStory() const; // on, off, or on and then off, and why
    void                dlbLogSummary() const;
    void                dlbJson(nlohmann::json& json) const; // adds "dlb" (when it could run)
    /* The virtual sites this rank places: all, or its home ones (home indices). */
    const std::vector<VirtualSite>& virtualSites() const
    {
        return dd_ ? dd_->localTopology().virtualSites : top_.virtualSites;
    }
    void                                 refreshHomeAtoms();
    void                                 reduce(std::span<double> values) const;
    void                                 removeComMotion();
    long                                 collectiveCount() const;
    long                                 growthCount() const;
    /* Whether this step may need a collective: search, energies, coupling,
     * centre-of-mass removal, trajectory output or the last step. */
    bool mayCommunicate(long step, bool search, bool computeE, bool last) const
    {
        const bool tc = mdp_.tcoupl != TCoupl::No
                        && (mdp_.tcoupl == TCoupl::NoseHoover || every(step + settings_.nsttcouple - 1, settings_.nsttcouple));
        return search || computeE || last || tc || (mdp_.commMode == CommMode::Linear && every(step, mdp_.nstcomm))
               || every(step, mdp_.nstxoutCompressed) || every(step, mdp_.nstxout) || every(step, mdp_.nstvout)
               || every(step, mdp_.nstfout);
    }
    void countNormalStep(long step, bool search, bool computeE, bool last, long collectives0, long growths0)
    {
        if (!mayCommunicate(step, search, computeE, last))
        {
            final_.normalStepCollectives += collectiveCount() - collectives0;
        }
        if (!search)
        {
            final_.normalStepArenaGrowths += growthCount() - growths0;
        }
    }
};

} // namespace putmd::md_detail
