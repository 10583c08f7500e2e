/* listed/position_restraints.h — position restraints ([ position_restraints ]).
 *
 * Each restraint ties one atom to a reference position. Function 1 is
 * harmonic per dimension, V = sum_m k_m dx_m^2 / 2; function 2 is
 * flat-bottomed (see topology.h for the geometries). The displacement dx
 * is the minimum image of x - pos, where pos follows the box as
 * refcoord-scaling says:
 *   no   pos = the reference as read (absolute);
 *   all  pos = (reference in box fractions) * box: every reference scales;
 *   com  pos = COM * box + (reference - COM): the restrained atoms' centre
 *        of mass (box fractions) scales, the shape around it does not.
 * The references are set once from the restraint coordinates (-r, by
 * default the starting coordinates), as grompp does: fractions of that
 * file's box; the COM is mass-weighted over the first molecule of each
 * [ molecules ] line (PositionRestraint::inCom).
 *
 * The virial is GROMACS's: diagonal, -1/2 (dx_m + rdist_m) f_m, with
 * rdist the part of pos that does not scale with the box (the reference
 * itself for no, its offset from the COM for com, nothing for all). So
 * the pressure is the one `gmx energy` reports for the same input.
 */
#pragma once

#include <string>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

/* Sets every restraint's reference from the coordinates x (box refBox,
 * read from refFile) and top->positionRestraintSettings for the scaling.
 * Throws InputError naming refFile when its atom count differs from the
 * topology's, or when refcoord-scaling com finds no mass. */
void setPositionRestraintReferences(Topology* top, const std::vector<DVec>& x, const Box& refBox,
                                    RefCoordScaling scaling, const std::string& refFile);

/* Adds the restraints' forces to f, their energies to "Position Rest." and
 * "Flat-b. P-R." (each present when the system has restraints of that
 * function, even if this part holds none), and their virial when not null. */
void computePositionRestraints(const std::vector<PositionRestraint>& list, const PositionRestraintSettings& settings,
                               const std::vector<Vec3<real>>& x, const Box& box, std::vector<Vec3<real>>& f,
                               EnergyTerms& energies, Matrix3* virial);

} // namespace putmd
