#include "nonbonded/pair_batch.h"

#include <cmath>

#include "nonbonded/ewald_table.h"
#include "nonbonded/pair_kernel.h"

namespace putmd
{

void PairBatch::pad(int m)
{
    for (int k = m; k % kPad != 0; k++)
    {
        ljIndex[k] = 0, r2[k] = 1, qj[k] = 0, fscal[k] = 0, vlj[k] = 0;
    }
}

int pairGather(const PairGatherInput& in, PairBatch& b, int* tooClose, int m)
{
    // locals and restricted pointers: the stores to the batch could
    // otherwise change `in` (rmax2 and xi are doubles too), and each pair
    // would load them again
    const real* __restrict xq   = in.xq;
    const int* __restrict  jl   = in.j;
    const int* __restrict  sl   = in.shift;
    const real* __restrict shv  = in.shiftVector;
    const int* __restrict  type = in.ljType;
    const real             xi0 = in.xi[0], xi1 = in.xi[1], xi2 = in.xi[2], rmax2 = in.rmax2;
    const int64_t          rowI = in.rowI;
    real                   r2min = rmax2;
    // every pair is written at m, and m moves on past those inside rmax:
    // no branch on the distance
    for (int p = in.p0, p1 = in.p1; p < p1; p++)
    {
        const int   j  = jl[p];
        const real* xj = xq + 4 * int64_t(j);
        const real* sv = shv + 3 * sl[p];
        const real  dx = (xi0 - xj[0]) - sv[0], dy = (xi1 - xj[1]) - sv[1], dz = (xi2 - xj[2]) - sv[2];
        const real  r2 = dx * dx + dy * dy + dz * dz;
        r2min          = r2 < r2min ? r2 : r2min;
        b.j[m] = j, b.dx[m] = dx, b.dy[m] = dy, b.dz[m] = dz, b.r2[m] = r2, b.qj[m] = xj[3];
        b.ljIndex[m] = rowI + type[j];
        m += r2 < rmax2;
    }
    if (r2min < real(1e-12) && *tooClose < 0) [[unlikely]]
    {
        // the first such pair, for the caller's message
        for (int p = in.p0; p < in.p1; p++)
        {
            const real* xj = xq + 4 * int64_t(jl[p]);
            const real* sv = shv + 3 * sl[p];
            const real  dx = (xi0 - xj[0]) - sv[0], dy = (xi1 - xj[1]) - sv[1], dz = (xi2 - xj[2]) - sv[2];
            if (dx * dx + dy * dy + dz * dz < real(1e-12))
            {
                *tooClose = p;
                break;
            }
        }
    }
    return m;
}

PairBatchSetup::PairBatchSetup(const InteractionConst& ic, const EwaldTable* table, const PairParameters& par) :
    c6(par.c6.data()),
    c12(par.c12.data()),
    rvdw2(real(ic.rvdw * ic.rvdw)),
    rcoul2(real(ic.rcoulomb * ic.rcoulomb)),
    shift6(real(ic.shiftC6)),
    shift12(real(ic.shiftC12)),
    twoKRf(real(2 * ic.kRf)),
    shEwald(ic.shEwald),
    kRf(ic.kRf),
    cRf(ic.cRf),
    pme(ic.coulombType == CoulombType::Pme),
    forceSwitch(ic.vdwModifier == InteractionModifier::ForceSwitch)
{
    if (pme)
    {
        this->table = table;
    }
}

namespace
{

template<bool kPme, bool kForceSwitch>
void reference(const PairBatchSetup& s, int m, PairBatch& b)
{
    const real qi = s.qi;
    // every pair of the batch has r^2 >= 1e-12 (checked at the gather):
    // both terms are computed for all and selected by multiplying with 1
    // or 0, the values of PairKernel's branches
    for (int k = 0; k < m; k++)
    {
        const real r2    = b.r2[k];
        const real rinv2 = 1 / r2;
        real       flj   = 0;
        double     vlj   = 0;
        if constexpr (kForceSwitch)
        {
            flj = b.fscal[k];
            vlj = b.vlj[k];
        }
        else
        {
            const real c6    = s.c6[b.ljIndex[k]], c12 = s.c12[b.ljIndex[k]];
            const real rinv6 = rinv2 * rinv2 * rinv2;
            const real v6    = c6 * rinv6;
            const real v12   = c12 * rinv6 * rinv6;
            const bool inLj  = (r2 < s.rvdw2) & !((c6 == 0) & (c12 == 0));
            vlj              = double(inLj) * (double(v12 - real(c12 * s.shift12)) - double(v6 - real(c6 * s.shift6)));
            flj              = real(inLj) * ((12 * v12 - 6 * v6) * rinv2);
        }
        const real qq     = qi * b.qj[k];
        const bool inCoul = (r2 < s.rcoul2) & (qq != 0);
        const real rinv   = 1 / std::sqrt(r2);
        const real rinv2c = rinv * rinv;
        real       fc;
        double     vc;
        if constexpr (kPme)
        {
            const real r = r2 * rinv;
            real       erfc, dErfc;
            s.table->evaluate(r, &erfc, &dErfc);
            vc = double(qq) * (double(erfc * rinv) - s.shEwald);
            fc = qq * (erfc * rinv - dErfc) * rinv2c;
        }
        else
        {
            vc = double(qq) * (double(rinv) + s.kRf * double(r2) - s.cRf);
            fc = qq * (rinv * rinv2c - s.twoKRf);
        }
        // PairKernel: fscal = 0, += LJ, += Coulomb
        real f = 0;
        f += flj;
        f += real(inCoul) * fc;
        b.fscal[k] = f;
        b.vlj[k]   = vlj;
        b.vcoul[k] = double(inCoul) * vc;
    }
}

} // namespace

void pairBatchReference(const PairBatchSetup& s, int m, PairBatch& b)
{
    if (s.pme)
    {
        s.forceSwitch ? reference<true, true>(s, m, b) : reference<true, false>(s, m, b);
    }
    else
    {
        s.forceSwitch ? reference<false, true>(s, m, b) : reference<false, false>(s, m, b);
    }
}

} // namespace putmd
