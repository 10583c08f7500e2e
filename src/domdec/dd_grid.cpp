#include "domdec/dd_grid.h"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

double ddHaloVolume(const Box& box, const std::array<int, 3>& n, double haloDistance)
{
    double withHalo = 1, without = 1;
    for (int d = 0; d < 3; d++)
    {
        const double w = box.perpendicularWidth(d) / n[d];
        if (n[d] > 1 && w < haloDistance)
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
    return fmt::format("{} x {} x {}", g.n[0], g.n[1], g.n[2]);
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
            "largest update-group radius); the box's perpendicular widths are {}",
            haloDistance, widths);
    DdGrid g;
    if (forced)
    {
        g.n = *forced;
        if (g.size() != numRanks)
        {
            throw InputError(fmt::format("-dd {} {} {} makes {} domains, but the job has {} ranks; the three numbers "
                                         "must multiply to the number of ranks",
                                         g.n[0], g.n[1], g.n[2], g.size(), numRanks));
        }
        for (int d = 0; d < 3; d++)
        {
            if (g.n[d] > 1 && box.perpendicularWidth(d) / g.n[d] < haloDistance)
            {
                throw InputError(fmt::format("-dd {} {} {}: domains in dimension {} would be {:.3f} nm wide; {}. "
                                             "Leave out -dd to let putmd choose",
                                             g.n[0], g.n[1], g.n[2], "xyz"[d], box.perpendicularWidth(d) / g.n[d], why));
            }
        }
        return g;
    }
    double best = std::numeric_limits<double>::infinity();
    for (const auto& f : factorisations(numRanks))
    {
        const double v = ddHaloVolume(box, f, haloDistance);
        // ties (within rounding): prefer more cuts in x, then y
        if (v < best * (1 - 1e-12) || (std::isfinite(v) && std::abs(v - best) <= 1e-12 * best
                                       && (f[0] > g.n[0] || (f[0] == g.n[0] && f[1] > g.n[1]))))
        {
            best = v;
            g.n  = f;
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
