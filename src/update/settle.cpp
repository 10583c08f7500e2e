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
            // the virial in locals: a Matrix3 reference went through memory
            // on every term (it may alias the positions for the compiler)
            double       vir[3][3] = {};
            const size_t begin = settles_.size() * t / nt, end = settles_.size() * (t + 1) / nt;
            for (size_t k = begin; k < end; k++)
            {
                const Settle&           s = settles_[k];
                const SettleParameters& p = params_[paramIndex_[k]];
                const int               atoms[3] = { s.o, s.h1, s.h2 };
                const DVec              xo = DVec(x[s.o]), xpo = DVec(xprime[s.o]);
                DVec                    old[3], now[3], disp[3];
                relativeToCom(p, pbc.dx(DVec(x[s.h1]), xo), pbc.dx(DVec(x[s.h2]), xo), old);
                relativeToCom(p, pbc.dx(DVec(xprime[s.h1]), xpo), pbc.dx(DVec(xprime[s.h2]), xpo), now);
                if (!settleDisplacements(p, old, now, disp))
                {
                    throw ConstraintError("SETTLE cannot make " + waterName(s, names)
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
                    for (int r = 0; r < 3; r++)
                    {
                        for (int c = 0; c < 3; c++)
                        {
                            vir[r][c] -= 0.5 * old[a][r] * m[a] * disp[a][c];
                        }
                    }
                }
            }
            for (int r = 0; r < 3; r++)
            {
                for (int c = 0; c < 3; c++)
                {
                    virs[t](r, c) = vir[r][c];
                }
            }
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
    Matrix3 vir;
    for (const Matrix3& m : virs)
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
