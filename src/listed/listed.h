/* listed/listed.h — bonded interactions and 1-4 pairs.
 *
 * Plain loops over the interaction lists of the global topology, one function
 * per functional form, each adding its energy to the term GROMACS reports it
 * under and its forces to f. Geometry uses the minimum image (Pbc), so
 * molecules need not be whole. Dihedral angles follow the IUPAC convention
 * (trans = 180 degrees), with GROMACS's force distribution over four atoms.
 */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

using RVec = Vec3<real>;

struct ListedSettings
{
    double epsfac = 0; // ONE_4PI_EPS0 / epsilon-r, for Coulomb-14
};

void computeListed(const ListedInteractions& listed,
                   const ListedSettings&     settings,
                   const std::vector<RVec>&  x,
                   const Pbc&                pbc,
                   std::vector<RVec>&        f,
                   EnergyTerms&              energies,
                   Matrix3*                  virial = nullptr); // -0.5 sum r (x) f added when not null

} // namespace putmd
