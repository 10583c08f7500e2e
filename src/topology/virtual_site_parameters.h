/* topology/virtual_site_parameters.h — what grompp does to a molecule with
 * virtual sites before anything else: parameters for the sites given
 * without them, and the removal of bonded terms the construction makes
 * constant.
 *
 * `pdb2gmx -vsite hydrogens` writes its hydrogens (and the N/C of NH3 and
 * CH3 groups with dummy masses) as [ virtual_sites3 ] and [ virtual_sites4 ]
 * lines without parameters. grompp derives them from the equilibrium bond
 * lengths (bonds and constraints) and angles of the force field:
 *  - 3   (only NH3/CH3 groups whose two other atoms are dummy masses, atom
 *         types MNH* or MCH3*): the site in the plane of the heavy atom and
 *         the two masses;
 *  - 3fd: the site at the bond length from atom i, towards a point of the
 *         line j-k that the two angles fix;
 *  - 3fad: angle and distance (the mirrored construction when the line's
 *         function type is -3);
 *  - 3out: a, b, c from the bonds and angles around atom i (for NH3/CH3
 *         groups from the group's geometry, the hydrogens 120 degrees
 *         apart; c flipped for -4);
 *  - 4fdn: a, b from the projections of i-k, i-l, i-m on the site's bond,
 *         c the bond length.
 * Only the equilibrium values are used, never the coordinates.
 *
 * Then the bonded interactions among a site and its constructing atoms
 * that the construction holds fixed are removed (grompp -rmvsbds, its
 * default): bonds from a flexible-distance site (3fd, 3fad, 4fdn) to its
 * first atom, and constraints from a 3out site to it; bonds, angles and
 * proper/improper dihedrals (functions 1, 9, 2) whose sites are all built
 * from the same atoms, whose other atoms are among those atoms, and whose
 * constructing atoms are constrained together in a ring (angles of 3fad
 * sites and bonds of flexible sites need not be, when their other atoms
 * are the first two constructing atoms). A removed bond stays a
 * connection, so the exclusions do not change. Bonds that become
 * constraints (constraints = h-bonds / all-bonds) are treated as the
 * constraints they become, as grompp converts them first.
 */
#pragma once

#include <functional>
#include <vector>

#include "topology/moleculetype.h"

namespace putmd
{

/* The parameters of a bonded line: its own, or the type table's
 * ("bondtypes", "constrainttypes", "angletypes"); throws if there are none. */
using BondedParameterLookup = std::function<std::vector<double>(const char* table, InteractionKind, const Interaction&)>;

/* The molecule with every virtual site's parameters set and the constant
 * bonded terms removed; the input itself when it has no virtual sites.
 * becomesConstraint(bond) says whether a [ bonds ] line is turned into a
 * constraint by the constraints setting. */
MoleculeType prepareVirtualSites(const MoleculeType& mol, const BondedParameterLookup& lookup,
                                 const std::function<bool(const Interaction&)>& becomesConstraint);

} // namespace putmd
