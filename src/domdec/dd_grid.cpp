#include "domdec/dd_grid.h"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

int haloPulses(const Box& box, int d, int n, double haloDistance)
{
    const double w = box.perpendicularWidth(d) / n;
    if (n == 1 || w >= haloDistance)
    {
        return 1;
    }
    const int p = static_cast<int>(std::ceil(haloDistance / w));
    // ceil of a ratio just above an integer by rounding: the widths must cover the halo
    const int pulses = p * w >= haloDistance ? p : p + 1;
    return pulses <= kMaxHaloPulses && pulses < n ? pulses : 0;
}

double ddHaloVolume(const Box& box, const std::array<int, 3>& n, double haloDistance)
{
    double withHalo = 1, without = 1;
    for (int d = 0; d < 3; d++)
    {
        const double w = box.perpendicularWidth(d) / n[d];
        if (haloPulses(box, d, n[d], haloDistance) == 0)
        {
            return std::numeric_limits<double>::infinity();
        }
        withHalo *= w + (n[d] > 1 ? haloDistance : 0.0);
        without *= w;
    }
    return withHalo - without;
}

std::string describeGrid(const DdGrid& g)
{
    std::string pulses;
    for (int d = 0; d < 3; d++)
    {
        if (g.pulses[d] > 1)
        {
            pulses += fmt::format("{}{} in {}", pulses.empty() ? "" : ", ", g.pulses[d], "xyz"[d]);
        }
    }
    return fmt::format("{} x {} x {}", g.n[0], g.n[1], g.n[2])
           + (pulses.empty() ? std::string() : " (halo pulses: " + pulses + ")");
}

namespace
{

std::vector<std::array<int, 3>> factorisations(int n)
{
    std::vector<std::array<int, 3>> out;
    for (int a = 1; a <= n; a++)
    {
        if (n % a != 0)
        {
            continue;
        }
        for (int b = 1; b <= n / a; b++)
        {
            if ((n / a) % b == 0)
            {
                out.push_back({ a, b, n / a / b });
            }
        }
    }
    return out;
}

bool feasible(const Box& box, int n, double halo)
{
    for (const auto& f : factorisations(n))
    {
        if (std::isfinite(ddHaloVolume(box, f, halo)))
        {
            return true;
        }
    }
    return false;
}

std::string workingCounts(const Box& box, double halo, int upTo)
{
    std::string s;
    for (int n = 1; n <= upTo; n++)
    {
        if (feasible(box, n, halo))
        {
            s += (s.empty() ? "" : ", ") + std::to_string(n);
        }
    }
    return s;
}

} // namespace

DdGrid chooseDdGrid(const Box& box, int numRanks, double haloDistance, const std::optional<std::array<int, 3>>& forced)
{
    const std::string widths = fmt::format("{:.3f}, {:.3f}, {:.3f} nm", box.perpendicularWidth(0),
                                           box.perpendicularWidth(1), box.perpendicularWidth(2));
    const std::string why    = fmt::format(
            "each cut dimension needs domains at least {:.3f} nm wide (the pair-list radius plus twice the "
            "largest update-group radius) for one halo pulse, or 1/P of that for P pulses with P at most {} and "
            "below the number of domains in that dimension; the box's perpendicular widths are {}",
            haloDistance, kMaxHaloPulses, widths);
    auto withPulses = [&](const std::array<int, 3>& n) {
        DdGrid g;
        g.n = n;
        for (int d = 0; d < 3; d++)
        {
            g.pulses[d] = haloPulses(box, d, n[d], haloDistance);
        }
        return g;
    };
    if (forced)
    {
        const DdGrid g = withPulses(*forced);
        if (g.size() != numRanks)
        {
            throw InputError(fmt::format("-dd {} {} {} makes {} domains, but the job has {} ranks; the three numbers "
                                         "must multiply to the number of ranks",
                                         g.n[0], g.n[1], g.n[2], g.size(), numRanks));
        }
        for (int d = 0; d < 3; d++)
        {
            if (g.pulses[d] == 0)
            {
                throw InputError(fmt::format("-dd {} {} {}: domains in dimension {} would be {:.3f} nm wide; {}. "
                                             "Leave out -dd to let putmd choose",
                                             g.n[0], g.n[1], g.n[2], "xyz"[d], box.perpendicularWidth(d) / g.n[d], why));
            }
        }
        return g;
    }
    DdGrid g;
    double best      = std::numeric_limits<double>::infinity();
    int    bestExtra = 0;
    for (const auto& f : factorisations(numRanks))
    {
        const double v = ddHaloVolume(box, f, haloDistance);
        if (!std::isfinite(v))
        {
            continue;
        }
        const int extra = withPulses(f).extraPulses();
        // fewer extra pulses first; then the smaller volume; ties (within
        // rounding): prefer more cuts in x, then y
        const bool better = !std::isfinite(best) || extra < bestExtra
                            || (extra == bestExtra
                                && (v < best * (1 - 1e-12)
                                    || (std::abs(v - best) <= 1e-12 * best
                                        && (f[0] > g.n[0] || (f[0] == g.n[0] && f[1] > g.n[1])))));
        if (better)
        {
            best      = v;
            bestExtra = extra;
            g         = withPulses(f);
        }
    }
    if (!std::isfinite(best))
    {
        throw InputError(fmt::format("cannot decompose the box over {} ranks: {}. Rank counts up to 64 that work "
                                     "here: {}; a shorter cut-off or a larger system allows more",
                                     numRanks, why, workingCounts(box, haloDistance, 64)));
    }
    return g;
}

} // namespace putmd
