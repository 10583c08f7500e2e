/* domdec/dd_grid.h — how the box is cut into domains.
 *
 * Domains are a uniform nx x ny x nz grid in fractional (box-vector)
 * coordinates, so triclinic boxes are cut along planes of constant
 * fractional coordinate. The eighth-shell halo comes from the "upper"
 * neighbours only. Where domains are at least as wide (perpendicular
 * distance between the cutting planes) as the halo distance, one pulse per
 * dimension brings it from the next domain. Narrower domains take the halo
 * in P pulses from the P next domains, P = ceil(halo / width), up to
 * kMaxHaloPulses, and P must stay below the number of domains in that
 * dimension (a halo never reaches around the box into the domain itself).
 * A dimension with one domain takes its halo from the rank itself.
 *
 * The automatic choice tries every factorisation of the rank count. Grids
 * with one pulse per dimension come first (as GROMACS, which uses more
 * pulses only when asked or when load balancing shrinks a cell); among
 * them, and then among the multi-pulse ones (fewest extra pulses first),
 * it keeps the smallest halo (import) volume per domain, preferring to cut
 * x, then y, then z on ties.
 */
#pragma once

#include <array>
#include <optional>
#include <string>

#include "core/box.h"

namespace putmd
{

constexpr int kMaxHaloPulses = 3;

struct DdGrid
{
    std::array<int, 3> n{ 1, 1, 1 };
    std::array<int, 3> pulses{ 1, 1, 1 }; // halo pulses per dimension
    int                extraPulses() const { return pulses[0] + pulses[1] + pulses[2] - 3; }
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

/* Halo pulses dimension d needs with n domains: 1 for one domain or
 * domains at least the halo distance wide, ceil(halo / width) otherwise;
 * 0 when that is more than kMaxHaloPulses or not below n. */
int haloPulses(const Box& box, int d, int n, double haloDistance);

/* "2 x 1 x 1", with "(2 halo pulses in x)" where a dimension has more */
std::string describeGrid(const DdGrid& g);

} // namespace putmd
