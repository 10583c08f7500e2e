/* nonbonded/pair_kernel.h — the interaction of one atom pair, shared by
 * the reference (cell-grid) kernel and the pair-list kernel.
 *
 * LJ with the run's modifier and Coulomb (Ewald real space, reaction-field
 * or plain cut-off), each inside its own cut-off; adds the forces on both
 * atoms, the energies (double) and, when asked, the virial
 * -0.5 dx (x) f_i. Excluded pairs never reach this functor: their
 * corrections are computed separately (exclusion_corrections.h).
 */
#pragma once

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/real.h"
#include "core/units.h"
#include "core/vec.h"
#include "nonbonded/ewald_table.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

/* -dV/dr / r and V of the force-switched 1/r^alpha term (r1 = switch). */
inline void forceSwitchedTerm(const ForceSwitchCoefficients& s, int alpha, double r1, double r, double rinvAlpha,
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
    *v              = rinvAlpha - s.a / 3 * dr * dr * dr - s.b / 4 * dr * dr * dr * dr - s.c;
    *fOverR         = (alpha * rinvAlpha * rinv + s.a * dr * dr + s.b * dr * dr * dr) * rinv;
}

/* The per-atom and per-type parameters of the pair kernel in the build's
 * precision, made once per list instead of per pair: charges scaled by
 * sqrt(epsfac) (so q_i q_j carries the Coulomb prefactor), LJ types and the
 * C6/C12 matrix. */
struct PairParameters
{
    std::vector<real> scaledCharge;
    std::vector<int>  ljType;
    std::vector<real> c6, c12;
    int               numTypes = 0;

    void set(const Topology& top, double epsfac);
};

struct PairKernel
{
    using RVec = Vec3<real>;

    /* ewaldTable: tabulated erfc for the dynamics kernel; null computes
     * erfc and exp with the library (the reference kernel). */
    PairKernel(const Topology& t, const InteractionConst& c, std::vector<RVec>& forces, const EwaldTable* ewaldTable = nullptr,
               const PairParameters* parameters = nullptr) :
        top(t), ic(c), f(forces), rvdw2(real(c.rvdw * c.rvdw)), rcoul2(real(c.rcoulomb * c.rcoulomb)), table(ewaldTable),
        params(parameters)
    {
    }

    const Topology&         top;
    const InteractionConst& ic;
    std::vector<RVec>&      f;
    bool                    computeVirial = false;
    double                  vlj = 0, vcoul = 0;
    Matrix3                 virial;
    real                    rvdw2, rcoul2;
    const EwaldTable*       table;
    const PairParameters*   params; // null: read the topology (reference kernel)

    /* d = x_i - x_j (the interacting image), r2 = |d|^2. */
    void operator()(int i, int j, const RVec& d, real r2)
    {
        if (r2 < real(1e-12))
        {
            throw AtomOverlapError(i, j, top.describeAtom(i) + " and " + top.describeAtom(j)
                                                 + " are at the same position but interact (they are not excluded); "
                                                   "the coordinates are not a valid configuration");
        }
        real fscal = 0;
        if (r2 < rvdw2)
        {
            fscal += lennardJones(i, j, r2);
        }
        if (r2 < rcoul2)
        {
            fscal += coulomb(i, j, r2);
        }
        if (fscal == 0)
        {
            return;
        }
        const RVec fi = d * fscal;
        f[i] += fi;
        f[j] -= fi;
        if (computeVirial)
        {
            addVirial(virial, d, fi);
        }
    }

private:
    real lennardJones(int i, int j, real r2)
    {
        real c6, c12;
        if (params)
        {
            const int k = params->ljType[i] * params->numTypes + params->ljType[j];
            c6          = params->c6[k];
            c12         = params->c12[k];
        }
        else
        {
            const int ti = top.ljType[i], tj = top.ljType[j];
            c6           = real(top.c6Of(ti, tj));
            c12          = real(top.c12Of(ti, tj));
        }
        if (c6 == 0 && c12 == 0)
        {
            return 0;
        }
        const real rinv2 = 1 / r2;
        const real rinv6 = rinv2 * rinv2 * rinv2;
        if (ic.vdwModifier == InteractionModifier::ForceSwitch)
        {
            double       f6, v6, f12, v12;
            const double r = std::sqrt(double(r2));
            forceSwitchedTerm(ic.fswitch6, 6, ic.rvdwSwitch, r, rinv6, &f6, &v6);
            forceSwitchedTerm(ic.fswitch12, 12, ic.rvdwSwitch, r, double(rinv6) * rinv6, &f12, &v12);
            vlj += c12 * v12 - c6 * v6;
            return real(c12 * f12 - c6 * f6);
        }
        const real v6  = c6 * rinv6;
        const real v12 = c12 * rinv6 * rinv6;
        vlj += double(v12 - real(c12 * ic.shiftC12)) - double(v6 - real(c6 * ic.shiftC6));
        return (12 * v12 - 6 * v6) * rinv2;
    }

    real coulomb(int i, int j, real r2)
    {
        const real qq = params ? params->scaledCharge[i] * params->scaledCharge[j]
                               : real(ic.epsfac * top.charge[i] * top.charge[j]);
        if (qq == 0)
        {
            return 0;
        }
        const real rinv  = 1 / std::sqrt(r2);
        const real rinv2 = rinv * rinv;
        if (ic.coulombType == CoulombType::Pme)
        {
            const real beta = real(ic.ewaldCoeff);
            const real r    = r2 * rinv;
            real       erfc, dErfc; // erfc(beta r) and its derivative in r
            if (table)
            {
                table->evaluate(r, &erfc, &dErfc);
            }
            else
            {
                erfc  = std::erfc(beta * r);
                dErfc = -real(2 / std::sqrt(units::pi)) * beta * std::exp(-beta * beta * r2);
            }
            vcoul += double(qq) * (double(erfc * rinv) - ic.shEwald);
            return qq * (erfc * rinv - dErfc) * rinv2;
        }
        vcoul += double(qq) * (double(rinv) + ic.kRf * double(r2) - ic.cRf);
        return qq * (rinv * rinv2 - real(2 * ic.kRf));
    }
};

} // namespace putmd
