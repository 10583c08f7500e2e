/* domdec/domain_bounds.h — where the domains' boundaries lie, and how load
 * balancing moves them.
 *
 * The box is cut into nx x ny x nz domains in fractional coordinates. As in
 * GROMACS, the cuts are staggered: the first dimension's boundaries are
 * shared by the whole box; along the second, every column of domains (one
 * x index) has its own boundaries; along the third, every column of one
 * (x, y) index. Without balancing they are all uniform, k / n.
 *
 * A staggered boundary may differ between columns by at most the dimension's
 * stagger limit. The halo then reaches, in every column, the largest of the
 * columns' faces plus the halo distance, and the planned pulses still cover
 * that: every slab stays at least (halo distance + stagger limit) / pulses
 * wide. With multi-pulse halos and the eighth-shell rule (the rank with the
 * lowest domain index of a pair's copies in each dimension computes it)
 * this keeps every pair, bonded interaction and exclusion computed exactly
 * once (domdec.h). The stagger limit is half of what the uniform grid
 * leaves over, (pulses x uniform width - halo) / 2, and at most a quarter
 * of halo / pulses, so that a group moving to the next column lands at
 * most one row away from where it was (migration moves one domain).
 *
 * Boundaries are kept flat per dimension: column after column (columns in
 * x-fastest order of the dimensions before), n + 1 values each. */
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "core/box.h"
#include "domdec/dd_grid.h"
#include "domdec/load_balance.h"

namespace putmd
{

class DomainBounds
{
public:
    using Flat = std::array<std::vector<double>, 3>;

    DomainBounds() = default;
    /* Uniform boundaries; the stagger limits from the box and halo. */
    DomainBounds(const DdGrid& grid, const Box& box, double haloDistance);

    /* Columns of dimension d: the product of the domain counts before d. */
    int numColumns(int d) const { return numColumns_[d]; }
    /* The column of dimension d that domain coordinates c lie in. */
    int columnOf(int d, const std::array<int, 3>& c) const;
    /* Boundary k of column `column` of d for any integer k (periodic: k = n
     * is 1, k = -1 is the boundary n - 1 minus 1). */
    double face(int d, int column, int k) const;
    /* The largest boundary k over the columns of d. */
    double maxFace(int d, int k) const;
    /* The domain of fractional coordinates s (in [0, 1) after wrapping). */
    std::array<int, 3> domainOf(const DVec& s) const;

    /* Narrowest slab (fractional) and largest stagger (fractional) allowed
     * along d with the box's current width. */
    double minWidth(int d, double boxWidth) const;
    double staggerLimit(int d) const { return stagger_[d]; }
    /* The present largest difference of a boundary between columns, and
     * the narrowest slab (fractional). */
    double stagger(int d) const;
    double narrowest(int d) const;

    /* Moves the boundaries from every rank's load (rank order of the grid):
     * each column's slabs towards equal work (load_balance.h), then the
     * columns' boundaries pulled towards their mean to the stagger limit,
     * then the whole move scaled to at most half the narrowest allowed slab
     * per boundary. boxWidths: the box's perpendicular widths. */
    void balance(const std::vector<double>& rankLoads, const std::array<double, 3>& boxWidths,
                 double damping = kDlbDamping);

    /* After balancing is turned off: every boundary towards equal slabs,
     * within the same move limit as a balance; true once they are equal. */
    bool relaxToUniform(const std::array<double, 3>& boxWidths);

    const Flat& flat() const { return b_; }
    /* False (and nothing changed) unless the values fit: the counts of this
     * grid, increasing from 0 to 1 per column, slabs and stagger within the
     * limits. */
    bool set(const Flat& flat, const std::array<double, 3>& boxWidths);
    /* Slab widths (nm) along d, column after column. */
    std::vector<double> widths(int d, double boxWidth) const;

private:
    DdGrid                grid_;
    double                halo_ = 0;
    std::array<int, 3>    numColumns_{ 1, 1, 1 };
    std::array<double, 3> stagger_{ 0, 0, 0 };
    Flat                  b_;
    const double*         column(int d, int c) const { return b_[d].data() + size_t(c) * (grid_.n[d] + 1); }
    double moveTowards(int d, const std::vector<std::vector<double>>& target, double minW);
};

/* The log's text of slab widths (nm; per dimension, column after column,
 * as DomainBounds::Flat): every width, columns separated by " | ", while
 * there are at most maxListed in all; on a larger grid only each
 * dimension's narrowest and widest slab and the counts (an 8 x 8 x 8 grid
 * has 584 widths; the -perf JSON keeps them all). Dimensions with one
 * domain are left out. */
std::string slabWidthsText(const DdGrid& grid, const DomainBounds::Flat& widths, std::size_t maxListed = 48);

} // namespace putmd
