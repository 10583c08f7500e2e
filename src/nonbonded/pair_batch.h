/* nonbonded/pair_batch.h — one i-atom's pairs as arrays, and the scalar
 * forces and energies of such a batch computed as one loop.
 *
 * The pair-list kernel (pair_list.cpp) gathers the pairs of atom i inside
 * the cut-off into a PairBatch (j, displacement, r^2, the charge of j and
 * the row of the C6/C12 matrix), computes every pair's scalar force and two
 * energies in one pass, then adds forces, energies and virial pair by pair
 * in list order. The pass has two twins with the same operations in the
 * same order and no fused multiply-adds, so the same bits:
 *   - pairBatchReference: the plain loop, the twin of PairKernel's
 *     lennardJones/coulomb (pair_kernel.h);
 *   - pairBatchSimd (pair_batch_simd.cpp, Highway, chosen at run time):
 *     the double build's loop over SIMD registers (4 doubles with AVX2, 8
 *     with AVX-512), the C6/C12 pairs and the Ewald table gathered by
 *     index. It exists for the double build (real = double) only.
 * Pairs past the batch's size up to a multiple of PairBatch::kPad are
 * padding (r^2 = 1, no charge, type pair 0) that the SIMD loop computes and
 * nobody reads.
 */
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/real.h"
#include "nonbonded/interaction_const.h"

namespace putmd
{

class EwaldTable;
struct PairParameters;

struct PairBatch
{
    static constexpr int kPad = 8; // the widest register: 8 doubles
    /* Pairs of one batch at most: an atom with more list entries is
     * gathered and computed in parts of this many entries, in list order
     * (the same sums). Fixed arrays: every field is at a constant offset
     * from the batch, so the gather addresses them all from one register
     * (vectors took one register, or a reload, each). */
    static constexpr int kCapacity = 1024;
    static constexpr int kSize     = kCapacity + 2 * kPad; // padding, and a register written past it

    std::array<int, kSize>     j;
    std::array<int64_t, kSize> ljIndex; // rowI + type[j]: the C6/C12 matrix entry
    std::array<real, kSize>    dx, dy, dz, r2, qj, fscal;
    std::array<double, kSize>  vlj, vcoul;

    /* Fills [m, m rounded up to kPad) with harmless pairs (the fields
     * the pass reads). */
    void pad(int m);
};

/* The pairs of one i-atom in a CSR list, for the gather: partner j[p] at
 * lattice-shift kind shift[p] for p in [p0, p1). */
struct PairGatherInput
{
    real        xi[3]       = {};
    /* x, y, z and the scaled charge of each atom, 4 per atom (one aligned
     * block: a partner is one cache line, not three) */
    const real* xq          = nullptr;
    const int*  j           = nullptr;
    const int*  shift       = nullptr;
    const real* shiftVector = nullptr; // 3 per kind of shift; kind 0 is +0
    const int*  ljType      = nullptr; // LJ type of each atom
    int64_t     rowI        = 0;       // type[i] x number of types
    real        rmax2       = 0;
    int         p0 = 0, p1 = 0;
};

/* Writes the pairs with r^2 < rmax2 to the batch from position m on (j,
 * displacement x_i - x_j - shift, r^2, charge of j, C6/C12 index) in list
 * order and returns the batch's new size; at most PairBatch::kCapacity - m
 * entries [p0, p1) (the caller cuts longer lists). *tooClose is set to the
 * list position of the first pair with r^2 < 1e-12 (the caller names its
 * atoms), else left alone. (A SIMD twin with gathers and
 * compressed stores was 17% slower on AVX-512 and AVX2: the plain loop is
 * the only one.) */
int pairGather(const PairGatherInput& in, PairBatch& b, int* tooClose, int m = 0);

/* What the pass needs besides the batch: the i-atom's charge (scaled) and
 * the interaction constants in the build's precision. */
struct PairBatchSetup
{
    const real* c6  = nullptr; // the C6/C12 matrix of PairParameters
    const real* c12 = nullptr;
    const EwaldTable* table = nullptr; // PME only
    real        qi = 0, rvdw2 = 0, rcoul2 = 0, shift6 = 0, shift12 = 0, twoKRf = 0;
    double      shEwald = 0, kRf = 0, cRf = 0;
    bool        pme = false, forceSwitch = false;

    PairBatchSetup(const InteractionConst& ic, const EwaldTable* table, const PairParameters& par);
};

/* fscal, vlj and vcoul of pairs [0, m). With the force switch, fscal and
 * vlj must hold the switched LJ terms already (pair_list.cpp computes
 * them); the pass adds Coulomb. */
void pairBatchReference(const PairBatchSetup& s, int m, PairBatch& b);
#if PUTMD_DOUBLE
void pairBatchSimd(const PairBatchSetup& s, int m, PairBatch& b);
#endif

} // namespace putmd
