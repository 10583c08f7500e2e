/* nonbonded/cluster_kernel.h — the cluster-pair kernels: what they read,
 * what they write, and the two implementations.
 *
 * One kernel computes the entries [iBegin, iEnd) of a cluster-pair list
 * (cluster_pair_list.h) for one flavour: Coulomb Ewald real space or
 * reaction field (plain cut-off is reaction field with epsilon-rf = 1),
 * Lennard-Jones potential-shifted (no modifier: a zero shift) or
 * force-switched, with or without energies. C6 and C12 come from the
 * type-pair matrix, so every combination rule is covered. Coordinates,
 * charges (scaled by sqrt(epsfac)) and types are in the grid's slot order;
 * forces are added to fx/fy/fz in slot order, the sum of the forces on the
 * i-atoms of each image shift to fshift (for the virial), energies to
 * vlj/vcoul.
 *
 * clusterKernelReference is the plain twin: one pair at a time, double
 * arithmetic, erfc from the C library; clusterKernelSimd is the optimised
 * kernel (Highway, run-time dispatch to the best instruction set: SSE4,
 * AVX2, AVX-512) and is tested against it for every flavour and every
 * instruction set the CPU has.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nonbonded/cluster_pair_types.h"
#include "nonbonded/ewald_correction.h"

namespace putmd
{

enum class ClusterCoulomb { Ewald, ReactionField };
enum class ClusterVdw { PotentialShift, ForceSwitch };
/* How the SIMD kernel gets C6/C12 of a pair: gathered from the type-pair
 * matrix (any force field), or made from per-atom parameters when the
 * matrix follows a combination rule (no gathers): geometric,
 * C = A_i A_j with A = sqrt(C_ii); Lorentz-Berthelot, sigma = s_i + s_j,
 * C6 = e_i e_j sigma^6, C12 = C6 sigma^6 with s = sigma_ii / 2 and
 * e = 2 sqrt(epsilon_ii). */
enum class ClusterLjComb { Matrix, Geometric, LorentzBerthelot };

struct ClusterKernelSetup
{
    ClusterCoulomb  coulomb  = ClusterCoulomb::Ewald;
    ClusterVdw      vdw      = ClusterVdw::PotentialShift;
    bool            energies = true;
    float           rcoulomb2 = 1, rvdw2 = 1;
    double          beta = 0, shEwald = 0;      // Ewald
    double          kRf = 0, cRf = 0;           // reaction field
    double          shiftC6 = 0, shiftC12 = 0;  // potential shift
    double          rswitch = 0;                // force switch
    double          fs6[3] = { 0, 0, 0 }, fs12[3] = { 0, 0, 0 }; // a, b, c
    EwaldCorrection ewald;                      // the series the SIMD kernel uses
    const float*    c6 = nullptr, *c12 = nullptr; // numTypes x numTypes
    int             numTypes = 0;
    ClusterLjComb   comb = ClusterLjComb::Matrix;
};

struct ClusterKernelInput
{
    const float*   x = nullptr, *y = nullptr, *z = nullptr, *q = nullptr; // per slot, 64-byte aligned
    const int32_t* type = nullptr;
    const float*   ljA = nullptr, *ljB = nullptr; // per slot, with a combination rule
    /* Per cluster: bit 0 set when one of its atoms 0-1 has Lennard-Jones
     * with some type, bit 1 the same for atoms 2-3; 0: a pair with this
     * cluster has none. null: every cluster has. The SIMD kernel skips the
     * Lennard-Jones arithmetic for pairs without it, and the AVX2 copy also
     * for the register of an i-cluster's half without it. */
    const uint8_t* clusterLJ = nullptr;
    const float*   shift = nullptr; // 27 x 3
    const ClusterPairI* iEntries = nullptr;
    const ClusterPairJ* jEntries = nullptr;
    int                 iBegin = 0, iEnd = 0;
    int                 numClusters = 0; // clusters of the grid (slots / 4)
};

struct ClusterKernelOutput
{
    float* fx = nullptr, *fy = nullptr, *fz = nullptr;
    double vlj = 0, vcoul = 0;
    double fshift[27][3] = {};
    int    overlapSlot[2] = { -1, -1 }; // a pair at zero distance, if any
    /* The SIMD kernel's scratch for the forces on j-clusters: 48 floats per
     * cluster (x, y, z of up to 16 lanes), 64-byte aligned, numClusters of
     * them, all zero on entry (a new scratch is zeroed; the SIMD kernel
     * leaves it zero when it returns). The kernel adds a pair's
     * j-forces there lane by lane and folds the lanes to atoms once per
     * call, not once per cluster pair. */
    float* jScratch = nullptr;
};

/* Floats of ClusterKernelOutput::jScratch per cluster. */
constexpr int c_clusterJScratchFloats = 48;

void clusterKernelReference(const ClusterKernelSetup& setup, const ClusterKernelInput& in, ClusterKernelOutput& out);
void clusterKernelSimd(const ClusterKernelSetup& setup, const ClusterKernelInput& in, ClusterKernelOutput& out);

/* Where a prune writes: i-entries from i[0] on (numI of them when done),
 * j-entries from j[0] on, j[0] being index jOffset of the whole j-array
 * (the i-entries' jBegin/jEnd are indices of the whole array). Room for
 * as many entries as the input range has. */
struct ClusterPruneOutput
{
    ClusterPairI* i;
    ClusterPairJ* j;
    int           jOffset;
    int           numI;
};

/* Dynamic pruning: the entries [iBegin, iEnd) of the input's list that have
 * at least one atom pair closer than sqrt(rlist2) now, whether the mask
 * includes it or not (an excluded pair close by rarely leaves an entry
 * with nothing else in range, and the kernel masks it; not testing the
 * mask makes the prune 18% faster); j-entries keep their full masks,
 * entries keep their order. The AVX2 copy of the
 * SIMD prune groups each i-entry's kept j-entries by the i-rows with a pair
 * that close, [rows 0-1 only | both halves | rows 2-3 only]
 * (ClusterPairI::jEnd0, jBegin1; each group in list order), as its kernel
 * computes the halves apart. The plain and the SIMD version compute the
 * same float distances and keep the same entries. */
void clusterPruneReference(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out);
void clusterPruneSimd(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out);

/* The instruction set the SIMD kernel dispatches to ("AVX3" is AVX-512). */
std::string clusterKernelTarget();
/* Every instruction set compiled in and supported by this CPU, as Highway
 * target bits, and a way to restrict dispatch to one of them (0: all). */
std::vector<long long> clusterKernelTargets();
void                   restrictClusterKernelTarget(long long target);

} // namespace putmd
