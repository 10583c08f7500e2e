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
 * -dlb auto turns balancing on at the first window whose loss, (max - mean)
 * work over the mean wall time, exceeds kDlbAutoPercent; yes balances from
 * the first window; no never. PUTMD_DLB_LOAD=atoms replaces the measured
 * seconds by the home atom count (the loss is then (max - mean) / mean), a
 * deterministic stand-in with which runs with balancing repeat bit for bit
 * (the tests use it; it balances atoms, not work).
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
std::vector<double> MdRun::exchangeDlbLoads()
{
    const int    n       = comm_->size();
    const double mine[2] = { atomsAsLoad() ? dlbWork() : dlbWork() - dlb_.workMark, clockSeconds() - dlb_.wallMark };
    const std::vector<double> all = comm_->allGather(comm::Phase::Setup, mine);
    std::vector<double>       loads(n + 1);
    for (int r = 0; r < n; r++)
    {
        loads[r] = all[2 * r];
        loads[n] = r == 0 ? all[1] : loads[n] + all[2 * r + 1];
    }
    return loads;
}

void MdRun::openDlbWindow()
{
    dlb_.marked   = true;
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
    if (dlb_.active)
    {
        dlb_.why = fmt::format("on (continued from {})", options_.continueFrom);
    }
    if (restart_->dlbLoads.size() == size_t(comm_->size()) + 1)
    {
        dlb_.pendingLoads = restart_->dlbLoads;
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
    }
    std::vector<double> loads;
    if (!dlb_.pendingLoads.empty())
    {
        loads.swap(dlb_.pendingLoads);
    }
    else if (dlb_.marked)
    {
        loads = exchangeDlbLoads();
    }
    if (!loads.empty())
    {
        const int                 n = comm_->size();
        const std::vector<double> work(loads.begin(), loads.begin() + n);
        const double              mean      = std::accumulate(work.begin(), work.end(), 0.0) / n;
        const double              imbalance = loadImbalance(work);
        const double              wall      = loads[n] / n;
        const double              loss      = atomsAsLoad() ? 100 * imbalance
                                                            : (wall > 0 ? 100 * (*std::max_element(work.begin(), work.end()) - mean) / wall : 0);
        dlb_.windows++;
        if (dlb_.firstImbalance < 0)
        {
            dlb_.firstImbalance = imbalance;
            dlb_.firstLoss      = loss;
        }
        dlb_.lastImbalance = imbalance;
        dlb_.lastLoss      = loss;
        if (!dlb_.active && options_.dd.dlb == DlbMode::Auto && loss > kDlbAutoPercent)
        {
            dlb_.active       = true;
            dlb_.turnedOnStep = step;
            dlb_.why = fmt::format("turned on at step {}: the domains' work was {:.1f}% out of balance, a loss of "
                                   "{:.1f}% of the step time, more than {:.0f}% (-dlb auto)",
                                   step, 100 * imbalance, loss, kDlbAutoPercent);
            if (root_)
            {
                log_->line("Dynamic load balancing " + dlb_.why);
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

void MdRun::dlbLogSummary() const
{
    if (!dlbEnabled() || !root_)
    {
        return;
    }
    // per dimension, the columns' slab widths separated by |
    auto widths = [&](const std::array<std::vector<double>, 3>& w) {
        std::string s;
        for (int d = 0; d < 3; d++)
        {
            const size_t n = size_t(dd_->grid().n[d]);
            if (n < 2 || w[d].size() % n != 0)
            {
                continue;
            }
            std::vector<std::string> cols;
            for (size_t c = 0; c < w[d].size() / n; c++)
            {
                cols.push_back(fmt::format("{:.3f}", fmt::join(w[d].begin() + c * n, w[d].begin() + (c + 1) * n, " ")));
            }
            s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", "xyz"[d], fmt::join(cols, " | "));
        }
        return s;
    };
    log_->line(fmt::format(
            "Dynamic load balancing (-dlb {}): {}; {} balance(s) over {} window(s) of {} steps; imbalance of the "
            "ranks' {} (max/mean - 1): first window {:.1f}% (a loss of {:.1f}% of the step), last {:.1f}% "
            "({:.1f}%); slab widths (nm) at the start {}; at the end {}",
            dlbModeName(options_.dd.dlb), dlb_.active ? dlb_.why : "stayed off", dlb_.balances, dlb_.windows,
            settings_.nstlist, atomsAsLoad() ? "home atoms (PUTMD_DLB_LOAD=atoms)" : "measured work",
            100 * std::max(0.0, dlb_.firstImbalance), std::max(0.0, dlb_.firstLoss),
            100 * std::max(0.0, dlb_.lastImbalance), std::max(0.0, dlb_.lastLoss), widths(dlb_.firstWidths),
            widths(dlbWidthsNow())));
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
    j["why"]                   = dlb_.why;
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
