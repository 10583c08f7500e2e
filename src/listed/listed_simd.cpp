#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "listed/listed_simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include <hwy/highway.h>

#include "listed/listed_simd.h"

// (compiled without contraction: every multiply and add of the plain loops
// stays two operations, so the lanes give the plain loops' bits)

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

using D  = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<D>;
using V  = hn::Vec<D>;
using VI = hn::Vec<DI>;

constexpr int c_maxLanes = static_cast<int>(hn::MaxLanes(D()));

/* The box in registers and the minimum image by rounding in float. */
struct BoxV
{
    V len[3], inv[3];
    explicit BoxV(const ListedSimdBox& b)
    {
        const D d;
        for (int c = 0; c < 3; c++)
        {
            len[c] = hn::Set(d, b.len[c]);
            inv[c] = hn::Set(d, b.inv[c]);
        }
    }
    /* out = a - b, minimum image */
    HWY_INLINE void dx(const V a[3], const V b[3], V out[3]) const
    {
        const D d;
        const V magic = hn::Set(d, 12582912.0f); // 1.5 * 2^23: adding and removing it rounds to an integer
        for (int c = 0; c < 3; c++)
        {
            const V dc    = hn::Sub(a[c], b[c]);
            const V shift = hn::Sub(hn::Add(hn::Mul(dc, inv[c]), magic), magic);
            out[c]        = hn::Sub(dc, hn::Mul(shift, len[c]));
        }
    }
};

/* The three coordinates of the atoms whose first floats are at base. */
HWY_INLINE void gatherAtoms(const float* HWY_RESTRICT x, const int32_t* base, V out[3])
{
    const D  d;
    const DI di;
    const VI b = hn::Load(di, base);
    for (int c = 0; c < 3; c++)
    {
        out[c] = hn::GatherIndex(d, x, hn::Add(b, hn::Set(di, c)));
    }
}

HWY_INLINE V dot3(const V a[3], const V b[3])
{
    return hn::Add(hn::Add(hn::Mul(a[0], b[0]), hn::Mul(a[1], b[1])), hn::Mul(a[2], b[2]));
}

HWY_INLINE void cross3(const V a[3], const V b[3], V out[3])
{
    out[0] = hn::Sub(hn::Mul(a[1], b[2]), hn::Mul(a[2], b[1]));
    out[1] = hn::Sub(hn::Mul(a[2], b[0]), hn::Mul(a[0], b[2]));
    out[2] = hn::Sub(hn::Mul(a[0], b[1]), hn::Mul(a[1], b[0]));
}

/* Adds (sign +1) or subtracts (-1) lane l of the three vectors' stored
 * components to atom base's force. */
HWY_INLINE void addForce(float* HWY_RESTRICT f, int32_t base, const float (*v)[c_maxLanes], int l, bool subtract)
{
    float* fa = f + base;
    for (int c = 0; c < 3; c++)
    {
        fa[c] = subtract ? fa[c] - v[c][l] : fa[c] + v[c][l];
    }
}

double PeriodicDihedralsSimd(const PeriodicDihedral* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    const D    d;
    const DI   di;
    const int  W = static_cast<int>(hn::Lanes(d));
    const BoxV bv(box);
    const V    zero = hn::Zero(d), one = hn::Set(d, 1.0f);
    const V    eps  = hn::Set(d, std::numeric_limits<float>::epsilon());
    HWY_ALIGN int32_t atom[4][c_maxLanes];
    HWY_ALIGN float   kf[c_maxLanes], mf[c_maxLanes], c0[c_maxLanes], s0[c_maxLanes];
    HWY_ALIGN int32_t mult[c_maxLanes], has[c_maxLanes];
    HWY_ALIGN float   fo[4][3][c_maxLanes], skip[c_maxLanes];
    int               start[c_maxLanes], count[c_maxLanes];
    // per lane and term: cos(mult phi - phi0), for the energies (kept per
    // thread: no allocation per call, which is every step)
    thread_local std::vector<float> cs;
    double            energy = 0;
    auto sameAtoms = [&](int a, int b) {
        return list[a].i == list[b].i && list[a].j == list[b].j && list[a].k == list[b].k && list[a].l == list[b].l;
    };
    for (int t = 0; t < n;)
    {
        // the next W quadruplets (runs of terms on the same four atoms)
        int lanes = 0, maxCount = 0;
        for (; lanes < W && t < n; lanes++)
        {
            start[lanes] = t;
            int e        = t + 1;
            while (e < n && sameAtoms(e, t))
            {
                e++;
            }
            count[lanes] = e - t;
            maxCount     = std::max(maxCount, e - t);
            t            = e;
        }
        for (int l = 0; l < W; l++)
        {
            const PeriodicDihedral& p = list[start[l < lanes ? l : lanes - 1]];
            atom[0][l]                = 3 * p.i;
            atom[1][l]                = 3 * p.j;
            atom[2][l]                = 3 * p.k;
            atom[3][l]                = 3 * p.l;
        }
        V xi[3], xj[3], xk[3], xl[3];
        gatherAtoms(x, atom[0], xi);
        gatherAtoms(x, atom[1], xj);
        gatherAtoms(x, atom[2], xk);
        gatherAtoms(x, atom[3], xl);
        V rij[3], rkj[3], rkl[3], m[3], nn[3];
        bv.dx(xi, xj, rij);
        bv.dx(xk, xj, rkj);
        bv.dx(xk, xl, rkl);
        cross3(rij, rkj, m);
        cross3(rkj, rkl, nn);
        // cos and sin of phi (dihedralCosSin)
        const V nrkj2 = dot3(rkj, rkj);
        const V nrkj  = hn::Sqrt(nrkj2);
        const V cv    = dot3(m, nn);
        const V sv    = hn::Mul(nrkj, dot3(rij, nn));
        const V h     = hn::Add(hn::Mul(cv, cv), hn::Mul(sv, sv));
        const auto pos = hn::Gt(h, zero);
        const V    inv = hn::Div(one, hn::Sqrt(hn::IfThenElse(pos, h, one)));
        const V    cosPhi = hn::IfThenElse(pos, hn::Mul(cv, inv), one);
        const V    sinPhi = hn::IfThenElseZero(pos, hn::Mul(sv, inv));
        // the terms: dV/dphi summed per quadruplet
        cs.resize(size_t(W) * maxCount);
        V dVdPhi = zero;
        for (int q = 0; q < maxCount; q++)
        {
            int maxMult = 0;
            for (int l = 0; l < W; l++)
            {
                const bool              in = l < lanes && q < count[l];
                const PeriodicDihedral& p  = list[in ? start[l] + q : start[0]];
                double                  pc, ps;
                dihedralPhaseCosSin(p.phi0, &pc, &ps);
                kf[l]   = float(p.kphi);
                mf[l]   = float(p.mult);
                mult[l] = p.mult;
                c0[l]   = float(pc);
                s0[l]   = float(ps);
                has[l]  = in ? 1 : 0;
                maxMult = std::max(maxMult, in ? p.mult : 0);
            }
            const VI mv = hn::Load(di, mult);
            V        cm = one, sm = zero; // cos and sin of mult phi
            for (int r = 0; r < maxMult; r++)
            {
                const auto more = hn::RebindMask(d, hn::Gt(mv, hn::Set(di, r)));
                const V    nc   = hn::Sub(hn::Mul(cm, cosPhi), hn::Mul(sm, sinPhi));
                const V    ns   = hn::Add(hn::Mul(sm, cosPhi), hn::Mul(cm, sinPhi));
                cm              = hn::IfThenElse(more, nc, cm);
                sm              = hn::IfThenElse(more, ns, sm);
            }
            const V c = hn::Add(hn::Mul(cm, hn::Load(d, c0)), hn::Mul(sm, hn::Load(d, s0)));
            const V s = hn::Sub(hn::Mul(sm, hn::Load(d, c0)), hn::Mul(cm, hn::Load(d, s0)));
            const auto in = hn::RebindMask(d, hn::Ne(hn::Load(di, has), hn::Zero(di)));
            dVdPhi = hn::IfThenElse(in, hn::Sub(dVdPhi, hn::Mul(hn::Mul(hn::Load(d, kf), hn::Load(d, mf)), s)), dVdPhi);
            HWY_ALIGN float cl[c_maxLanes];
            hn::Store(c, d, cl);
            for (int l = 0; l < W; l++)
            {
                cs[size_t(l) * maxCount + q] = cl[l];
            }
        }
        // the force distribution (applyDihedralForce)
        const V    iprm   = dot3(m, m);
        const V    iprn   = dot3(nn, nn);
        const V    toler  = hn::Mul(nrkj2, eps);
        const auto undef  = hn::Or(hn::Le(iprm, toler), hn::Le(iprn, toler));
        const V    fiS    = hn::Div(hn::Mul(hn::Neg(dVdPhi), nrkj), iprm);
        const V    flS    = hn::Div(hn::Mul(dVdPhi, nrkj), iprn);
        const V    pp     = hn::Div(dot3(rij, rkj), nrkj2);
        const V    qq     = hn::Div(dot3(rkl, rkj), nrkj2);
        for (int c = 0; c < 3; c++)
        {
            const V fi = hn::Mul(m[c], fiS);
            const V fl = hn::Mul(nn[c], flS);
            const V sc = hn::Sub(hn::Mul(fi, pp), hn::Mul(fl, qq));
            hn::Store(fi, d, fo[0][c]);
            hn::Store(hn::Sub(fi, sc), d, fo[1][c]);
            hn::Store(hn::Add(fl, sc), d, fo[2][c]);
            hn::Store(fl, d, fo[3][c]);
        }
        hn::Store(hn::IfThenElseZero(undef, one), d, skip);
        for (int l = 0; l < lanes; l++)
        {
            for (int q = 0; q < count[l]; q++)
            {
                energy += list[start[l] + q].kphi * (1.0 + double(cs[size_t(l) * maxCount + q]));
            }
            if (skip[l] != 0)
            {
                continue; // three collinear atoms: the force is undefined and zero
            }
            addForce(f, atom[0][l], fo[0], l, false);
            addForce(f, atom[1][l], fo[1], l, true);
            addForce(f, atom[2][l], fo[2], l, true);
            addForce(f, atom[3][l], fo[3], l, false);
        }
    }
    return energy;
}

double HarmonicAnglesSimd(const HarmonicAngle* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    const D    d;
    const int  W = static_cast<int>(hn::Lanes(d));
    const BoxV bv(box);
    const V    one = hn::Set(d, 1.0f), minusOne = hn::Set(d, -1.0f);
    HWY_ALIGN int32_t atom[3][c_maxLanes];
    HWY_ALIGN float   cl[c_maxLanes], dl[c_maxLanes], theta[c_maxLanes], theta0[c_maxLanes], kf[c_maxLanes];
    HWY_ALIGN float   dt[c_maxLanes], fo[3][3][c_maxLanes];
    double            energy = 0;
    for (int t = 0; t < n; t += W)
    {
        const int lanes = std::min(W, n - t);
        for (int l = 0; l < W; l++)
        {
            const HarmonicAngle& p = list[t + (l < lanes ? l : lanes - 1)];
            atom[0][l]             = 3 * p.i;
            atom[1][l]             = 3 * p.j;
            atom[2][l]             = 3 * p.k;
            theta0[l]              = float(p.theta0);
            kf[l]                  = float(p.ktheta);
        }
        V xi[3], xj[3], xk[3];
        gatherAtoms(x, atom[0], xi);
        gatherAtoms(x, atom[1], xj);
        gatherAtoms(x, atom[2], xk);
        V rij[3], rkj[3], cr[3];
        bv.dx(xi, xj, rij);
        bv.dx(xk, xj, rkj);
        // angleGeometry
        const V nij      = hn::Sqrt(dot3(rij, rij));
        const V nkj      = hn::Sqrt(dot3(rkj, rkj));
        const V dotv     = dot3(rij, rkj);
        const V nn       = hn::Mul(nij, nkj);
        const V cosTheta = hn::Min(hn::Max(hn::Div(dotv, nn), minusOne), one);
        cross3(rij, rkj, cr);
        const V c        = hn::Sqrt(dot3(cr, cr));
        const V sinTheta = hn::Div(c, nn);
        hn::Store(c, d, cl);
        hn::Store(dotv, d, dl);
        for (int l = 0; l < W; l++)
        {
            theta[l] = std::atan2(cl[l], dl[l]);
        }
        // dV/dcos (dVdCosFromTheta), then applyAngleForce
        const V    dtv      = hn::Sub(hn::Load(d, theta), hn::Load(d, theta0));
        const V    dVdTheta = hn::Mul(hn::Load(d, kf), dtv);
        const auto regular  = hn::Gt(hn::Abs(sinTheta), hn::Set(d, 1e-8f));
        const V    dVdCos   = hn::IfThenElseZero(regular, hn::Div(hn::Neg(dVdTheta), hn::IfThenElse(regular, sinTheta, one)));
        hn::Store(dtv, d, dt);
        const V inv1 = hn::Div(one, nn);
        const V ai   = hn::Div(cosTheta, hn::Mul(nij, nij));
        const V ak   = hn::Div(cosTheta, hn::Mul(nkj, nkj));
        const V mdv  = hn::Neg(dVdCos);
        for (int cc = 0; cc < 3; cc++)
        {
            const V dci = hn::Sub(hn::Mul(rkj[cc], inv1), hn::Mul(rij[cc], ai));
            const V dck = hn::Sub(hn::Mul(rij[cc], inv1), hn::Mul(rkj[cc], ak));
            const V fi  = hn::Mul(dci, mdv);
            const V fk  = hn::Mul(dck, mdv);
            hn::Store(fi, d, fo[0][cc]);
            hn::Store(fk, d, fo[1][cc]);
            hn::Store(hn::Add(fi, fk), d, fo[2][cc]);
        }
        for (int l = 0; l < lanes; l++)
        {
            const HarmonicAngle& p = list[t + l];
            addForce(f, atom[0][l], fo[0], l, false);
            addForce(f, atom[2][l], fo[1], l, false);
            addForce(f, atom[1][l], fo[2], l, true);
            energy += 0.5 * p.ktheta * double(dt[l]) * double(dt[l]);
        }
    }
    return energy;
}

double HarmonicBondsSimd(const HarmonicBond* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    const D    d;
    const int  W = static_cast<int>(hn::Lanes(d));
    const BoxV bv(box);
    const V    zero = hn::Zero(d), one = hn::Set(d, 1.0f);
    HWY_ALIGN int32_t atom[2][c_maxLanes];
    HWY_ALIGN float   b0[c_maxLanes], kb[c_maxLanes], diff[c_maxLanes], fo[1][3][c_maxLanes];
    double            energy = 0;
    for (int t = 0; t < n; t += W)
    {
        const int lanes = std::min(W, n - t);
        for (int l = 0; l < W; l++)
        {
            const HarmonicBond& b = list[t + (l < lanes ? l : lanes - 1)];
            atom[0][l]            = 3 * b.i;
            atom[1][l]            = 3 * b.j;
            b0[l]                 = float(b.b0);
            kb[l]                 = float(b.kb);
        }
        V xi[3], xj[3], dv[3];
        gatherAtoms(x, atom[0], xi);
        gatherAtoms(x, atom[1], xj);
        bv.dx(xi, xj, dv);
        const V    r     = hn::Sqrt(dot3(dv, dv));
        const V    dr    = hn::Sub(r, hn::Load(d, b0));
        const auto pos   = hn::Gt(r, zero);
        const V    fscal = hn::IfThenElseZero(pos, hn::Div(hn::Mul(hn::Neg(hn::Load(d, kb)), dr), hn::IfThenElse(pos, r, one)));
        hn::Store(dr, d, diff);
        for (int c = 0; c < 3; c++)
        {
            hn::Store(hn::Mul(dv[c], fscal), d, fo[0][c]);
        }
        for (int l = 0; l < lanes; l++)
        {
            energy += 0.5 * list[t + l].kb * double(diff[l]) * double(diff[l]);
            addForce(f, atom[0][l], fo[0], l, false);
            addForce(f, atom[1][l], fo[0], l, true);
        }
    }
    return energy;
}

void Pairs14Simd(const Pair14* list, int n, double epsfac, const float* x, float* f, const ListedSimdBox& box,
                 double* vlj, double* vcoul)
{
    const D    d;
    const int  W = static_cast<int>(hn::Lanes(d));
    const BoxV bv(box);
    const V    one = hn::Set(d, 1.0f), six = hn::Set(d, 6.0f), twelve = hn::Set(d, 12.0f);
    HWY_ALIGN int32_t atom[2][c_maxLanes];
    HWY_ALIGN float   c6[c_maxLanes], c12[c_maxLanes], qq[c_maxLanes];
    HWY_ALIGN float   e6[c_maxLanes], e12[c_maxLanes], ec[c_maxLanes], fo[1][3][c_maxLanes];
    for (int t = 0; t < n; t += W)
    {
        const int lanes = std::min(W, n - t);
        for (int l = 0; l < W; l++)
        {
            const Pair14& p = list[t + (l < lanes ? l : lanes - 1)];
            atom[0][l]      = 3 * p.i;
            atom[1][l]      = 3 * p.j;
            c6[l]           = float(p.c6);
            c12[l]          = float(p.c12);
            qq[l]           = float(epsfac * p.qq);
        }
        V xi[3], xj[3], dv[3];
        gatherAtoms(x, atom[0], xi);
        gatherAtoms(x, atom[1], xj);
        bv.dx(xi, xj, dv);
        const V rinv2 = hn::Div(one, dot3(dv, dv));
        const V rinv  = hn::Sqrt(rinv2);
        const V rinv6 = hn::Mul(hn::Mul(rinv2, rinv2), rinv2);
        const V vlj6  = hn::Mul(hn::Load(d, c6), rinv6);
        const V vlj12 = hn::Mul(hn::Mul(hn::Load(d, c12), rinv6), rinv6);
        const V vc    = hn::Mul(hn::Load(d, qq), rinv);
        const V fscal = hn::Mul(hn::Add(hn::Sub(hn::Mul(twelve, vlj12), hn::Mul(six, vlj6)), vc), rinv2);
        hn::Store(vlj6, d, e6);
        hn::Store(vlj12, d, e12);
        hn::Store(vc, d, ec);
        for (int c = 0; c < 3; c++)
        {
            hn::Store(hn::Mul(dv[c], fscal), d, fo[0][c]);
        }
        for (int l = 0; l < lanes; l++)
        {
            *vlj += double(e12[l]) - double(e6[l]);
            *vcoul += ec[l];
            addForce(f, atom[0][l], fo[0], l, false);
            addForce(f, atom[1][l], fo[0], l, true);
        }
    }
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

HWY_EXPORT(PeriodicDihedralsSimd);
HWY_EXPORT(HarmonicAnglesSimd);
HWY_EXPORT(Pairs14Simd);
HWY_EXPORT(HarmonicBondsSimd);

namespace
{
std::atomic<bool> listedSimdOn{ true };
}

void allowListedSimd(bool allowed)
{
    listedSimdOn = allowed;
}

bool listedSimdAllowed()
{
    return listedSimdOn;
}

bool periodicDihedralsFitSimd(const PeriodicDihedral* list, int n)
{
    // no early exit: a plain reduction over the list, called twice a step
    bool fit = true;
    for (int t = 0; t < n; t++)
    {
        fit &= unsigned(list[t].mult) <= 16u;
    }
    return fit;
}

double periodicDihedralsSimd(const PeriodicDihedral* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    return n > 0 ? HWY_DYNAMIC_DISPATCH(PeriodicDihedralsSimd)(list, n, x, f, box) : 0.0;
}

double harmonicAnglesSimd(const HarmonicAngle* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    return n > 0 ? HWY_DYNAMIC_DISPATCH(HarmonicAnglesSimd)(list, n, x, f, box) : 0.0;
}

double harmonicBondsSimd(const HarmonicBond* list, int n, const float* x, float* f, const ListedSimdBox& box)
{
    return n > 0 ? HWY_DYNAMIC_DISPATCH(HarmonicBondsSimd)(list, n, x, f, box) : 0.0;
}

void pairs14Simd(const Pair14* list, int n, double epsfac, const float* x, float* f, const ListedSimdBox& box,
                 double* vlj, double* vcoul)
{
    if (n > 0)
    {
        HWY_DYNAMIC_DISPATCH(Pairs14Simd)(list, n, epsfac, x, f, box, vlj, vcoul);
    }
}

} // namespace putmd
#endif
