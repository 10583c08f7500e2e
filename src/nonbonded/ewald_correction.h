/* nonbonded/ewald_correction.h — the smooth part of the Ewald real-space
 * interaction as a Chebyshev series in r^2, for the SIMD kernels.
 *
 * With erfc = 1 - erf the real-space force and energy of a pair are
 *     F/r = qq (1/r^3 - hF(r^2)),   V = qq (1/r - hV(r^2) - shift),
 *     hF(s) = erf(beta r)/r^3 - (2 beta/sqrt(pi)) exp(-beta^2 r^2)/r^2,
 *     hV(s) = erf(beta r)/r,
 * and hF, hV are smooth (entire, even in r) functions of s = r^2. They are
 * fitted once per run by Chebyshev interpolation on [0, smax] (smax the
 * squared cut-off) and rewritten as a polynomial in t = 2 s / smax - 1
 * (well conditioned on [-1, 1]: coefficients of order one), with the degree
 * raised until the polynomial, evaluated in single precision with Horner's
 * rule, is within 2e-7 of the largest value of the function over a fine
 * test grid (degree 12 for beta rc = 3.12). No table, no gather, no exp or
 * erfc per pair: one fused multiply-add per degree.
 *
 * The force is fitted a second way for kernels whose registers hold n = 8
 * or 16 lanes: n pieces, each a short polynomial (7 or 6 coefficients) in
 * its own centred variable, the coefficients of a lane's piece picked by a
 * lane permutation of a register that holds one coefficient of every piece
 * (vpermps: one shuffle, off the multiply-add ports on x86). With
 * x = s scale, scale = (n - 1/2) / (smax (1 + 1e-5)), the piece is
 * k = round(x) and the variable u = x - k in [-1/2, 1/2]; both come from
 * one multiply-add with the constant M = 1.5 2^23, whose float sum with x
 * has k in its low mantissa bits:
 *     y = fma(s, scale, M),  k = bits(y) mod n,  u = fma(s, scale, M - y).
 * Three operations, the lookups and a degree-6 polynomial (Estrin's scheme,
 * 8 operations) instead of the degree-12 series' 16: on an Intel Xeon
 * (Emerald Rapids) the AVX2 kernel on the pruned list 2-2.5% faster, the
 * energy kernel 8-10%, AVX-512 unchanged. s beyond smax wraps to some piece with |u| <= 1/2 still: a finite
 * value, which the kernels mask. EwaldPieces::evaluate is its plain twin
 * (the same float operations), and a fit that misses the tolerance is
 * marked unusable (the kernels then keep the single series).
 */
#pragma once

#include <vector>

namespace putmd
{

struct EwaldPieces
{
    static constexpr float c_magic = 12582912.0f; // 1.5 2^23: float sums with it round to integers
    /* Coefficients per piece of the fits in 8 and 16 pieces. */
    static constexpr int c_coefficientsIn8 = 7, c_coefficientsIn16 = 6;
    int                pieces = 0, coefficients = 0;
    float              scale = 0;  // x = s scale; piece round(x), variable x - round(x)
    std::vector<float> coef;       // coefficient i (constant first) of piece k at i * pieces + k
    double             maxError = 0; // of the float evaluation over [0, smax], absolute
    bool               usable = false; // maxError within the series' tolerance

    /* The fit of the force in n pieces with c coefficients each. */
    static EwaldPieces fit(double beta, double smax, int n, int c);
    /* At s, with the float operations of the kernels. */
    float evaluate(float s) const;
};

struct EwaldCorrection
{
    double             beta = 0, smax = 0;
    static constexpr int c_maxCoefficients = 16;
    std::vector<float> force, energy; // polynomial coefficients in t, constant first
    double             maxForceError = 0, maxEnergyError = 0; // of the float series, absolute
    EwaldPieces        forceIn8, forceIn16; // the force in 8 and 16 pieces (7 and 6 coefficients)

    static EwaldCorrection fit(double beta, double rmax);

    /* The exact functions (double, series near 0). */
    static double exactForce(double beta, double s);
    static double exactEnergy(double beta, double s);
    /* The fitted series at s, evaluated in float as the kernels do. */
    float evaluateForce(float s) const;
    float evaluateEnergy(float s) const;
};

} // namespace putmd
