/* nonbonded/reference_kernel.h — the plain (reference) short-range kernel.
 *
 * Lennard-Jones and Coulomb for every non-excluded pair within the cut-offs,
 * found by the cell grid; then, as GROMACS's Verlet kernels do, the
 * corrections for excluded pairs within the Coulomb cut-off (minus the
 * Ewald real-space complement erf(beta r)/r, or the reaction-field terms
 * k_rf r^2 - c_rf) and the self term of every charge. All of it is reported
 * as LJ (SR) and Coulomb (SR). Written for clarity, not speed: every faster
 * kernel is tested against this one.
 */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

void computeNonbondedReference(const Topology&                top,
                               const InteractionConst&        ic,
                               const Box&                     box,
                               const std::vector<Vec3<real>>& x,
                               std::vector<Vec3<real>>&       f,
                               EnergyTerms&                   energies);

} // namespace putmd
