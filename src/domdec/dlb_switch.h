/* domdec/dlb_switch.h — when dynamic load balancing moves the boundaries:
 * -dlb auto's turning on and, when balancing does not make the step
 * faster, off.
 *
 * A window runs from one pair search to the next (run/md_dlb.cpp); at its
 * end every rank knows every rank's work, the summed wall time and the
 * window's steps, the same numbers on every rank, so every rank takes the
 * same decision here. With loads from measured time (the default):
 *
 *  - auto turns balancing on at a window whose loss (the time the ranks
 *    wait for the busiest, in percent of the step) exceeds kDlbAutoPercent;
 *  - the reference is the mean wall time per step of the windows before
 *    that, the window that turned it on included and the first window the
 *    process measured left out (its steps carry the run's one-time costs,
 *    the first force computation's allocations and first touches), unless
 *    it is the only one;
 *  - from kDlbCheckWindows windows with balancing on (a continuation's
 *    first window, with its own one-time costs, left out), every window
 *    compares the mean step of the last kDlbCheckWindows with it. Not
 *    faster: balancing goes off for the rest of the run, and the boundaries
 *    return to equal domains within a balance's move limits over the next
 *    searches, as GROMACS's mdrun turns its balancing off when it does not
 *    pay. Where the measured work is mostly noise (a few hundred atoms a
 *    rank and fewer) balancing chases the noise; on a machine shared with
 *    other work the comparison is noisy too (docs/domain-decomposition.md).
 *
 * -dlb yes balances from the first window and never turns off; -dlb no
 * never balances. With deterministic loads (PUTMD_DLB_LOAD=atoms) nothing
 * turns off (no clock decides), so such runs repeat bit for bit. */
#pragma once

#include <vector>

#include "domdec/load_balance.h"

namespace putmd
{

/* Windows with balancing on that make up the comparison with the reference
 * (the first of them moves from equal domains towards the balance). */
constexpr int kDlbCheckWindows = 2;

/* What a continuation needs to decide as the run it continues would
 * (checkpoint version 7). */
struct DlbSwitchState
{
    bool                offForGood       = false; // turned off: balancing stays off
    double              referenceSeconds = 0;     // summed wall time per step of the reference windows
    int                 referenceWindows = 0;
    std::vector<double> balancedSteps;            // wall time per step of the last windows with balancing
};

/* One window's figures. */
struct DlbWindow
{
    double lossPercent    = 0;     // (max - mean) work over the mean wall time, percent
    double secondsPerStep = 0;     // mean wall time per step over the ranks
    bool   firstMeasured  = false; // the first window this process measured
};

enum class DlbDecision
{
    Keep,    // on or off as before
    TurnOn,  // auto: balancing starts with this window's loads
    TurnOff, // auto: not faster with balancing; off for the rest of the run
};

class DlbSwitch
{
public:
    DlbSwitch() = default;
    /* timeLoads: loads are measured seconds (not atom counts). */
    DlbSwitch(DlbMode mode, bool timeLoads, bool active);

    /* The end of a window: the decision, after which active() says whether
     * this window's loads move the boundaries. */
    DlbDecision window(const DlbWindow& w);

    bool active() const { return active_; }
    bool offForGood() const { return state_.offForGood; }
    /* Mean wall time per step of the reference windows and of the last
     * windows with balancing (seconds; 0 when there are none). */
    double referenceSecondsPerStep() const;
    double balancedSecondsPerStep() const;

    const DlbSwitchState& state() const { return state_; }
    /* A continuation: the checkpointed state (active as saved). */
    void restore(const DlbSwitchState& s, bool active);

private:
    DlbMode        mode_      = DlbMode::No;
    bool           timeLoads_ = true;
    bool           active_    = false;
    DlbSwitchState state_;
    double         firstSeconds_ = 0; // the first measured window's wall time per step
};

} // namespace putmd
