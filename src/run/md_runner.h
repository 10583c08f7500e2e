/* run/md_runner.h — `putmd run` for integrator md (leap-frog) and md-vv
 * (velocity Verlet), one rank.
 *
 * The step is a fixed sequence of named stages, as in the design:
 *   search (every nstlist: put atoms in the box, rebuild the pair list)
 *   -> forces -> trajectory output (x, v, f of this step)
 *   -> temperature coupling -> update -> constraints -> kinetic energy,
 *   centre-of-mass removal -> pressure coupling -> energy output.
 * Leap-frog keeps velocities at half steps and reports the kinetic energy
 * as the average of the two half steps, as GROMACS does; velocity Verlet
 * keeps them at full steps. Energies and the virial are computed on the
 * steps that need them (nstcalcenergy, output and coupling steps).
 */
#pragma once

#include <string>

#include "core/real.h"
#include "domdec/domdec.h"
#include "pme/pme_ranks.h"
#include "run/system_inputs.h"

namespace putmd
{

/* The steps a run's start-up costs reach into (the first search sets up
 * pair lists, arenas, the PME redistribution and FFT plans): the steady
 * step time is measured after min(nstlist, kWarmUpSteps) steps. */
constexpr long kWarmUpSteps = 10;

struct RunOptions
{
    std::string deffnm         = "md"; // output file prefix
    long        nstepsOverride = -2;   // -2: use the mdp's nsteps
    std::string commandLine;           // for the log
    int         numThreads = 1;        // -nt: threads per rank
    std::string threadChoice;          // how numThreads was chosen, for the log
    std::string layoutChoice;          // how the rank count was chosen (-ntmpi), for the log
    std::string commChoice;            // how the backend was chosen (--comm), for the log
    double      maxHours   = -1;       // -maxh: stop at 99% of this wall time (-1: no limit)
    /* Ranks: with a communicator of several ranks (or -dd given) the run is
     * domain-decomposed; null: one rank, no decomposition. */
    comm::Communicator* comm = nullptr;
    DdOptions           dd;
    /* PME over ranks: with separate PME ranks (pme.npme > 0) comm holds the
     * PP ranks only and world all ranks; the PME ranks run runPmeRank. */
    comm::Communicator* world = nullptr;
    RankLayout          pme;
    TransposeAlgorithm  transpose = TransposeAlgorithm::Alltoallv;
    std::string         pmeChoice; // how npme and the transposes were chosen, for the log
    bool                useDd = false; // decompose even on one rank (-dd 1 1 1)
    /* Checkpoints: NAME.cpt every checkpointMinutes of wall time (at a
     * pair-search step; 0: at every search step; negative: none) and at the
     * end. continueFrom: a checkpoint to continue (-cpi); append: continue
     * the output files, cut back to the checkpointed state. */
    double      checkpointMinutes = 15;
    std::string continueFrom;
    bool        append = true;
    /* -perf: the performance report as JSON (docs/perf-schema.json),
     * written atomically by rank 0 at the end; "" for none. */
    std::string perfJson;
    /* A layout trial (app/npme_trial.h): > 0 runs the warm-up steps
     * (kWarmUpSteps, at most a pair-list window) and then trialSteps timed
     * steps from the start, quietly (MdFinalState::timedSeconds); the
     * caller points deffnm at a scratch directory and turns checkpoints off. */
    int trialSteps = 0;
};

/* The state after the last step (what NAME.gro holds, at full precision). */
struct MdFinalState
{
    std::vector<Vec3<real>> x, v; // on rank 0 (empty elsewhere) with domain decomposition
    Box                     box;
    /* Collective calls and barriers in normal steps (no search, no
     * energies, no coupling, no output) over every phase, PME included, on
     * this PP rank; the first PME rank's in the computations that serve
     * normal steps (separate PME ranks; rank 0 only); arena growths. The
     * design says zero for each. */
    long normalStepCollectives    = 0;
    long pmeRankNormalCollectives = 0;
    long normalStepArenaGrowths   = 0;
    /* Clock time of the steps after the warm-up (from the start of step
     * min(nstlist, kWarmUpSteps) to the start of the last step; this
     * rank's), and how many steps that is; -1 and 0 for runs no longer than
     * the warm-up. The layout trials (RunOptions::trialSteps) compare them. */
    double timedSeconds = -1;
    long   timedSteps   = 0;
};

/* Runs the simulation; throws InputError for bad settings before step 0. */
MdFinalState runMd(const SystemInputs& inputs, const RunOptions& options);

} // namespace putmd
