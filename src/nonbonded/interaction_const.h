/* nonbonded/interaction_const.h — the constants of the short-range
 * interactions, derived once from the run parameters.
 *
 * Coulomb follows GROMACS's Verlet scheme: plain cut-off is reaction-field
 * with epsilon-rf = 1; reaction-field uses k_rf and c_rf so the potential is
 * zero at the cut-off; Ewald real space is shifted by erfc(beta rc)/rc when
 * the modifier is Potential-shift. Lennard-Jones is shifted (Potential-shift)
 * or force-switched between rvdw-switch and rvdw (Force-switch).
 */
#pragma once

#include "io/mdp.h"

namespace putmd
{

struct ForceSwitchCoefficients
{
    double a = 0, b = 0, c = 0; // F = alpha/r^(alpha+1) + a (r-r1)^2 + b (r-r1)^3; V shift c
};

struct InteractionConst
{
    double rcoulomb = 1, rvdw = 1, rmax = 1;

    CoulombType coulombType = CoulombType::Pme;
    double      epsfac      = 0; // ONE_4PI_EPS0 / epsilon-r
    double      ewaldCoeff  = 0; // beta (1/nm)
    double      shEwald     = 0; // erfc(beta rc)/rc, or 0 without shift
    double      kRf = 0, cRf = 0;

    InteractionModifier vdwModifier = InteractionModifier::PotentialShift;
    double              rvdwSwitch  = 0;
    double              shiftC6     = 0; // 1/rvdw^6 with potential shift
    double              shiftC12    = 0; // 1/rvdw^12 with potential shift
    ForceSwitchCoefficients fswitch6, fswitch12;
};

/* Ewald splitting coefficient beta such that erfc(beta rc) = rtol, found by
 * doubling then 60+ bisection steps, as GROMACS does. */
double ewaldCoefficient(double rc, double rtol);

ForceSwitchCoefficients forceSwitchCoefficients(int alpha, double rswitch, double rc);

InteractionConst makeInteractionConst(const MdpOptions& mdp);

} // namespace putmd
