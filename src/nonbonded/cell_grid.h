/* nonbonded/cell_grid.h — O(N) pair search with a cell grid in fractional
 * coordinates, for rectangular and triclinic boxes.
 *
 * The box is cut into n_d cells along each box vector, with n_d chosen so a
 * cell spans at least rc/2 of the perpendicular width; every pair within rc
 * then lies within +-2 cells. Each stencil offset is one periodic image
 * (offsets that wrap add the corresponding box vectors), so every image of a
 * neighbour within rc is visited exactly once and no minimum-image test is
 * needed. This is the plain reference search; the cluster-pair search of the
 * fast kernels is tested against it.
 */
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/candidate_filter.h"

namespace putmd
{

class CellGrid
{
public:
    /* Puts the atoms (any positions; they are wrapped into the box here)
     * into cells for pair distance rc. Requires rc < half the smallest
     * perpendicular width of the box (checked by the caller). */
    CellGrid(const Box& box, const std::vector<Vec3<real>>& x, double rc);

    /* Calls fn(i, j, dx, r2) for every pair i < j (topology indices) of
     * atom images closer than rc; dx = x_i - x_j (the image of j). */
    template<typename Fn>
    void forEachPair(Fn&& fn) const
    {
        forEachPairWithShift([&](int i, int j, const Vec3<real>& d, real r2, const std::array<int, 3>&) { fn(i, j, d, r2); });
    }

    /* As forEachPair, also giving the lattice shift K of the image:
     * dx = x_i - x_j - (K0 a + K1 b + K2 c) for the positions as passed in
     * (not wrapped), so a pair list stays valid while atoms move. */
    template<typename Fn>
    void forEachPairWithShift(Fn&& fn) const { forEachPairWithShift(fn, 0, n_[2]); }

    /* Only the pairs whose first atom's cell has z index in [czBegin,
     * czEnd): disjoint slabs cover every pair once (for threads). */
    template<typename Fn>
    void forEachPairWithShift(Fn&& fn, int czBegin, int czEnd) const;

    /* As forEachPairWithShift over every cell, with cellDone(c) called when
     * the pairs whose first atom is in cell c have all been given (they come
     * cell by cell): a caller can file each cell's pairs while they are in
     * cache. */
    template<typename Fn, typename CellDone>
    void forEachPairByCell(Fn&& fn, CellDone&& cellDone) const { forEachPairWithShift(fn, 0, n_[2], cellDone); }

    int numCellsZ() const { return n_[2]; }
    int numCells() const { return static_cast<int>(cellStart_.size()) - 1; }
    /* The atoms of cell c are atomAt(a) for a in [cellBegin(c), cellEnd(c)). */
    int cellBegin(int c) const { return cellStart_[c]; }
    int cellEnd(int c) const { return cellStart_[c + 1]; }
    int atomAt(int a) const { return order_[a]; }

private:
    struct NoCellDone
    {
        void operator()(int) const {}
    };
    template<typename Fn, typename CellDone = NoCellDone>
    void forEachPairWithShift(Fn&& fn, int czBegin, int czEnd, CellDone&& cellDone) const;

    int cellIndex(int cx, int cy, int cz) const { return (cz * n_[1] + cy) * n_[0] + cx; }

    Box                     box_;
    double                  rc2_;
    int                     n_[3]    = { 1, 1, 1 };
    int                     range_   = 2;
    std::vector<int>        cellStart_; // numCells + 1
    std::vector<int>        order_;     // topology index of each sorted atom
    std::vector<Vec3<real>> xs_;        // wrapped positions, sorted by cell
    std::vector<std::array<int, 3>> wrap_; // x_wrapped = x - wrap . box, sorted by cell
    // the same, one array each, padded (the candidate filter reads them)
    std::vector<real>           xsX_, xsY_, xsZ_;
    std::vector<CandidateIndex> orderIndex_, noZone_;
};

template<typename Fn>
void CellGrid::forEachPairWithShift(Fn&& fn, int czBegin, int czEnd) const
{
    forEachPairWithShift(fn, czBegin, czEnd, NoCellDone{});
}

template<typename Fn, typename CellDone>
void CellGrid::forEachPairWithShift(Fn&& fn, int czBegin, int czEnd, CellDone&& cellDone) const
{
    const Matrix3&   b = box_.vectors();
    const real       rc2 = real(rc2_);
    std::vector<CandidateIndex> hits; // candidates of one atom in one cell that are pairs (sorted positions)
    const CandidateRow          row{ xsX_.data(), xsY_.data(), xsZ_.data(), orderIndex_.data(), noZone_.data() };
    for (int cz = czBegin; cz < czEnd; cz++)
    {
        for (int cy = 0; cy < n_[1]; cy++)
        {
            for (int cx = 0; cx < n_[0]; cx++)
            {
                const int c = cellIndex(cx, cy, cz);
                for (int oz = -range_; oz <= range_; oz++)
                {
                    const int uz = cz + oz, wz = ((uz % n_[2]) + n_[2]) % n_[2], sz = (uz - wz) / n_[2];
                    for (int oy = -range_; oy <= range_; oy++)
                    {
                        const int uy = cy + oy, wy = ((uy % n_[1]) + n_[1]) % n_[1], sy = (uy - wy) / n_[1];
                        for (int ox = -range_; ox <= range_; ox++)
                        {
                            const int  ux = cx + ox, wx = ((ux % n_[0]) + n_[0]) % n_[0], sx = (ux - wx) / n_[0];
                            const Vec3<real> shift(real(sx * b(0, 0) + sy * b(1, 0) + sz * b(2, 0)),
                                                   real(sx * b(0, 1) + sy * b(1, 1) + sz * b(2, 1)),
                                                   real(sx * b(0, 2) + sy * b(1, 2) + sz * b(2, 2)));
                            const int  nc = cellIndex(wx, wy, wz);
                            const int nb = cellStart_[nc], ne = cellStart_[nc + 1];
                            hits.resize(std::max<size_t>(hits.size(), size_t(ne - nb) + c_candidateSlack));
                            for (int a = cellStart_[c]; a < cellStart_[c + 1]; a++)
                            {
                                const int        i  = order_[a];
                                const Vec3<real> xi = xs_[a] - shift;
                                // the candidates first (half fail j > i at random, and
                                // most of the rest r^2 < rc^2; candidate_filter.h), then
                                // the pairs
                                const CandidateQuery q{ xi[0], xi[1], xi[2], i, 0, rc2 };
                                const int m = filterCandidatesSimd(row, q, nb, ne, hits.data());
                                for (int h = 0; h < m; h++)
                                {
                                    const int          bb = static_cast<int>(hits[h]);
                                    const int          j  = order_[bb];
                                    const Vec3<real>   d  = xi - xs_[bb];
                                    const real         r2 = norm2(d);
                                    const auto&        wi = wrap_[a];
                                    const auto&        wj = wrap_[bb];
                                    const std::array<int, 3> k = { sx + wi[0] - wj[0], sy + wi[1] - wj[1],
                                                                   sz + wi[2] - wj[2] };
                                    fn(i, j, d, r2, k);
                                }
                            }
                        }
                    }
                }
                cellDone(c);
            }
        }
    }
}

} // namespace putmd
