/* nonbonded/cluster_pair_types.h — the entries of a cluster-pair list
 * (cluster_pair_list.h), apart from the list and the grid so that the
 * kernels (cluster_kernel.h), which depend on no precision, need neither.
 */
#pragma once

#include <cstdint>

namespace putmd
{

constexpr int c_clusterSize = 4; // atoms per cluster (the grid's and the kernels')
constexpr int c_numShifts   = 27;
constexpr int c_centerShift = 13;

/* A j-entry: the j-cluster and the 16-bit interaction mask of the 4x4
 * pair (bit 4 ii + jj). Packed to 6 bytes: the lists are the largest arrays
 * of a run (rnase: 1.2 million outer entries, and room for as many inner
 * ones), and the kernel streams them every step. */
struct __attribute__((packed)) ClusterPairJ
{
    // no zeroing when a list is sized: every entry is written before it is
    // read (zeroing the room of a search or prune cost as much as writing it)
    ClusterPairJ() {}
    ClusterPairJ(int32_t c, uint16_t m) : cj(c), mask(m) {}
    int32_t  cj;
    uint16_t mask;
};
static_assert(sizeof(ClusterPairJ) == 6, "ClusterPairJ is packed");

/* An i-entry: cluster ci at image shift, its j-entries [jBegin, jEnd).
 * A list pruned for the AVX2 kernel (clusterPrune*) orders them by which
 * i-rows have a pair in range: [rows 0-1 only | all | rows 2-3 only], so
 * that rows 0-1 need [jBegin, end0()) and rows 2-3 [begin1(), jEnd);
 * -1 (a list not so ordered): the whole range for both. */
struct ClusterPairI
{
    int32_t ci;
    int32_t shift;
    int32_t jBegin, jEnd;
    int32_t jEnd0 = -1, jBegin1 = -1;

    int end0() const { return jEnd0 < 0 ? jEnd : jEnd0; }
    int begin1() const { return jBegin1 < 0 ? jBegin : jBegin1; }
};

} // namespace putmd
