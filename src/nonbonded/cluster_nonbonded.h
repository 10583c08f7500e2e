/* nonbonded/cluster_nonbonded.h — the short-range nonbonded forces with the
 * cluster-pair scheme: the fast path of the mixed-precision build.
 *
 * At a search step the atoms are sorted into clusters of four
 * (cluster_grid.h) and the cluster pairs within rlist are listed with their
 * exclusion masks (cluster_pair_list.h); at every step the coordinates are
 * copied into the grid's slot order and the kernel (cluster_kernel.h; SIMD
 * by default, the plain twin with PUTMD_SIMD=reference) runs over the
 * list, each thread over its share of the i-entries (equal numbers of
 * j-entries) into its own force buffer. The buffers are summed in thread
 * order per atom, energies and shift forces in thread order, so a run is
 * reproducible for a given thread count.
 *
 * Dynamic pruning (setPruning): the list from the search (radius rlist,
 * valid for nstlist steps) is the outer list; every `interval` computes
 * (the first after a search included) the cluster pairs with at least one
 * atom pair closer than rlistInner are copied into the inner list, which
 * the kernel then runs over. rlistInner is the Verlet-buffered radius for
 * `interval` steps, so the inner list holds every pair the kernel needs
 * until the next prune, and a cluster pair dropped is one whose atoms are
 * all out of reach. Pruning removes only cluster pairs whose lanes would
 * all be beyond the cut-off: forces are the same as without it. Same interface as PairList (the
 * atom-pair list that remains the kernel of the double-precision build).
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/aligned_vector.h"
#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/cluster_grid.h"
#include "nonbonded/cluster_kernel.h"
#include "nonbonded/cluster_pair_list.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

enum class ClusterKernelKind { Simd, Reference };

/* PUTMD_SIMD: unset or "auto" the best instruction set, "reference" the
 * plain kernel, "sse4", "avx2" or "avx512" that instruction set at most.
 * Throws InputError for anything else. */
ClusterKernelKind clusterKernelFromEnvironment();

/* The i-rows of a cluster pair that the kernel PUTMD_SIMD selects computes
 * or skips together on a pruned list: 2 for the AVX2 copy (its row halves,
 * cluster_kernel.h), 4 otherwise. The inner list's Verlet buffer is
 * estimated for that i-cluster size. */
int clusterKernelPruneRows();

/* The combination rule the type-pair C6/C12 matrix follows (to relative
 * 1e-5), Matrix when none does; per-type parameters A, B for the kernel
 * (see ClusterLjComb). */
ClusterLjComb detectCombinationRule(const Topology& top, std::vector<float>* a, std::vector<float>* b);

/* Per Lennard-Jones type of top, into typeLJ: 1 where the type has
 * Lennard-Jones with some type (non-zero C6 or C12). The atoms of such
 * types go first in their cluster (ClusterGrid::build's leading flags). */
void lennardJonesTypes(const Topology& top, std::vector<uint8_t>& typeLJ);

class ClusterNonbonded
{
public:
    ClusterNonbonded();

    /* Periodic search around rlist. */
    void build(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist);
    /* Domain decomposition: the pairs a rank computes among its local
     * atoms x (home atoms first, then halo copies placed as explicit
     * images; no periodic shifts), zone[a] their zone masks (domdec.h).
     * homePairs: the grid holds the first numHome atoms and the list all
     * their pairs (computed while the halo travels); otherwise the grid
     * holds every local atom and the list the pairs with a halo atom whose
     * zone masks AND to zero. Exclusions from top (local indices). */
    void buildLocal(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist,
                    const std::vector<int>& zone, int numHome, bool homePairs);
    /* Explicit atom pairs (domain decomposition; explicit images, no
     * shifts); clustered at the next compute, when coordinates come. */
    void setPairs(std::vector<int> start, std::vector<int> j, double rlist);
    void setExclusionCorrections(bool on) { exclusionCorrections_ = on; }
    void setNumThreads(int n) { numThreads_ = n > 0 ? n : 1; }
    void setKernel(ClusterKernelKind kind) { kind_ = kind; }
    /* Tests: use the gathered matrix even when a combination rule holds. */
    void setForceMatrixLj(bool on)
    {
        forceMatrix_ = on;
        setupFor_    = nullptr;
    }
    ClusterLjComb combinationRule() const { return setup_.comb; }
    /* Skip energies on steps without a virial (MD: energies and virial are
     * computed on the same steps). */
    void setEnergiesOnlyWithVirial(bool on) { energiesOnlyWithVirial_ = on; }
    /* Prune the list to rlistInner every `interval` computes (0: never). */
    void setPruning(double rlistInner, int interval)
    {
        rlistInner_    = rlistInner;
        pruneInterval_ = interval;
    }
    /* Frees the lists and buffers (the end of a run); the next compute
     * must follow a build() or setPairs(). */
    void releaseMemory()
    {
        list_ = ClusterPairList();
        std::vector<ClusterPairI>().swap(innerI_);
        std::vector<ClusterPairJ>().swap(innerJ_);
        std::vector<AlignedVector<float>>().swap(threadF_);
        AlignedVector<float>().swap(fsum_);
        std::vector<AlignedVector<float>>().swap(threadJScratch_);
    }
    /* Cluster pairs the kernel ran over at the last compute. */
    size_t numComputedClusterPairs() const { return computedClusterPairs_; }
    /* The same as halves, i-rows 0-1 and 2-3 of a pair (twice the pairs
     * unless pruned; pruned, the halves with a pair within the inner
     * radius at the prune, which the AVX2 kernel computes alone). */
    size_t numComputedRowHalves() const { return computedRowHalves_; }

    size_t numPairs() const { return countFromList_ ? list_.numAtomPairs() : numAtomPairs_; }
    size_t numClusterPairs() const { return list_.jEntries().size(); }
    double rlist() const { return rlist_; }
    std::string kernelName() const;

    void compute(const Topology& top, const InteractionConst& ic, const Box& box, const std::vector<Vec3<real>>& x,
                 std::vector<Vec3<real>>& f, EnergyTerms& energies, Matrix3* virial);
    /* The outer list pruned to the inner radius now, on the coordinates
     * of the last compute (compute() does this every pruning interval;
     * public for nonbonded_kernel_bench, which times it alone). */
    void prune();

private:
    void prepareSetup(const Topology& top, const InteractionConst& ic);
    void fillCoordinates(const Box& box, const std::vector<Vec3<real>>& x);
    void splitByCost(const std::vector<ClusterPairI>& entries, int numThreads);
    /* clusterLJ_: per cluster, bit h set when atom 2h or 2h + 1 has Lennard-Jones. */
    void markLennardJonesClusters(const Topology& top);
    /* Per atom of the first n: 1 where its type has Lennard-Jones (the
     * grid puts those first in their cluster). */
    const uint8_t* leadingAtoms(const Topology& top, size_t n);
    [[noreturn]] void reportOverlap(const Topology& top);

    ClusterKernelKind  kind_;
    int                numThreads_            = 1;
    bool               exclusionCorrections_  = true;
    bool               energiesOnlyWithVirial_ = false;
    bool               forceMatrix_ = false;
    double             rlist_                 = 0;
    size_t             numAtomPairs_          = 0;
    bool               countFromList_         = false;
    ClusterGrid        grid_;
    ClusterPairList    list_;
    std::vector<uint8_t> clusterLJ_; // per cluster (see ClusterKernelInput)
    std::vector<uint8_t> typeLJ_, atomLJ_; // per LJ type, per atom (leadingAtoms)
    ExcludedPairList     excludedPairs_; // for the excluded-pair corrections
    const Topology*      excludedFor_    = nullptr;
    double               excludedEpsfac_ = 0;
    size_t               excludedCount_  = 0;
    double             rlistInner_    = 0;
    int                pruneInterval_ = 0;
    long               computesSinceSearch_ = 0;
    size_t             computedClusterPairs_ = 0;
    size_t             computedRowHalves_    = 0;
    std::vector<ClusterPairI> innerI_;
    std::vector<ClusterPairJ> innerJ_;
    std::vector<ClusterPairJ>* staleInnerList();
    size_t                    innerJCount_ = 0; // innerJ_ has gaps: the entries in use
    size_t                    innerHalfCount_ = 0;
    bool               pendingPairs_ = false;
    std::vector<int>   pairStart_, pairJ_;
    // kernel setup, made when the interaction constants or atoms change
    ClusterKernelSetup setup_;
    const InteractionConst* setupFor_ = nullptr;
    double             setupBeta_ = -1;
    std::vector<float> c6_, c12_, typeA_, typeB_;
    // per step, slot order
    AlignedVector<float>   x_, y_, z_, q_, ljA_, ljB_;
    AlignedVector<int32_t> type_;
    std::vector<AlignedVector<float>> threadF_; // per thread: fx | fy | fz
    AlignedVector<float>              fsum_;    // the threads' sums per slot: x, y, z, 0
    std::vector<AlignedVector<float>> threadJScratch_; // per thread: the SIMD kernel's j-force lanes
    std::vector<int>     threadStart_;
    std::vector<long>    entryCost_; // cost of the entries before each (splitByCost)
    long                 listVersion_  = 0;  // advanced whenever the outer or the inner list changes
    long                 splitVersion_ = -1; // the list version, threads and list kind threadStart_ was made for
    int                  splitThreads_ = 0;
    bool                 splitPruned_  = false;
    std::vector<ClusterKernelOutput> threadOut_;
    float                shift_[c_numShifts * 3] = {};
    long                 gridVersion_ = 0;       // grid_.build calls (the slots' shifts follow the grid)
    bool                 threadFClean_ = false;  // threadF_ all zero (the last compute() finished)
    std::vector<real>    slotShift_;             // each slot's wrap . box (fillCoordinates)
    Matrix3              shiftBox_;              // the box slotShift_ was made with
    long                 shiftListVersion_ = -1; // gridVersion_ slotShift_ was made for
};

} // namespace putmd
