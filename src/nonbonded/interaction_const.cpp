#include "nonbonded/interaction_const.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/units.h"

namespace putmd
{

double ewaldCoefficient(double rc, double rtol)
{
    double beta = 5;
    int    i    = 0;
    do
    {
        i++;
        beta *= 2;
    } while (std::erfc(beta * rc) > rtol);
    const int n    = i + 60;
    double    low  = 0;
    double    high = beta;
    for (i = 0; i < n; i++)
    {
        beta = (low + high) / 2;
        if (std::erfc(beta * rc) > rtol)
        {
            low = beta;
        }
        else
        {
            high = beta;
        }
    }
    return beta;
}

ForceSwitchCoefficients forceSwitchCoefficients(int alpha, double r1, double rc)
{
    ForceSwitchCoefficients s;
    const double            d = rc - r1;
    s.a = -alpha * ((alpha + 4) * rc - (alpha + 1) * r1) / (std::pow(rc, alpha + 2) * d * d);
    s.b = alpha * ((alpha + 3) * rc - (alpha + 1) * r1) / (std::pow(rc, alpha + 2) * d * d * d);
    s.c = 1.0 / std::pow(rc, alpha) - s.a / 3 * d * d * d - s.b / 4 * d * d * d * d;
    return s;
}

InteractionConst makeInteractionConst(const MdpOptions& mdp)
{
    InteractionConst ic;
    ic.rcoulomb    = mdp.rcoulomb;
    ic.rvdw        = mdp.rvdw;
    ic.rmax        = std::max(mdp.rcoulomb, mdp.rvdw);
    ic.coulombType = mdp.coulombType;
    ic.epsfac      = units::one4PiEps0 / mdp.epsilonR;
    if (mdp.rvdw > mdp.rcoulomb)
    {
        throw InputError(mdp.where("rvdw"), "rvdw (" + std::to_string(mdp.rvdw) + ") is larger than rcoulomb ("
                                                    + std::to_string(mdp.rcoulomb)
                                                    + "); with the Verlet scheme rvdw must be at most rcoulomb");
    }
    switch (mdp.coulombType)
    {
        case CoulombType::Pme:
            ic.ewaldCoeff = ewaldCoefficient(mdp.rcoulomb, mdp.ewaldRtol);
            if (mdp.coulombModifier == InteractionModifier::PotentialShift)
            {
                ic.shEwald = std::erfc(ic.ewaldCoeff * mdp.rcoulomb) / mdp.rcoulomb;
            }
            break;
        case CoulombType::Cutoff:
            // the reaction-field kernel without the field: only the shift
            ic.kRf = 0;
            ic.cRf = mdp.coulombModifier == InteractionModifier::PotentialShift ? 1 / mdp.rcoulomb : 0;
            break;
        case CoulombType::ReactionField:
        {
            const double rc3 = std::pow(mdp.rcoulomb, 3);
            if (mdp.epsilonRf == 0)
            {
                ic.kRf = 1 / (2 * rc3);
            }
            else
            {
                ic.kRf = (mdp.epsilonRf - mdp.epsilonR) / ((2 * mdp.epsilonRf + mdp.epsilonR) * rc3);
            }
            ic.cRf = 1 / mdp.rcoulomb + ic.kRf * mdp.rcoulomb * mdp.rcoulomb;
            break;
        }
    }
    ic.vdwModifier = mdp.vdwModifier;
    ic.rvdwSwitch  = mdp.rvdwSwitch;
    if (mdp.vdwModifier == InteractionModifier::PotentialShift)
    {
        ic.shiftC6  = std::pow(mdp.rvdw, -6);
        ic.shiftC12 = std::pow(mdp.rvdw, -12);
    }
    else if (mdp.vdwModifier == InteractionModifier::ForceSwitch)
    {
        if (mdp.rvdwSwitch >= mdp.rvdw)
        {
            throw InputError(mdp.where("rvdw-switch"), "rvdw-switch (" + std::to_string(mdp.rvdwSwitch)
                                                               + ") must be smaller than rvdw ("
                                                               + std::to_string(mdp.rvdw) + ") with Force-switch");
        }
        ic.fswitch6  = forceSwitchCoefficients(6, mdp.rvdwSwitch, mdp.rvdw);
        ic.fswitch12 = forceSwitchCoefficients(12, mdp.rvdwSwitch, mdp.rvdw);
    }
    return ic;
}

} // namespace putmd
