#include "domdec/dlb_switch.h"

#include <numeric>

namespace putmd
{

DlbSwitch::DlbSwitch(DlbMode mode, bool timeLoads, bool active) : mode_(mode), timeLoads_(timeLoads), active_(active)
{
}

DlbDecision DlbSwitch::window(const DlbWindow& w)
{
    if (mode_ == DlbMode::No || state_.offForGood)
    {
        return DlbDecision::Keep;
    }
    if (!active_)
    {
        if (w.firstMeasured)
        {
            firstSeconds_ = w.secondsPerStep;
        }
        else
        {
            state_.referenceSeconds += w.secondsPerStep;
            state_.referenceWindows++;
        }
        if (mode_ == DlbMode::Auto && w.lossPercent > kDlbAutoPercent)
        {
            if (state_.referenceWindows == 0 && w.firstMeasured)
            {
                // on at the first window: the reference is that window
                state_.referenceSeconds = firstSeconds_;
                state_.referenceWindows = 1;
            }
            active_ = true;
            return DlbDecision::TurnOn;
        }
        return DlbDecision::Keep;
    }
    // on: only auto, with measured times and a reference, may turn off
    // (a continuation's first window, with balancing on, carries the
    // continuation's one-time costs: not compared either)
    if (mode_ != DlbMode::Auto || !timeLoads_ || state_.referenceWindows == 0 || w.firstMeasured)
    {
        return DlbDecision::Keep;
    }
    state_.balancedSteps.push_back(w.secondsPerStep);
    if (state_.balancedSteps.size() > size_t(kDlbCheckWindows))
    {
        state_.balancedSteps.erase(state_.balancedSteps.begin());
    }
    if (state_.balancedSteps.size() == size_t(kDlbCheckWindows)
        && balancedSecondsPerStep() >= referenceSecondsPerStep())
    {
        active_            = false;
        state_.offForGood  = true;
        return DlbDecision::TurnOff;
    }
    return DlbDecision::Keep;
}

double DlbSwitch::referenceSecondsPerStep() const
{
    return state_.referenceWindows > 0 ? state_.referenceSeconds / state_.referenceWindows : 0;
}

double DlbSwitch::balancedSecondsPerStep() const
{
    const auto& b = state_.balancedSteps;
    return b.empty() ? 0 : std::accumulate(b.begin(), b.end(), 0.0) / double(b.size());
}

void DlbSwitch::restore(const DlbSwitchState& s, bool active)
{
    state_  = s;
    active_ = active && !s.offForGood;
}

} // namespace putmd
