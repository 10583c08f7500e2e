/* domdec/dd_grid.h — how the box is cut into domains.
 *
 * Domains are a uniform nx x ny x nz grid in fractional (box-vector)
 * coordinates, so triclinic boxes are cut along planes of constant
 * fractional coordinate. Each decomposed dimension needs domains at least
 * as wide (perpendicular distance between the cutting planes) as the halo
 * distance: the eighth-shell halo then comes from the 7 "upper" neighbours
 * only. A dimension with one domain is not communicated in at all.
 *
 * The automatic choice tries every factorisation of the rank count and
 * keeps the feasible one with the smallest halo (import) volume per domain,
 * preferring to cut x, then y, then z on ties, as GROMACS does.
 */
#pragma once

#include <array>
#include <optional>
#include <string>

#include "core/box.h"

namespace putmd
{

struct DdGrid
{
    std::array<int, 3> n{ 1, 1, 1 };
    int                size() const { return n[0] * n[1] * n[2]; }
    /* Rank of domain (i, j, k); x fastest. */
    int rankOf(const std::array<int, 3>& c) const { return (c[2] * n[1] + c[1]) * n[0] + c[0]; }
    std::array<int, 3> coordinatesOf(int rank) const
    {
        return { rank % n[0], (rank / n[0]) % n[1], rank / (n[0] * n[1]) };
    }
};

/* The grid for numRanks ranks. forced: -dd nx ny nz. Throws InputError
 * (naming what fails and which rank counts or options would work) when no
 * grid is possible. haloDistance: pair-list radius plus twice the largest
 * update-group radius (nm). */
DdGrid chooseDdGrid(const Box& box, int numRanks, double haloDistance, const std::optional<std::array<int, 3>>& forced);

/* Halo (import) volume per domain, nm^3, of a grid (for the choice and the
 * log); infinite when the grid is not feasible. */
double ddHaloVolume(const Box& box, const std::array<int, 3>& n, double haloDistance);

/* "2 x 1 x 1" */
std::string describeGrid(const DdGrid& g);

} // namespace putmd
