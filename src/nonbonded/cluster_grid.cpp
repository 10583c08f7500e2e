#include "nonbonded/cluster_grid.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace putmd
{

/* The three ways to cut four atoms into two halves (slots 0-1 and 2-3). */
static constexpr int c_pairings[3][4] = { { 0, 1, 2, 3 }, { 0, 2, 1, 3 }, { 0, 3, 1, 2 } };

void ClusterGrid::halvesOf(int* atoms, const uint8_t* leading) const
{
    int   best = 0, bestFlagged = 3;
    float bestSpread = 0;
    for (int q = 0; q < 3; q++)
    {
        const int* h = c_pairings[q];
        const int  flagged = int(leading[atoms[h[0]]] || leading[atoms[h[1]]]) + int(leading[atoms[h[2]]] || leading[atoms[h[3]]]);
        const float spread = norm2(xw_[atoms[h[0]]] - xw_[atoms[h[1]]]) + norm2(xw_[atoms[h[2]]] - xw_[atoms[h[3]]]);
        if (flagged < bestFlagged || (flagged == bestFlagged && spread < bestSpread))
        {
            best = q, bestFlagged = flagged, bestSpread = spread;
        }
    }
    const int* h      = c_pairings[best];
    const int  cut[4] = { atoms[h[0]], atoms[h[1]], atoms[h[2]], atoms[h[3]] };
    std::copy(cut, cut + 4, atoms);
}

void ClusterGrid::build(const Box& box, const std::vector<Vec3<real>>& x, bool periodic, int numHome,
                        const uint8_t* leading, int numThreads)
{
    numLayers_ = numHome >= 0 && !periodic ? 2 : 1;
    const int n  = static_cast<int>(x.size());
    const int nt = std::max(1, std::min(numThreads, n / 1024 + 1));
    xw_.resize(n);
    wrapOfAtom_.resize(n);
    // wrapped coordinates and each thread's part of the atoms' bounds
    std::vector<std::array<float, 6>> bounds(nt, { 1e30f, 1e30f, 1e30f, -1e30f, -1e30f, -1e30f });
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++)
    {
        auto& bt = bounds[t];
        for (int i = static_cast<int>(long(n) * t / nt); i < static_cast<int>(long(n) * (t + 1) / nt); i++)
        {
            wrapOfAtom_[i] = { 0, 0, 0 };
            if (periodic)
            {
                DVec s = box.toFractional(DVec(x[i]));
                for (int d = 0; d < 3; d++)
                {
                    const double fl   = std::floor(s[d]);
                    wrapOfAtom_[i][d] = static_cast<int>(fl);
                    s[d] -= fl;
                }
                xw_[i] = Vec3<float>(box.fromFractional(s));
            }
            else
            {
                xw_[i] = Vec3<float>(x[i]);
            }
            for (int d = 0; d < 3; d++)
            {
                bt[d]     = std::min(bt[d], xw_[i][d]);
                bt[3 + d] = std::max(bt[3 + d], xw_[i][d]);
            }
        }
    }
    // the xy rectangle and z range of the atoms (min and max: any order)
    float lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
    for (int d = 0; d < 3 && n > 0; d++)
    {
        lo[d] = bounds[0][d];
        hi[d] = bounds[0][3 + d];
        for (int t = 1; t < nt; t++)
        {
            lo[d] = std::min(lo[d], bounds[t][d]);
            hi[d] = std::max(hi[d], bounds[t][3 + d]);
        }
    }
    zRange_[0] = lo[2];
    zRange_[1] = hi[2];
    // columns of about four atoms per cube of side w
    const double volume  = std::max(1e-6, double(hi[0] - lo[0]) * (hi[1] - lo[1]) * std::max(1e-3f, hi[2] - lo[2]));
    const double density = std::max(1.0, n / volume);
    const double side    = std::cbrt(c_clusterSize / density);
    for (int d = 0; d < 2; d++)
    {
        const double extent = std::max(1e-3, double(hi[d] - lo[d]));
        numCol_[d]          = std::max(1, std::min(4096, static_cast<int>(extent / side)));
        origin_[d]          = lo[d];
        width_[d]           = float(extent / numCol_[d]) * (1 + 1e-6f);
    }
    const int numXy      = numCol_[0] * numCol_[1];
    const int numColumns = numXy * numLayers_;
    columnOf_.resize(n);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int i = 0; i < n; i++)
    {
        int c[2];
        for (int d = 0; d < 2; d++)
        {
            c[d] = std::clamp(static_cast<int>((xw_[i][d] - origin_[d]) / width_[d]), 0, numCol_[d] - 1);
        }
        columnOf_[i] = c[1] * numCol_[0] + c[0] + (numLayers_ == 2 && i >= numHome ? numXy : 0);
    }
    // atoms in column order (a counting sort: within a column in index
    // order), then each column by z, ties in index order: the order of one
    // stable sort by (column, z), which took most of this function's time
    // on one thread
    columnCount_.assign(numColumns, 0);
    for (int i = 0; i < n; i++)
    {
        columnCount_[columnOf_[i]]++;
    }
    atomStart_.assign(numColumns + 1, 0);
    for (int c = 0; c < numColumns; c++)
    {
        atomStart_[c + 1] = atomStart_[c] + columnCount_[c];
    }
    order_.resize(n);
    {
        std::vector<int> fill(atomStart_.begin(), atomStart_.end() - 1);
        for (int i = 0; i < n; i++)
        {
            order_[fill[columnOf_[i]]++] = i;
        }
    }
    columnStart_.assign(numColumns + 1, 0);
    for (int c = 0; c < numColumns; c++)
    {
        columnStart_[c + 1] = columnStart_[c] + (columnCount_[c] + c_clusterSize - 1) / c_clusterSize;
    }
    numClusters_ = columnStart_[numColumns];
    atomOfSlot_.resize(numSlots());
    wrap_.resize(numSlots());
    slotOfAtom_.assign(n, -1);
    boxes_.resize(numClusters_);
    // per column: z order, the flagged atoms first in each cluster and a
    // full cluster's halves (halvesOf), the slots, the clusters' boxes
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int c = 0; c < numColumns; c++)
    {
        int* const colAtoms = order_.data() + atomStart_[c];
        std::stable_sort(colAtoms, colAtoms + columnCount_[c], [&](int a, int b) { return xw_[a].z < xw_[b].z; });
        if (leading)
        {
            // a stable partition of each cluster's four
            for (int m = 0; m < columnCount_[c]; m += c_clusterSize)
            {
                int* const first = colAtoms + m;
                const int  len   = std::min(c_clusterSize, columnCount_[c] - m);
                int        rest[c_clusterSize];
                int        nLead = 0, nRest = 0;
                for (int i = 0; i < len; i++)
                {
                    const int a = first[i];
                    if (leading[a] != 0)
                    {
                        first[nLead++] = a;
                    }
                    else
                    {
                        rest[nRest++] = a;
                    }
                }
                std::copy(rest, rest + nRest, first + nLead);
                if (len == c_clusterSize)
                {
                    halvesOf(first, leading);
                }
            }
        }
        const int firstSlot = columnStart_[c] * c_clusterSize, endSlot = columnStart_[c + 1] * c_clusterSize;
        for (int slot = firstSlot, m = 0; slot < endSlot; slot++, m++)
        {
            const int a       = m < columnCount_[c] ? colAtoms[m] : -1;
            atomOfSlot_[slot] = a;
            wrap_[slot]       = a >= 0 ? wrapOfAtom_[a] : std::array<int, 3>{ 0, 0, 0 };
            if (a >= 0)
            {
                slotOfAtom_[a] = slot;
            }
        }
        for (int ci = columnStart_[c]; ci < columnStart_[c + 1]; ci++)
        {
            ClusterBox& b   = boxes_[ci];
            bool        any = false;
            for (int s = ci * c_clusterSize; s < (ci + 1) * c_clusterSize; s++)
            {
                if (atomOfSlot_[s] < 0)
                {
                    continue;
                }
                const Vec3<float>& p = xw_[atomOfSlot_[s]];
                for (int d = 0; d < 3; d++)
                {
                    b.lower[d] = any ? std::min(b.lower[d], p[d]) : p[d];
                    b.upper[d] = any ? std::max(b.upper[d], p[d]) : p[d];
                }
                any = true;
            }
        }
    }
}

} // namespace putmd
