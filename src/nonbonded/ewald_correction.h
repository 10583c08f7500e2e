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
 */
#pragma once

#include <vector>

namespace putmd
{

struct EwaldCorrection
{
    double             beta = 0, smax = 0;
    static constexpr int c_maxCoefficients = 16;
    std::vector<float> force, energy; // polynomial coefficients in t, constant first
    double             maxForceError = 0, maxEnergyError = 0; // of the float series, absolute

    static EwaldCorrection fit(double beta, double rmax);

    /* The exact functions (double, series near 0). */
    static double exactForce(double beta, double s);
    static double exactEnergy(double beta, double s);
    /* The fitted series at s, evaluated in float as the kernels do. */
    float evaluateForce(float s) const;
    float evaluateEnergy(float s) const;
};

} // namespace putmd
