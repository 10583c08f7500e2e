#include "nonbonded/exclusion_corrections.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/units.h"
#include "nonbonded/exclusion_triplets_simd.h"
#include "nonbonded/series_simd.h"

namespace putmd
{

namespace
{

/* The excluded pairs of one thread's atom range inside the cut-off,
 * gathered first so that the arithmetic runs as one vectorisable loop. */
struct ExclusionBatch
{
    std::vector<int>   i, j;
    std::vector<real>  qq, dx, dy, dz, r2, fscal; // build precision (double in the double build)
    std::vector<double> v; // energy per pair (float series or exact, stored in double)
    std::vector<float>  t, hf, hv; // the series' argument and values

    /* The gathered inputs (pair atoms, qq, displacement, r^2) to n pairs. */
    void resize(size_t n)
    {
        for (auto* a : { &i, &j })
        {
            a->resize(n);
        }
        for (auto* a : { &qq, &dx, &dy, &dz, &r2 })
        {
            a->resize(n);
        }
    }
};

/* Excluded-pair Ewald correction from the kernels' series (see
 * ewald_correction.h): V = -qq hV(r^2), F/r = -qq hF(r^2); both finite at
 * r = 0 (hV(0) = 2 beta/sqrt(pi)). The series over SIMD registers
 * (series_simd.h: each pair's Horner chain in a register); the energy only
 * where it is asked for (energy steps). */
void seriesCorrections(const EwaldCorrection& series, ExclusionBatch& b, bool energies)
{
    const int   n     = int(b.qq.size());
    const float scale = float(2 / series.smax);
    b.t.resize(n);
    b.hf.resize(n);
    b.fscal.resize(n);
    float* const t  = b.t.data();
    const real*  r2 = b.r2.data();
    for (int k = 0; k < n; k++)
    {
        t[k] = scale * float(r2[k]) - 1;
    }
    evaluateSeriesSimd(series.force.data(), int(series.force.size()), t, n, b.hf.data());
    for (int k = 0; k < n; k++)
    {
        b.fscal[k] = -b.qq[k] * real(b.hf[k]);
    }
    if (energies)
    {
        b.hv.resize(n);
        b.v.resize(n);
        evaluateSeriesSimd(series.energy.data(), int(series.energy.size()), t, n, b.hv.data());
        for (int k = 0; k < n; k++)
        {
            b.v[k] = -double(b.qq[k]) * double(b.hv[k]);
        }
    }
}

} // namespace

ExcludedPairList ExcludedPairList::make(const Topology& top, double epsfac, int numSelfAtoms)
{
    ExcludedPairList l;
    l.numAtoms      = top.numAtoms;
    const int nself = numSelfAtoms < 0 ? top.numAtoms : numSelfAtoms;
    for (int i = 0; i < nself && i < top.numAtoms; i++)
    {
        l.chargeSquares += top.charge[i] * top.charge[i];
    }
    // atom a's excluded partners other than itself, sorted
    std::vector<int> partners;
    auto             partnersOf = [&](int a) -> const std::vector<int>& {
        partners.clear();
        for (int e = top.exclusionStart[a]; e < top.exclusionStart[a + 1]; e++)
        {
            if (top.exclusions[e] != a)
            {
                partners.push_back(top.exclusions[e]);
            }
        }
        std::sort(partners.begin(), partners.end());
        partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
        return partners;
    };
    auto qqOf = [&](int a, int b) { return epsfac * top.charge[a] * top.charge[b]; };
    // a, a + 1, a + 2 exclude each other and nothing else, all pairs charged
    auto isTriplet = [&](int a) {
        if (a + 2 >= top.numAtoms || qqOf(a, a + 1) == 0 || qqOf(a, a + 2) == 0 || qqOf(a + 1, a + 2) == 0)
        {
            return false;
        }
        for (int k = 0; k < 3; k++)
        {
            const std::vector<int>& p = partnersOf(a + k);
            if (p.size() != 2 || p[0] != (k == 0 ? a + 1 : a) || p[1] != (k == 2 ? a + 1 : a + 2))
            {
                return false;
            }
        }
        return true;
    };
    for (int i = 0; i < top.numAtoms; i++)
    {
        if (isTriplet(i))
        {
            l.tripletFirst.push_back(i);
            for (const double qq : { qqOf(i, i + 1), qqOf(i, i + 2), qqOf(i + 1, i + 2) })
            {
                l.tripletQQ.push_back(real(qq));
            }
            i += 2; // its other two atoms have no pairs of their own
            continue;
        }
        for (int e = top.exclusionStart[i]; e < top.exclusionStart[i + 1]; e++)
        {
            const int    j  = top.exclusions[e];
            const double qq = qqOf(i, j);
            if (j > i && qq != 0)
            {
                l.i.push_back(i);
                l.j.push_back(j);
                l.qq.push_back(real(qq));
            }
        }
    }
    return l;
}

namespace
{

/* The pairs' arithmetic: the series (single precision) or erf and exp
 * (PME without a series), or reaction field. */
void batchArithmetic(const Topology& top, const InteractionConst& ic, const EwaldCorrection* series, bool useSeries,
                     ExclusionBatch& b, bool energies)
{
    const int    n    = int(b.i.size());
    const bool   pme  = ic.coulombType == CoulombType::Pme;
    const double beta = ic.ewaldCoeff;
    if (useSeries)
    {
        seriesCorrections(*series, b, energies);
        return;
    }
    b.fscal.resize(n);
    b.v.resize(n);
    for (int k = 0; k < n; k++)
    {
        const double qq = double(ic.epsfac) * top.charge[b.i[k]] * top.charge[b.j[k]];
        const real   r2 = b.r2[k];
        if (pme && r2 < real(1e-12))
        {
            // the r -> 0 limit of erf(beta r)/r; no force
            b.v[k]     = -qq * 2 * beta / std::sqrt(units::pi);
            b.fscal[k] = 0;
        }
        else if (pme)
        {
            const real r    = std::sqrt(r2);
            const real erfv = std::erf(real(beta) * r);
            b.v[k]          = -qq * double(erfv / r);
            // F = -dV/dr rhat with V = -qq erf(beta r)/r
            b.fscal[k] = real(qq) * (real(2 / std::sqrt(units::pi) * beta) * std::exp(-real(beta * beta) * r2) / r - erfv / r2) / r;
        }
        else
        {
            b.v[k]     = qq * (ic.kRf * r2 - ic.cRf);
            b.fscal[k] = -real(2 * qq * ic.kRf);
        }
    }
}

/* Molecules [begin, end) of the list over SIMD registers
 * (exclusion_triplets_simd.h): the mixed build's float coordinates only;
 * the double build never takes this path. */
template<typename T>
void tripletsOverSimd(const ExcludedPairList& pairs, const std::vector<Vec3<T>>& x, std::vector<Vec3<T>>& f, int begin,
                      int end, const T (&len)[3], const T (&inv)[3], double rc2, const EwaldCorrection& series)
{
    static_assert(sizeof(Vec3<T>) == 3 * sizeof(T), "the SIMD loop reads x, y, z as consecutive floats");
    if constexpr (std::is_same_v<T, float>)
    {
        TripletCorrectionInput in;
        in.x     = &x[0].x;
        in.f     = &f[0].x;
        in.first = pairs.tripletFirst.data();
        in.qq    = pairs.tripletQQ.data();
        in.begin = begin, in.end = end;
        for (int c = 0; c < 3; c++)
        {
            in.len[c] = len[c], in.inv[c] = inv[c];
        }
        in.rc2          = float(rc2);
        in.rc2Inclusive = double(in.rc2) < rc2;
        in.scale        = float(2 / series.smax);
        in.coef         = series.force.data();
        in.numCoef      = int(series.force.size());
        tripletCorrectionsSimd(in);
    }
}

} // namespace

double exclusionCorrections(const Topology& top, const InteractionConst& ic, const Pbc& pbc,
                            const std::vector<Vec3<real>>& x, std::vector<Vec3<real>>& f, Matrix3* virial,
                            int numSelfAtoms, int numThreads, const EwaldCorrection* series,
                            const ExcludedPairList* pairs, bool energies)
{
    if (pairs && (numSelfAtoms >= 0 || pairs->numAtoms != top.numAtoms))
    {
        pairs = nullptr; // the list covers the whole system's self terms
    }
    const int numSelf = numSelfAtoms < 0 ? top.numAtoms : numSelfAtoms;
    using RVec         = Vec3<real>;
    const double rc2  = ic.rcoulomb * ic.rcoulomb;
    const double beta = ic.ewaldCoeff;
    const int    nt   = std::max(1, std::min(numThreads, top.numAtoms / 64 + 1));
    const bool   pme  = ic.coulombType == CoulombType::Pme;
    const bool   useSeries = pme && series != nullptr && !(rc2 > series->smax);
    // a rectangular box: the minimum image per dimension in the build's
    // precision (rounding by adding and removing 1.5 * 2^23 or 2^52: exact
    // for the fractions of a box met here)
    const bool     rectangular = !pbc.box().isTriclinic();
    const Matrix3& bv          = pbc.box().vectors();
    const real     len[3]      = { real(bv(0, 0)), real(bv(1, 1)), real(bv(2, 2)) };
    const real     inv[3]      = { real(1 / bv(0, 0)), real(1 / bv(1, 1)), real(1 / bv(2, 2)) };
    constexpr real magic       = sizeof(real) == 4 ? real(12582912.0) : real(6755399441055744.0);
    // the three-atom molecules over SIMD registers where the step needs only
    // forces (the same bits as the batch; exclusion_triplets_simd.h)
    const int  numTriplets    = pairs ? static_cast<int>(pairs->tripletFirst.size()) : 0;
    const bool tripletsSimd   = std::is_same_v<real, float> && useSeries && rectangular && !energies && virial == nullptr
                              && numTriplets > 0;
    struct Share
    {
        double                            v = 0, q2 = 0;
        Matrix3                           virial;
        std::vector<std::pair<int, RVec>> later; // forces on atoms of later shares
    };
    std::vector<Share> shares(nt);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        Share&                  sh    = shares[t];
        static thread_local ExclusionBatch b;
        b.resize(0);
        // the shares' atom ranges: equal numbers of listed pairs (a
        // protein's atoms have many exclusions, a water's three: rnase's
        // first share, by atoms, took 1.5 times the second's time), else
        // equal numbers of atoms
        auto boundary = [&](int u) {
            if (u == 0 || u == nt)
            {
                return u == 0 ? 0 : top.numAtoms;
            }
            return pairs && !pairs->i.empty() ? pairs->i[pairs->i.size() * u / nt]
                                              : static_cast<int>(long(top.numAtoms) * u / nt);
        };
        const int begin = boundary(t);
        const int end   = boundary(t + 1);
        // raw pointers: through the vectors every store could have changed
        // where they point, and each pair reloaded them
        const RVec* __restrict px = x.data();
        // one pair (i < j) into the batch at n, kept (n + 1) when inside the
        // cut-off (written every time: no branch)
        auto gatherPair = [&](int i, int j, real qq, int& n) {
            RVec d;
            if (rectangular)
            {
                d = px[i] - px[j];
                for (int c = 0; c < 3; c++)
                {
                    d[c] -= len[c] * ((d[c] * inv[c] + magic) - magic);
                }
            }
            else
            {
                d = pbc.dx(px[i], px[j]);
            }
            const real r2 = norm2(d);
            b.i[n] = i, b.j[n] = j, b.qq[n] = qq;
            b.dx[n] = d.x, b.dy[n] = d.y, b.dz[n] = d.z, b.r2[n] = r2;
            n += r2 < rc2;
        };
        // gather: the pairs (i < j) inside the cut-off with charge
        if (pairs)
        {
            // from the list: the pairs of this share's i-atoms
            const int k0 = int(std::lower_bound(pairs->i.begin(), pairs->i.end(), begin) - pairs->i.begin());
            const int k1 = int(std::lower_bound(pairs->i.begin(), pairs->i.end(), end) - pairs->i.begin());
            b.resize(k1 - k0);
            int n = 0;
            for (int k = k0; k < k1; k++)
            {
                gatherPair(pairs->i[k], pairs->j[k], pairs->qq[k], n);
            }
            b.resize(n);
        }
        for (int i = begin; i < end && !pairs; i++)
        {
            if (i < numSelf)
            {
                sh.q2 += top.charge[i] * top.charge[i];
            }
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
                b.i.push_back(i);
                b.j.push_back(j);
                b.qq.push_back(real(qq));
                b.dx.push_back(d.x);
                b.dy.push_back(d.y);
                b.dz.push_back(d.z);
                b.r2.push_back(r2);
            }
        }
        // this share's three-atom molecules, whose atoms no other pair has:
        // over SIMD registers, or their pairs after the batch's (the same
        // arithmetic, forces added directly)
        const int tBegin = int(long(numTriplets) * t / nt), tEnd = int(long(numTriplets) * (t + 1) / nt);
        const int numListed = int(b.i.size());
        if (tripletsSimd)
        {
            tripletsOverSimd(*pairs, x, f, tBegin, tEnd, len, inv, rc2, *series);
        }
        else if (tEnd > tBegin)
        {
            b.resize(numListed + 3 * (tEnd - tBegin));
            int n = numListed;
            for (int m = tBegin; m < tEnd; m++)
            {
                const int a = pairs->tripletFirst[m];
                gatherPair(a, a + 1, pairs->tripletQQ[3 * size_t(m)], n);
                gatherPair(a, a + 2, pairs->tripletQQ[3 * size_t(m) + 1], n);
                gatherPair(a + 1, a + 2, pairs->tripletQQ[3 * size_t(m) + 2], n);
            }
            b.resize(n);
        }
        // arithmetic
        const int n = int(b.i.size());
        batchArithmetic(top, ic, series, useSeries, b, energies);
        // scatter, in pair order (raw pointers, as in the gather)
        const int* __restrict    si     = b.i.data();
        const int* __restrict    sj     = b.j.data();
        const real* __restrict   sdx    = b.dx.data();
        const real* __restrict   sdy    = b.dy.data();
        const real* __restrict   sdz    = b.dz.data();
        const real* __restrict   sfscal = b.fscal.data();
        const double* __restrict sv     = b.v.data();
        RVec* __restrict         fp     = f.data();
        double                   vsum   = 0;
        const bool               sumV   = energies || !useSeries; // the series path leaves v out then
        for (int k = 0; k < n; k++)
        {
            const int  i  = si[k], j = sj[k];
            const RVec d(sdx[k], sdy[k], sdz[k]);
            const RVec fi = d * sfscal[k];
            vsum += sumV ? sv[k] : 0.0;
            fp[i] += fi;
            // (a molecule's pairs, after the listed ones: its atoms are this share's)
            if (j < end || k >= numListed)
            {
                fp[j] -= fi;
            }
            else
            {
                sh.later.push_back({ j, fi });
            }
            if (virial)
            {
                addVirial(sh.virial, d, fi);
            }
        }
        sh.v += vsum;
    }
    double v = 0, q2 = pairs ? pairs->chargeSquares : 0.0;
    for (const Share& sh : shares)
    {
        v += sh.v;
        q2 += sh.q2;
        for (const auto& [j, fi] : sh.later)
        {
            f[j] -= fi;
        }
        if (virial)
        {
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    (*virial)(a, b) += sh.virial(a, b);
                }
            }
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

} // namespace putmd
