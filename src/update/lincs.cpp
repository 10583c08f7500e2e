#include "update/lincs.h"

#include <cmath>

#include <fmt/format.h>

#include "core/units.h"
#include "update/constraints.h"

namespace putmd::constraint_detail
{

namespace
{

constexpr double maxRotationDegrees = 30;

struct LincsWork
{
    std::vector<double> s;    // 1 / sqrt(1/m_i + 1/m_j)
    std::vector<double> a;    // coupling matrix A, parallel to BondConstraintSet::coupled
    std::vector<double> rhs, sol, tmp;
    // constraints in rigid triangles and, parallel to coupled, whether a
    // coupling joins two constraints of one triangle
    std::vector<int>  triangles;
    std::vector<char> inTriangle;
};

/* A coupling c-k is in a triangle when k is coupled to a third constraint
 * through the atom of c that k does not share (as GROMACS finds them). */
void findTriangles(const BondConstraintSet& set, LincsWork& w)
{
    w.inTriangle.assign(set.coupled.size(), 0);
    w.triangles.clear();
    for (int c = 0; c < set.size(); c++)
    {
        bool any = false;
        for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
        {
            const int k   = set.coupled[e];
            const int end = (set.ai[c] == set.ai[k] || set.ai[c] == set.aj[k]) ? set.aj[c] : set.ai[c];
            for (int e2 = set.coupleStart[k]; e2 < set.coupleStart[k + 1] && !w.inTriangle[e]; e2++)
            {
                const int kk = set.coupled[e2];
                w.inTriangle[e] = kk != c && kk != k && (set.ai[kk] == end || set.aj[kk] == end);
            }
            any = any || w.inTriangle[e];
        }
        if (any)
        {
            w.triangles.push_back(c);
        }
    }
}

LincsWork prepare(const BondConstraintSet& set, const ConstraintGeometry& g)
{
    const int n = set.size();
    LincsWork w;
    w.s.resize(n);
    for (int c = 0; c < n; c++)
    {
        w.s[c] = 1 / std::sqrt(set.invMass[set.ai[c]] + set.invMass[set.aj[c]]);
    }
    w.a.resize(set.coupled.size());
    for (int c = 0; c < n; c++)
    {
        for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
        {
            const int k = set.coupled[e];
            w.a[e]      = -set.coupleMass[e] * w.s[c] * w.s[k] * dot(g.dir[c], g.dir[k]);
        }
    }
    w.rhs.resize(n);
    w.sol.resize(n);
    w.tmp.resize(n);
    findTriangles(set, w);
    return w;
}

/* sol = (I + A + ... + A^order) rhs; destroys rhs. */
void expand(const BondConstraintSet& set, LincsWork& w, int order)
{
    const int n = set.size();
    w.sol       = w.rhs;
    for (int pass = 0; pass < order; pass++)
    {
        for (int c = 0; c < n; c++)
        {
            double sum = 0;
            for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
            {
                sum += w.a[e] * w.rhs[set.coupled[e]];
            }
            w.tmp[c] = sum;
        }
        std::swap(w.rhs, w.tmp);
        for (int c = 0; c < n; c++)
        {
            w.sol[c] += w.rhs[c];
        }
    }
    // rigid triangles (a CH3/NH3 group's dummy masses and their heavy atom,
    // angle constraints) couple with eigenvalues near 0.7 instead of 0.4:
    // as GROMACS, `order` more terms for their constraints, within each
    // triangle only
    for (int pass = 0; pass < order && !w.triangles.empty(); pass++)
    {
        for (int c : w.triangles)
        {
            double sum = 0;
            for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
            {
                if (w.inTriangle[e])
                {
                    sum += w.a[e] * w.rhs[set.coupled[e]];
                }
            }
            w.tmp[c] = sum;
        }
        std::swap(w.rhs, w.tmp);
        for (int c : w.triangles)
        {
            w.sol[c] += w.rhs[c];
        }
    }
}

/* Moves the atoms by -M^-1 B^T S sol and records the multipliers. */
void correct(const BondConstraintSet& set, ConstraintGeometry& g, const LincsWork& w, std::vector<double>& mu)
{
    for (int c = 0; c < set.size(); c++)
    {
        const double m = w.s[c] * w.sol[c];
        g.xp[set.ai[c]] -= g.dir[c] * (set.invMass[set.ai[c]] * m);
        g.xp[set.aj[c]] += g.dir[c] * (set.invMass[set.aj[c]] * m);
        mu[c] += m;
    }
}

/* Throws for the constraint that rotated most, when that is over the limit. */
void checkRotation(const BondConstraintSet& set, const ConstraintGeometry& g, const AtomNames& names)
{
    const double cosLimit = std::cos(maxRotationDegrees * units::deg2rad);
    int          worst    = -1;
    double       worstCos = cosLimit;
    for (int c = 0; c < set.size(); c++)
    {
        const DVec   r     = g.current(set, c);
        const double cosine = dot(r, g.dir[c]) / norm(r);
        if (!(cosine >= worstCos))
        {
            worst    = c;
            worstCos = std::isfinite(cosine) ? cosine : -2.0;
            if (worstCos == -2.0)
            {
                break;
            }
        }
    }
    if (worst < 0)
    {
        return;
    }
    const double len   = norm(g.current(set, worst));
    const double angle = worstCos >= -1 ? std::acos(worstCos) / units::deg2rad : NAN;
    throw ConstraintError(fmt::format(
            "LINCS: the constraint between {} and {} rotated {:.1f} degrees in one step (more than {:g}); "
            "its length is {:.6g} nm instead of {:.6g} nm (relative deviation {:.3g}). The system is unstable: "
            "check the time step, the starting structure, the forces and the constraints.",
            names.describe(set.globalI(worst)), names.describe(set.globalJ(worst)), angle, maxRotationDegrees, len,
            set.length[worst], std::abs(len - set.length[worst]) / set.length[worst]));
}

} // namespace

void applyLincs(const BondConstraintSet& set, ConstraintGeometry& g, int order, int numIter, std::vector<double>& mu,
                const AtomNames& names)
{
    const int n = set.size();
    LincsWork w = prepare(set, g);
    for (int c = 0; c < n; c++)
    {
        w.rhs[c] = w.s[c] * (dot(g.dir[c], g.current(set, c)) - set.length[c]);
    }
    expand(set, w, order);
    correct(set, g, w, mu);
    for (int iter = 0; iter < numIter; iter++)
    {
        for (int c = 0; c < n; c++)
        {
            const double d2 = set.length[c] * set.length[c];
            const double p2 = 2 * d2 - norm2(g.current(set, c));
            const double p  = p2 > 0 ? std::sqrt(p2) : 0.0;
            w.rhs[c]        = w.s[c] * (set.length[c] - p);
        }
        expand(set, w, order);
        correct(set, g, w, mu);
    }
    checkRotation(set, g, names);
}

} // namespace putmd::constraint_detail
