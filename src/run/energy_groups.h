/* run/energy_groups.h — energygrps: the short-range and 1-4 energies of
 * every pair of energy groups, as GROMACS writes them.
 *
 * `energygrps = Protein SOL` splits the atoms into the listed groups (from
 * the default groups or the -n index file; an atom in two groups is an
 * error) and "rest" for the atoms of none (only when there are such
 * atoms). For every pair of groups A <= B, in the order of the list, four
 * terms are reported: "Coul-SR:A-B", "LJ-SR:A-B", "Coul-14:A-B",
 * "LJ-14:A-B", the same names `gmx energy` lists. They sum to Coulomb (SR),
 * LJ (SR), Coulomb-14 and LJ-14. A pair's energy goes to the pair of its
 * atoms' groups; the excluded-pair corrections and the self term of each
 * charge (part of Coulomb (SR), as in GROMACS's Verlet kernels) likewise,
 * the self term to (A, A).
 *
 * The pairs come from a separate plain pass (the reference kernel's cell
 * grid and pair functions, in the build's precision; threads over slabs of
 * cells, summed in thread order), made only on the steps whose energies
 * are written: the run's own kernels are untouched.
 * The excluded-pair corrections, bilinear in the charges, are split by
 * evaluating them with the charges of one group or two (A-B = (A+B) - A -
 * B). With domain decomposition rank 0 computes them from the coordinates
 * gathered on those steps.
 */
#pragma once

#include <string>
#include <vector>

#include "core/box.h"
#include "core/error.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

struct EnergyGroups
{
    std::vector<std::string> names;   // the listed groups, then "rest" if needed
    std::vector<int>         groupOf; // per atom

    int  size() const { return static_cast<int>(names.size()); }
    bool active() const { return !names.empty(); }
    /* The term names, four per group pair, in GROMACS's order. */
    std::vector<std::string> termNames() const;
};

/* Empty (inactive) for no energygrps or "System" alone. */
EnergyGroups makeEnergyGroups(const Topology& top, const std::vector<std::string>& names, const SourceLocation& where);

/* The values of termNames(), for coordinates x. */
std::vector<double> computeEnergyGroupTerms(const EnergyGroups& groups, const Topology& top, const InteractionConst& ic,
                                            const Box& box, const std::vector<Vec3<real>>& x);

} // namespace putmd
