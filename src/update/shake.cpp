#include "update/shake.h"

#include <cmath>

#include <fmt/format.h>

#include "update/constraints.h"

namespace putmd::constraint_detail
{

namespace
{

constexpr int maxSweeps = 1000;

std::string pairName(const BondConstraintSet& s, int c, const AtomNames& names)
{
    return names.describe(s.globalI(c)) + " and " + names.describe(s.globalJ(c));
}

} // namespace

void applyShake(const BondConstraintSet& s, ConstraintGeometry& g, double tol, std::vector<double>& mu,
                const AtomNames& names)
{
    int    worst    = -1;
    double worstDev = 0;
    for (int sweep = 0; sweep < maxSweeps; sweep++)
    {
        worst    = -1;
        worstDev = 0;
        for (int c = 0; c < s.size(); c++)
        {
            const DVec   r    = g.current(s, c);
            const double d2   = s.length[c] * s.length[c];
            const double diff = d2 - norm2(r);
            const double dev  = std::abs(diff) / (2 * d2);
            if (dev <= tol)
            {
                continue;
            }
            if (!(dev <= worstDev))
            {
                worst    = c;
                worstDev = dev;
            }
            const double rr = dot(g.oldVec[c], r);
            if (!(rr > 1e-6 * g.oldLength[c] * norm(r)))
            {
                throw ConstraintError(fmt::format(
                        "SHAKE: the constraint between {} rotated by 90 degrees or more in one step (length "
                        "{:.6g} nm, should be {:.6g} nm). The system is unstable: check the time step, the "
                        "starting structure and the forces.",
                        pairName(s, c, names), norm(r), s.length[c]));
            }
            const int    i   = s.ai[c];
            const int    j   = s.aj[c];
            const double fac = diff / (2 * (s.invMass[i] + s.invMass[j]) * rr);
            g.xp[i] += g.oldVec[c] * (fac * s.invMass[i]);
            g.xp[j] -= g.oldVec[c] * (fac * s.invMass[j]);
            mu[c] -= fac * g.oldLength[c];
        }
        if (worst < 0)
        {
            return;
        }
    }
    throw ConstraintError(fmt::format(
            "SHAKE did not converge in {} iterations: the constraint between {} still deviates by {:.3g} "
            "relative (shake-tol {:g}). The system is unstable or shake-tol is too tight for this precision.",
            maxSweeps, pairName(s, worst, names), worstDev, tol));
}

} // namespace putmd::constraint_detail
