/* nonbonded/cluster_pair_list.h — the list of interacting cluster pairs.
 *
 * An i-entry is one cluster of the grid with one periodic image shift
 * (index (kx+1)*9 + (ky+1)*3 + kz+1 of k in {-1,0,1}^3, 13 for no shift;
 * the i-cluster is moved by k . box); its j-entries are clusters with a
 * 16-bit interaction mask, bit 4*ii + jj for i-slot ii and j-slot jj. A
 * cleared bit is a padding slot, an excluded pair or, for a cluster with
 * itself, the lower triangle and diagonal: every atom pair appears in the
 * list once (a half list). The kernels compute all 16 pairs of an entry and
 * keep those with the bit set that are inside the cut-off.
 *
 * search() finds every cluster pair whose bounding boxes come within rlist
 * (so the list holds every atom pair within rlist and some more: a cluster
 * list is a superset of the atom pair list of the same radius, which keeps
 * the Verlet buffer estimate valid). fromPairs() makes the list of an
 * explicit set of atom pairs instead (the domain decomposition, whose
 * zones decide which pairs a rank computes).
 */
#pragma once

#include <cstdint>
#include <vector>

#include "core/box.h"
#include "nonbonded/cluster_grid.h"
#include "nonbonded/cluster_pair_types.h"
#include "topology/topology.h"

namespace putmd
{

/* Which pairs of a non-periodic search a domain-decomposed rank computes
 * (domdec.h): zone[a] is the zone mask of grid atom a (0 for home atoms);
 * a pair is kept when the AND of its atoms' masks is zero and, with
 * skipHomePairs, when not both atoms are home (those are in the home list). */
struct ZoneFilter
{
    const int* zone          = nullptr;
    bool       skipHomePairs = false;
};

class ClusterPairList
{
public:
    /* Every cluster pair (and image) with bounding boxes closer than rlist;
     * exclusions of top masked out. Requires rlist below half of every
     * perpendicular width of the box when periodic. With zones (only
     * without periodic images) the atom pairs the filter drops are masked
     * out; exclusions of atoms outside the grid are ignored (a grid of a
     * rank's home atoms). Threads take ranges of i-clusters with equal
     * shares of the last list's entries (splitClusters); the result does
     * not depend on their number or the split.
     * spare: storage the caller holds and does not need while the list is
     * made (the stale pruned list), lent to the second thread as the room
     * for its entries and handed back afterwards with unspecified contents
     * (memory touched before: no page faults, no allocation). */
    void search(const ClusterGrid& grid, const Box& box, double rlist, const Topology& top, bool periodic,
                int numThreads = 1, const ZoneFilter* zones = nullptr, std::vector<ClusterPairJ>* spare = nullptr);

    /* Exactly the atom pairs (a, j[p]) for p in [start[a], start[a + 1]),
     * atom indices of the grid's atoms, no shifts. */
    void fromPairs(const ClusterGrid& grid, const std::vector<int>& start, const std::vector<int>& j);

    /* Reorders each i-entry's j-clusters: those with last[cj] == 0 first,
     * then the others, each part in its former order (the kernels skip
     * Lennard-Jones for j-clusters without it, and the branch is then
     * taken the same way along an entry). Threads over the entries. */
    void partitionJ(const std::vector<uint8_t>& last, int numThreads = 1);

    const std::vector<ClusterPairI>& iEntries() const { return i_; }
    const std::vector<ClusterPairJ>& jEntries() const { return j_; }
    /* Atom pairs with their mask bit set. */
    size_t numAtomPairs() const;

private:
    void compact();

    std::vector<ClusterPairI> i_;
    std::vector<ClusterPairJ> j_;
    std::vector<int>          firstIOfCluster_; // numClusters + 1
    std::vector<uint32_t>     occupied_;
    std::vector<int>          uniformZone_; // zone search: a cluster's one zone, or -1
    size_t                    lastNumJ_ = 0;
    std::vector<int>          lastEntriesOfCluster_; // the last list's j-entries per i-cluster
    std::vector<int>          ciStart_;              // the threads' i-clusters: [ciStart_[t], ciStart_[t + 1])
    void                      splitClusters(int nc, int nt);
    std::vector<std::vector<ClusterPairI>> threadI_;
    std::vector<std::vector<ClusterPairJ>> threadJ_;
};

/* The lattice vector k . box of shift index s. */
Vec3<float> shiftVector(const Box& box, int s);

} // namespace putmd
