#include "update/constraint_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "update/constraints.h"

namespace putmd::constraint_detail
{

AtomNames::AtomNames(const Topology& top)
{
    const auto n = size_t(top.numAtoms);
    if (top.residueName.size() != n || top.atomName.size() != n || top.residueNumber.size() != n)
    {
        return;
    }
    std::map<std::pair<std::string, std::string>, int> index;
    residueNumber_ = top.residueNumber;
    globalIndex_   = top.globalIndex;
    molecule_      = top.moleculeIndex;
    label_.resize(n);
    for (size_t i = 0; i < n; i++)
    {
        auto key      = std::make_pair(top.residueName[i], top.atomName[i]);
        auto [it, is] = index.emplace(key, int(labels_.size()));
        if (is)
        {
            labels_.push_back(key);
        }
        label_[i] = it->second;
    }
}

std::string AtomNames::describe(int atom) const
{
    if (atom < 0 || size_t(atom) >= label_.size())
    {
        return "atom " + std::to_string(atom + 1);
    }
    const auto& l      = labels_[label_[atom]];
    const int   number = size_t(atom) < globalIndex_.size() ? globalIndex_[atom] : atom;
    if (size_t(atom) < molecule_.size())
    {
        return fmt::format("atom {} ({}{} {}, molecule {})", number + 1, l.first, residueNumber_[atom], l.second,
                           molecule_[atom] + 1);
    }
    return fmt::format("atom {} ({}{} {})", number + 1, l.first, residueNumber_[atom], l.second);
}

namespace
{

void checkConstraint(const Constraint& c, const std::vector<real>& invMass, int numAtoms, const AtomNames& names)
{
    if (c.i < 0 || c.j < 0 || c.i >= numAtoms || c.j >= numAtoms)
    {
        throw ConstraintError(fmt::format("constraint between atoms {} and {}: atom index out of range 1-{}",
                                          c.i + 1, c.j + 1, numAtoms));
    }
    const std::string what = "constraint between " + names.describe(c.i) + " and " + names.describe(c.j);
    if (c.i == c.j)
    {
        throw ConstraintError(what + ": an atom cannot be constrained to itself");
    }
    if (!(c.length > 0))
    {
        throw ConstraintError(fmt::format("{}: the length {} nm must be positive", what, c.length));
    }
    if (!(invMass[c.i] > 0) && !(invMass[c.j] > 0))
    {
        throw ConstraintError(what + ": both atoms have infinite mass (inverse mass 0)");
    }
}

/* Fills the CSR coupling of constraints that share an atom. */
void buildCoupling(BondConstraintSet& s)
{
    std::vector<std::vector<int>> touching(s.atom.size());
    for (int c = 0; c < s.size(); c++)
    {
        touching[s.ai[c]].push_back(c);
        touching[s.aj[c]].push_back(c);
    }
    s.coupleStart.assign(1, 0);
    for (int c = 0; c < s.size(); c++)
    {
        for (int end = 0; end < 2; end++)
        {
            const int    a     = end == 0 ? s.ai[c] : s.aj[c];
            const double signC = end == 0 ? 1 : -1;
            for (int k : touching[a])
            {
                if (k == c)
                {
                    continue;
                }
                const double signK = s.ai[k] == a ? 1 : -1;
                s.coupled.push_back(k);
                s.coupleMass.push_back(signC * signK * s.invMass[a]);
            }
        }
        s.coupleStart.push_back(int(s.coupled.size()));
    }
}

} // namespace

BondConstraintSet makeBondConstraintSet(const std::vector<Constraint>& list, const std::vector<real>& invMass,
                                        int numAtoms, const AtomNames& names)
{
    BondConstraintSet           s;
    std::map<int, int>          local;
    std::set<std::pair<int, int>> seen;
    auto localIndex = [&](int g) {
        auto [it, inserted] = local.emplace(g, int(s.atom.size()));
        if (inserted)
        {
            s.atom.push_back(g);
            s.invMass.push_back(double(invMass[g]));
        }
        return it->second;
    };
    for (const auto& c : list)
    {
        checkConstraint(c, invMass, numAtoms, names);
        if (!seen.emplace(std::min(c.i, c.j), std::max(c.i, c.j)).second)
        {
            throw ConstraintError("atoms " + names.describe(c.i) + " and " + names.describe(c.j)
                                  + " are constrained twice");
        }
        s.ai.push_back(localIndex(c.i));
        s.aj.push_back(localIndex(c.j));
        s.length.push_back(c.length);
    }
    buildCoupling(s);
    return s;
}

void gatherGeometry(const BondConstraintSet& s, const std::vector<RVec>& x, const std::vector<RVec>& xprime,
                    const Pbc& pbc, const AtomNames& names, ConstraintGeometry& g, int numThreads)
{
    const int na = static_cast<int>(s.atom.size());
    const int n  = s.size();
    g.xp.resize(na);
    g.oldVec.resize(n);
    g.oldLength.resize(n);
    g.dir.resize(n);
    g.shift.resize(n);
    // threads for a thousand constraints or more each; the first bad
    // constraint (lowest index) is reported, as by one thread
    const int nt    = std::max(1, std::min(numThreads, n / 1024));
    int       first = n;
#pragma omp parallel num_threads(nt) reduction(min : first)
    {
#pragma omp for schedule(static)
        for (int a = 0; a < na; a++)
        {
            g.xp[a] = DVec(xprime[s.atom[a]]);
        }
#pragma omp for schedule(static)
        for (int c = 0; c < n; c++)
        {
            const int gi   = s.globalI(c);
            const int gj   = s.globalJ(c);
            g.oldVec[c]    = pbc.dx(DVec(x[gi]), DVec(x[gj]));
            g.oldLength[c] = norm(g.oldVec[c]);
            if (!(g.oldLength[c] > 0) || !std::isfinite(g.oldLength[c]))
            {
                first = std::min(first, c);
                continue;
            }
            g.dir[c]     = g.oldVec[c] * (1 / g.oldLength[c]);
            const DVec d = g.xp[s.ai[c]] - g.xp[s.aj[c]];
            g.shift[c]   = pbc.dx(g.xp[s.ai[c]], g.xp[s.aj[c]]) - d;
        }
    }
    if (first < n)
    {
        throw ConstraintError("constraint between " + names.describe(s.globalI(first)) + " and "
                              + names.describe(s.globalJ(first))
                              + ": the two atoms coincide (or are not finite) at the start of the step");
    }
}

void addConstraintVirial(const DVec& oldVec, const DVec& dir, double mu, double invDt2, Matrix3& virial)
{
    const double f = 0.5 * mu * invDt2;
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            virial(r, c) += f * oldVec[r] * dir[c];
        }
    }
}

void scatterResult(const BondConstraintSet& s, const ConstraintGeometry& g, const std::vector<double>& mu,
                   std::vector<RVec>& xprime, std::vector<RVec>* v, double dt, Matrix3* virial)
{
    for (size_t a = 0; a < s.atom.size(); a++)
    {
        const int  ga = s.atom[a];
        const DVec d  = g.xp[a] - DVec(xprime[ga]);
        xprime[ga]    = RVec(g.xp[a]);
        if (v)
        {
            (*v)[ga] += RVec(d * (1 / dt));
        }
    }
    if (virial)
    {
        const double invDt2 = 1 / (dt * dt);
        for (int c = 0; c < s.size(); c++)
        {
            addConstraintVirial(g.oldVec[c], g.dir[c], mu[c], invDt2, *virial);
        }
    }
}

namespace
{

/* Off-diagonal T entries (parallel to s.coupled) and the diagonal. */
void couplingMatrix(const BondConstraintSet& s, const std::vector<DVec>& dir, std::vector<double>& diag,
                    std::vector<double>& off)
{
    diag.resize(s.size());
    off.resize(s.coupled.size());
    for (int c = 0; c < s.size(); c++)
    {
        diag[c] = s.invMass[s.ai[c]] + s.invMass[s.aj[c]];
        for (int e = s.coupleStart[c]; e < s.coupleStart[c + 1]; e++)
        {
            off[e] = s.coupleMass[e] * dot(dir[c], dir[s.coupled[e]]);
        }
    }
}

void multiplyT(const BondConstraintSet& s, const std::vector<double>& diag, const std::vector<double>& off,
               const std::vector<double>& p, std::vector<double>& q)
{
    for (int c = 0; c < s.size(); c++)
    {
        double sum = diag[c] * p[c];
        for (int e = s.coupleStart[c]; e < s.coupleStart[c + 1]; e++)
        {
            sum += off[e] * p[s.coupled[e]];
        }
        q[c] = sum;
    }
}

double dotN(const std::vector<double>& a, const std::vector<double>& b)
{
    double sum = 0;
    for (size_t i = 0; i < a.size(); i++)
    {
        sum += a[i] * b[i];
    }
    return sum;
}

/* Jacobi-preconditioned conjugate gradients for T lambda = b; returns
 * whether the relative residual reached tol. */
bool solveT(const BondConstraintSet& s, const std::vector<double>& diag, const std::vector<double>& off,
            const std::vector<double>& b, std::vector<double>& lambda)
{
    constexpr double tol     = 1e-12;
    constexpr int    maxIter = 1000;
    const int        n       = s.size();
    lambda.assign(n, 0.0);
    std::vector<double> r = b, z(n), p(n), q(n);
    const double        bNorm = std::sqrt(dotN(b, b));
    if (bNorm == 0)
    {
        return true;
    }
    for (int c = 0; c < n; c++)
    {
        z[c] = r[c] / diag[c];
    }
    p         = z;
    double rz = dotN(r, z);
    for (int iter = 0; iter < maxIter; iter++)
    {
        if (std::sqrt(dotN(r, r)) <= tol * bNorm)
        {
            return true;
        }
        multiplyT(s, diag, off, p, q);
        const double pq = dotN(p, q);
        if (!(pq > 0))
        {
            return false;
        }
        const double alpha = rz / pq;
        for (int c = 0; c < n; c++)
        {
            lambda[c] += alpha * p[c];
            r[c] -= alpha * q[c];
            z[c] = r[c] / diag[c];
        }
        const double rzNew = dotN(r, z);
        const double beta  = rzNew / rz;
        rz                 = rzNew;
        for (int c = 0; c < n; c++)
        {
            p[c] = z[c] + beta * p[c];
        }
    }
    return std::sqrt(dotN(r, r)) <= tol * bNorm;
}

} // namespace

void projectBondVelocities(const BondConstraintSet& s, const std::vector<RVec>& x, std::vector<RVec>& v,
                           const Pbc& pbc, const AtomNames& names)
{
    const int         n = s.size();
    std::vector<DVec> dir(n);
    std::vector<DVec> vl(s.atom.size());
    for (size_t a = 0; a < s.atom.size(); a++)
    {
        vl[a] = DVec(v[s.atom[a]]);
    }
    std::vector<double> b(n);
    for (int c = 0; c < n; c++)
    {
        const DVec r = pbc.dx(DVec(x[s.globalI(c)]), DVec(x[s.globalJ(c)]));
        const double len = norm(r);
        if (!(len > 0) || !std::isfinite(len))
        {
            throw ConstraintError("constraint between " + names.describe(s.globalI(c)) + " and "
                                  + names.describe(s.globalJ(c)) + ": the two atoms coincide (or are not finite)");
        }
        dir[c] = r * (1 / len);
        b[c]   = dot(dir[c], vl[s.ai[c]] - vl[s.aj[c]]);
    }
    std::vector<double> diag, off, lambda;
    couplingMatrix(s, dir, diag, off);
    if (!solveT(s, diag, off, b, lambda))
    {
        throw ConstraintError("removing the velocity components along the constraints did not converge "
                              "(redundant or degenerate constraints?)");
    }
    for (int c = 0; c < n; c++)
    {
        vl[s.ai[c]] -= dir[c] * (s.invMass[s.ai[c]] * lambda[c]);
        vl[s.aj[c]] += dir[c] * (s.invMass[s.aj[c]] * lambda[c]);
    }
    for (size_t a = 0; a < s.atom.size(); a++)
    {
        v[s.atom[a]] = RVec(vl[a]);
    }
}

double maxBondRelativeDeviation(const BondConstraintSet& s, const std::vector<RVec>& x, const Pbc& pbc)
{
    double worst = 0;
    for (int c = 0; c < s.size(); c++)
    {
        const double r   = norm(pbc.dx(DVec(x[s.globalI(c)]), DVec(x[s.globalJ(c)])));
        const double dev = std::abs(r - s.length[c]) / s.length[c];
        if (!std::isfinite(dev))
        {
            return std::numeric_limits<double>::infinity();
        }
        worst = std::max(worst, dev);
    }
    return worst;
}

} // namespace putmd::constraint_detail
