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

    std::vector<int>     j;
    std::vector<int64_t> ljIndex; // rowI + type[j]: the C6/C12 matrix entry
    std::vector<real>    dx, dy, dz, r2, qj, fscal;
    std::vector<double>  vlj, vcoul;

    void reserve(size_t n);
    /* Fills [m, m rounded up to kPad) with harmless pairs. */
    void pad(int m);
};

/* What the pass needs besides the batch: the i-atom's charge (scaled) and
 * the interaction constants in the build's precision. */
struct PairBatchSetup
{
    const real* c6  = nullptr; // the C6/C12 matrix of PairParameters
    const real* c12 = nullptr;
    const EwaldTable* table = nullptr; // PME only; its nodes for the SIMD loop:
    const real* tableValue = nullptr;
    const real* tableSlope = nullptr;
    real        tableScale = 0, tableH = 0;
    int         tableLast  = 0;
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
