#include "update/settle.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "update/constraints.h"

namespace putmd::constraint_detail
{

namespace
{

SettleParameters makeParameters(double invMO, double invMH, double doh, double dhh)
{
    SettleParameters p;
    p.invMO          = invMO;
    p.invMH          = invMH;
    p.mO             = 1 / invMO;
    p.mH             = 1 / invMH;
    p.doh            = doh;
    p.dhh            = dhh;
    p.rc             = dhh / 2;
    const double h   = std::sqrt(doh * doh - p.rc * p.rc); // O to the H-H midpoint
    p.ra             = 2 * p.mH * h / (p.mO + 2 * p.mH);
    p.rb             = h - p.ra;
    return p;
}

std::string waterName(const Settle& s, const AtomNames& names)
{
    return "water " + names.describe(s.o) + ", " + names.describe(s.h1) + ", " + names.describe(s.h2);
}

void checkSettle(const Settle& s, const std::vector<real>& invMass, int numAtoms, const AtomNames& names)
{
    for (int a : { s.o, s.h1, s.h2 })
    {
        if (a < 0 || a >= numAtoms)
        {
            throw ConstraintError(fmt::format("settle of atoms {}, {}, {}: atom index out of range 1-{}", s.o + 1,
                                              s.h1 + 1, s.h2 + 1, numAtoms));
        }
        if (!(invMass[a] > 0))
        {
            throw ConstraintError("SETTLE " + waterName(s, names) + ": " + names.describe(a)
                                  + " has infinite mass (inverse mass 0)");
        }
    }
    const double h1 = invMass[s.h1], h2 = invMass[s.h2];
    if (std::abs(h1 - h2) > 1e-6 * std::max(h1, h2))
    {
        throw ConstraintError("SETTLE " + waterName(s, names) + ": the two hydrogens must have the same mass");
    }
    if (!(s.doh > 0) || !(s.dhh > 0) || !(s.doh > s.dhh / 2))
    {
        throw ConstraintError(fmt::format("SETTLE {}: doh = {} and dhh = {} do not form a triangle",
                                          waterName(s, names), s.doh, s.dhh));
    }
}

/* The three atoms relative to their centre of mass, made whole around O. */
void relativeToCom(const SettleParameters& p, const DVec& b, const DVec& c, DVec out[3])
{
    const DVec com = (b + c) * (p.mH / (p.mO + 2 * p.mH));
    out[0]         = -com;
    out[1]         = b - com;
    out[2]         = c - com;
}

struct Frame
{
    DVec ex, ey, ez;
    DVec to(const DVec& v) const { return { dot(ex, v), dot(ey, v), dot(ez, v) }; }
    DVec from(const DVec& p) const { return ex * p.x + ey * p.y + ez * p.z; }
};

/* Z' normal to the old plane, X' normal to Z' and the new O position. */
bool makeFrame(const DVec old[3], const DVec& newO, Frame& f)
{
    const DVec   n  = cross(old[1] - old[0], old[2] - old[0]);
    const double nn = norm(n);
    if (!(nn > 0))
    {
        return false;
    }
    f.ez             = n * (1 / nn);
    const DVec   ex  = cross(newO, f.ez);
    const double exn = norm(ex);
    if (!(exn > 0))
    {
        return false;
    }
    f.ex = ex * (1 / exn);
    f.ey = cross(f.ez, f.ex);
    return true;
}

/* The displacements taking the unconstrained water now[] onto the
 * constraints (both old[] and now[] relative to their centres of mass);
 * false when no rigid water fits (collapsed or rotated too far). */
bool settleDisplacements(const SettleParameters& p, const DVec old[3], const DVec now[3], DVec disp[3])
{
    Frame f;
    if (!makeFrame(old, now[0], f))
    {
        return false;
    }
    DVec o[3], c[3];
    for (int a = 0; a < 3; a++)
    {
        o[a] = f.to(old[a]);
        c[a] = f.to(now[a]);
    }
    const double sinPhi = c[0].z / p.ra;
    if (!(std::abs(sinPhi) < 1))
    {
        return false;
    }
    const double cosPhi = std::sqrt(1 - sinPhi * sinPhi);
    const double sinPsi = (c[1].z - c[2].z) / (2 * p.rc * cosPhi);
    if (!(std::abs(sinPsi) < 1))
    {
        return false;
    }
    const double cosPsi = std::sqrt(1 - sinPsi * sinPsi);
    // the canonical triangle tilted by psi about Y', then by phi about X'
    const DVec r[3] = { { 0, p.ra * cosPhi, p.ra * sinPhi },
                        { -p.rc * cosPsi, -p.rb * cosPhi - p.rc * sinPsi * sinPhi,
                          -p.rb * sinPhi + p.rc * sinPsi * cosPhi },
                        { p.rc * cosPsi, -p.rb * cosPhi + p.rc * sinPsi * sinPhi,
                          -p.rb * sinPhi - p.rc * sinPsi * cosPhi } };
    const double m[3] = { p.mO, p.mH, p.mH };
    double       alpha = 0, beta = 0, gamma = 0;
    for (int a = 0; a < 3; a++)
    {
        alpha += m[a] * (o[a].x * r[a].x + o[a].y * r[a].y);
        beta += m[a] * (o[a].x * r[a].y - o[a].y * r[a].x);
        gamma += m[a] * (o[a].x * c[a].y - o[a].y * c[a].x);
    }
    const double r2   = alpha * alpha + beta * beta;
    const double disc = r2 - gamma * gamma;
    if (!(r2 > 0) || !(disc >= 0))
    {
        return false;
    }
    const double sq       = std::sqrt(disc);
    const double sinTheta = (alpha * gamma - beta * sq) / r2;
    const double cosTheta = (beta * gamma + alpha * sq) / r2;
    if (!(cosTheta > 0))
    {
        return false;
    }
    for (int a = 0; a < 3; a++)
    {
        const DVec fin = { r[a].x * cosTheta - r[a].y * sinTheta, r[a].x * sinTheta + r[a].y * cosTheta, r[a].z };
        disp[a]        = f.from(fin - c[a]);
    }
    return true;
}

/* Solves the symmetric 3x3 system t lambda = b by Cramer's rule. */
DVec solveSymmetric3(const double t[3][3], const DVec& b)
{
    const double c00 = t[1][1] * t[2][2] - t[1][2] * t[2][1];
    const double c01 = t[1][2] * t[2][0] - t[1][0] * t[2][2];
    const double c02 = t[1][0] * t[2][1] - t[1][1] * t[2][0];
    const double det = t[0][0] * c00 + t[0][1] * c01 + t[0][2] * c02;
    const double c11 = t[0][0] * t[2][2] - t[0][2] * t[2][0];
    const double c12 = t[0][1] * t[2][0] - t[0][0] * t[2][1];
    const double c22 = t[0][0] * t[1][1] - t[0][1] * t[1][0];
    // the inverse is the transposed cofactor matrix / det; t is symmetric
    return { (c00 * b.x + c01 * b.y + c02 * b.z) / det, (c01 * b.x + c11 * b.y + c12 * b.z) / det,
             (c02 * b.x + c12 * b.y + c22 * b.z) / det };
}

/* A block of waters in structure-of-arrays form for the vectorised
 * SETTLE: the same arithmetic as relativeToCom, makeFrame and
 * settleDisplacements, written without branches (a lane that fails is
 * flagged and redone by the scalar code, which names the water), in the
 * build's precision: float in the mixed build (16 lanes, as GROMACS's
 * mixed-precision SETTLE, at twice the lanes per instruction of double),
 * double in the double build (8 lanes, the plain twin's arithmetic). */
constexpr int c_settleBlock = 64 / int(sizeof(real));

struct SettleBlock
{
    // inputs: H1 and H2 relative to O, at the start (b, c) and now (bp, cp)
    real bx[c_settleBlock], by[c_settleBlock], bz[c_settleBlock];
    real cx[c_settleBlock], cy[c_settleBlock], cz[c_settleBlock];
    real bpx[c_settleBlock], bpy[c_settleBlock], bpz[c_settleBlock];
    real cpx[c_settleBlock], cpy[c_settleBlock], cpz[c_settleBlock];
    // outputs: displacements of O, H1, H2; the start positions relative to
    // the centre of mass (for the virial); whether the lane succeeded
    real d[3][3][c_settleBlock];
    real old[3][3][c_settleBlock];
    real ok[c_settleBlock]; // > 0: the lane succeeded
};

/* Value selects (std::max returns a reference, which kept GCC from
 * vectorising the loop). */
inline real greater(real a, real b)
{
    return a > b ? a : b;
}
inline real smaller(real a, real b)
{
    return a < b ? a : b;
}

// a positive value far below any squared length or cosine met here (the
// clamps under the square roots and the divisions; 1e-300 is no float)
constexpr real c_tiny = sizeof(real) == 4 ? real(1e-30) : real(1e-300);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// one copy per instruction set, chosen when the program starts (GCC's
// function multi-versioning): 8 doubles per operation with AVX-512
#define PUTMD_SETTLE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PUTMD_SETTLE_CLONES
#endif

/* A rectangular box: the minimum image of the block's twelve vectors,
 * d -= round(d / L) L per component as Pbc::dx computes it (the same bits),
 * over the block's lanes at once instead of per vector in the gather. All
 * c_settleBlock lanes (a fixed count: straight-line vector code); lanes
 * past the block's waters hold earlier blocks' values or zeros. */
PUTMD_SETTLE_CLONES void minimumImageBlock(SettleBlock& w, const real (&len)[3], const real (&inv)[3])
{
    constexpr int n = c_settleBlock;
    real* const   v[12] = { w.bx, w.by, w.bz, w.cx, w.cy, w.cz, w.bpx, w.bpy, w.bpz, w.cpx, w.cpy, w.cpz };
    for (int k = 0; k < 12; k++)
    {
        real* const a = v[k];
        const real  L = len[k % 3], I = inv[k % 3];
        for (int l = 0; l < n; l++)
        {
            a[l] -= detail::roundNearest(a[l] * I) * L; // in real: the float or double overload
        }
    }
}

PUTMD_SETTLE_CLONES void settleBlock(const SettleParameters& p, SettleBlock& w, int n)
{
    const real wH = real(p.mH / (p.mO + 2 * p.mH));
    const real mO = real(p.mO), mH = real(p.mH), ra = real(p.ra), rb = real(p.rb), rc = real(p.rc);
#pragma omp simd
    for (int k = 0; k < n; k++)
    {
        // relative to the centre of mass, old and new
        const real gx = (w.bx[k] + w.cx[k]) * wH, gy = (w.by[k] + w.cy[k]) * wH, gz = (w.bz[k] + w.cz[k]) * wH;
        const real o0x = -gx, o0y = -gy, o0z = -gz;
        const real o1x = w.bx[k] - gx, o1y = w.by[k] - gy, o1z = w.bz[k] - gz;
        const real o2x = w.cx[k] - gx, o2y = w.cy[k] - gy, o2z = w.cz[k] - gz;
        const real hx = (w.bpx[k] + w.cpx[k]) * wH, hy = (w.bpy[k] + w.cpy[k]) * wH, hz = (w.bpz[k] + w.cpz[k]) * wH;
        const real n0x = -hx, n0y = -hy, n0z = -hz;
        const real n1x = w.bpx[k] - hx, n1y = w.bpy[k] - hy, n1z = w.bpz[k] - hz;
        const real n2x = w.cpx[k] - hx, n2y = w.cpy[k] - hy, n2z = w.cpz[k] - hz;
        // frame: Z' normal to the old plane, X' normal to Z' and new O
        const real e1x = o1x - o0x, e1y = o1y - o0y, e1z = o1z - o0z;
        const real e2x = o2x - o0x, e2y = o2y - o0y, e2z = o2z - o0z;
        real         zx = e1y * e2z - e1z * e2y, zy = e1z * e2x - e1x * e2z, zz = e1x * e2y - e1y * e2x;
        const real zn2 = zx * zx + zy * zy + zz * zz;
        const real zinv = 1 / std::sqrt(greater(zn2, c_tiny));
        zx *= zinv;
        zy *= zinv;
        zz *= zinv;
        real         xx = n0y * zz - n0z * zy, xy = n0z * zx - n0x * zz, xz = n0x * zy - n0y * zx;
        const real xn2 = xx * xx + xy * xy + xz * xz;
        const real xinv = 1 / std::sqrt(greater(xn2, c_tiny));
        xx *= xinv;
        xy *= xinv;
        xz *= xinv;
        const real yx = zy * xz - zz * xy, yy = zz * xx - zx * xz, yz = zx * xy - zy * xx;
        // into the frame
        const real a0x = xx * o0x + xy * o0y + xz * o0z, a0y = yx * o0x + yy * o0y + yz * o0z;
        const real a1x = xx * o1x + xy * o1y + xz * o1z, a1y = yx * o1x + yy * o1y + yz * o1z;
        const real a2x = xx * o2x + xy * o2y + xz * o2z, a2y = yx * o2x + yy * o2y + yz * o2z;
        const real c0x = xx * n0x + xy * n0y + xz * n0z, c0y = yx * n0x + yy * n0y + yz * n0z, c0z = zx * n0x + zy * n0y + zz * n0z;
        const real c1x = xx * n1x + xy * n1y + xz * n1z, c1y = yx * n1x + yy * n1y + yz * n1z, c1z = zx * n1x + zy * n1y + zz * n1z;
        const real c2x = xx * n2x + xy * n2y + xz * n2z, c2y = yx * n2x + yy * n2y + yz * n2z, c2z = zx * n2x + zy * n2y + zz * n2z;
        const real sinPhi  = c0z / ra;
        const real cos2Phi = 1 - sinPhi * sinPhi;
        const real cosPhi  = std::sqrt(greater(cos2Phi, c_tiny));
        const real sinPsi  = (c1z - c2z) / (2 * rc * cosPhi);
        const real cos2Psi = 1 - sinPsi * sinPsi;
        const real cosPsi  = std::sqrt(greater(cos2Psi, c_tiny));
        // canonical triangle tilted by psi about Y', then phi about X'
        const real r0x = 0, r0y = ra * cosPhi, r0z = ra * sinPhi;
        const real r1x = -rc * cosPsi, r1y = -rb * cosPhi - rc * sinPsi * sinPhi, r1z = -rb * sinPhi + rc * sinPsi * cosPhi;
        const real r2x = rc * cosPsi, r2y = -rb * cosPhi + rc * sinPsi * sinPhi, r2z = -rb * sinPhi - rc * sinPsi * cosPhi;
        const real alpha = mO * (a0x * r0x + a0y * r0y) + mH * (a1x * r1x + a1y * r1y) + mH * (a2x * r2x + a2y * r2y);
        const real beta  = mO * (a0x * r0y - a0y * r0x) + mH * (a1x * r1y - a1y * r1x) + mH * (a2x * r2y - a2y * r2x);
        const real gamma = mO * (a0x * c0y - a0y * c0x) + mH * (a1x * c1y - a1y * c1x) + mH * (a2x * c2y - a2y * c2x);
        const real r2    = alpha * alpha + beta * beta;
        const real disc  = r2 - gamma * gamma;
        const real sq    = std::sqrt(greater(disc, real(0)));
        const real inv   = 1 / greater(r2, c_tiny);
        const real sinT  = (alpha * gamma - beta * sq) * inv;
        const real cosT  = (beta * gamma + alpha * sq) * inv;
        // failed when any of these is not positive (NaN included)
        w.ok[k] = smaller(smaller(smaller(zn2, xn2), smaller(cos2Phi, cos2Psi)),
                           smaller(smaller(r2, disc + c_tiny), cosT));
        // rotated by theta about Z', minus the unconstrained, back out
        const real f0x = r0x * cosT - r0y * sinT - c0x, f0y = r0x * sinT + r0y * cosT - c0y, f0z = r0z - c0z;
        const real f1x = r1x * cosT - r1y * sinT - c1x, f1y = r1x * sinT + r1y * cosT - c1y, f1z = r1z - c1z;
        const real f2x = r2x * cosT - r2y * sinT - c2x, f2y = r2x * sinT + r2y * cosT - c2y, f2z = r2z - c2z;
        w.d[0][0][k] = xx * f0x + yx * f0y + zx * f0z;
        w.d[0][1][k] = xy * f0x + yy * f0y + zy * f0z;
        w.d[0][2][k] = xz * f0x + yz * f0y + zz * f0z;
        w.d[1][0][k] = xx * f1x + yx * f1y + zx * f1z;
        w.d[1][1][k] = xy * f1x + yy * f1y + zy * f1z;
        w.d[1][2][k] = xz * f1x + yz * f1y + zz * f1z;
        w.d[2][0][k] = xx * f2x + yx * f2y + zx * f2z;
        w.d[2][1][k] = xy * f2x + yy * f2y + zy * f2z;
        w.d[2][2][k] = xz * f2x + yz * f2y + zz * f2z;
        w.old[0][0][k] = o0x;
        w.old[0][1][k] = o0y;
        w.old[0][2][k] = o0z;
        w.old[1][0][k] = o1x;
        w.old[1][1][k] = o1y;
        w.old[1][2][k] = o1z;
        w.old[2][0][k] = o2x;
        w.old[2][1][k] = o2y;
        w.old[2][2][k] = o2z;
    }
}

} // namespace

SettleSet::SettleSet(const std::vector<Settle>& settles, const std::vector<real>& invMass, int numAtoms,
                     const AtomNames& names) :
    settles_(settles)
{
    std::map<std::tuple<double, double, double, double>, int> index;
    for (const auto& s : settles)
    {
        checkSettle(s, invMass, numAtoms, names);
        const auto key       = std::make_tuple(double(invMass[s.o]), double(invMass[s.h1]), s.doh, s.dhh);
        auto [it, inserted] = index.emplace(key, int(params_.size()));
        if (inserted)
        {
            params_.push_back(makeParameters(std::get<0>(key), std::get<1>(key), s.doh, s.dhh));
        }
        paramIndex_.push_back(it->second);
    }
}

void SettleSet::apply(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt,
                      const Pbc& pbc, Matrix3* virial, const AtomNames& names) const
{
    // waters are independent: threads (OpenMP's count, -nt) take equal
    // shares; their virials are summed in thread order
    const int                       nt = std::max(1, std::min(omp_get_max_threads(), int(settles_.size())));
    std::vector<Matrix3>            virs(nt);
    std::vector<std::exception_ptr> failure(nt);
#pragma omp parallel num_threads(nt)
    {
        const int t = nt > 1 ? omp_get_thread_num() : 0;
        try
        {
            applyShare(x, xprime, v, dt, pbc, virial != nullptr, names, settles_.size() * t / nt,
                       settles_.size() * (t + 1) / nt, virs[t]);
        }
        catch (...)
        {
            failure[t] = std::current_exception();
        }
    }
    for (const auto& e : failure)
    {
        if (e)
        {
            std::rethrow_exception(e);
        }
    }
    addVirials(virs, dt, virial);
}

void SettleSet::applyShare(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt,
                           const Pbc& pbc, bool wantVirial, const AtomNames& names, size_t begin, size_t end,
                           Matrix3& shareVirial) const
{
    // the virial in locals: a Matrix3 reference went through memory
    // on every term (it may alias the positions for the compiler)
    double       vir[3][3] = {};
    // blocks of up to c_settleBlock waters of one parameter set:
    // gathered (minimum images in the build's precision), solved
    // by the vectorised block, scattered in water order
    SettleBlock block{}; // zeros: minimumImageBlock reads every lane
    size_t      members[c_settleBlock];
    const bool   rectangular = !pbc.box().isTriclinic();
    const auto&  bv          = pbc.box().vectors();
    const auto&  bi          = pbc.box().inverse();
    const real   len[3]      = { real(bv(0, 0)), real(bv(1, 1)), real(bv(2, 2)) };
    const real   inv[3]      = { real(bi(0, 0)), real(bi(1, 1)), real(bi(2, 2)) };
    for (size_t k = begin; k < end && !vectorised_; k++)
    {
        // the plain twin: one water at a time, with branches
        const Settle&           st = settles_[k];
        const SettleParameters& p  = params_[paramIndex_[k]];
        const int               atoms[3] = { st.o, st.h1, st.h2 };
        const DVec              xo = DVec(x[st.o]), xpo = DVec(xprime[st.o]);
        DVec                    old[3], now[3], disp[3];
        relativeToCom(p, pbc.dx(DVec(x[st.h1]), xo), pbc.dx(DVec(x[st.h2]), xo), old);
        relativeToCom(p, pbc.dx(DVec(xprime[st.h1]), xpo), pbc.dx(DVec(xprime[st.h2]), xpo), now);
        if (!settleDisplacements(p, old, now, disp))
        {
            throw ConstraintError("SETTLE cannot make " + waterName(st, names)
                                  + " rigid: it collapsed or rotated too far in one step. The system is unstable: "
                                    "check the time step, the starting structure and the forces.");
        }
        const double m[3] = { p.mO, p.mH, p.mH };
        for (int a = 0; a < 3; a++)
        {
            xprime[atoms[a]] = RVec(DVec(xprime[atoms[a]]) + disp[a]);
            if (v)
            {
                (*v)[atoms[a]] += RVec(disp[a] * (1 / dt));
            }
            for (int r = 0; r < 3 && wantVirial; r++)
            {
                for (int c = 0; c < 3; c++)
                {
                    vir[r][c] -= 0.5 * old[a][r] * m[a] * disp[a][c];
                }
            }
        }
    }
    for (size_t k0 = begin; k0 < end && vectorised_;)
    {
        const int pi = paramIndex_[k0];
        int       n  = 0;
        for (; n < c_settleBlock && k0 + n < end && paramIndex_[k0 + n] == pi; n++)
        {
            const size_t  k  = k0 + n;
            const Settle& st = settles_[k];
            const RVec    xo = x[st.o], xpo = xprime[st.o];
            // rectangular: the raw differences here, their minimum
            // image below for the whole block (in the build's
            // precision, as the block)
            const RVec b  = rectangular ? x[st.h1] - xo : pbc.dx(x[st.h1], xo);
            const RVec c  = rectangular ? x[st.h2] - xo : pbc.dx(x[st.h2], xo);
            const RVec bp = rectangular ? xprime[st.h1] - xpo : pbc.dx(xprime[st.h1], xpo);
            const RVec cp = rectangular ? xprime[st.h2] - xpo : pbc.dx(xprime[st.h2], xpo);
            block.bx[n] = b.x, block.by[n] = b.y, block.bz[n] = b.z;
            block.cx[n] = c.x, block.cy[n] = c.y, block.cz[n] = c.z;
            block.bpx[n] = bp.x, block.bpy[n] = bp.y, block.bpz[n] = bp.z;
            block.cpx[n] = cp.x, block.cpy[n] = cp.y, block.cpz[n] = cp.z;
            members[n] = k;
        }
        if (rectangular)
        {
            minimumImageBlock(block, len, inv);
        }
        const SettleParameters& p = params_[pi];
        settleBlock(p, block, n);
        const double m[3] = { p.mO, p.mH, p.mH };
        for (int l = 0; l < n; l++)
        {
            const Settle& st = settles_[members[l]];
            if (!(block.ok[l] > 0))
            {
                throw ConstraintError("SETTLE cannot make " + waterName(st, names)
                                      + " rigid: it collapsed or rotated too far in one step. The system is "
                                        "unstable: check the time step, the starting structure and the forces.");
            }
            const int atoms[3] = { st.o, st.h1, st.h2 };
            for (int a = 0; a < 3; a++)
            {
                const DVec disp(block.d[a][0][l], block.d[a][1][l], block.d[a][2][l]);
                // one rounding to the build's precision (a float sum
                // is exact in double)
                xprime[atoms[a]] = RVec(DVec(xprime[atoms[a]]) + disp);
                if (v)
                {
                    (*v)[atoms[a]] += RVec(disp * (1 / dt));
                }
                // the virial only where it is asked for (energy steps)
                for (int r = 0; r < 3 && wantVirial; r++)
                {
                    for (int c = 0; c < 3; c++)
                    {
                        vir[r][c] -= 0.5 * block.old[a][r][l] * m[a] * disp[c];
                    }
                }
            }
        }
        k0 += n;
    }
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            shareVirial(r, c) = vir[r][c];
        }
    }
}

void SettleSet::addVirials(const std::vector<Matrix3>& shareVirials, double dt, Matrix3* virial)
{
    Matrix3 vir;
    for (const Matrix3& m : shareVirials)
    {
        for (int r = 0; r < 3; r++)
        {
            for (int c = 0; c < 3; c++)
            {
                vir(r, c) += m(r, c);
            }
        }
    }
    if (virial)
    {
        const double invDt2 = 1 / (dt * dt);
        for (int r = 0; r < 3; r++)
        {
            for (int c = 0; c < 3; c++)
            {
                (*virial)(r, c) += vir(r, c) * invDt2;
            }
        }
    }
}

void SettleSet::projectVelocities(const std::vector<RVec>& x, std::vector<RVec>& v, const Pbc& pbc) const
{
    for (size_t k = 0; k < settles_.size(); k++)
    {
        const Settle&           s = settles_[k];
        const SettleParameters& p = params_[paramIndex_[k]];
        const DVec              xo = DVec(x[s.o]);
        const DVec              b  = pbc.dx(DVec(x[s.h1]), xo);
        const DVec              c  = pbc.dx(DVec(x[s.h2]), xo);
        // constraints O-H1, O-H2, H1-H2 as first minus second atom
        const DVec u[3]     = { -b * (1 / norm(b)), -c * (1 / norm(c)), (b - c) * (1 / norm(b - c)) };
        const DVec vo       = DVec(v[s.o]), v1 = DVec(v[s.h1]), v2 = DVec(v[s.h2]);
        const DVec rhs      = { dot(u[0], vo - v1), dot(u[1], vo - v2), dot(u[2], v1 - v2) };
        const double t01    = p.invMO * dot(u[0], u[1]);  // shared O, first in both
        const double t02    = -p.invMH * dot(u[0], u[2]); // shared H1: second, then first
        const double t12    = p.invMH * dot(u[1], u[2]);  // shared H2: second in both
        const double t[3][3] = { { p.invMO + p.invMH, t01, t02 },
                                 { t01, p.invMO + p.invMH, t12 },
                                 { t02, t12, 2 * p.invMH } };
        const DVec lambda = solveSymmetric3(t, rhs);
        const DVec dvO    = -(u[0] * lambda.x + u[1] * lambda.y) * p.invMO;
        const DVec dv1    = (u[0] * lambda.x - u[2] * lambda.z) * p.invMH;
        const DVec dv2    = (u[1] * lambda.y + u[2] * lambda.z) * p.invMH;
        v[s.o]            = RVec(vo + dvO);
        v[s.h1]           = RVec(v1 + dv1);
        v[s.h2]           = RVec(v2 + dv2);
    }
}

double SettleSet::maxRelativeDeviation(const std::vector<RVec>& x, const Pbc& pbc) const
{
    double worst = 0;
    for (const auto& s : settles_)
    {
        const DVec   xo      = DVec(x[s.o]);
        const DVec   b       = pbc.dx(DVec(x[s.h1]), xo);
        const DVec   c       = pbc.dx(DVec(x[s.h2]), xo);
        const double dev[3]  = { std::abs(norm(b) - s.doh) / s.doh, std::abs(norm(c) - s.doh) / s.doh,
                                 std::abs(norm(b - c) - s.dhh) / s.dhh };
        for (double d : dev)
        {
            if (!std::isfinite(d))
            {
                return std::numeric_limits<double>::infinity();
            }
            worst = std::max(worst, d);
        }
    }
    return worst;
}

} // namespace putmd::constraint_detail
