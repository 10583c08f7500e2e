/* nonbonded/exclusion_triplets_simd.h — the excluded-pair Ewald
 * corrections of three-atom molecules (rigid waters), over SIMD registers.
 *
 * A water's three atoms are consecutive and exclude each other and nothing
 * else, so its three excluded pairs can be computed together: W molecules
 * per register (Highway, capped by PUTMD_SIMD like the cluster kernel),
 * their nine coordinates read once and their nine force components written
 * once, instead of six reads and six read-modify-writes per pair through
 * the general pair batch (exclusion_corrections.cpp), which took about 13 ns
 * per pair on an Emerald Rapids core.
 *
 * Forces only (the steps without energies or virial; those take the
 * general batch, whose operations these are): the same float operations as
 * the batch in the same order (the minimum image by rounding, r^2 as
 * x x + y y + z z, t = scale r^2 - 1, the force series by Horner's rule with
 * the fused multiply-adds of evaluateSeriesSimd, F = -qq h(t) d), and the
 * molecule's forces added in the batch's pair order, (0,1), (0,2), (1,2):
 * the same bits as the batch. The plain twin, tripletCorrectionsReference,
 * is the same loop one molecule at a time. A rectangular box only.
 */
#pragma once

namespace putmd
{

struct TripletCorrectionInput
{
    const float* x = nullptr;     // atoms' x, y, z, 3 floats each
    float*       f = nullptr;     // forces, 3 floats each; the corrections are added
    const int*   first = nullptr; // per molecule, its first atom
    const float* qq    = nullptr; // per molecule, epsfac q_a q_b of (0,1), (0,2), (1,2)
    int          begin = 0, end = 0; // the molecules [begin, end)
    float        len[3] = { 0, 0, 0 }, inv[3] = { 0, 0, 0 }; // the box's edges and their inverses
    float        rc2 = 0;                // a pair counts where r^2 < rc2 (or <= where rc2Inclusive)
    bool         rc2Inclusive = false;   // (the batch's test r^2 < rc^2 in double, as a float bound)
    float        scale = 0;              // t = scale r^2 - 1
    const float* coef = nullptr;         // the force series h(t), numCoef coefficients
    int          numCoef = 0;
};

void tripletCorrectionsSimd(const TripletCorrectionInput& in);
void tripletCorrectionsReference(const TripletCorrectionInput& in);

} // namespace putmd
