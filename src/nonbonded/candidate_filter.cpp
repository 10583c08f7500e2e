/* The pair searches' candidate filter (candidate_filter.h): the plain
 * twin, and the SIMD one compiled once per instruction set (Highway). */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nonbonded/candidate_filter.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <hwy/highway.h>

#include "nonbonded/candidate_filter.h"

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

int FilterCandidatesSimd(const CandidateRow& row, const CandidateQuery& q, int begin, int end, CandidateIndex* out)
{
#if HWY_TARGET == HWY_SCALAR
    return filterCandidatesReference(row, q, begin, end, out);
#else
    // one lane per candidate: coordinates, and index and zone as integers
    // of the same width
    const hn::ScalableTag<real>                d;
    const hn::RebindToSigned<decltype(d)>      di;
    using V       = hn::Vec<decltype(d)>;
    const int W   = static_cast<int>(hn::Lanes(d));
    const V   xi  = hn::Set(d, q.xi), yi = hn::Set(d, q.yi), zi = hn::Set(d, q.zi), rl2 = hn::Set(d, q.rlist2);
    const auto iV = hn::Set(di, q.i);
    const auto zV = hn::Set(di, q.zone);
    const auto z0 = hn::Zero(di);
    int  m    = 0;
    auto step = [&](int k, auto lanes) HWY_ATTR {
        const V dx = hn::Sub(xi, hn::LoadU(d, row.x + k));
        const V dy = hn::Sub(yi, hn::LoadU(d, row.y + k));
        const V dz = hn::Sub(zi, hn::LoadU(d, row.z + k));
        const V r2 = hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz));
        const auto atom  = hn::LoadU(di, row.atom + k);
        const auto keepI = hn::And(hn::Gt(atom, iV), hn::Eq(hn::And(hn::LoadU(di, row.zone + k), zV), z0));
        const auto keep  = hn::And(hn::And(keepI, hn::RebindMask(di, hn::Lt(r2, rl2))), lanes);
        m += static_cast<int>(hn::CompressStore(hn::Add(hn::Iota(di, 0), hn::Set(di, CandidateIndex(k))), keep, di, out + m));
    };
    const auto all = hn::FirstN(di, W);
    int        k   = begin;
    for (; k + W <= end; k += W)
    {
        step(k, all);
    }
    if (k < end)
    {
        // the last, partial register: the arrays are readable past the row
        // (c_candidateSlack), the lanes past it are not kept
        step(k, hn::FirstN(di, end - k));
    }
    return m;
#endif
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

int filterCandidatesReference(const CandidateRow& row, const CandidateQuery& q, int begin, int end, CandidateIndex* out)
{
    int m = 0;
    for (int k = begin; k < end; k++)
    {
        const real dx = q.xi - row.x[k], dy = q.yi - row.y[k], dz = q.zi - row.z[k];
        out[m]        = k;
        m += (row.atom[k] > q.i) & ((row.zone[k] & q.zone) == 0) & (dx * dx + dy * dy + dz * dz < q.rlist2);
    }
    return m;
}

HWY_EXPORT(FilterCandidatesSimd);

int filterCandidatesSimd(const CandidateRow& row, const CandidateQuery& q, int begin, int end, CandidateIndex* out)
{
    return HWY_DYNAMIC_DISPATCH(FilterCandidatesSimd)(row, q, begin, end, out);
}

} // namespace putmd
#endif
