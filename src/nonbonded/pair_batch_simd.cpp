/* The double build's pair batch over SIMD registers (Highway), compiled
 * once per instruction set and chosen at run time (pair_batch.h).
 *
 * Lane k of a register is pair k of the batch. Every operation is the one
 * of pairBatchReference in the same order: no fused multiply-add (this file
 * is compiled with -ffp-contract=off), division and square root correctly
 * rounded, selections by multiplying with 1 or 0 as the plain loop does;
 * so each lane gets the bits of the plain loop, and the double build's
 * outputs do not depend on the instruction set. The C6/C12 entries and
 * the Ewald table's nodes are gathered by index.
 */
#if PUTMD_DOUBLE

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nonbonded/pair_batch_simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <hwy/highway.h>

#include "nonbonded/ewald_table.h"
#include "nonbonded/pair_batch.h"

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

template<bool kPme, bool kForceSwitch>
void batch(const PairBatchSetup& s, int m, PairBatch& b)
{
    const hn::ScalableTag<double> d;
    const hn::RebindToSigned<decltype(d)> di;
    using V       = hn::Vec<decltype(d)>;
    const V one   = hn::Set(d, 1.0), zero = hn::Zero(d);
    const V two   = hn::Set(d, 2.0), three = hn::Set(d, 3.0), four = hn::Set(d, 4.0), six = hn::Set(d, 6.0);
    const V twelve = hn::Set(d, 12.0), minusTwo = hn::Set(d, -2.0), minusSix = hn::Set(d, -6.0);
    const V qi = hn::Set(d, s.qi), rvdw2 = hn::Set(d, s.rvdw2), rcoul2 = hn::Set(d, s.rcoul2);
    const V shift6 = hn::Set(d, s.shift6), shift12 = hn::Set(d, s.shift12);
    const V shEwald = hn::Set(d, s.shEwald), kRf = hn::Set(d, s.kRf), cRf = hn::Set(d, s.cRf);
    const V twoKRf  = hn::Set(d, s.twoKRf);
    // the Ewald table's nodes (PME only)
    const real* tableValue = kPme ? s.table->values() : nullptr;
    const real* tableSlope = kPme ? s.table->slopes() : nullptr;
    const V     scale      = hn::Set(d, kPme ? s.table->scale() : 0.0), h = hn::Set(d, kPme ? s.table->spacing() : 0.0);
    const auto  lastNode   = hn::Set(di, kPme ? int64_t(s.table->last()) - 1 : 0);
    const size_t N = hn::Lanes(d);
    for (size_t k = 0; k < size_t(m); k += N) // the batch is padded to kPad >= N
    {
        const V r2    = hn::LoadU(d, b.r2.data() + k);
        const V rinv2 = hn::Div(one, r2);
        V       flj, vlj;
        if constexpr (kForceSwitch)
        {
            flj = hn::LoadU(d, b.fscal.data() + k);
            vlj = hn::LoadU(d, b.vlj.data() + k);
        }
        else
        {
            const auto idx   = hn::LoadU(di, b.ljIndex.data() + k);
            const V    c6    = hn::GatherIndex(d, s.c6, idx);
            const V    c12   = hn::GatherIndex(d, s.c12, idx);
            const V    rinv6 = hn::Mul(hn::Mul(rinv2, rinv2), rinv2);
            const V    v6    = hn::Mul(c6, rinv6);
            const V    v12   = hn::Mul(hn::Mul(c12, rinv6), rinv6);
            const auto inLj  = hn::AndNot(hn::And(hn::Eq(c6, zero), hn::Eq(c12, zero)), hn::Lt(r2, rvdw2));
            const V    sel   = hn::IfThenElseZero(inLj, one);
            vlj = hn::Mul(sel, hn::Sub(hn::Sub(v12, hn::Mul(c12, shift12)), hn::Sub(v6, hn::Mul(c6, shift6))));
            flj = hn::Mul(sel, hn::Mul(hn::Sub(hn::Mul(twelve, v12), hn::Mul(six, v6)), rinv2));
        }
        const V    qq     = hn::Mul(qi, hn::LoadU(d, b.qj.data() + k));
        const auto inCoul = hn::And(hn::Lt(r2, rcoul2), hn::Ne(qq, zero));
        const V    rinv   = hn::Div(one, hn::Sqrt(r2));
        const V    rinv2c = hn::Mul(rinv, rinv);
        V          fc, vc;
        if constexpr (kPme)
        {
            const V r = hn::Mul(r2, rinv);
            // EwaldTable::evaluate: node i = trunc(r scale) (at most last - 1)
            const V    x  = hn::Mul(r, scale);
            const auto i  = hn::Min(hn::ConvertTo(di, x), lastNode);
            const auto i1 = hn::Add(i, hn::Set(di, 1));
            const V    t  = hn::Sub(x, hn::ConvertTo(d, i));
            const V    g0 = hn::GatherIndex(d, tableValue, i), g1 = hn::GatherIndex(d, tableValue, i1);
            const V    d0 = hn::Mul(hn::GatherIndex(d, tableSlope, i), h);
            const V    d1 = hn::Mul(hn::GatherIndex(d, tableSlope, i1), h);
            const V    t2 = hn::Mul(t, t), t3 = hn::Mul(t2, t);
            // (2 t3 - 3 t2 + 1) g0 + (t3 - 2 t2 + t) d0 + (-2 t3 + 3 t2) g1 + (t3 - t2) d1
            const V a0 = hn::Add(hn::Sub(hn::Mul(two, t3), hn::Mul(three, t2)), one);
            const V a1 = hn::Add(hn::Sub(t3, hn::Mul(two, t2)), t);
            const V a2 = hn::Add(hn::Mul(minusTwo, t3), hn::Mul(three, t2));
            const V a3 = hn::Sub(t3, t2);
            const V g  = hn::Add(hn::Add(hn::Add(hn::Mul(a0, g0), hn::Mul(a1, d0)), hn::Mul(a2, g1)), hn::Mul(a3, d1));
            // ((6 t2 - 6 t) g0 + (3 t2 - 4 t + 1) d0 + (-6 t2 + 6 t) g1 + (3 t2 - 2 t) d1) scale
            const V b0 = hn::Sub(hn::Mul(six, t2), hn::Mul(six, t));
            const V b1 = hn::Add(hn::Sub(hn::Mul(three, t2), hn::Mul(four, t)), one);
            const V b2 = hn::Add(hn::Mul(minusSix, t2), hn::Mul(six, t));
            const V b3 = hn::Sub(hn::Mul(three, t2), hn::Mul(two, t));
            const V dg = hn::Mul(
                    hn::Add(hn::Add(hn::Add(hn::Mul(b0, g0), hn::Mul(b1, d0)), hn::Mul(b2, g1)), hn::Mul(b3, d1)),
                    scale);
            const V erfcOverR = hn::Mul(g, rinv);
            vc = hn::Mul(qq, hn::Sub(erfcOverR, shEwald));
            fc = hn::Mul(hn::Mul(qq, hn::Sub(erfcOverR, dg)), rinv2c);
        }
        else
        {
            vc = hn::Mul(qq, hn::Sub(hn::Add(rinv, hn::Mul(kRf, r2)), cRf));
            fc = hn::Mul(qq, hn::Sub(hn::Mul(rinv, rinv2c), twoKRf));
        }
        const V selC = hn::IfThenElseZero(inCoul, one);
        hn::StoreU(hn::Add(hn::Add(zero, flj), hn::Mul(selC, fc)), d, b.fscal.data() + k);
        hn::StoreU(vlj, d, b.vlj.data() + k);
        hn::StoreU(hn::Mul(selC, vc), d, b.vcoul.data() + k);
    }
}

void PairBatchSimd(const PairBatchSetup& s, int m, PairBatch& b)
{
    if (s.pme)
    {
        s.forceSwitch ? batch<true, true>(s, m, b) : batch<true, false>(s, m, b);
    }
    else
    {
        s.forceSwitch ? batch<false, true>(s, m, b) : batch<false, false>(s, m, b);
    }
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

HWY_EXPORT(PairBatchSimd);

void pairBatchSimd(const PairBatchSetup& s, int m, PairBatch& b)
{
    HWY_DYNAMIC_DISPATCH(PairBatchSimd)(s, m, b);
}

} // namespace putmd
#endif

#endif // PUTMD_DOUBLE
