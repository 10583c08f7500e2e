#include "nonbonded/cluster_pair_list.h"

#include <algorithm>
#include <cmath>

namespace putmd
{

namespace
{

constexpr uint32_t c_allPairs = 0xffffu;

/* Bits of the slots of a cluster that hold atoms, as a 4-bit mask. */
uint32_t occupied(const ClusterGrid& grid, int c)
{
    uint32_t m = 0;
    for (int k = 0; k < c_clusterSize; k++)
    {
        m |= (grid.atomOfSlot()[c * c_clusterSize + k] >= 0 ? 1u : 0u) << k;
    }
    return m;
}

/* The 16-bit mask of all pairs between occupied i-slots and j-slots. */
uint32_t pairMask(uint32_t iOccupied, uint32_t jOccupied)
{
    uint32_t m = 0;
    for (int ii = 0; ii < c_clusterSize; ii++)
    {
        if (iOccupied >> ii & 1)
        {
            m |= jOccupied << (c_clusterSize * ii);
        }
    }
    return m;
}

uint32_t upperTriangle()
{
    uint32_t m = 0;
    for (int ii = 0; ii < c_clusterSize; ii++)
    {
        for (int jj = ii + 1; jj < c_clusterSize; jj++)
        {
            m |= 1u << (c_clusterSize * ii + jj);
        }
    }
    return m;
}

float boxDistance2(const ClusterBox& a, const float shift[3], const ClusterBox& b)
{
    float d2 = 0;
    for (int d = 0; d < 3; d++)
    {
        const float gap = std::max(b.lower[d] - (a.upper[d] + shift[d]), (a.lower[d] + shift[d]) - b.upper[d]);
        if (gap > 0)
        {
            d2 += gap * gap;
        }
    }
    return d2;
}

} // namespace

Vec3<float> shiftVector(const Box& box, int s)
{
    const int   k[3] = { s / 9 - 1, s / 3 % 3 - 1, s % 3 - 1 };
    const auto& b    = box.vectors();
    Vec3<float> v;
    for (int d = 0; d < 3; d++)
    {
        v[d] = float(k[0] * b(0, d) + k[1] * b(1, d) + k[2] * b(2, d));
    }
    return v;
}

void ClusterPairList::search(const ClusterGrid& grid, const Box& box, double rlist, const Topology& top, bool periodic)
{
    i_.clear();
    j_.clear();
    const int   nc        = grid.numClusters();
    const float rl        = float(rlist);
    const float rl2       = rl * rl;
    const auto& colStart  = grid.columnStart();
    const auto& boxes     = grid.boxes();
    const uint32_t upper  = upperTriangle();
    std::vector<uint32_t> occ(nc);
    for (int c = 0; c < nc; c++)
    {
        occ[c] = occupied(grid, c);
    }
    firstIOfCluster_.assign(nc + 1, 0);
    for (int ci = 0; ci < nc; ci++)
    {
        firstIOfCluster_[ci] = static_cast<int>(i_.size());
        const ClusterBox& bi = boxes[ci];
        for (int s = periodic ? 0 : c_centerShift; s < (periodic ? c_numShifts : c_centerShift + 1); s++)
        {
            const Vec3<float> t     = shiftVector(box, s);
            const float       sh[3] = { t.x, t.y, t.z };
            if (bi.lower[2] + sh[2] - rl > grid.upperZ() || bi.upper[2] + sh[2] + rl < grid.lowerZ())
            {
                continue;
            }
            int range[2][2];
            bool empty = false;
            for (int d = 0; d < 2; d++)
            {
                const float lo = (bi.lower[d] + sh[d] - rl - grid.columnOrigin(d)) / grid.columnWidth(d);
                const float hi = (bi.upper[d] + sh[d] + rl - grid.columnOrigin(d)) / grid.columnWidth(d);
                if (hi < 0 || lo >= grid.numColumns(d))
                {
                    empty = true;
                    break;
                }
                range[d][0] = std::max(0, static_cast<int>(std::floor(lo)));
                range[d][1] = std::min(grid.numColumns(d) - 1, static_cast<int>(std::floor(hi)));
            }
            if (empty)
            {
                continue;
            }
            const int jBegin = static_cast<int>(j_.size());
            const float zLow = bi.lower[2] + sh[2] - rl, zHigh = bi.upper[2] + sh[2] + rl;
            for (int iy = range[1][0]; iy <= range[1][1]; iy++)
            {
                for (int ix = range[0][0]; ix <= range[0][1]; ix++)
                {
                    const int col = iy * grid.numColumns(0) + ix;
                    for (int cj = std::max(ci, colStart[col]); cj < colStart[col + 1]; cj++)
                    {
                        const ClusterBox& bj = boxes[cj];
                        if (bj.upper[2] < zLow)
                        {
                            continue;
                        }
                        if (bj.lower[2] > zHigh)
                        {
                            break; // sorted by z within the column
                        }
                        if (cj == ci && s < c_centerShift)
                        {
                            continue; // the same pairs as the opposite image
                        }
                        if (boxDistance2(bi, sh, bj) >= rl2)
                        {
                            continue;
                        }
                        uint32_t mask = pairMask(occ[ci], occ[cj]);
                        if (cj == ci && s == c_centerShift)
                        {
                            mask &= upper;
                        }
                        if (mask)
                        {
                            j_.push_back({ cj, mask });
                        }
                    }
                }
            }
            if (static_cast<int>(j_.size()) > jBegin)
            {
                i_.push_back({ ci, s, jBegin, static_cast<int>(j_.size()) });
            }
        }
    }
    firstIOfCluster_[nc] = static_cast<int>(i_.size());
    // exclusions: clear the pair's bit in every image entry holding it
    const auto& slotOf = grid.slotOfAtom();
    for (int a = 0; a < top.numAtoms; a++)
    {
        for (int e = top.exclusionStart[a]; e < top.exclusionStart[a + 1]; e++)
        {
            const int b = top.exclusions[e];
            if (b <= a)
            {
                continue;
            }
            int sa = slotOf[a], sb = slotOf[b];
            if (sa / c_clusterSize > sb / c_clusterSize)
            {
                std::swap(sa, sb);
            }
            const int ca = sa / c_clusterSize, cb = sb / c_clusterSize;
            const int ia = sa % c_clusterSize, ib = sb % c_clusterSize;
            const uint32_t clear = ~((1u << (c_clusterSize * ia + ib)) | (1u << (c_clusterSize * ib + ia)));
            for (int ie = firstIOfCluster_[ca]; ie < firstIOfCluster_[ca + 1]; ie++)
            {
                const ClusterPairI& entry = i_[ie];
                auto it = std::lower_bound(j_.begin() + entry.jBegin, j_.begin() + entry.jEnd, cb,
                                           [](const ClusterPairJ& x, int c) { return x.cj < c; });
                if (it != j_.begin() + entry.jEnd && it->cj == cb)
                {
                    it->mask &= (ca == cb ? clear : ~(1u << (c_clusterSize * ia + ib)));
                }
            }
        }
    }
    compact();
    (void)c_allPairs;
}

void ClusterPairList::fromPairs(const ClusterGrid& grid, const std::vector<int>& start, const std::vector<int>& j)
{
    const int   nc     = grid.numClusters();
    const auto& slotOf = grid.slotOfAtom();
    std::vector<std::vector<ClusterPairJ>> perCluster(nc);
    const int numAtoms = static_cast<int>(start.size()) - 1;
    for (int a = 0; a < numAtoms; a++)
    {
        for (int p = start[a]; p < start[a + 1]; p++)
        {
            int sa = slotOf[a], sb = slotOf[j[p]];
            if (sa / c_clusterSize > sb / c_clusterSize
                || (sa / c_clusterSize == sb / c_clusterSize && sa > sb))
            {
                std::swap(sa, sb);
            }
            perCluster[sa / c_clusterSize].push_back(
                    { sb / c_clusterSize, 1u << (c_clusterSize * (sa % c_clusterSize) + sb % c_clusterSize) });
        }
    }
    i_.clear();
    j_.clear();
    firstIOfCluster_.assign(nc + 1, 0);
    for (int ci = 0; ci < nc; ci++)
    {
        firstIOfCluster_[ci] = static_cast<int>(i_.size());
        auto& list           = perCluster[ci];
        if (list.empty())
        {
            continue;
        }
        std::sort(list.begin(), list.end(), [](const ClusterPairJ& x, const ClusterPairJ& y) { return x.cj < y.cj; });
        const int jBegin = static_cast<int>(j_.size());
        for (const ClusterPairJ& e : list)
        {
            if (static_cast<int>(j_.size()) > jBegin && j_.back().cj == e.cj)
            {
                j_.back().mask |= e.mask;
            }
            else
            {
                j_.push_back(e);
            }
        }
        i_.push_back({ ci, c_centerShift, jBegin, static_cast<int>(j_.size()) });
    }
    firstIOfCluster_[nc] = static_cast<int>(i_.size());
}

void ClusterPairList::compact()
{
    size_t out = 0;
    size_t iOut = 0;
    for (size_t ie = 0; ie < i_.size(); ie++)
    {
        ClusterPairI e     = i_[ie];
        const int    begin = static_cast<int>(out);
        for (int p = e.jBegin; p < e.jEnd; p++)
        {
            if (j_[p].mask)
            {
                j_[out++] = j_[p];
            }
        }
        if (static_cast<int>(out) > begin)
        {
            e.jBegin    = begin;
            e.jEnd      = static_cast<int>(out);
            i_[iOut++] = e;
        }
    }
    j_.resize(out);
    i_.resize(iOut);
    firstIOfCluster_.clear(); // entries moved; only used while masking
}

size_t ClusterPairList::numAtomPairs() const
{
    size_t n = 0;
    for (const ClusterPairJ& e : j_)
    {
        n += static_cast<size_t>(__builtin_popcount(e.mask));
    }
    return n;
}

} // namespace putmd
