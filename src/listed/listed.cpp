#include "listed/listed.h"

#include <algorithm>
#include <exception>
#include <cmath>
#include <limits>
#include <utility>

#include "core/units.h"
#include "listed/listed_simd.h"

namespace putmd
{

namespace
{

constexpr real pi = real(units::pi);

struct Geometry
{
    const std::vector<RVec>& x;
    const Pbc&               pbc;
    Matrix3*                 virial = nullptr; // -0.5 sum r (x) f, positions relative to one atom

    RVec dx(int i, int j) const { return pbc.dx(x[i], x[j]); }
    /* Virial of force fa on an atom at r relative to the reference atom. */
    void addVirial(const RVec& r, const RVec& fa) const
    {
        if (virial)
        {
            putmd::addVirial(*virial, r, fa);
        }
    }
};

/* Harmonic in r (bonds 1) or in r^2 (G96 bonds 2). */
template<bool g96>
double bonds(const std::vector<HarmonicBond>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& b : list)
    {
        const RVec d  = g.dx(b.i, b.j);
        const real r2 = norm2(d);
        real       fscal;
        if constexpr (g96)
        {
            const real diff = r2 - real(b.b0 * b.b0);
            energy += 0.25 * b.kb * double(diff) * double(diff);
            fscal = -real(b.kb) * diff;
        }
        else
        {
            const real r    = std::sqrt(r2);
            const real diff = r - real(b.b0);
            energy += 0.5 * b.kb * double(diff) * double(diff);
            fscal = r > 0 ? -real(b.kb) * diff / r : real(0);
        }
        const RVec fi = d * fscal;
        f[b.i] += fi;
        f[b.j] -= fi;
        g.addVirial(d, fi);
    }
    return energy;
}

/* Two-atom terms that depend on the distance alone: potential(term, r)
 * gives {V, dV/dr}; adds the forces along d = x_i - x_j and the virial,
 * returns the summed V (in double). */
template<typename Term, typename Potential>
double radialTerms(const std::vector<Term>& list, const Geometry& g, std::vector<RVec>& f, Potential&& potential)
{
    double energy = 0;
    for (const auto& b : list)
    {
        const RVec   d = g.dx(b.i, b.j);
        const double r = std::sqrt(double(norm2(d)));
        const auto [v, dVdr] = potential(b, r);
        energy += v;
        const real fscal = r > 0 ? real(-dVdr / r) : real(0);
        const RVec fi    = d * fscal;
        f[b.i] += fi;
        f[b.j] -= fi;
        g.addVirial(d, fi);
    }
    return energy;
}

/* Morse bonds: V = D [1 - exp(-beta (r - b0))]^2. */
double morseBonds(const std::vector<MorseBond>& list, const Geometry& g, std::vector<RVec>& f)
{
    return radialTerms(list, g, f, [](const MorseBond& b, double r) {
        const double ex = std::exp(-b.beta * (r - b.b0)), omx = 1 - ex;
        return std::pair{ b.d * omx * omx, 2 * b.d * b.beta * ex * omx };
    });
}

/* Restraint potentials (bonds 10): 0 between low and up1, harmonic below
 * low and from up1 to up2, linear beyond up2 (the force of up2). */
double restraintBonds(const std::vector<RestraintBond>& list, const Geometry& g, std::vector<RVec>& f)
{
    return radialTerms(list, g, f, [](const RestraintBond& b, double r) {
        if (r < b.low)
        {
            return std::pair{ 0.5 * b.kdr * (r - b.low) * (r - b.low), b.kdr * (r - b.low) };
        }
        if (r < b.up1)
        {
            return std::pair{ 0.0, 0.0 };
        }
        if (r < b.up2)
        {
            return std::pair{ 0.5 * b.kdr * (r - b.up1) * (r - b.up1), b.kdr * (r - b.up1) };
        }
        return std::pair{ 0.5 * b.kdr * (b.up2 - b.up1) * (2 * r - b.up2 - b.up1), b.kdr * (b.up2 - b.up1) };
    });
}

/* Angle between r_ij and r_kj; adds -dV/dx given dV/dcos(theta). */
struct AngleGeometry
{
    RVec rij, rkj;
    real nij, nkj, cosTheta, sinTheta, theta;
};

AngleGeometry angleGeometry(const Geometry& g, int i, int j, int k)
{
    AngleGeometry a;
    a.rij      = g.dx(i, j);
    a.rkj      = g.dx(k, j);
    a.nij      = norm(a.rij);
    a.nkj      = norm(a.rkj);
    a.cosTheta = std::clamp(dot(a.rij, a.rkj) / (a.nij * a.nkj), real(-1), real(1));
    const real c = norm(cross(a.rij, a.rkj));
    a.sinTheta = c / (a.nij * a.nkj); // |r_ij x r_kj| / (|r_ij| |r_kj|): no sine call
    a.theta    = std::atan2(c, dot(a.rij, a.rkj));
    return a;
}

void applyAngleForce(const Geometry& g, const AngleGeometry& a, real dVdCos, int i, int j, int k, std::vector<RVec>& f)
{
    // d cos / d x_i = r_kj/(|rij||rkj|) - cos r_ij/|rij|^2, and symmetric for k
    const RVec dci = a.rkj * (1 / (a.nij * a.nkj)) - a.rij * (a.cosTheta / (a.nij * a.nij));
    const RVec dck = a.rij * (1 / (a.nij * a.nkj)) - a.rkj * (a.cosTheta / (a.nkj * a.nkj));
    const RVec fi  = dci * (-dVdCos);
    const RVec fk  = dck * (-dVdCos);
    f[i] += fi;
    f[k] += fk;
    f[j] -= fi + fk;
    g.addVirial(a.rij, fi);
    g.addVirial(a.rkj, fk);
}

/* dV/dcos from dV/dtheta and sin(theta), guarding the linear angle. */
real dVdCosFromTheta(real dVdTheta, real sinTheta)
{
    return std::abs(sinTheta) > real(1e-8) ? -dVdTheta / sinTheta : real(0);
}

/* One harmonic angle term 0.5 k (theta - theta0)^2: adds forces, returns V. */
double harmonicAngle(const Geometry& g, int i, int j, int k, double theta0, double ktheta, std::vector<RVec>& f)
{
    const auto a  = angleGeometry(g, i, j, k);
    const real dt = a.theta - real(theta0);
    applyAngleForce(g, a, dVdCosFromTheta(real(ktheta) * dt, a.sinTheta), i, j, k, f);
    return 0.5 * ktheta * double(dt) * double(dt);
}

double harmonicAngles(const std::vector<HarmonicAngle>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        energy += harmonicAngle(g, p.i, p.j, p.k, p.theta0, p.ktheta, f);
    }
    return energy;
}

double g96Angles(const std::vector<HarmonicAngle>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        const auto a  = angleGeometry(g, p.i, p.j, p.k);
        const real dc = a.cosTheta - real(std::cos(p.theta0));
        energy += 0.5 * p.ktheta * double(dc) * double(dc);
        applyAngleForce(g, a, real(p.ktheta) * dc, p.i, p.j, p.k, f);
    }
    return energy;
}

/* Restricted bending (angles 10): 1/2 k (cos - cos0)^2 / sin^2, which
 * keeps the angle away from 180 degrees. */
double restrictedAngles(const std::vector<HarmonicAngle>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        const auto   a  = angleGeometry(g, p.i, p.j, p.k);
        const double c  = a.cosTheta, c0 = std::cos(p.theta0);
        const double s2 = std::max(1 - c * c, 1e-12);
        energy += 0.5 * p.ktheta * (c - c0) * (c - c0) / s2;
        applyAngleForce(g, a, real(p.ktheta * (c - c0) * (1 - c * c0) / (s2 * s2)), p.i, p.j, p.k, f);
    }
    return energy;
}

double ureyBradley(const std::vector<UreyBradley>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        energy += harmonicAngle(g, p.i, p.j, p.k, p.theta0, p.ktheta, f);
        const RVec rik = g.dx(p.i, p.k);
        const real r   = norm(rik);
        const real dr  = r - real(p.r13);
        energy += 0.5 * p.kub * double(dr) * double(dr);
        const RVec fi = rik * (r > 0 ? -real(p.kub) * dr / r : real(0));
        f[p.i] += fi;
        f[p.k] -= fi;
        g.addVirial(rik, fi);
    }
    return energy;
}

/* Dihedral angle i-j-k-l (IUPAC) and GROMACS's force distribution. */
struct DihedralGeometry
{
    RVec rij, rkj, rkl, m, n;
    real phi;
};

/* The bond vectors and the two plane normals, phi not computed. */
DihedralGeometry dihedralVectors(const Geometry& g, int i, int j, int k, int l)
{
    DihedralGeometry d;
    d.rij = g.dx(i, j);
    d.rkj = g.dx(k, j);
    d.rkl = g.dx(k, l);
    d.m   = cross(d.rij, d.rkj);
    d.n   = cross(d.rkj, d.rkl);
    d.phi = 0;
    return d;
}

DihedralGeometry dihedralGeometry(const Geometry& g, int i, int j, int k, int l)
{
    DihedralGeometry d   = dihedralVectors(g, i, j, k, l);
    const real       phi = std::atan2(norm(cross(d.m, d.n)), dot(d.m, d.n));
    d.phi          = dot(d.rij, d.n) < 0 ? -phi : phi;
    return d;
}

void applyDihedralForce(const Geometry& g, const DihedralGeometry& d, real dVdPhi, int i, int j, int k, int l,
                        std::vector<RVec>& f)
{
    const real iprm  = norm2(d.m);
    const real iprn  = norm2(d.n);
    const real nrkj2 = norm2(d.rkj);
    const real toler = nrkj2 * std::numeric_limits<real>::epsilon();
    if (iprm <= toler || iprn <= toler)
    {
        return; // three collinear atoms: the force is undefined and zero
    }
    const real nrkj = std::sqrt(nrkj2);
    const RVec fi   = d.m * (-dVdPhi * nrkj / iprm);
    const RVec fl   = d.n * (dVdPhi * nrkj / iprn);
    const real p    = dot(d.rij, d.rkj) / nrkj2;
    const real q    = dot(d.rkl, d.rkj) / nrkj2;
    const RVec s    = fi * p - fl * q;
    f[i] += fi;
    f[j] -= fi - s;
    f[k] -= fl + s;
    f[l] += fl;
    // positions relative to j: i at r_ij, k at r_kj, l at r_kj - r_kl
    g.addVirial(d.rij, fi);
    g.addVirial(d.rkj, -(fl + s));
    g.addVirial(d.rkj - d.rkl, fl);
}

/* The vectors of dihedral i-j-k-l without its angle, and the angle's cosine
 * and sine from them: cos phi = m.n / (|m||n|) and, since
 * m x n = r_kj ((r_ij x r_kj) . r_kl) and (r_ij x r_kj) . r_kl = r_ij . n,
 * sin phi = |r_kj| (r_ij . n) / (|m||n|), the sign of phi included (as
 * dihedralGeometry takes it); |m||n| = sqrt((m.n)^2 + (|r_kj| r_ij.n)^2).
 * Three collinear atoms: phi = 0, as atan2(0, 0) gives. */
struct DihedralCosSin
{
    DihedralGeometry d;
    real             cosPhi = 1, sinPhi = 0;
};

DihedralCosSin dihedralCosSin(const Geometry& g, int i, int j, int k, int l)
{
    DihedralCosSin r;
    r.d                       = dihedralVectors(g, i, j, k, l);
    const DihedralGeometry& d = r.d;
    const real c = dot(d.m, d.n);
    const real s = std::sqrt(norm2(d.rkj)) * dot(d.rij, d.n);
    const real h = c * c + s * s;
    if (h > 0)
    {
        const real inv = 1 / std::sqrt(h);
        r.cosPhi       = c * inv;
        r.sinPhi       = s * inv;
    }
    return r; // d.phi stays 0: the periodic terms need only cos and sin
}

/* cos and sin of a term's phase phi0 (radians), as the SIMD loop takes them */
std::pair<real, real> phaseCosSin(double phi0)
{
    double c, s;
    dihedralPhaseCosSin(phi0, &c, &s);
    return { real(c), real(s) };
}

double periodicDihedrals(const std::vector<PeriodicDihedral>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (size_t t = 0; t < list.size();)
    {
        // the terms of one quadruplet (type 9 lists several multiplicities
        // for the same atoms, one after the other): the geometry and the
        // force distribution once, dV/dphi summed over the terms. No atan2
        // and no sincos per term: cos(n phi) and sin(n phi) by n rotations
        // of (cos phi, sin phi) (n <= 6 in the force fields), then the
        // phase by the angle-difference formulas (these calls were a third
        // of the listed forces' time on rnase)
        const PeriodicDihedral& first = list[t];
        const auto              cs    = dihedralCosSin(g, first.i, first.j, first.k, first.l);
        real                    dVdPhi = 0;
        for (; t < list.size() && list[t].i == first.i && list[t].j == first.j && list[t].k == first.k
               && list[t].l == first.l;
             t++)
        {
            const PeriodicDihedral& p = list[t];
            real                    c, s; // cos and sin of mult phi - phi0
            if (p.mult >= 0 && p.mult <= 16)
            {
                real cm = 1, sm = 0; // cos and sin of mult phi
                for (int q = 0; q < p.mult; q++)
                {
                    const real nc = cm * cs.cosPhi - sm * cs.sinPhi;
                    sm            = sm * cs.cosPhi + cm * cs.sinPhi;
                    cm            = nc;
                }
                const auto [c0, s0] = phaseCosSin(p.phi0);
                c = cm * c0 + sm * s0;
                s = sm * c0 - cm * s0;
            }
            else
            {
                const real arg = real(p.mult) * std::atan2(cs.sinPhi, cs.cosPhi) - real(p.phi0);
                c              = std::cos(arg);
                s              = std::sin(arg);
            }
            energy += p.kphi * (1.0 + double(c));
            dVdPhi -= real(p.kphi) * real(p.mult) * s;
        }
        applyDihedralForce(g, cs.d, dVdPhi, first.i, first.j, first.k, first.l, f);
    }
    return energy;
}

/* CMAP: a bicubic surface over the dihedral pair (phi = i-j-k-l, psi =
 * j-k-l-m) through the grid's values and derivatives (the Hermite form of
 * bicubic interpolation: the one bicubic that matches value, both slopes
 * and the cross derivative at the cell's four corners). */
double cmapTorsions(const std::vector<CmapTorsion>& list, const std::vector<CmapGrid>& grids, const Geometry& g,
                    std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& c : list)
    {
        const CmapGrid& grid = grids[c.type];
        const int       n    = grid.n;
        const double    dx   = 360.0 / n;
        const auto      d1   = dihedralGeometry(g, c.i, c.j, c.k, c.l);
        const auto      d2   = dihedralGeometry(g, c.j, c.k, c.l, c.m);
        // grid index 0 is -180 degrees
        auto cell = [&](double phi, int* index, double* frac) {
            double deg = (double(phi) + units::pi) * 180.0 / units::pi;
            deg        = deg < 0 ? deg + 360.0 : (deg >= 360.0 ? deg - 360.0 : deg);
            *index     = std::min(static_cast<int>(deg / dx), n - 1);
            *frac      = (deg - *index * dx) / dx;
        };
        int    i1, i2;
        double t, u;
        cell(d1.phi, &i1, &t);
        cell(d2.phi, &i2, &u);
        // Hermite basis at t and u: value (h) and derivative (dh), for the
        // corner at 0 (h0: value, h1: slope) and at 1 (h2, h3)
        auto basis = [](double x, double h[4], double dh[4]) {
            h[0]  = (2 * x - 3) * x * x + 1;
            h[1]  = ((x - 2) * x + 1) * x;
            h[2]  = (3 - 2 * x) * x * x;
            h[3]  = (x - 1) * x * x;
            dh[0] = 6 * x * (x - 1);
            dh[1] = (3 * x - 4) * x + 1;
            dh[2] = 6 * x * (1 - x);
            dh[3] = (3 * x - 2) * x;
        };
        double ht[4], dht[4], hu[4], dhu[4];
        basis(t, ht, dht);
        basis(u, hu, dhu);
        double e = 0, dEdt = 0, dEdu = 0;
        for (int a = 0; a < 2; a++)
        {
            for (int b = 0; b < 2; b++)
            {
                const double* node = &grid.data[4 * (((i1 + a) % n) * n + (i2 + b) % n)];
                // value, d/dphi, d/dpsi, d2/dphi dpsi per degree -> per cell
                const double v = node[0], vp = node[1] * dx, vs = node[2] * dx, vps = node[3] * dx * dx;
                const int    ta = 2 * a, ua = 2 * b;
                e += v * ht[ta] * hu[ua] + vp * ht[ta + 1] * hu[ua] + vs * ht[ta] * hu[ua + 1]
                     + vps * ht[ta + 1] * hu[ua + 1];
                dEdt += v * dht[ta] * hu[ua] + vp * dht[ta + 1] * hu[ua] + vs * dht[ta] * hu[ua + 1]
                        + vps * dht[ta + 1] * hu[ua + 1];
                dEdu += v * ht[ta] * dhu[ua] + vp * ht[ta + 1] * dhu[ua] + vs * ht[ta] * dhu[ua + 1]
                        + vps * ht[ta + 1] * dhu[ua + 1];
            }
        }
        energy += e;
        const double perRadian = 180.0 / (units::pi * dx); // d(cell fraction)/d(angle in radians)
        applyDihedralForce(g, d1, real(dEdt * perRadian), c.i, c.j, c.k, c.l, f);
        applyDihedralForce(g, d2, real(dEdu * perRadian), c.j, c.k, c.l, c.m, f);
    }
    return energy;
}

double harmonicImpropers(const std::vector<HarmonicImproper>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        const auto d  = dihedralGeometry(g, p.i, p.j, p.k, p.l);
        real       dp = d.phi - real(p.xi0);
        // periodic difference in [-pi, pi)
        if (dp >= pi)
        {
            dp -= 2 * pi;
        }
        else if (dp < -pi)
        {
            dp += 2 * pi;
        }
        energy += 0.5 * p.kxi * double(dp) * double(dp);
        applyDihedralForce(g, d, real(p.kxi) * dp, p.i, p.j, p.k, p.l, f);
    }
    return energy;
}

double ryckaertBellemans(const std::vector<RyckaertBellemans>& list, const Geometry& g, std::vector<RVec>& f)
{
    double energy = 0;
    for (const auto& p : list)
    {
        const auto d      = dihedralGeometry(g, p.i, p.j, p.k, p.l);
        const real cosPsi = -std::cos(d.phi); // psi = phi - 180 degrees
        double     v = 0, dVdCos = 0, power = 1;
        for (int n = 0; n < 6; n++)
        {
            if (n > 0)
            {
                dVdCos += n * p.c[n] * power;
                power *= cosPsi;
            }
            v += p.c[n] * power;
        }
        energy += v;
        // d cos(psi)/d phi = sin(phi)
        applyDihedralForce(g, d, real(dVdCos) * std::sin(d.phi), p.i, p.j, p.k, p.l, f);
    }
    return energy;
}

void pairs14(const std::vector<Pair14>& list, const ListedSettings& s, const Geometry& g, std::vector<RVec>& f, double* vlj, double* vcoul)
{
    for (const auto& p : list)
    {
        const RVec d     = g.dx(p.i, p.j);
        const real rinv2 = 1 / norm2(d);
        const real rinv  = std::sqrt(rinv2);
        const real rinv6 = rinv2 * rinv2 * rinv2;
        const real vlj6  = real(p.c6) * rinv6;
        const real vlj12 = real(p.c12) * rinv6 * rinv6;
        const real vc    = real(s.epsfac * p.qq) * rinv;
        *vlj += double(vlj12) - double(vlj6);
        *vcoul += vc;
        const real fscal = (12 * vlj12 - 6 * vlj6 + vc) * rinv2;
        const RVec fi    = d * fscal;
        f[p.i] += fi;
        f[p.j] -= fi;
        g.addVirial(d, fi);
    }
}

} // namespace

void computeListed(const ListedInteractions& l,
                   const ListedSettings&     settings,
                   const std::vector<RVec>&  x,
                   const Pbc&                pbc,
                   std::vector<RVec>&        f,
                   EnergyTerms&              e,
                   Matrix3*                  virial)
{
    const Geometry g{ x, pbc, virial };
    // the SIMD loops (listed_simd.h) take harmonic bonds, angles, periodic
    // dihedrals and pairs on steps without a virial in a rectangular box, in the mixed
    // build: the same bits, each type in its place in the order below
    bool          simd = false;
    ListedSimdBox sb;
    const float*  xs = nullptr;
    float*        fs = nullptr;
#if !PUTMD_DOUBLE
    simd = !virial && !pbc.box().isTriclinic() && listedSimdAllowed();
    if (simd)
    {
        for (int c = 0; c < 3; c++)
        {
            sb.len[c] = float(pbc.box().vectors()(c, c));
            sb.inv[c] = float(pbc.box().inverse()(c, c));
        }
        static_assert(sizeof(RVec) == 3 * sizeof(float));
        xs = reinterpret_cast<const float*>(x.data());
        fs = reinterpret_cast<float*>(f.data());
    }
#endif
    auto dihedrals = [&](const std::vector<PeriodicDihedral>& list) {
        const int n = static_cast<int>(list.size());
        return simd && periodicDihedralsFitSimd(list.data(), n) ? periodicDihedralsSimd(list.data(), n, xs, fs, sb)
                                                                : periodicDihedrals(list, g, f);
    };
    auto harmonicBonds = [&](const std::vector<HarmonicBond>& list) {
        return simd ? harmonicBondsSimd(list.data(), int(list.size()), xs, fs, sb) : bonds<false>(list, g, f);
    };
    if (!l.bonds.empty()) e.add(EnergyTerm::Bond, harmonicBonds(l.bonds));
    if (!l.g96Bonds.empty()) e.add(EnergyTerm::G96Bond, bonds<true>(l.g96Bonds, g, f));
    if (!l.morseBonds.empty()) e.add(EnergyTerm::Morse, morseBonds(l.morseBonds, g, f));
    if (!l.harmonicPotentials.empty()) e.add(EnergyTerm::HarmonicPot, harmonicBonds(l.harmonicPotentials));
    if (!l.restraintBonds.empty()) e.add(EnergyTerm::RestraintPot, restraintBonds(l.restraintBonds, g, f));
    if (!l.angles.empty())
    {
        e.add(EnergyTerm::Angle, simd ? harmonicAnglesSimd(l.angles.data(), int(l.angles.size()), xs, fs, sb)
                                      : harmonicAngles(l.angles, g, f));
    }
    if (!l.g96Angles.empty()) e.add(EnergyTerm::G96Angle, g96Angles(l.g96Angles, g, f));
    if (!l.restrictedAngles.empty()) e.add(EnergyTerm::RestrictedAngles, restrictedAngles(l.restrictedAngles, g, f));
    if (!l.ureyBradley.empty()) e.add(EnergyTerm::UreyBradley, ureyBradley(l.ureyBradley, g, f));
    if (!l.properDihedrals.empty()) e.add(EnergyTerm::ProperDih, dihedrals(l.properDihedrals));
    if (!l.ryckaertBellemans.empty()) e.add(EnergyTerm::RyckaertBell, ryckaertBellemans(l.ryckaertBellemans, g, f));
    if (!l.fourierDihedrals.empty()) e.add(EnergyTerm::FourierDih, ryckaertBellemans(l.fourierDihedrals, g, f));
    if (!l.impropers.empty()) e.add(EnergyTerm::ImproperDih, harmonicImpropers(l.impropers, g, f));
    if (!l.periodicImpropers.empty()) e.add(EnergyTerm::PerImpDih, dihedrals(l.periodicImpropers));
    if (l.connections) e.markPresent(EnergyTerm::ConnectBonds);
    if (!l.cmap.empty()) e.add(EnergyTerm::CmapDih, cmapTorsions(l.cmap, *l.cmapGrids, g, f));
    if (!l.pairs.empty())
    {
        double vlj = 0, vc = 0;
        if (simd)
        {
            pairs14Simd(l.pairs.data(), int(l.pairs.size()), settings.epsfac, xs, fs, sb, &vlj, &vc);
        }
        else
        {
            pairs14(l.pairs, settings, g, f, &vlj, &vc);
        }
        e.add(EnergyTerm::LJ14, vlj);
        e.add(EnergyTerm::Coulomb14, vc);
    }
}

namespace
{

template<typename T>
void shareOf(const std::vector<T>& all, int t, int n, std::vector<T>* part)
{
    const size_t begin = all.size() * t / n, end = all.size() * (t + 1) / n;
    part->assign(all.begin() + begin, all.begin() + end);
}

} // namespace

namespace
{

/* The lowest and highest atom index any interaction of l names (lo > hi
 * when there is none): the other threads' force buffers are zeroed and
 * summed over this range only (a protein's bonded atoms in a box of
 * water are a small part of the system). */
std::pair<int, int> listedAtomRange(const ListedInteractions& l)
{
    int  lo = std::numeric_limits<int>::max(), hi = -1;
    auto span = [&](const auto& list) {
        for (const auto& p : list)
        {
            for (int a : { p.i, p.j })
            {
                lo = std::min(lo, a);
                hi = std::max(hi, a);
            }
            if constexpr (requires { p.k; })
            {
                lo = std::min(lo, p.k);
                hi = std::max(hi, p.k);
            }
            if constexpr (requires { p.l; })
            {
                lo = std::min(lo, p.l);
                hi = std::max(hi, p.l);
            }
        }
    };
    span(l.bonds);
    span(l.g96Bonds);
    span(l.morseBonds);
    span(l.harmonicPotentials);
    span(l.fourierDihedrals);
    span(l.restraintBonds);
    span(l.restrictedAngles);
    span(l.angles);
    span(l.g96Angles);
    span(l.ureyBradley);
    span(l.properDihedrals);
    span(l.periodicImpropers);
    span(l.impropers);
    span(l.ryckaertBellemans);
    span(l.pairs);
    for (const auto& c : l.cmap)
    {
        for (int a : { c.i, c.j, c.k, c.l, c.m })
        {
            lo = std::min(lo, a);
            hi = std::max(hi, a);
        }
    }
    return { lo, hi };
}

} // namespace

void ThreadedListed::compute(const ListedInteractions& l, const ListedSettings& settings, const std::vector<RVec>& x,
                             const Pbc& pbc, std::vector<RVec>& f, EnergyTerms& e, Matrix3* virial, int numThreads)
{
    const int nt = std::max(1, numThreads);
    if (nt == 1)
    {
        computeListed(l, settings, x, pbc, f, e, virial);
        return;
    }
    if (splitOf_ != &l || static_cast<int>(parts_.size()) != nt)
    {
        parts_.assign(nt, ListedInteractions());
        for (int t = 0; t < nt; t++)
        {
            ListedInteractions& p = parts_[t];
            shareOf(l.bonds, t, nt, &p.bonds);
            shareOf(l.g96Bonds, t, nt, &p.g96Bonds);
            shareOf(l.morseBonds, t, nt, &p.morseBonds);
            shareOf(l.harmonicPotentials, t, nt, &p.harmonicPotentials);
            shareOf(l.fourierDihedrals, t, nt, &p.fourierDihedrals);
            shareOf(l.restraintBonds, t, nt, &p.restraintBonds);
            shareOf(l.restrictedAngles, t, nt, &p.restrictedAngles);
            shareOf(l.angles, t, nt, &p.angles);
            shareOf(l.g96Angles, t, nt, &p.g96Angles);
            shareOf(l.ureyBradley, t, nt, &p.ureyBradley);
            shareOf(l.properDihedrals, t, nt, &p.properDihedrals);
            shareOf(l.periodicImpropers, t, nt, &p.periodicImpropers);
            shareOf(l.impropers, t, nt, &p.impropers);
            shareOf(l.ryckaertBellemans, t, nt, &p.ryckaertBellemans);
            shareOf(l.pairs, t, nt, &p.pairs);
            shareOf(l.cmap, t, nt, &p.cmap);
            p.cmapGrids   = l.cmapGrids;
            p.connections = l.connections;
        }
        splitOf_ = &l;
        range_   = listedAtomRange(l);
        forces_.clear();
    }
    if (range_.first > range_.second)
    {
        // no listed interaction (pure water): no threads to start
        computeListed(l, settings, x, pbc, f, e, virial);
        return;
    }
    forces_.resize(nt - 1);
    energies_.assign(nt, EnergyTerms());
    virials_.assign(nt, Matrix3());
    failures_.assign(nt, nullptr);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        try
        {
            std::vector<RVec>& buffer = t == 0 ? f : forces_[t - 1];
            if (t > 0)
            {
                // zero outside the listed atoms since it was sized; only
                // their range is written and needs clearing
                if (buffer.size() != x.size())
                {
                    buffer.assign(x.size(), RVec());
                }
                else if (range_.first <= range_.second)
                {
                    std::fill(buffer.begin() + range_.first, buffer.begin() + range_.second + 1, RVec());
                }
            }
            computeListed(parts_[t], settings, x, pbc, buffer, energies_[t], virial ? &virials_[t] : nullptr);
        }
        catch (...)
        {
            failures_[t] = std::current_exception();
        }
    }
    for (const auto& err : failures_)
    {
        if (err)
        {
            std::rethrow_exception(err);
        }
    }
    const int lo = range_.first, hi = std::min(range_.second, static_cast<int>(x.size()) - 1);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int i = lo; i <= hi; i++)
    {
        for (int t = 1; t < nt; t++)
        {
            f[i] += forces_[t - 1][i];
        }
    }
    for (int t = 0; t < nt; t++)
    {
        for (int k = 0; k < numEnergyTerms; k++)
        {
            if (energies_[t].present[k])
            {
                e.add(static_cast<EnergyTerm>(k), energies_[t].value[k]);
            }
        }
        if (virial)
        {
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    (*virial)(a, b) += virials_[t](a, b);
                }
            }
        }
    }
}

} // namespace putmd
