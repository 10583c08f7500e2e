#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nonbonded/series_simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <cmath>

#include <hwy/highway.h>

#include "nonbonded/series_simd.h"

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

void EvaluateSeriesSimd(const float* coef, int numCoef, const float* t, int n, float* out)
{
    const hn::ScalableTag<float> d;
    const int                    W = static_cast<int>(hn::Lanes(d));
    int                          k = 0;
    // two registers at a time: two independent chains
    for (; k + 2 * W <= n; k += 2 * W)
    {
        const auto t0 = hn::LoadU(d, t + k), t1 = hn::LoadU(d, t + k + W);
        auto       h0 = hn::Set(d, coef[numCoef - 1]), h1 = h0;
        for (int c = numCoef - 2; c >= 0; c--)
        {
            const auto cv = hn::Set(d, coef[c]);
            h0            = hn::MulAdd(h0, t0, cv);
            h1            = hn::MulAdd(h1, t1, cv);
        }
        hn::StoreU(h0, d, out + k);
        hn::StoreU(h1, d, out + k + W);
    }
    if (k < n)
    {
        // the last points through a zero-padded register
        HWY_ALIGN float buf[2 * hn::MaxLanes(decltype(d)())] = {};
        const int       m = n - k;
        for (int l = 0; l < m; l++)
        {
            buf[l] = t[k + l];
        }
        for (int r = 0; r < m; r += W)
        {
            auto h = hn::Set(d, coef[numCoef - 1]);
            const auto tv = hn::Load(d, buf + r);
            for (int c = numCoef - 2; c >= 0; c--)
            {
                h = hn::MulAdd(h, tv, hn::Set(d, coef[c]));
            }
            hn::Store(h, d, buf + r);
        }
        for (int l = 0; l < m; l++)
        {
            out[k + l] = buf[l];
        }
    }
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

HWY_EXPORT(EvaluateSeriesSimd);

void evaluateSeriesSimd(const float* coef, int numCoef, const float* t, int n, float* out)
{
    if (numCoef <= 0)
    {
        for (int k = 0; k < n; k++)
        {
            out[k] = 0;
        }
        return;
    }
    HWY_DYNAMIC_DISPATCH(EvaluateSeriesSimd)(coef, numCoef, t, n, out);
}

void evaluateSeriesReference(const float* coef, int numCoef, const float* t, int n, float* out)
{
    for (int k = 0; k < n; k++)
    {
        float h = numCoef > 0 ? coef[numCoef - 1] : 0.0f;
        for (int c = numCoef - 2; c >= 0; c--)
        {
            h = std::fma(h, t[k], coef[c]);
        }
        out[k] = h;
    }
}

} // namespace putmd
#endif
