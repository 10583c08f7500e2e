/* update/virtual_sites.h — placing virtual sites and spreading their forces.
 *
 * A virtual site (TIP4P's M, a centre of geometry, a lone pair) has no
 * mass: its position follows from its constructing atoms after every
 * update (construct), and the force on it is moved onto them before the
 * update (spread), f_k = (d x_site / d x_k)^T f_site, so that the
 * dynamics is that of the real atoms. Linear sites pass f_site on with
 * their weights; 3out adds the cross-product terms; the flexible-distance
 * sites (2fd, 3fd, 3fad, 4fdn: a unit vector times a length) pass on the
 * part of f_site normal to that vector through its derivative (see
 * VirtualSite for the constructions). Periodic images: the
 * constructing atoms are taken as the images nearest to the first one, and
 * the site is put at the image nearest to its previous position (sites,
 * like atoms, are put in the box one by one at search steps).
 *
 * The virial: the force routines computed it with the force acting at the
 * site; after spreading, the virial of the real atoms differs by
 * -1/2 sum_k (x_k - x_site) (x) f_k, which is added here (it is zero for a
 * linear site placed by its atoms, not for the others, nor for a site read from a
 * file before its first placement), so the pressure is that of the real
 * atoms, as GROMACS computes it.
 */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

void constructVirtualSites(const std::vector<VirtualSite>& sites, std::vector<Vec3<real>>& x, const Box& box);

/* Moves each site's force onto its atoms (the site's force becomes 0);
 * adds the virial correction when virial is not null. */
void spreadVirtualSiteForces(const std::vector<VirtualSite>& sites, const std::vector<Vec3<real>>& x,
                             std::vector<Vec3<real>>& f, const Box& box, Matrix3* virial);

} // namespace putmd
