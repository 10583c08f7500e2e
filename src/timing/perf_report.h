/* timing/perf_report.h — the performance report at the end of a run: the
 * cycle and time accounting over all PP ranks (per stage: ranks, threads,
 * calls, average wall time, giga-cycles summed over ranks, percent, min and
 * max over ranks, imbalance), the first PME rank's rows when PME runs on
 * separate ranks, the load-imbalance summary with a hint, the communication
 * per phase (summed over PP ranks) with message-size histograms, the same
 * summed over the separate PME ranks, and the performance line. The same data go to JSON for `-perf FILE.json`; the
 * format is docs/perf-schema.json, documented in docs/performance-report.md.
 */
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "timing/stage_timer.h"

namespace putmd
{

/* Above this share of the wall time lost to imbalance the log prints a hint. */
constexpr double kImbalanceHintPercent = 5.0;

/* Communication statistics per phase (comm::Phase order). */
using PhaseTable = std::array<comm::PhaseStats, static_cast<int>(comm::Phase::Count)>;

/* A communicator's statistics, plus alsoCounted's when given and another
 * communicator (the world communicator that carries PP <-> PME traffic). */
PhaseTable phaseTableOf(const comm::Communicator& comm, const comm::Communicator* alsoCounted = nullptr);
/* As doubles, to send; addSerializedPhases adds such a block to sums (each
 * phase's largest message: the maximum). */
std::vector<double> serializePhaseTable(const PhaseTable& t);
/* Adds x to sum (each phase's largest message: the maximum). */
void                addPhaseTable(PhaseTable& sum, const PhaseTable& x);
void                addSerializedPhases(PhaseTable& sum, const double* d);
std::size_t         serializedPhaseTableSize();

struct PerfInputs
{
    std::vector<StageTimers> ppRanks;       // every PP rank's timers, in rank order
    std::vector<double>      ppWallSeconds; // every PP rank's wall time of the run
    std::optional<StageTimers> pmeRank;     // the first PME rank's timers (separate PME ranks)
    int         numPmeRanks = 0;
    int         threads     = 1; // threads per PP rank
    long        steps       = 0;
    double      dtPs        = 0;
    long        atoms       = 0;
    bool        hasComm     = false; // domain decomposition: the communication table is meaningful
    PhaseTable  comm{};      // summed over PP ranks
    // summed over the separate PME ranks (their PME and world
    // communicators: the transposes and grid traffic among them, their
    // forces to the PP ranks); empty without separate PME ranks
    std::optional<PhaseTable> pmeRanksComm;
    std::string backend;     // communication backend name ("" without decomposition)
    // collective calls and barriers in normal steps (PP rank 0; the first
    // PME rank, -1 without separate PME ranks), when hasComm
    long normalStepCollectives        = 0;
    long pmeRankNormalStepCollectives = -1;
    std::string commandLine; // for the JSON
};

/* Collective over comm (when not null): every PP rank's timers, wall time
 * and communication statistics to rank 0 (Phase::Setup gather). On other
 * ranks the result has empty ppRanks. alsoCounted: another communicator
 * whose statistics this rank adds to its own (the world communicator that
 * carries PP <-> PME traffic with separate PME ranks). */
PerfInputs gatherPerfInputs(comm::Communicator* comm, const StageTimers& mine, double wallSeconds,
                            const comm::Communicator* alsoCounted = nullptr);

/* The log's tables and lines (accounting, imbalance and hint,
 * communication), without the final Performance line. */
std::string perfLogText(const PerfInputs& in);
/* "Performance: X ns/day Y hour/ns Z atom-steps/s". */
std::string performanceLine(const PerfInputs& in);
/* The JSON document described by docs/perf-schema.json. */
nlohmann::json perfJson(const PerfInputs& in);

/* Machine name of a stage in the JSON ("nonbonded", "pme_mesh", ...). */
const char* stageKey(Stage s);

} // namespace putmd
