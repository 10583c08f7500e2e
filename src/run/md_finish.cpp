/* run/md_finish.cpp — the steady-state clock and the end of an MD run: the last checkpoint, the final
 * state gathered to rank 0 and written, the log's closing summary and the
 * performance report (timing/perf_report.h), also as -perf JSON. */
#include <algorithm>

#include <fmt/format.h>

#include "io/atomic_file.h"
#include "core/clock.h"
#include "io/gro.h"
#include "pme/pme_distributed.h"
#include "run/md_run.h"
#include "timing/perf_report.h"
#include "update/constraints.h"

namespace putmd::md_detail
{

/* The steps after the warm-up (the first search set up the lists, the PME
 * redistribution, the arenas and the FFT plans) are timed apart: the
 * layout trials compare them, and the log gives them as the steady-state
 * step time (short runs, simulated clusters). */
void MdRun::steadyClock(long step, bool last)
{
    if (step == startStep_ + warmUpSteps())
    {
        steadyMark_ = clockSeconds();
    }
    if (last && steadyMark_ >= 0)
    {
        final_.timedSeconds = clockSeconds() - steadyMark_;
        final_.timedSteps   = step - startStep_ - warmUpSteps();
    }
}

void MdRun::finishRun(const Progress& progress)
{
    if (lastStepStart_ && options_.checkpointMinutes >= 0
        && (mdp_.integrator == Integrator::Md || mdp_.integrator == Integrator::MdVv))
    {
        const auto& s = *lastStepStart_;
        forces_->releaseWorkspace(); // no more force calls: the pair lists go before the checkpoint is encoded
        writeCheckpointFile(stepsDone_, true, s);
    }
    final_.box = box_;
    if (pmeClient_)
    {
        pmeClient_->stop();
        final_.pmeRankNormalCollectives = pmeClient_->pmeRankNormalCollectives();
    }
    if (dd_)
    {
        final_.x = dd_->gatherHome(x_);
        final_.v = dd_->gatherHome(v_);
        if (root_)
        {
            dd_->putGroupsInBox(final_.x, box_);
        }
    }
    else
    {
        final_.x = x_;
        final_.v = v_;
    }
    PerfInputs perf = gatherPerfInputs(dd_ ? comm_ : nullptr, timers_, progress.elapsedSeconds(),
                                       pmeClient_ ? options_.world : nullptr);
    if (!root_)
    {
        return;
    }
    writeGro(options_.deffnm + ".gro", top_.systemName, in_.coordinates.atoms, final_.x, &final_.v, box_);
    if (!top_.constraints.empty() || !top_.settles.empty())
    {
        std::vector<real> invMass(top_.numAtoms);
        for (int i = 0; i < top_.numAtoms; i++)
        {
            invMass[i] = top_.mass[i] > 0 ? real(1 / top_.mass[i]) : real(0);
        }
        const Constraints all(top_, constraintSettings_, invMass);
        log_->line(fmt::format("Largest relative constraint deviation at the end: {:.3e}",
                               all.maxRelativeDeviation(final_.x, box_)));
    }
    if (dd_)
    {
        log_->line(fmt::format("Domain decomposition: {} ranks, grid {}, halo {:.3f} nm, {} halo schedule, {} backend{}",
                               comm_->size(), describeGrid(dd_->grid()), dd_->haloDistance(),
                               options_.dd.schedule == HaloSchedule::Staged ? "staged" : "direct",
                               comm::backendName(comm_->backend()),
                               options_.commChoice.empty() ? std::string() : " (" + options_.commChoice + ")"));
        if (!options_.pmeChoice.empty())
        {
            log_->line(options_.pmeChoice);
        }
        if (forces_->pmeRedistTargets() >= 0)
        {
            log_->line(fmt::format("PME redistribution: rank 0 sends its atoms to {} of {} ranks (the grid owners "
                                   "within {} nm of its atoms' cells at the last search)",
                                   forces_->pmeRedistTargets(), comm_->size(), DistributedPme::kRedistMarginNm));
        }
        log_->line(fmt::format("Collective calls and barriers in normal steps (every phase, PME included): {}{}; "
                               "arena growths outside search steps: {}",
                               final_.normalStepCollectives,
                               pmeClient_ ? fmt::format(" on the PP ranks, {} on the PME ranks",
                                                        final_.pmeRankNormalCollectives)
                                          : std::string(),
                               final_.normalStepArenaGrowths));
    }
    log_->line(fmt::format("Largest displacement between two pair searches: {:.4f} nm (pair-list buffer {:.4f} nm)",
                           largestDisplacement_, settings_.rlist - std::max(mdp_.rcoulomb, mdp_.rvdw)));
    if (!stopReason_.empty())
    {
        log_->line(fmt::format("Run stopped at step {} of {}: {}", stepsDone_, nsteps_, stopReason_));
    }
    log_->averages(averageNames_, averageSums_, averageCount_);
    perf.steps       = stepsDone_;
    perf.dtPs        = mdp_.dt;
    perf.atoms       = top_.numAtoms;
    perf.threads     = std::max(1, options_.numThreads);
    perf.hasComm     = dd_ != nullptr;
    perf.normalStepCollectives        = final_.normalStepCollectives;
    perf.pmeRankNormalStepCollectives = pmeClient_ ? final_.pmeRankNormalCollectives : -1;
    perf.backend     = dd_ ? comm::backendName(comm_->backend()) : "";
    perf.commandLine = options_.commandLine;
    if (pmeClient_)
    {
        perf.pmeRank     = pmeClient_->pmeRankTimers();
        perf.pmeRanksComm = pmeClient_->pmeRanksComm();
        perf.numPmeRanks = options_.pme.npme;
    }
    dlbLogSummary();
    log_->line("\n" + perfLogText(perf));
    if (!options_.perfJson.empty())
    {
        nlohmann::json j = perfJson(perf);
        dlbJson(j);
        writeFileAtomically(options_.perfJson, j.dump(2) + "\n");
        log_->line("Performance report written to " + options_.perfJson);
    }
    log_->line(fmt::format("Wall time {:.2f} s for {} steps", progress.elapsedSeconds(), stepsDone_));
    if (final_.timedSteps > 0)
    {
        // (rank 0's clock; the ranks move in step)
        log_->line(fmt::format("Steady state: {:.3f} ms per step over the {} steps after the first {} (the start-up "
                               "left out)",
                               1e3 * final_.timedSeconds / double(final_.timedSteps), final_.timedSteps, warmUpSteps()));
    }
    log_->line(performanceLine(perf));
}

} // namespace putmd::md_detail
