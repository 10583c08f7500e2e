#include "nonbonded/cluster_pair_list.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace putmd
{

namespace
{

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

/* std::partition_point without branches: the first cluster of [begin,
 * end) for which before() is false. Along a column (clusters sorted by z,
 * so both their lower and upper z grow) it finds the z window of a search;
 * a column has about 20 clusters and each search is a few conditional
 * moves instead of unpredictable branches. */
template<typename Before>
const ClusterBox* partitionPoint(const ClusterBox* begin, const ClusterBox* end, Before before)
{
    size_t len = end - begin;
    while (len > 0)
    {
        const size_t half = len / 2;
        const bool   in   = before(begin[half]);
        begin             = in ? begin + half + 1 : begin;
        len               = in ? len - half - 1 : half;
    }
    return begin;
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
        const float gap = std::max(0.0f, std::max(b.lower[d] - (a.upper[d] + shift[d]), (a.lower[d] + shift[d]) - b.upper[d]));
        d2 += gap * gap;
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

/* The 4x4 mask of the lane pairs of clusters ci, cj that the zone filter
 * keeps (padding slots have zone 0; occupancy masks them elsewhere). */
uint32_t zonePairMask(const ZoneFilter& f, const std::vector<int>& atomOf, int ci, int cj)
{
    uint32_t m = 0;
    for (int ii = 0; ii < c_clusterSize; ii++)
    {
        const int a  = atomOf[ci * c_clusterSize + ii];
        const int za = a >= 0 ? f.zone[a] : 0;
        for (int jj = 0; jj < c_clusterSize; jj++)
        {
            const int  b    = atomOf[cj * c_clusterSize + jj];
            const int  zb   = b >= 0 ? f.zone[b] : 0;
            const bool keep = (za & zb) == 0 && !(f.skipHomePairs && za == 0 && zb == 0);
            m |= (keep ? 1u : 0u) << (c_clusterSize * ii + jj);
        }
    }
    return m;
}

void ClusterPairList::search(const ClusterGrid& grid, const Box& box, double rlist, const Topology& top, bool periodic,
                             int numThreads, const ZoneFilter* zones, std::vector<ClusterPairJ>* spare)
{
    const int   nc       = grid.numClusters();
    const float rl       = float(rlist);
    const float rl2      = rl * rl;
    const auto& colStart = grid.columnStart();
    const auto& boxes    = grid.boxes();
    const auto& slotOf   = grid.slotOfAtom();
    const auto& atomOf   = grid.atomOfSlot();
    const uint32_t upper = upperTriangle();
    const int      numGridAtoms = static_cast<int>(slotOf.size());
    occupied_.resize(nc);
    for (int c = 0; c < nc; c++)
    {
        occupied_[c] = occupied(grid, c);
    }
    if (zones)
    {
        // the zone of each cluster whose atoms share one, else -1
        uniformZone_.assign(nc, -1);
        for (int c = 0; c < nc; c++)
        {
            int z = -2;
            for (int k = 0; k < c_clusterSize; k++)
            {
                const int a = atomOf[c * c_clusterSize + k];
                if (a >= 0)
                {
                    z = z == -2 || z == zones->zone[a] ? zones->zone[a] : -1;
                }
            }
            uniformZone_[c] = z == -2 ? 0 : z;
        }
    }
    // xy bounds of each column's clusters (empty columns: never in reach)
    const int                         numXy   = grid.numColumns(0) * grid.numColumns(1);
    const int                         numCols = numXy * grid.numLayers();
    // home and halo layers (a decomposed rank's pairs with a halo atom): a
    // home i-cluster looks at the halo layer only
    const int firstLayerForHome = zones && zones->skipHomePairs && grid.numLayers() == 2 ? 1 : 0;
    const int firstHalo         = grid.firstHaloCluster();
    std::vector<std::array<float, 2>> colLower(numCols, { 1e30f, 1e30f }), colUpper(numCols, { -1e30f, -1e30f });
    for (int col = 0; col < numCols; col++)
    {
        for (int c = colStart[col]; c < colStart[col + 1]; c++)
        {
            for (int d = 0; d < 2; d++)
            {
                colLower[col][d] = std::min(colLower[col][d], boxes[c].lower[d]);
                colUpper[col][d] = std::max(colUpper[col][d], boxes[c].upper[d]);
            }
        }
    }
    Vec3<float> shifts[c_numShifts];
    for (int s = 0; s < c_numShifts; s++)
    {
        shifts[s] = shiftVector(box, s);
    }
    // each thread lists the pairs of its own range of i-clusters and masks
    // their exclusions; the lists are joined in thread order
    const int nt = std::max(1, std::min(numThreads, nc));
    threadI_.resize(nt);
    threadJ_.resize(nt);
    // the old list is not needed while the new one is made: its j-storage
    // becomes thread 0's room (which becomes the list), so that the list's
    // memory is neither given back nor touched fresh (page faults) at every
    // search, and is held once (peak memory)
    std::vector<ClusterPairI>().swap(i_);
    threadJ_[0].swap(j_);
    std::vector<ClusterPairJ>().swap(j_);
    // the second thread's room: the caller's spare storage (a buffer
    // allocated afresh at every search was page faults on the second
    // thread only: its share took it a third longer than the first's)
    if (spare != nullptr && nt > 1)
    {
        threadJ_[1].swap(*spare);
    }
    std::vector<std::vector<std::pair<int, int>>> deferred(nt); // exclusions owned by a lower cluster
    // room for each thread's share without growing by doubling (peak memory):
    // the last list's size, or at the first search the clusters within
    // reach of a cluster's box (a sphere of rlist plus a cluster width:
    // 1.08 times the list of 33k-atom rnase; 1.49 with 1.5 widths)
    size_t expectedJ = lastNumJ_;
    if (expectedJ == 0 && nc > 0)
    {
        const double volume = std::max(1e-9, double(grid.columnWidth(0)) * grid.numColumns(0) * grid.columnWidth(1)
                                                     * grid.numColumns(1)
                                                     * std::max(1e-3f, grid.upperZ() - grid.lowerZ()));
        const double side  = std::cbrt(volume / nc);
        const double reach = rlist + side;
        expectedJ = size_t(nc * 0.5 * 4.18879 * reach * reach * reach * nc / volume);
    }
    splitClusters(nc, nt);
#pragma omp parallel num_threads(nt)
    {
        const int t       = nt > 1 ? omp_get_thread_num() : 0;
        const int ciBegin = ciStart_[t], ciEnd = ciStart_[t + 1];
        auto&     iOut    = threadI_[t];
        auto&     jOut    = threadJ_[t];
        iOut.clear();
        jOut.clear();
        // thread 0's buffer becomes the list: room for all of it
        jOut.resize(size_t(1.1 * expectedJ / (t == 0 ? 1 : nt)) + 1024);
        std::vector<int> firstI(ciEnd - ciBegin + 1, 0);
        size_t           nj = 0; // entries in jOut (its size is the room)
        for (int ci = ciBegin; ci < ciEnd; ci++)
        {
            firstI[ci - ciBegin] = static_cast<int>(iOut.size());
            const ClusterBox& bi = boxes[ci];
            // pair mask = occupied j slots repeated in the rows of occupied
            // i slots: a product (the nibbles cannot carry)
            uint32_t iRows = 0;
            for (int ii = 0; ii < c_clusterSize; ii++)
            {
                iRows |= (occupied_[ci] >> ii & 1u) << (c_clusterSize * ii);
            }
            for (int s = periodic ? 0 : c_centerShift; s < (periodic ? c_numShifts : c_centerShift + 1); s++)
            {
                const float sh[3] = { shifts[s].x, shifts[s].y, shifts[s].z };
                if (bi.lower[2] + sh[2] - rl > grid.upperZ() || bi.upper[2] + sh[2] + rl < grid.lowerZ())
                {
                    continue;
                }
                int  range[2][2];
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
                const int   jBegin = static_cast<int>(nj);
                const float zLow = bi.lower[2] + sh[2] - rl, zHigh = bi.upper[2] + sh[2] + rl;
                for (int layer = ci < firstHalo ? firstLayerForHome : 0; layer < grid.numLayers(); layer++)
                for (int iy = range[1][0]; iy <= range[1][1]; iy++)
                {
                    for (int ix = range[0][0]; ix <= range[0][1]; ix++)
                    {
                        const int col = layer * numXy + iy * grid.numColumns(0) + ix;
                        // the column's xy bounds: skip it when they are out of reach
                        float xy2 = 0;
                        for (int d = 0; d < 2; d++)
                        {
                            const float gap = std::max(colLower[col][d] - (bi.upper[d] + sh[d]),
                                                       (bi.lower[d] + sh[d]) - colUpper[col][d]);
                            xy2 += gap > 0 ? gap * gap : 0.0f;
                        }
                        if (xy2 >= rl2)
                        {
                            continue;
                        }
                        // the clusters of the column in the z window
                        // [zLow, zHigh]: upper and lower z grow along a
                        // column (its atoms are sorted by z)
                        const ClusterBox* colBegin = boxes.data() + std::max(ci, colStart[col]);
                        const ClusterBox* colEnd   = boxes.data() + std::max(std::max(ci, colStart[col]), colStart[col + 1]);
                        const ClusterBox* first    = partitionPoint(colBegin, colEnd, [zLow](const ClusterBox& b) {
                            return b.upper[2] < zLow;
                        });
                        const ClusterBox* last = partitionPoint(first, colEnd, [zHigh](const ClusterBox& b) {
                            return b.lower[2] <= zHigh;
                        });
                        // branch-free: every candidate is written, and the
                        // end moves on only for those in reach (whether a
                        // bounding box is in reach is a coin toss for the
                        // branch predictor)
                        if (nj + (last - first) > jOut.size())
                        {
                            jOut.resize(std::max(jOut.size() + jOut.size() / 4, nj + (last - first) + 4096));
                        }
                        ClusterPairJ* out = jOut.data();
                        for (int cj = int(first - boxes.data()); cj < int(last - boxes.data()); cj++)
                        {
                            uint32_t mask = occupied_[cj] * iRows;
                            if (zones)
                            {
                                // most clusters lie in one zone: all lanes or none
                                const int zi = uniformZone_[ci], zj = uniformZone_[cj];
                                if (zi >= 0 && zj >= 0)
                                {
                                    const bool keep = (zi & zj) == 0 && !(zones->skipHomePairs && zi == 0 && zj == 0);
                                    mask            = keep ? mask : 0;
                                }
                                else
                                {
                                    mask &= zonePairMask(*zones, atomOf, ci, cj);
                                }
                            }
                            if (cj == ci)
                            {
                                // the cluster with itself: each pair once
                                // (upper triangle). With an image shift the
                                // entry of shift s holds every pair (a, b)
                                // with both images +k and -k (as (a, b) and
                                // (b, a)), the same as the entry of the
                                // opposite shift: keep one of the two. (A
                                // cluster long enough in z to reach its own
                                // image is a sparse column, e.g. beside a
                                // vacuum; dropping both lost its pairs.)
                                mask = s == c_centerShift ? mask & upper : (s > c_centerShift ? mask : 0);
                            }
                            out[nj] = { cj, static_cast<uint16_t>(mask) };
                            nj += (boxDistance2(bi, sh, boxes[cj]) < rl2) & (mask != 0);
                        }
                    }
                }
                if (static_cast<int>(nj) > jBegin)
                {
                    iOut.push_back({ ci, s, jBegin, static_cast<int>(nj) });
                }
            }
        }
        jOut.resize(nj);
        firstI[ciEnd - ciBegin] = static_cast<int>(iOut.size());
        // exclusions: clear the pair's bit in every image entry holding it.
        // Per i-cluster, the bits to keep are collected per j-cluster in a
        // dense array, then every j entry of the cluster's image entries
        // takes its mask from it: one pass over the list (a binary search
        // per excluded pair and image entry was 70% of the search).
        std::vector<uint32_t> keep(nc, ~0u);
        std::vector<int> touched;
        for (int ci = ciBegin; ci < ciEnd; ci++)
        {
            touched.clear();
            for (int slot = ci * c_clusterSize; slot < (ci + 1) * c_clusterSize; slot++)
            {
                const int a = atomOf[slot];
                if (a < 0)
                {
                    continue;
                }
                const int ia = slot % c_clusterSize;
                for (int e = top.exclusionStart[a]; e < top.exclusionStart[a + 1]; e++)
                {
                    const int b = top.exclusions[e];
                    if (b == a || b >= numGridAtoms)
                    {
                        continue;
                    }
                    const int sb = slotOf[b], cb = sb / c_clusterSize, ib = sb % c_clusterSize;
                    if (cb > ci || (cb == ci && ib > ia))
                    {
                        const uint32_t clear = cb == ci ? ~((1u << (c_clusterSize * ia + ib)) | (1u << (c_clusterSize * ib + ia)))
                                                        : ~(1u << (c_clusterSize * ia + ib));
                        if (keep[cb] == ~0u)
                        {
                            touched.push_back(cb);
                        }
                        keep[cb] &= clear;
                    }
                    else if (cb < ci)
                    {
                        // the entry belongs to b's cluster: cleared when b's
                        // list names a (symmetric lists, the usual case; a
                        // short scan), otherwise after the threads
                        const auto first = top.exclusions.begin() + top.exclusionStart[b];
                        const auto last  = top.exclusions.begin() + top.exclusionStart[b + 1];
                        if (std::find(first, last, a) == last)
                        {
                            deferred[t].push_back({ b, a });
                        }
                    }
                }
            }
            if (touched.empty())
            {
                continue;
            }
            for (int ie = firstI[ci - ciBegin]; ie < firstI[ci - ciBegin + 1]; ie++)
            {
                for (int k = iOut[ie].jBegin; k < iOut[ie].jEnd; k++)
                {
                    jOut[k].mask &= keep[jOut[k].cj];
                }
            }
            for (int cb : touched)
            {
                keep[cb] = ~0u;
            }
        }
    }
    // join in thread order; the thread buffers are released (the second
    // thread's goes back to the caller as its spare), so the list is held
    // once (memory per atom matters as much as speed)
    size_t totalI = 0, totalJ = 0;
    for (int t = 0; t < nt; t++)
    {
        totalI += threadI_[t].size();
        totalJ += threadJ_[t].size();
    }
    lastNumJ_ = totalJ;
    // thread 0's buffers become the list (no copy; the other threads'
    // entries are appended, usually within the room reserved)
    i_.swap(threadI_[0]);
    j_.swap(threadJ_[0]);
    if (nt > 1)
    {
        i_.reserve(totalI);
        j_.reserve(totalJ);
        for (int t = 1; t < nt; t++)
        {
            const int offset = static_cast<int>(j_.size());
            for (ClusterPairI e : threadI_[t])
            {
                e.jBegin += offset;
                e.jEnd += offset;
                i_.push_back(e);
            }
            j_.insert(j_.end(), threadJ_[t].begin(), threadJ_[t].end());
            std::vector<ClusterPairI>().swap(threadI_[t]);
            if (t == 1 && spare != nullptr)
            {
                spare->swap(threadJ_[t]); // back to the caller
            }
            std::vector<ClusterPairJ>().swap(threadJ_[t]);
        }
    }
    // exclusions listed only on the higher cluster's atom (a topology whose
    // exclusion lists are not symmetric): cleared here, one thread (a
    // binary search per pair: this was 70% of the search when every pair
    // with the lower cluster second came here)
    firstIOfCluster_.assign(nc + 1, static_cast<int>(i_.size()));
    for (int ie = static_cast<int>(i_.size()) - 1; ie >= 0; ie--)
    {
        firstIOfCluster_[i_[ie].ci] = ie;
    }
    for (int c = nc - 1; c >= 0; c--)
    {
        firstIOfCluster_[c] = std::min(firstIOfCluster_[c], firstIOfCluster_[c + 1]);
    }
    for (const auto& list : deferred)
    {
        for (const auto& [b, a] : list)
        {
            const int sb = slotOf[b], sa = slotOf[a];
            const int cb = sb / c_clusterSize, ca = sa / c_clusterSize;
            for (int ie = firstIOfCluster_[cb]; ie < firstIOfCluster_[cb + 1]; ie++)
            {
                const ClusterPairI& entry = i_[ie];
                auto it = std::lower_bound(j_.begin() + entry.jBegin, j_.begin() + entry.jEnd, ca,
                                           [](const ClusterPairJ& x, int c) { return x.cj < c; });
                if (it != j_.begin() + entry.jEnd && it->cj == ca)
                {
                    it->mask &= ~(1u << (c_clusterSize * (sb % c_clusterSize) + sa % c_clusterSize));
                }
            }
        }
    }
    compact();
}

void ClusterPairList::partitionJ(const std::vector<uint8_t>& last, int numThreads)
{
    const int ni = static_cast<int>(i_.size());
    const int nt = std::max(1, std::min(numThreads, ni / 64 + 1));
#pragma omp parallel num_threads(nt)
    {
        std::vector<ClusterPairJ> later;
#pragma omp for schedule(static)
        for (int ie = 0; ie < ni; ie++)
        {
            later.clear();
            int out = i_[ie].jBegin;
            for (int k = i_[ie].jBegin; k < i_[ie].jEnd; k++)
            {
                if (last[j_[k].cj])
                {
                    later.push_back(j_[k]);
                }
                else
                {
                    j_[out++] = j_[k];
                }
            }
            std::copy(later.begin(), later.end(), j_.begin() + out);
        }
    }
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
                    { sb / c_clusterSize,
                      static_cast<uint16_t>(1u << (c_clusterSize * (sa % c_clusterSize) + sb % c_clusterSize)) });
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

/* The threads' ranges of i-clusters: equal shares of the last list's
 * j-entries (8 more per cluster for its own work), that list's cluster
 * (scaled) standing in for a cluster of the new grid; equal numbers of
 * clusters at the first search. Equal numbers gave the first of two
 * threads 316k of water-spce-12k's entries and the second 203k (the half
 * list puts a pair across the periodic boundary on the cluster first in
 * the grid's order). The list does not depend on the split. */
void ClusterPairList::splitClusters(int nc, int nt)
{
    ciStart_.assign(nt + 1, nc);
    const int old = static_cast<int>(lastEntriesOfCluster_.size());
    if (old == 0 || nt == 1)
    {
        for (int t = 0; t < nt; t++)
        {
            ciStart_[t] = static_cast<int>(long(nc) * t / nt);
        }
        return;
    }
    std::vector<long> prefix(size_t(nc) + 1, 0);
    for (int c = 0; c < nc; c++)
    {
        prefix[c + 1] = prefix[c] + lastEntriesOfCluster_[size_t(long(c) * old / nc)] + 8;
    }
    for (int t = 0; t < nt; t++)
    {
        const long target = prefix[nc] * t / nt;
        ciStart_[t] = static_cast<int>(std::lower_bound(prefix.begin(), prefix.end() - 1, target) - prefix.begin());
    }
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
    lastEntriesOfCluster_.assign(occupied_.size(), 0);
    for (const ClusterPairI& e : i_)
    {
        lastEntriesOfCluster_[e.ci] += e.jEnd - e.jBegin;
    }
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
