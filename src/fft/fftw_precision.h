/* fft/fftw_precision.h — FFTW's API in the precision of this build.
 *
 * FFTW has one set of functions and types per precision (fftw_* for double,
 * fftwf_* for float). PUTMD_FFTW(name) names the one matching `real`
 * (core/real.h): PUTMD_FFTW(malloc) is fftw_malloc in the double build and
 * fftwf_malloc in the mixed one; FftwComplex is the matching complex type,
 * layout-compatible with std::complex<real>. Internal to src/fft.
 */
#pragma once

#include <fftw3.h>

#include "core/real.h"

namespace putmd
{

#if PUTMD_DOUBLE
#define PUTMD_FFTW(name) fftw_##name
using FftwComplex = fftw_complex;
#else
#define PUTMD_FFTW(name) fftwf_##name
using FftwComplex = fftwf_complex;
#endif

} // namespace putmd
