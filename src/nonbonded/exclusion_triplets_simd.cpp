#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nonbonded/exclusion_triplets_simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <cmath>

#include <hwy/highway.h>

#include "nonbonded/exclusion_triplets_simd.h"

// (compiled without contraction: a multiply and an add stay two operations,
// as in the general batch; the series' multiply-adds are explicit)

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

#define PUTMD_TRIPLET_UNROLL _Pragma("GCC unroll 16")

void TripletCorrectionsSimd(const TripletCorrectionInput& in)
{
    const hn::ScalableTag<float>          d;
    const hn::RebindToSigned<decltype(d)> di;
    using V                = hn::Vec<decltype(d)>;
    using VI               = hn::Vec<decltype(di)>;
    constexpr int     MaxW = static_cast<int>(hn::MaxLanes(decltype(d)()));
    const int         W    = static_cast<int>(hn::Lanes(d));
    constexpr float   magic = 12582912.0f; // 1.5 * 2^23: adding and removing it rounds to an integer
    const V           magicV = hn::Set(d, magic), one = hn::Set(d, 1.0f), scale = hn::Set(d, in.scale);
    const V           rc2 = hn::Set(d, in.rc2);
    const V           len[3] = { hn::Set(d, in.len[0]), hn::Set(d, in.len[1]), hn::Set(d, in.len[2]) };
    const V           inv[3] = { hn::Set(d, in.inv[0]), hn::Set(d, in.inv[1]), hn::Set(d, in.inv[2]) };
    const float* HWY_RESTRICT x     = in.x;
    float* HWY_RESTRICT       f     = in.f;
    const int* HWY_RESTRICT   first = in.first;
    const float* HWY_RESTRICT qqA   = in.qq;
    const int                 nc    = in.numCoef;
    // per lane (a molecule each): the first atom's first float and the
    // molecule's first pair charge; the forces back lane by lane
    HWY_ALIGN int32_t atomBase[MaxW], qqBase[MaxW];
    HWY_ALIGN float   fs[9][MaxW];
    for (int k = in.begin; k < in.end; k += W)
    {
        const int n = k + W <= in.end ? W : in.end - k;
        for (int l = 0; l < W; l++)
        {
            // past the end: the last molecule again, computed and not stored
            const int m = k + (l < n ? l : n - 1);
            atomBase[l] = 3 * first[m];
            qqBase[l]   = 3 * m;
        }
        const VI ab = hn::Load(di, atomBase), qb = hn::Load(di, qqBase);
        V        xv[9], fv[9];
        PUTMD_TRIPLET_UNROLL
        for (int c = 0; c < 9; c++)
        {
            xv[c] = hn::GatherIndex(d, x, hn::Add(ab, hn::Set(di, c)));
            fv[c] = hn::GatherIndex(d, f, hn::Add(ab, hn::Set(di, c)));
        }
        // the pairs (0,1), (0,2), (1,2), in the batch's order
        PUTMD_TRIPLET_UNROLL
        for (int p = 0; p < 3; p++)
        {
            const int a = p < 2 ? 0 : 1, b = p == 0 ? 1 : 2;
            V         dv[3];
            PUTMD_TRIPLET_UNROLL
            for (int c = 0; c < 3; c++)
            {
                const V dc = hn::Sub(xv[3 * a + c], xv[3 * b + c]);
                dv[c]      = hn::Sub(dc, hn::Mul(len[c], hn::Sub(hn::Add(hn::Mul(dc, inv[c]), magicV), magicV)));
            }
            const V r2 = hn::Add(hn::Add(hn::Mul(dv[0], dv[0]), hn::Mul(dv[1], dv[1])), hn::Mul(dv[2], dv[2]));
            const auto inRange = in.rc2Inclusive ? hn::Le(r2, rc2) : hn::Lt(r2, rc2);
            const V    t       = hn::Sub(hn::Mul(scale, r2), one);
            V          h       = hn::Set(d, in.coef[nc - 1]);
            for (int c = nc - 2; c >= 0; c--)
            {
                h = hn::MulAdd(h, t, hn::Set(d, in.coef[c]));
            }
            const V qq    = hn::GatherIndex(d, qqA, hn::Add(qb, hn::Set(di, p)));
            const V fscal = hn::Mul(hn::Neg(qq), h);
            PUTMD_TRIPLET_UNROLL
            for (int c = 0; c < 3; c++)
            {
                const V fc    = hn::IfThenElseZero(inRange, hn::Mul(dv[c], fscal));
                fv[3 * a + c] = hn::Add(fv[3 * a + c], fc);
                fv[3 * b + c] = hn::Sub(fv[3 * b + c], fc);
            }
        }
        PUTMD_TRIPLET_UNROLL
        for (int c = 0; c < 9; c++)
        {
            hn::Store(fv[c], d, fs[c]);
        }
        for (int l = 0; l < n; l++)
        {
            float* fa = f + atomBase[l];
            PUTMD_TRIPLET_UNROLL
            for (int c = 0; c < 9; c++)
            {
                fa[c] = fs[c][l];
            }
        }
    }
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

HWY_EXPORT(TripletCorrectionsSimd);

void tripletCorrectionsSimd(const TripletCorrectionInput& in)
{
    if (in.begin >= in.end || in.numCoef <= 0)
    {
        return;
    }
    HWY_DYNAMIC_DISPATCH(TripletCorrectionsSimd)(in);
}

void tripletCorrectionsReference(const TripletCorrectionInput& in)
{
    constexpr float magic      = 12582912.0f;
    constexpr int   c_pairA[3] = { 0, 0, 1 }, c_pairB[3] = { 1, 2, 2 };
    for (int m = in.begin; m < in.end; m++)
    {
        float* const       fm = in.f + 3 * size_t(in.first[m]);
        const float* const xm = in.x + 3 * size_t(in.first[m]);
        for (int p = 0; p < 3; p++)
        {
            const int a = c_pairA[p], b = c_pairB[p];
            float     dv[3];
            for (int c = 0; c < 3; c++)
            {
                const float dc = xm[3 * a + c] - xm[3 * b + c];
                dv[c]          = dc - in.len[c] * ((dc * in.inv[c] + magic) - magic);
            }
            const float r2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
            if (!(in.rc2Inclusive ? r2 <= in.rc2 : r2 < in.rc2))
            {
                continue;
            }
            const float t = in.scale * r2 - 1;
            float       h = in.coef[in.numCoef - 1];
            for (int c = in.numCoef - 2; c >= 0; c--)
            {
                h = std::fma(h, t, in.coef[c]);
            }
            const float fscal = -in.qq[3 * size_t(m) + p] * h;
            for (int c = 0; c < 3; c++)
            {
                fm[3 * a + c] += dv[c] * fscal;
                fm[3 * b + c] -= dv[c] * fscal;
            }
        }
    }
}

} // namespace putmd
#endif
