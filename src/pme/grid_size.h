/* pme/grid_size.h — the PME grid, chosen as GROMACS chooses it.
 *
 * For each dimension without an explicit fourier-n*, the minimum number of
 * points is the length of box vector d divided by fourierspacing, rounded
 * up; the grid is the smallest size not below it from a list of FFT-friendly
 * sizes (products of 2, 3, 5 and 7; above 84, a base size times a power of
 * two that keeps a factor 4).
 */
#pragma once

#include <array>

#include "core/box.h"

namespace putmd
{

struct PmeGridChoice
{
    std::array<int, 3> n{};
    double             maxSpacing = 0; // the largest resulting spacing (nm)
};

/* explicitN: fourier-nx/ny/nz (0 = choose from the spacing). */
PmeGridChoice choosePmeGrid(const Box& box, double spacing, const int explicitN[3], int pmeOrder);

struct MdpOptions;
/* The grid for the run's options, or an InputError at the mdp line that
 * makes it unusable (too small for the spline order, or too large). */
PmeGridChoice choosePmeGrid(const Box& box, const MdpOptions& mdp);

} // namespace putmd
