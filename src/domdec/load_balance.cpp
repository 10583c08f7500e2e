#include "domdec/load_balance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace putmd
{

const char* dlbModeName(DlbMode m)
{
    switch (m)
    {
        case DlbMode::Auto: return "auto";
        case DlbMode::Yes: return "yes";
        case DlbMode::No: return "no";
    }
    return "?";
}

std::optional<DlbMode> parseDlbMode(const std::string& name)
{
    for (DlbMode m : { DlbMode::Auto, DlbMode::Yes, DlbMode::No })
    {
        if (name == dlbModeName(m))
        {
            return m;
        }
    }
    return std::nullopt;
}

double loadImbalance(const std::vector<double>& loads)
{
    if (loads.empty())
    {
        return 0;
    }
    const double sum  = std::accumulate(loads.begin(), loads.end(), 0.0);
    const double mean = sum / loads.size();
    return mean > 0 ? *std::max_element(loads.begin(), loads.end()) / mean - 1 : 0;
}

namespace
{

/* Widths of at least minWidth summing to 1, as close to `widths` as the
 * limit allows: slabs below the limit are raised to it and the others
 * shrunk in proportion, until none is below (n * minWidth <= 1). */
std::vector<double> limitWidths(std::vector<double> widths, double minWidth)
{
    const size_t      n = widths.size();
    std::vector<char> pinned(n, 0);
    for (size_t pass = 0; pass < n; pass++)
    {
        double free = 0, pinnedSum = 0;
        bool   changed = false;
        for (size_t i = 0; i < n; i++)
        {
            if (!pinned[i] && widths[i] < minWidth)
            {
                pinned[i] = 1;
                changed   = true;
            }
            if (pinned[i])
            {
                widths[i] = minWidth;
                pinnedSum += minWidth;
            }
            else
            {
                free += widths[i];
            }
        }
        if (!changed)
        {
            break;
        }
        const double scale = free > 0 ? (1 - pinnedSum) / free : 0;
        for (size_t i = 0; i < n; i++)
        {
            if (!pinned[i])
            {
                widths[i] *= scale;
            }
        }
    }
    return widths;
}

} // namespace

std::vector<double> balancedBounds(const std::vector<double>& bounds, const std::vector<double>& slabLoad,
                                   double minWidth, double maxMove, double damping)
{
    const size_t n     = slabLoad.size();
    const double total = std::accumulate(slabLoad.begin(), slabLoad.end(), 0.0);
    if (n < 2 || !(total > 0))
    {
        return bounds;
    }
    // the cumulative work is piecewise linear over the current slabs: cut
    // it into n equal parts
    std::vector<double> target(n + 1);
    target[0] = 0;
    target[n] = 1;
    size_t slab = 0;
    double before = 0; // work below bounds[slab]
    for (size_t k = 1; k < n; k++)
    {
        const double want = total * double(k) / double(n);
        while (slab + 1 < n && before + slabLoad[slab] < want)
        {
            before += slabLoad[slab];
            slab++;
        }
        const double w    = bounds[slab + 1] - bounds[slab];
        const double frac = slabLoad[slab] > 0 ? std::clamp((want - before) / slabLoad[slab], 0.0, 1.0) : 0.5;
        target[k]         = bounds[slab] + frac * w;
    }
    // damped, then widths limited
    std::vector<double> widths(n);
    for (size_t i = 0; i < n; i++)
    {
        const double t0 = bounds[i] + damping * (target[i] - bounds[i]);
        const double t1 = bounds[i + 1] + damping * (target[i + 1] - bounds[i + 1]);
        widths[i]       = t1 - t0;
    }
    widths = limitWidths(widths, minWidth);
    std::vector<double> next(n + 1, 0.0);
    for (size_t i = 0; i < n; i++)
    {
        next[i + 1] = next[i] + widths[i];
    }
    next[n] = 1;
    // the largest single move limited by scaling the whole move
    double largest = 0;
    for (size_t k = 1; k < n; k++)
    {
        largest = std::max(largest, std::abs(next[k] - bounds[k]));
    }
    const double scale = largest > maxMove ? maxMove / largest : 1.0;
    std::vector<double> out(n + 1);
    out[0] = 0;
    out[n] = 1;
    for (size_t k = 1; k < n; k++)
    {
        out[k] = bounds[k] + scale * (next[k] - bounds[k]);
    }
    return out;
}

} // namespace putmd
