#include "domdec/domain_bounds.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "domdec/load_balance.h"

namespace putmd
{

DomainBounds::DomainBounds(const DdGrid& grid, const Box& box, double haloDistance) :
    grid_(grid), halo_(haloDistance)
{
    numColumns_ = { 1, grid.n[0], grid.n[0] * grid.n[1] };
    for (int d = 0; d < 3; d++)
    {
        const int n = grid.n[d];
        if (n > 1 && numColumns_[d] > 1)
        {
            // half of what the uniform grid leaves over the halo
            // (fractional), and at most a quarter of a pulse's halo share, so
            // that a group changing column lands at most one row away (the
            // stagger, half a slab's move and its own motion stay below the
            // narrowest slab)
            const double h     = haloDistance / box.perpendicularWidth(d);
            const double spare = grid.pulses[d] / double(n) - h;
            stagger_[d]        = std::max(0.0, std::min(0.5 * spare, 0.25 * h / grid.pulses[d]));
        }
        for (int c = 0; c < numColumns_[d]; c++)
        {
            for (int k = 0; k <= n; k++)
            {
                b_[d].push_back(k == n ? 1.0 : double(k) / n);
            }
        }
    }
}

int DomainBounds::columnOf(int d, const std::array<int, 3>& c) const
{
    return d == 0 ? 0 : d == 1 ? c[0] : c[1] * grid_.n[0] + c[0];
}

double DomainBounds::face(int d, int col, int k) const
{
    const int n    = grid_.n[d];
    const int wrap = k >= 0 ? k / n : -((-k + n - 1) / n);
    return column(d, col)[k - wrap * n] + wrap;
}

double DomainBounds::maxFace(int d, int k) const
{
    double m = face(d, 0, k);
    for (int c = 1; c < numColumns_[d]; c++)
    {
        m = std::max(m, face(d, c, k));
    }
    return m;
}

std::array<int, 3> DomainBounds::domainOf(const DVec& s) const
{
    std::array<int, 3> c{ 0, 0, 0 };
    for (int d = 0; d < 3; d++)
    {
        const double* b = column(d, columnOf(d, c));
        const int     n = grid_.n[d];
        c[d] = std::clamp(static_cast<int>(std::upper_bound(b, b + n + 1, s[d]) - b) - 1, 0, n - 1);
    }
    return c;
}

double DomainBounds::minWidth(int d, double boxWidth) const
{
    // a hair over the limit, so rounding in the boundaries never undercuts it
    return (halo_ / boxWidth + stagger_[d]) / grid_.pulses[d] * (1 + 1e-9);
}

double DomainBounds::stagger(int d) const
{
    double worst = 0;
    for (int k = 0; k <= grid_.n[d]; k++)
    {
        double lo = face(d, 0, k), hi = lo;
        for (int c = 1; c < numColumns_[d]; c++)
        {
            lo = std::min(lo, face(d, c, k));
            hi = std::max(hi, face(d, c, k));
        }
        worst = std::max(worst, hi - lo);
    }
    return worst;
}

double DomainBounds::narrowest(int d) const
{
    double w = 1;
    for (int c = 0; c < numColumns_[d]; c++)
    {
        for (int k = 0; k < grid_.n[d]; k++)
        {
            w = std::min(w, column(d, c)[k + 1] - column(d, c)[k]);
        }
    }
    return w;
}

std::vector<double> DomainBounds::widths(int d, double boxWidth) const
{
    std::vector<double> w;
    for (int c = 0; c < numColumns_[d]; c++)
    {
        for (int k = 0; k < grid_.n[d]; k++)
        {
            w.push_back((column(d, c)[k + 1] - column(d, c)[k]) * boxWidth);
        }
    }
    return w;
}

void DomainBounds::balance(const std::vector<double>& rankLoads, const std::array<double, 3>& boxWidths, double damping)
{
    for (int d = 0; d < 3; d++)
    {
        const int n = grid_.n[d];
        if (n == 1)
        {
            continue;
        }
        const int numCol = numColumns_[d];
        std::vector<std::vector<double>> load(numCol, std::vector<double>(n, 0.0));
        for (int r = 0; r < grid_.size(); r++)
        {
            const auto c = grid_.coordinatesOf(r);
            load[columnOf(d, c)][c[d]] += rankLoads[r];
        }
        const double minW = minWidth(d, boxWidths[d]);
        // each column towards equal work (no move limit yet)
        std::vector<std::vector<double>> target(numCol);
        for (int c = 0; c < numCol; c++)
        {
            const std::vector<double> old(column(d, c), column(d, c) + n + 1);
            target[c] = balancedBounds(old, load[c], minW, 1.0, damping);
        }
        // the columns pulled towards their mean to the stagger limit: each
        // column a convex combination of the mean and its target, so its
        // slabs stay wide enough
        std::vector<double> mean(n + 1, 0.0);
        for (int c = 0; c < numCol; c++)
        {
            for (int k = 0; k <= n; k++)
            {
                mean[k] += target[c][k] / numCol;
            }
        }
        for (int c = 0; c < numCol && numCol > 1; c++)
        {
            double far = 0;
            for (int k = 0; k <= n; k++)
            {
                far = std::max(far, std::abs(target[c][k] - mean[k]));
            }
            const double t = far > 0.5 * stagger_[d] ? 0.5 * stagger_[d] / far : 1.0;
            for (int k = 0; k <= n; k++)
            {
                target[c][k] = mean[k] + t * (target[c][k] - mean[k]);
            }
        }
        moveTowards(d, target, minW);
    }
}

/* The whole move scaled (one factor for every column, so the stagger limit
 * holds too) to at most half the narrowest slab: with the atoms' own motion
 * a group crosses at most one boundary between two searches. Returns the
 * largest distance left to the target. */
double DomainBounds::moveTowards(int d, const std::vector<std::vector<double>>& target, double minW)
{
    const int n      = grid_.n[d];
    double    largest = 0;
    for (int c = 0; c < numColumns_[d]; c++)
    {
        for (int k = 1; k < n; k++)
        {
            largest = std::max(largest, std::abs(target[c][k] - column(d, c)[k]));
        }
    }
    const double s = largest > 0.5 * minW ? 0.5 * minW / largest : 1.0;
    for (int c = 0; c < numColumns_[d]; c++)
    {
        double* b = b_[d].data() + size_t(c) * (n + 1);
        for (int k = 1; k < n; k++)
        {
            b[k] += s * (target[c][k] - b[k]);
        }
    }
    return (1 - s) * largest;
}

bool DomainBounds::relaxToUniform(const std::array<double, 3>& boxWidths)
{
    bool uniform = true;
    for (int d = 0; d < 3; d++)
    {
        const int n = grid_.n[d];
        if (n == 1)
        {
            continue;
        }
        // equal slabs in every column: a valid set, so every step towards
        // it keeps the slabs and the stagger within their limits
        std::vector<double> equal(n + 1);
        for (int k = 0; k <= n; k++)
        {
            equal[k] = double(k) / n;
        }
        const std::vector<std::vector<double>> target(numColumns_[d], equal);
        uniform = moveTowards(d, target, minWidth(d, boxWidths[d])) == 0 && uniform;
    }
    return uniform;
}

bool DomainBounds::set(const Flat& flat, const std::array<double, 3>& boxWidths)
{
    DomainBounds next = *this;
    for (int d = 0; d < 3; d++)
    {
        const int n = grid_.n[d];
        if (flat[d].size() != size_t(numColumns_[d]) * (n + 1))
        {
            return false;
        }
        next.b_[d] = flat[d];
        for (int c = 0; c < numColumns_[d]; c++)
        {
            const double* b = next.column(d, c);
            if (b[0] != 0 || b[n] != 1)
            {
                return false;
            }
            for (int k = 0; k < n && n > 1; k++)
            {
                if ((b[k + 1] - b[k]) * (1 + 1e-6) < minWidth(d, boxWidths[d]))
                {
                    return false;
                }
            }
        }
        if (next.stagger(d) > stagger_[d] * (1 + 1e-6) + 1e-12)
        {
            return false;
        }
    }
    b_ = next.b_;
    return true;
}

std::string slabWidthsText(const DdGrid& grid, const DomainBounds::Flat& widths, std::size_t maxListed)
{
    // the dimensions printed: cut, with whole columns of widths
    auto shown = [&](int d) {
        const std::size_t n = std::size_t(grid.n[d]);
        return n >= 2 && !widths[d].empty() && widths[d].size() % n == 0;
    };
    std::size_t total = 0;
    for (int d = 0; d < 3; d++)
    {
        total += shown(d) ? widths[d].size() : 0;
    }
    std::string text;
    for (int d = 0; d < 3; d++)
    {
        const std::vector<double>& w = widths[d];
        const std::size_t          n = std::size_t(grid.n[d]);
        if (!shown(d))
        {
            continue;
        }
        std::string dim;
        if (total > maxListed)
        {
            const auto [lo, hi] = std::minmax_element(w.begin(), w.end());
            dim = fmt::format("{:.3f} to {:.3f} ({} slabs in {} column(s))", *lo, *hi, w.size(), w.size() / n);
        }
        else
        {
            std::vector<std::string> columns;
            for (std::size_t c = 0; c < w.size() / n; c++)
            {
                columns.push_back(fmt::format("{:.3f}", fmt::join(w.begin() + c * n, w.begin() + (c + 1) * n, " ")));
            }
            dim = fmt::format("{}", fmt::join(columns, " | "));
        }
        text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", "xyz"[d], dim);
    }
    return text;
}

} // namespace putmd
