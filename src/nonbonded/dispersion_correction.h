/* nonbonded/dispersion_correction.h — the long-range dispersion correction.
 *
 * Assumes a uniform density beyond the cut-off and corrects for the
 * modified potential inside it, as GROMACS does:
 *   E = <C6> (N/2) (rho * enerdiff - enershift)
 * where <C6> averages C6 over all atom pairs i<j minus the excluded pairs,
 * enerdiff integrates (true - modified) dispersion over all space per unit
 * C6 and enershift removes the self pair. Potential-shift and None have
 * closed forms; Force-switch integrates the switched region numerically
 * (exact to ~1e-12). Radii follow GROMACS's 1/2000 nm table grid, so the
 * energies agree to double precision.
 */
#pragma once

#include "core/box.h"
#include "io/mdp.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

/* Average C6 over non-excluded atom pairs. */
double averageC6(const Topology& top);

struct DispersionCorrection
{
    double avcsix        = 0;
    double enerdiffsix   = 0; // per unit C6 and density
    double enershiftsix  = 0;
    double virdiffsix    = 0; // for the pressure (EnerPres)

    double energy(int numAtoms, double volume) const;
    /* Pressure correction in bar (0 unless EnerPres). */
    double pressure(int numAtoms, double volume) const;
    /* Its virial, added to each diagonal element (0 unless EnerPres). */
    double virialDiagonal(int numAtoms, double volume) const;
    bool   withPressure = false;
};

DispersionCorrection makeDispersionCorrection(const Topology& top, const InteractionConst& ic, DispCorr mode);

} // namespace putmd
