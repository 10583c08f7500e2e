/* domdec/update_groups.h — atoms that always move between domains together.
 *
 * An update group is a connected component of the constraint graph
 * ([ constraints ], bonds turned into constraints, SETTLE waters); an
 * unconstrained atom is a group of its own. Because a whole group always
 * lives on one rank, constraints never need communication. Domains own
 * groups by their centre of geometry, so atoms can stick out of their
 * domain by up to the group radius, which the halo distance accounts for
 * (twice: both partners of a pair can stick out).
 *
 * Groups are listed in order of their first atom; atoms in a group in
 * topology order. Constraints and SETTLEs are indexed per group so a rank
 * can collect those of its home atoms.
 */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

struct UpdateGroups
{
    std::vector<int> groupOf;    // per atom
    std::vector<int> start;      // per group + 1, into atoms
    std::vector<int> atoms;      // grouped atom indices
    std::vector<int> constraintStart, constraints; // per group: indices into top.constraints
    std::vector<int> settleStart, settles;         // per group: indices into top.settles
    double           maxRadius = 0; // largest atom distance from its group centre allowed (nm)
    std::vector<char> splitSite;    // per top.virtualSites entry: built from atoms of several groups

    int numGroups() const { return static_cast<int>(start.size()) - 1; }
    int size(int g) const { return start[g + 1] - start[g]; }
};

/* Room added to the largest group radius of the starting coordinates (nm). */
constexpr double kUpdateGroupRadiusMargin = 0.03;

/* Builds the groups; maxRadius is the largest distance of an atom from its
 * group's centre in the starting coordinates x, plus the margin. Throws InputError when a group is
 * too large to decompose (all-bonds on a macromolecule), saying to use
 * constraints = h-bonds. */
UpdateGroups makeUpdateGroups(const Topology& top, const std::vector<Vec3<real>>& x, const Box& box);

} // namespace putmd
