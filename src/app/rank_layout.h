/* app/rank_layout.h — -ntmpi: how many ranks a run on one machine has,
 * chosen by putmd itself and, by default, from measured costs.
 *
 * GROMACS's mdrun starts its own ranks (thread-MPI) and picks their number
 * by a rule; `gmx tune_pme` times layouts when asked to. putmd's ranks are
 * MPI processes, which only a launcher starts, so `putmd run` without
 * mpirun is one process. With -ntmpi it starts the ranks itself, through
 * mpirun (the MPIEXEC environment variable names another launcher), before
 * MPI is initialised:
 *
 * - -ntmpi N: N ranks with cores / N threads each (or -nt's count); 1 is
 *   the run in this process;
 * - -ntmpi auto (the default): every layout R ranks x C/R threads, with R
 *   dividing the C cores this process may run on, is timed: the run's own
 *   MD for kLayoutTrialSteps steps in a scratch directory (nothing of the
 *   trials is kept), in kLayoutTrialRounds alternating rounds against the
 *   machine's noise; each layout's time is the steady time per step of its
 *   best round (the first kWarmUpSteps left out, as the log's "Steady
 *   state" line does). The fastest layout runs, from step 0, and the
 *   reason, every layout's time, is printed and heads the run's log. Runs
 *   shorter than kStepsPerLayoutTrialStep times the trials' steps, continuations
 *   (-cpi), minimisations, runs that set -nt or -dd and one-core machines
 *   are not timed: they run on one rank with threads (the layout that
 *   measured fastest on one machine so far, docs/performance.md), and the
 *   log says why;
 * - -ntmpi measure: times the layouts whatever the run's length.
 *
 * A layout whose trial fails (a box that does not divide into R domains, a
 * launcher that does not start) is left out, with its error in the reason.
 * Under a launcher (mpirun -np N putmd run) the launcher's ranks are the
 * layout and -ntmpi other than auto is an error; the ranks putmd started
 * learn the reason from the PUTMD_LAYOUT environment variable.
 */
#pragma once

#include <string>
#include <vector>

namespace putmd
{

constexpr int kLayoutTrialSteps  = 110; // per trial: kWarmUpSteps (10) left out, 100 timed
constexpr int kLayoutTrialRounds = 2;
/* -ntmpi auto times the layouts on runs of at least this many times the
 * trials' steps. Each trial is a process with the run's whole start-up
 * (rnase-amber-cubic: 1-2 s, as long as 150 of its steps), so the trials of
 * 2 layouts cost about 1,000 of the run's steps on 2 cores: 2% of the
 * threshold's 44,000. */
constexpr long kStepsPerLayoutTrialStep = 100;

/* Before MPI is initialised, in the process the user started. args: the
 * run command's arguments (after "run"). Returns when this process runs
 * the simulation as one rank (the arguments unchanged); otherwise starts
 * the chosen ranks through the launcher in place of this process and does
 * not return. Throws InputError for a bad -ntmpi or a launcher that cannot
 * be started. Arguments it cannot parse are left to the run command, which
 * reports them. */
void chooseRankLayout(const std::vector<std::string>& args);

/* For the log's "layout:" line: how this run's ranks were chosen. */
std::string rankLayoutReason();

/* Whether -ntmpi's value is one the run accepts: auto, measure or 1..1024. */
bool isNtmpiValue(const std::string& value);

} // namespace putmd
