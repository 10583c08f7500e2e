#include "update/lincs.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/units.h"
#include "update/constraints.h"

namespace putmd::constraint_detail
{

namespace
{

constexpr double maxRotationDegrees = 30;

/* A coupling c-k is in a triangle when k is coupled to a third constraint
 * through the atom of c that k does not share (as GROMACS finds them). */
void findTriangles(const BondConstraintSet& set, LincsCache& w)
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

/* What depends on the set only, made when the set changes: the triangles
 * and each atom's constraints in increasing order (2 c for the first atom
 * of c, 2 c + 1 for the second), so that threads can move the atoms each
 * by its own constraints in the order of the serial loop over c. */
void prepareCache(const BondConstraintSet& set, LincsCache& w)
{
    if (w.set == &set && w.size == set.size() && w.couplings == set.coupled.size())
    {
        return;
    }
    w.set       = &set;
    w.size      = set.size();
    w.couplings = set.coupled.size();
    findTriangles(set, w);
    const int na = static_cast<int>(set.atom.size());
    w.atomStart.assign(size_t(na) + 1, 0);
    for (int c = 0; c < set.size(); c++)
    {
        w.atomStart[set.ai[c] + 1]++;
        w.atomStart[set.aj[c] + 1]++;
    }
    for (int a = 0; a < na; a++)
    {
        w.atomStart[a + 1] += w.atomStart[a];
    }
    w.atomConstraint.resize(w.atomStart[na]);
    std::vector<int> fill(w.atomStart.begin(), w.atomStart.end() - 1);
    for (int c = 0; c < set.size(); c++)
    {
        w.atomConstraint[fill[set.ai[c]]++] = 2 * c;
        w.atomConstraint[fill[set.aj[c]]++] = 2 * c + 1;
    }
}

/* The loops below are OpenMP worksharing loops, called inside applyLincs'
 * parallel region (each ends at a barrier); a thread's share is the same
 * at every pass, and every element is computed by one thread with the
 * serial loop's operations, so the result does not depend on the thread
 * count. */

/* sol = (I + A + ... + A^order) rhs, with sol = rhs on entry (set where
 * rhs is); destroys rhs (and tmp). Each pass is one loop: the new term
 * and its addition to sol (one barrier a pass). */
void expand(const BondConstraintSet& set, LincsCache& w, int order)
{
    const int n   = set.size();
    double*   rhs = w.rhs.data();
    double*   tmp = w.tmp.data();
    double*   sol = w.sol.data();
    for (int pass = 0; pass < order; pass++)
    {
#pragma omp for schedule(static)
        for (int c = 0; c < n; c++)
        {
            double sum = 0;
            for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
            {
                sum += w.a[e] * rhs[set.coupled[e]];
            }
            tmp[c] = sum;
            sol[c] += sum;
        }
        std::swap(rhs, tmp); // each thread its own pointers, alike
    }
    // rigid triangles (a CH3/NH3 group's dummy masses and their heavy atom,
    // angle constraints) couple with eigenvalues near 0.7 instead of 0.4:
    // as GROMACS, `order` more terms for their constraints, within each
    // triangle only (a triangle's constraints are all in the list)
    const int nTri = static_cast<int>(w.triangles.size());
    for (int pass = 0; pass < order && nTri > 0; pass++)
    {
#pragma omp for schedule(static)
        for (int t = 0; t < nTri; t++)
        {
            const int c   = w.triangles[t];
            double    sum = 0;
            for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
            {
                if (w.inTriangle[e])
                {
                    sum += w.a[e] * rhs[set.coupled[e]];
                }
            }
            tmp[c] = sum;
            sol[c] += sum;
        }
        std::swap(rhs, tmp);
    }
}

/* Moves the atoms by -M^-1 B^T S sol and records the multipliers: the
 * multipliers per constraint, then each atom by its constraints in
 * increasing order (the serial loop's order per atom). */
void correct(const BondConstraintSet& set, ConstraintGeometry& g, LincsCache& w, std::vector<double>& mu)
{
    const int n = set.size();
#pragma omp for schedule(static)
    for (int c = 0; c < n; c++)
    {
        w.m[c] = w.s[c] * w.sol[c];
        mu[c] += w.m[c];
    }
    const int na = static_cast<int>(set.atom.size());
#pragma omp for schedule(static)
    for (int a = 0; a < na; a++)
    {
        for (int k = w.atomStart[a]; k < w.atomStart[a + 1]; k++)
        {
            const int  c    = w.atomConstraint[k] >> 1;
            const DVec move = g.dir[c] * (set.invMass[a] * w.m[c]);
            if (w.atomConstraint[k] & 1)
            {
                g.xp[a] += move;
            }
            else
            {
                g.xp[a] -= move;
            }
        }
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

int lincsThreads(size_t n, int numThreads)
{
    return std::max(1, std::min(numThreads, int(n / 1024)));
}

void applyLincs(const BondConstraintSet& set, ConstraintGeometry& g, int order, int numIter, std::vector<double>& mu,
                const AtomNames& names, LincsCache& w, int numThreads)
{
    const int n = set.size();
    prepareCache(set, w);
    w.s.resize(n);
    w.a.resize(set.coupled.size());
    w.rhs.resize(n);
    w.sol.resize(n);
    w.tmp.resize(n);
    w.m.resize(n);
    // threads for a thousand constraints or more each: a pass over 1,300
    // constraints (rnase's) is about 2 us, and each pass ends at a barrier
    // (2 threads took 41 against 46 us for its whole solve)
    const int nt = lincsThreads(size_t(n), numThreads);
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(static)
        for (int c = 0; c < n; c++)
        {
            w.s[c] = 1 / std::sqrt(set.invMass[set.ai[c]] + set.invMass[set.aj[c]]);
        }
#pragma omp for schedule(static)
        for (int c = 0; c < n; c++)
        {
            for (int e = set.coupleStart[c]; e < set.coupleStart[c + 1]; e++)
            {
                const int k = set.coupled[e];
                w.a[e]      = -set.coupleMass[e] * w.s[c] * w.s[k] * dot(g.dir[c], g.dir[k]);
            }
            w.rhs[c] = w.s[c] * (dot(g.dir[c], g.current(set, c)) - set.length[c]);
            w.sol[c] = w.rhs[c];
        }
        expand(set, w, order);
        correct(set, g, w, mu);
        for (int iter = 0; iter < numIter; iter++)
        {
#pragma omp for schedule(static)
            for (int c = 0; c < n; c++)
            {
                const double d2 = set.length[c] * set.length[c];
                const double p2 = 2 * d2 - norm2(g.current(set, c));
                const double p  = p2 > 0 ? std::sqrt(p2) : 0.0;
                w.rhs[c]        = w.s[c] * (set.length[c] - p);
                w.sol[c]        = w.rhs[c];
            }
            expand(set, w, order);
            correct(set, g, w, mu);
        }
    }
    checkRotation(set, g, names);
}

} // namespace putmd::constraint_detail
