/* core/real.h — the floating-point type of a putmd build.
 *
 * putmd is built twice from the same sources: the default (mixed) build stores
 * coordinates and forces in single precision and accumulates energies and the
 * virial in double; the double build (`putmd_d`, PUTMD_DOUBLE=1) uses double
 * throughout and exists for validation against GROMACS double-precision
 * reference values.
 */
#pragma once

#ifdef PUTMD_PRECISION_NEUTRAL
#error "core/real.h in a source compiled once for both precisions: move the file out of PUTMD_NEUTRAL_SOURCES (or PUTMD_APP_NEUTRAL_SOURCES) in CMakeLists.txt"
#endif

#ifndef PUTMD_DOUBLE
#define PUTMD_DOUBLE 0
#endif

namespace putmd
{
#if PUTMD_DOUBLE
using real = double;
#else
using real = float;
#endif

constexpr const char* precisionName()
{
    return PUTMD_DOUBLE ? "double" : "mixed";
}
} // namespace putmd
