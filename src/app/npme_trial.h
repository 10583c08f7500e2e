/* app/npme_trial.h — `--npme auto`, measured at start-up.
 *
 * The estimate (chooseNpme, pme/pme_ranks.h, with the model of
 * pme/npme_model.h) predicts each layout's step from its arithmetic and
 * its messages on a measured network, with a few constants; it knows
 * nothing of load imbalance or congestion. GROMACS leaves this measurement
 * to the user (gmx tune_pme runs each layout); putmd makes it at start-up,
 * as it times the transposes and the backends:
 * - the candidates are npme 0 and the estimate's fastest layout with
 *   separate PME ranks (when its PP ranks can cut the box);
 * - each candidate runs the real MD from the start, in a scratch directory:
 *   a warm-up of min(nstlist, 10) steps (the set-up: FFT plans, arenas,
 *   the first search and redistribution), then 40 timed steps (with their
 *   searches when nstlist is short; with nstlist 100 their cost per step
 *   is small);
 * - the faster candidate is the run's layout; the log gives both times.
 *
 * The trials' steps are thrown away: the run starts from step 0 with the
 * chosen layout, so its results are exactly those of `--npme K` with the
 * chosen K. Modes of --npme:
 *   auto      measures when the run is long enough for the trials to cost
 *             little (kStepsPerTrialStep times the trials' steps), else
 *             takes the estimate and says why;
 *   measure   always measures;
 *   estimate  never measures (the choice of earlier versions).
 * A continuation (-cpi) with auto or measure on as many ranks as the run
 * it continues keeps that run's layout (checkpoint version 5 records its
 * PME ranks), so that it goes on bitwise, as with a count; on other rank
 * counts it chooses afresh (the trials start from -c's coordinates).
 */
#pragma once

#include <string>

#include "app/parallel_setup.h"
#include "run/md_runner.h"
#include "run/system_inputs.h"

namespace putmd
{

/* Runs of fewer steps than this many times the trials' steps keep the
 * estimate under --npme auto (the trials then cost at most 1/20 of the run). */
constexpr long kStepsPerTrialStep = 20;

/* The --npme values that are modes, not counts. */
bool isNpmeMode(const std::string& value);

struct NpmeDecision
{
    std::string npme = "auto"; // for ParallelRequest::npme: a count, or "auto" for the estimate
    std::string why;           // for ParallelRequest::npmeWhy
};

/* Collective over all ranks (the trials run MD on all of them). mode: auto,
 * measure or estimate; run: the options of the run that follows (threads,
 * -dd, -dlb, nsteps, -cpi). Throws what the run itself would throw. */
NpmeDecision decideNpme(const SystemInputs& in, const ParallelRequest& request, const RunOptions& run,
                        const std::string& mode);

} // namespace putmd
