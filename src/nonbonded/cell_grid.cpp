#include "nonbonded/cell_grid.h"

#include <algorithm>
#include <cmath>

namespace putmd
{

CellGrid::CellGrid(const Box& box, const std::vector<Vec3<real>>& x, double rc) : box_(box), rc2_(rc * rc)
{
    // cells of at least rc/range; coarser when that would give more cells
    // than about two per atom (tiny cut-offs), which keeps memory O(N)
    double want[3];
    double total = 1;
    for (int d = 0; d < 3; d++)
    {
        want[d] = std::max(1.0, std::floor(box.perpendicularWidth(d) * range_ / rc));
        total *= want[d];
    }
    const double maxCells = std::max(27.0, 2.0 * x.size());
    const double scale    = total > maxCells ? std::cbrt(maxCells / total) : 1.0;
    for (int d = 0; d < 3; d++)
    {
        n_[d] = std::max(1, static_cast<int>(std::floor(want[d] * scale)));
    }
    const int          numCells = n_[0] * n_[1] * n_[2];
    const int          natoms   = static_cast<int>(x.size());
    std::vector<int>   cellOf(natoms);
    std::vector<DVec>  wrapped(natoms);
    std::vector<std::array<int, 3>> wrapOf(natoms);
    for (int i = 0; i < natoms; i++)
    {
        DVec s = box.toFractional(DVec(x[i]));
        int  c[3];
        for (int d = 0; d < 3; d++)
        {
            const double fl = std::floor(s[d]);
            wrapOf[i][d]    = static_cast<int>(fl);
            s[d] -= fl;
            c[d] = std::min(n_[d] - 1, static_cast<int>(s[d] * n_[d]));
        }
        wrapped[i] = box.fromFractional(s);
        cellOf[i]  = cellIndex(c[0], c[1], c[2]);
    }
    cellStart_.assign(numCells + 1, 0);
    for (int i = 0; i < natoms; i++)
    {
        cellStart_[cellOf[i] + 1]++;
    }
    for (int c = 0; c < numCells; c++)
    {
        cellStart_[c + 1] += cellStart_[c];
    }
    order_.resize(natoms);
    xs_.resize(natoms);
    wrap_.resize(natoms);
    std::vector<int> fill(cellStart_.begin(), cellStart_.end() - 1);
    for (int i = 0; i < natoms; i++)
    {
        const int pos = fill[cellOf[i]]++;
        order_[pos]   = i;
        xs_[pos]      = Vec3<real>(wrapped[i]);
        wrap_[pos]    = wrapOf[i];
    }
    const size_t padded = size_t(natoms) + c_candidateSlack;
    xsX_.assign(padded, real(0));
    xsY_.assign(padded, real(0));
    xsZ_.assign(padded, real(0));
    orderIndex_.assign(padded, 0);
    noZone_.assign(padded, 0);
    for (int a = 0; a < natoms; a++)
    {
        xsX_[a]        = xs_[a][0];
        xsY_[a]        = xs_[a][1];
        xsZ_[a]        = xs_[a][2];
        orderIndex_[a] = order_[a];
    }
}

} // namespace putmd
