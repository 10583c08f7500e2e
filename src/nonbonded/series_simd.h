/* nonbonded/series_simd.h — a polynomial evaluated at many points, over
 * SIMD registers (Highway, the instruction set chosen at run time and
 * capped by PUTMD_SIMD as the cluster kernel is).
 *
 * out[k] = sum_c coef[c] t[k]^c by Horner's rule with fused multiply-adds
 * where the instruction set has them (SSE4: a multiply and an add), each
 * point's whole chain in a register: the excluded-pair corrections
 * evaluate the kernels' Ewald series (ewald_correction.h) this way. The
 * plain twin, evaluateSeriesReference, is the same rule one point at a time
 * with std::fma; on AVX2 and AVX-512 both give the same bits.
 */
#pragma once

namespace putmd
{

void evaluateSeriesSimd(const float* coef, int numCoef, const float* t, int n, float* out);
void evaluateSeriesReference(const float* coef, int numCoef, const float* t, int n, float* out);

} // namespace putmd
