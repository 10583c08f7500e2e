#include "nonbonded/reference_kernel.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "nonbonded/cell_grid.h"

namespace putmd
{

namespace
{

using RVec = Vec3<real>;

/* -dV/dr / r and V of the force-switched 1/r^alpha term beyond r1. */
inline void forceSwitched(const ForceSwitchCoefficients& s, int alpha, double r1, double r, double rinvAlpha,
                          double* fOverR, double* v)
{
    const double rinv = 1 / r;
    if (r <= r1)
    {
        *v      = rinvAlpha - s.c;
        *fOverR = alpha * rinvAlpha * rinv * rinv;
        return;
    }
    const double dr = r - r1;
    *v      = rinvAlpha - s.a / 3 * dr * dr * dr - s.b / 4 * dr * dr * dr * dr - s.c;
    *fOverR = (alpha * rinvAlpha * rinv + s.a * dr * dr + s.b * dr * dr * dr) * rinv;
}

struct PairKernel
{
    const Topology&         top;
    const InteractionConst& ic;
    const std::vector<int>& exclStart;
    const std::vector<int>& excl;
    std::vector<RVec>&      f;
    double                  vlj = 0, vcoul = 0;
    real                    rvdw2, rcoul2;

    bool excluded(int i, int j) const
    {
        const int b = exclStart[i], e = exclStart[i + 1];
        return std::binary_search(excl.begin() + b, excl.begin() + e, j);
    }

    void operator()(int i, int j, const RVec& d, real r2)
    {
        if (excluded(i, j))
        {
            return;
        }
        if (r2 < real(1e-12))
        {
            throw AtomOverlapError(i, j, top.describeAtom(i) + " and " + top.describeAtom(j)
                                                 + " are at the same position but interact (they are not excluded); "
                                                   "the coordinates are not a valid configuration");
        }
        real fscal = 0;
        if (r2 < rvdw2)
        {
            const int  ti = top.ljType[i], tj = top.ljType[j];
            const real c6 = real(top.c6Of(ti, tj)), c12 = real(top.c12Of(ti, tj));
            if (c6 != 0 || c12 != 0)
            {
                const real rinv2 = 1 / r2;
                const real rinv6 = rinv2 * rinv2 * rinv2;
                if (ic.vdwModifier == InteractionModifier::ForceSwitch)
                {
                    double f6, v6, f12, v12;
                    const double r = std::sqrt(double(r2));
                    forceSwitched(ic.fswitch6, 6, ic.rvdwSwitch, r, rinv6, &f6, &v6);
                    forceSwitched(ic.fswitch12, 12, ic.rvdwSwitch, r, double(rinv6) * rinv6, &f12, &v12);
                    vlj += c12 * v12 - c6 * v6;
                    fscal += real(c12 * f12 - c6 * f6);
                }
                else
                {
                    const real v6  = c6 * rinv6;
                    const real v12 = c12 * rinv6 * rinv6;
                    vlj += double(v12 - real(c12 * ic.shiftC12)) - double(v6 - real(c6 * ic.shiftC6));
                    fscal += (12 * v12 - 6 * v6) * rinv2;
                }
            }
        }
        if (r2 < rcoul2)
        {
            const real qq = real(ic.epsfac * top.charge[i] * top.charge[j]);
            if (qq != 0)
            {
                const real rinv  = 1 / std::sqrt(r2);
                const real rinv2 = rinv * rinv;
                if (ic.coulombType == CoulombType::Pme)
                {
                    const real beta = real(ic.ewaldCoeff);
                    const real r    = r2 * rinv;
                    const real erfc = std::erfc(beta * r);
                    vcoul += double(qq) * (double(erfc * rinv) - ic.shEwald);
                    fscal += qq * (erfc * rinv + real(2 / std::sqrt(units::pi)) * beta * std::exp(-beta * beta * r2)) * rinv2;
                }
                else
                {
                    vcoul += double(qq) * (double(rinv) + ic.kRf * double(r2) - ic.cRf);
                    fscal += qq * (rinv * rinv2 - real(2 * ic.kRf));
                }
            }
        }
        const RVec fi = d * fscal;
        f[i] += fi;
        f[j] -= fi;
    }
};

/* Corrections of excluded pairs within the Coulomb cut-off, and self terms. */
double exclusionCorrections(const Topology& top, const InteractionConst& ic, const Box& box,
                            const std::vector<RVec>& x, std::vector<RVec>& f)
{
    const Pbc    pbc(box);
    const double rc2 = ic.rcoulomb * ic.rcoulomb;
    const double beta = ic.ewaldCoeff;
    double       v    = 0;
    double       q2   = 0;
    for (int i = 0; i < top.numAtoms; i++)
    {
        q2 += top.charge[i] * top.charge[i];
        for (int e = top.exclusionStart[i]; e < top.exclusionStart[i + 1]; e++)
        {
            const int j = top.exclusions[e];
            if (j <= i)
            {
                continue;
            }
            const double qq = ic.epsfac * top.charge[i] * top.charge[j];
            const RVec   d  = pbc.dx(x[i], x[j]);
            const real   r2 = norm2(d);
            if (qq == 0 || r2 >= rc2)
            {
                continue;
            }
            real fscal;
            if (ic.coulombType == CoulombType::Pme && r2 < real(1e-12))
            {
                // the r -> 0 limit of erf(beta r)/r; no force
                v -= qq * 2 * beta / std::sqrt(units::pi);
                fscal = 0;
            }
            else if (ic.coulombType == CoulombType::Pme)
            {
                const real r    = std::sqrt(r2);
                const real erfv = std::erf(real(beta) * r);
                v -= qq * double(erfv / r);
                // F = -dV/dr rhat with V = -qq erf(beta r)/r
                fscal = real(qq) * (real(2 / std::sqrt(units::pi) * beta) * std::exp(-real(beta * beta) * r2) / r - erfv / r2) / r;
            }
            else
            {
                v += qq * (ic.kRf * r2 - ic.cRf);
                fscal = -real(2 * qq * ic.kRf);
            }
            const RVec fi = d * fscal;
            f[i] += fi;
            f[j] -= fi;
        }
    }
    if (ic.coulombType == CoulombType::Pme)
    {
        v -= ic.epsfac * beta / std::sqrt(units::pi) * q2;
    }
    else
    {
        v -= 0.5 * ic.epsfac * ic.cRf * q2;
    }
    return v;
}

} // namespace

void computeNonbondedReference(const Topology&                top,
                               const InteractionConst&        ic,
                               const Box&                     box,
                               const std::vector<Vec3<real>>& x,
                               std::vector<Vec3<real>>&       f,
                               EnergyTerms&                   energies)
{
    const CellGrid grid(box, x, ic.rmax);
    PairKernel     kernel{ top, ic, top.exclusionStart, top.exclusions, f, 0, 0, real(ic.rvdw * ic.rvdw),
                       real(ic.rcoulomb * ic.rcoulomb) };
    grid.forEachPair(kernel);
    // forEachPair takes the functor by reference, so the sums are in kernel
    energies.add(EnergyTerm::LJSR, kernel.vlj);
    energies.add(EnergyTerm::CoulombSR, kernel.vcoul + exclusionCorrections(top, ic, box, x, f));
}

} // namespace putmd
