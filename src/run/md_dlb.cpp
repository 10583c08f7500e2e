/* run/md_dlb.cpp — dynamic load balancing in the MD loop (see md_run.h and
 * domdec/load_balance.h).
 *
 * A window runs from one search step to the next. At its end every PP rank
 * puts the work it measured in the window (seconds of the stages that move
 * with the domain: nonbonded, listed, search, update, constraints; PME's
 * mesh work follows the PME grid, not the domains) and its wall time into
 * one vector, summed over ranks in rank order, so every rank sees the same
 * numbers and moves the boundaries to the same bits. That is one reduction
 * per search step, never in a normal step.
 *
 * -dlb auto turns balancing on at a window whose loss, (max - mean) work
 * over the mean wall time, exceeds kDlbAutoPercent, and off for the rest of
 * the run when the steps with it are not faster than those before; yes
 * balances from the first window and stays on; no never
 * (domdec/dlb_switch.h decides). PUTMD_DLB_LOAD=atoms replaces the measured
 * seconds by the home atom count (the loss is then (max - mean) / mean), a
 * deterministic stand-in with which runs with balancing repeat bit for bit
 * (the tests use it; it balances atoms, not work; every window counts, and
 * nothing turns off).
 *
 * A checkpoint step exchanges the window's loads before writing and saves
 * them with the boundaries, so a continuation's first balance is the
 * uninterrupted run's. */
#include "run/md_run.h"

#include <algorithm>
#include <numeric>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/error.h"
#include "domdec/domain_bounds.h"

namespace putmd::md_detail
{

namespace
{

bool atomsAsLoad()
{
    static const bool atoms = environmentChoice("PUTMD_DLB_LOAD", "time", "balance the measured work", "atoms",
                                                "balance atom counts, for runs that repeat bit for bit");
    return atoms;
}

} // namespace

double MdRun::dlbWork() const
{
    if (atomsAsLoad())
    {
        return dd_->numHome();
    }
    double s = 0;
    for (Stage st : { Stage::Nonbonded, Stage::Listed, Stage::Search, Stage::Update, Stage::Constraints })
    {
        s += timers_.seconds(st);
    }
    return s;
}

/* Every rank's work in the window that ends now, then the summed wall time
 * (added in rank order: the same bits on every rank). Two values a rank are
 * gathered, not a vector of all ranks' slots summed: that was P + 1 values
 * from each of P ranks (8 MB a rank at 1,024 simulated ranks). */
std::vector<double> MdRun::exchangeDlbLoads(long step)
{
    const int    n       = comm_->size();
    const double mine[2] = { atomsAsLoad() ? dlbWork() : dlbWork() - dlb_.workMark, clockSeconds() - dlb_.wallMark };
    const std::vector<double> all = comm_->allGather(comm::Phase::Setup, mine);
    std::vector<double>       loads(n + 2);
    for (int r = 0; r < n; r++)
    {
        loads[r] = all[2 * r];
        loads[n] = r == 0 ? all[1] : loads[n] + all[2 * r + 1];
    }
    loads[n + 1] = double(step - dlb_.markStep); // the window's steps (the same on every rank)
    return loads;
}

void MdRun::openDlbWindow(long step)
{
    dlb_.marked   = true;
    dlb_.markStep = step;
    dlb_.workMark = dlbWork();
    dlb_.wallMark = clockSeconds();
}

/* The boundaries, state and pending loads of the checkpointed run, when
 * they fit this run's grid. */
void MdRun::restoreDlb()
{
    if (!restart_ || restart_->dlbBounds[0].empty() || options_.dd.dlb == DlbMode::No)
    {
        return;
    }
    if (!dd_->setBounds(restart_->dlbBounds))
    {
        settings_.notes.push_back(fmt::format("the domain boundaries in {} are for another grid than {}: load "
                                              "balancing starts again from equal domains",
                                              options_.continueFrom, describeGrid(dd_->grid())));
        return;
    }
    dlb_.active = restart_->dlbActive;
    DlbSwitchState st;
    st.offForGood       = restart_->dlbOffForGood;
    st.referenceSeconds = restart_->dlbReferenceSeconds;
    st.referenceWindows = restart_->dlbReferenceWindows;
    st.balancedSteps    = restart_->dlbBalancedSteps;
    dlb_.restoredSwitch = st;
    if (dlb_.active)
    {
        dlb_.why = fmt::format("on (continued from {})", options_.continueFrom);
    }
    // n loads and the wall time (version 4 on), then the window's steps
    // (version 7 on)
    if (restart_->dlbLoads.size() == size_t(comm_->size()) + 1
        || restart_->dlbLoads.size() == size_t(comm_->size()) + 2)
    {
        dlb_.pendingLoads    = restart_->dlbLoads;
        dlb_.pendingRestored = true;
    }
}

/* At a search step, before the repartition. */
void MdRun::balanceStage(long step)
{
    if (!dlbEnabled())
    {
        return;
    }
    Timed timed(&timers_, Stage::LoadBalancing);
    if (dlb_.firstWidths[0].empty())
    {
        for (int d = 0; d < 3; d++)
        {
            dlb_.firstWidths[d] = dd_->slabWidths(d);
        }
        if (options_.dd.dlb == DlbMode::Yes && !dlb_.active)
        {
            dlb_.active       = true;
            dlb_.turnedOnStep = step;
            dlb_.why          = fmt::format("on from step {} (-dlb yes)", step);
        }
        dlb_.sw = DlbSwitch(options_.dd.dlb, !atomsAsLoad(), dlb_.active);
        if (dlb_.restoredSwitch)
        {
            // a continuation: what the run it continues decided so far
            const DlbSwitchState& st = *dlb_.restoredSwitch;
            dlb_.sw.restore(st, dlb_.active);
            dlb_.relaxing = st.offForGood;
            if (st.offForGood)
            {
                dlb_.offWhy = fmt::format("off (turned off before {} continued it: not faster with balancing)",
                                          options_.continueFrom);
            }
        }
    }
    std::vector<double> loads;
    bool                measuredHere = true;
    if (!dlb_.pendingLoads.empty())
    {
        loads.swap(dlb_.pendingLoads);
        measuredHere         = !dlb_.pendingRestored;
        dlb_.pendingRestored = false;
    }
    else if (dlb_.marked)
    {
        loads = exchangeDlbLoads(step);
    }
    if (!loads.empty())
    {
        dlbDecide(step, loads, measuredHere);
    }
    if (dlb_.relaxing)
    {
        dlb_.relaxing = !dd_->relaxBounds();
        if (dlb_.history.size() < 10000)
        {
            dlb_.history.emplace_back(step, dd_->bounds());
        }
    }
}

/* One window's loads: the switch's decision (domdec/dlb_switch.h), then
 * the balance when balancing is on. */
void MdRun::dlbDecide(long step, const std::vector<double>& loads, bool measuredHere)
{
    const int                 n = comm_->size();
    const std::vector<double> work(loads.begin(), loads.begin() + n);
    const double              mean      = std::accumulate(work.begin(), work.end(), 0.0) / n;
    const double              imbalance = loadImbalance(work);
    const double              wall      = loads[n] / n;
    const double              loss      = atomsAsLoad() ? 100 * imbalance
                                                        : (wall > 0 ? 100 * (*std::max_element(work.begin(), work.end()) - mean) / wall : 0);
    // a checkpoint of version 4-6 has no step count: a whole window
    const double steps = loads.size() > size_t(n) + 1 ? loads[n + 1] : double(settings_.nstlist);
    dlb_.windows++;
    if (dlb_.firstImbalance < 0)
    {
        dlb_.firstImbalance = imbalance;
        dlb_.firstLoss      = loss;
    }
    dlb_.lastImbalance = imbalance;
    dlb_.lastLoss      = loss;
    DlbWindow w;
    w.lossPercent    = loss;
    w.secondsPerStep = steps > 0 ? wall / steps : 0;
    w.firstMeasured  = measuredHere && !dlb_.measuredOne;
    dlb_.measuredOne = dlb_.measuredOne || measuredHere;
    const DlbDecision decision = dlb_.sw.window(w);
    dlb_.active                = dlb_.sw.active();
    if (decision == DlbDecision::TurnOn)
    {
        dlb_.turnedOnStep = step;
        dlb_.why = fmt::format("turned on at step {}: the domains' work was {:.1f}% out of balance, a loss of "
                               "{:.1f}% of the step time, more than {:.0f}% (-dlb auto)",
                               step, 100 * imbalance, loss, kDlbAutoPercent);
        if (root_)
        {
            log_->line("Dynamic load balancing " + dlb_.why);
        }
    }
    else if (decision == DlbDecision::TurnOff)
    {
        dlb_.turnedOffStep = step;
        dlb_.relaxing      = true;
        dlb_.offWhy        = fmt::format(
                "turned off at step {}: with balancing a step took {:.3f} ms, against {:.3f} ms before it was on "
                "(the last {} windows against the {} before); it stays off and the domains return to equal "
                "widths (-dlb auto)",
                step, 1000 * dlb_.sw.balancedSecondsPerStep(), 1000 * dlb_.sw.referenceSecondsPerStep(),
                kDlbCheckWindows, dlb_.sw.state().referenceWindows);
        if (root_)
        {
            log_->line("Dynamic load balancing " + dlb_.offWhy);
        }
    }
    if (dlb_.active)
    {
        dd_->balance(work, imbalance > kDlbUndampedImbalance ? 1.0 : kDlbDamping);
        dlb_.balances++;
        if (dlb_.history.size() < 10000)
        {
            dlb_.history.emplace_back(step, dd_->bounds());
        }
    }
}

std::array<std::vector<double>, 3> MdRun::dlbWidthsNow() const
{
    std::array<std::vector<double>, 3> now;
    for (int d = 0; d < 3; d++)
    {
        now[d] = dd_->slabWidths(d);
    }
    return now;
}

/* On, off, or on and then off, and why. */
std::string MdRun::dlbStory() const
{
    if (!dlb_.offWhy.empty())
    {
        return dlb_.why.empty() ? dlb_.offWhy : dlb_.why + "; " + dlb_.offWhy;
    }
    return dlb_.active ? dlb_.why : "stayed off";
}

void MdRun::dlbLogSummary() const
{
    if (!dlbEnabled() || !root_)
    {
        return;
    }
    log_->line(fmt::format(
            "Dynamic load balancing (-dlb {}): {}; {} balance(s) over {} window(s) of {} steps; imbalance of the "
            "ranks' {} (max/mean - 1): first window {:.1f}% (a loss of {:.1f}% of the step), last {:.1f}% "
            "({:.1f}%); slab widths (nm) at the start {}; at the end {}",
            dlbModeName(options_.dd.dlb), dlbStory(), dlb_.balances, dlb_.windows,
            settings_.nstlist, atomsAsLoad() ? "home atoms (PUTMD_DLB_LOAD=atoms)" : "measured work",
            100 * std::max(0.0, dlb_.firstImbalance), std::max(0.0, dlb_.firstLoss),
            100 * std::max(0.0, dlb_.lastImbalance), std::max(0.0, dlb_.lastLoss), slabWidthsText(dd_->grid(), dlb_.firstWidths),
            slabWidthsText(dd_->grid(), dlbWidthsNow())));
}

void MdRun::dlbJson(nlohmann::json& json) const
{
    if (!dlbEnabled())
    {
        return;
    }
    nlohmann::json j;
    j["mode"]                  = dlbModeName(options_.dd.dlb);
    j["active"]                = dlb_.active;
    j["turned_on_step"]        = dlb_.turnedOnStep;
    j["turned_off_step"]       = dlb_.turnedOffStep;
    j["off_for_good"]          = dlb_.sw.offForGood();
    j["why"]                   = dlbStory();
    // wall time per step (ms) of the windows before balancing (the first
    // left out) and of the last windows with it (0: none)
    j["reference_ms_per_step"] = 1000 * dlb_.sw.referenceSecondsPerStep();
    j["balanced_ms_per_step"]  = 1000 * dlb_.sw.balancedSecondsPerStep();
    j["load"]                  = atomsAsLoad() ? "atoms" : "work";
    j["windows"]               = dlb_.windows;
    j["balances"]              = dlb_.balances;
    j["first_imbalance"]       = std::max(0.0, dlb_.firstImbalance);
    j["last_imbalance"]        = std::max(0.0, dlb_.lastImbalance);
    j["first_loss_percent"]    = std::max(0.0, dlb_.firstLoss);
    j["last_loss_percent"]     = std::max(0.0, dlb_.lastLoss);
    j["slab_widths_nm_start"]  = dlb_.firstWidths;
    j["slab_widths_nm_end"]    = dlbWidthsNow();
    j["bounds_fractional_end"] = dd_->bounds();
    // the layout of the flat lists: per dimension, columns of domains + 1
    // boundaries (of domains widths)
    j["domains"] = dd_->grid().n;
    j["columns"] = std::array<int, 3>{ dd_->numColumns(0), dd_->numColumns(1), dd_->numColumns(2) };
    // the boundaries after each balance (tools/plot_perf.py draws them)
    nlohmann::json history = nlohmann::json::array();
    for (const auto& [step, b] : dlb_.history)
    {
        history.push_back({ { "step", step }, { "bounds", b } });
    }
    j["history"] = history;
    json["dlb"]  = j;
}

} // namespace putmd::md_detail
