/* update/constraint_set.h — internal to the constraint code: the bond
 * constraints (everything that is not SETTLE) in the compact form that LINCS,
 * SHAKE and the velocity projection share, and the per-step geometry they
 * work on.
 *
 * The constrained atoms are renumbered 0..n-1 ("local" atoms) so that the
 * solvers touch dense arrays. Each constraint c joins local atoms ai[c]
 * (its "first" atom) and aj[c] (its "second"); its vector is
 * r_c = x_ai - x_aj, always the minimum image. Two constraints that share an
 * atom are coupled: coupleMass holds s_c(a) s_k(a) / m_a for the shared atom
 * a, where s = +1 for a first atom and -1 for a second, so that the matrix
 * T = B M^-1 B^T of the linearised constraints has T_ck = coupleMass *
 * (u_c . u_k) off the diagonal and 1/m_i + 1/m_j on it (u: unit vectors).
 *
 * All solver arithmetic is in double, also in the mixed-precision build:
 * positions are converted on the way in and rounded once on the way out.
 *
 * Sign convention shared by LINCS and SHAKE: mu[c] is the accumulated
 * multiplier such that constraint c moved its first atom by
 * -mu[c]/m_i u_c and its second by +mu[c]/m_j u_c, u_c the unit vector of
 * r_c at the start of the step. The constraint force on the first atom is
 * then -mu[c] u_c / dt^2 and the virial -0.5 r_c (x) f is
 * +0.5 mu[c] / dt^2 r_c (x) u_c.
 */
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd::constraint_detail
{

using RVec = Vec3<real>;

/* Names atoms in error messages as Topology::describeAtom does ("atom 12
 * (LYS1 CA)", 1-based), from a compact copy of the topology's labels, or as
 * "atom 12" when the topology carries no names. */
class AtomNames
{
public:
    AtomNames() = default;
    explicit AtomNames(const Topology& top);
    std::string describe(int atom) const;

private:
    std::vector<int>                                 residueNumber_;
    std::vector<int>                                 globalIndex_; // empty: the atom's own index
    std::vector<int>                                 molecule_; // 0-based molecule number
    std::vector<int>                                 label_; // index into labels_
    std::vector<std::pair<std::string, std::string>> labels_; // residue name, atom name
};

struct BondConstraintSet
{
    std::vector<int>    atom;    // global index of each local atom
    std::vector<double> invMass; // per local atom
    std::vector<int>    ai, aj;  // local atoms of each constraint
    std::vector<double> length;
    std::vector<int>    coupleStart; // CSR over constraints, size() + 1 entries
    std::vector<int>    coupled;
    std::vector<double> coupleMass;

    int  size() const { return int(length.size()); }
    bool empty() const { return length.empty(); }
    int  globalI(int c) const { return atom[ai[c]]; }
    int  globalJ(int c) const { return atom[aj[c]]; }
};

/* Throws ConstraintError for an atom index out of range, a constraint of an
 * atom with itself, a non-positive length, two infinitely heavy atoms or a
 * duplicate constraint. */
BondConstraintSet makeBondConstraintSet(const std::vector<Constraint>& list, const std::vector<real>& invMass,
                                        int numAtoms, const AtomNames& names);

/* The state of one apply(): start-of-step vectors and the moving positions. */
struct ConstraintGeometry
{
    std::vector<DVec>   oldVec;    // r_c at x, minimum image
    std::vector<double> oldLength; // |oldVec|
    std::vector<DVec>   dir;       // oldVec / |oldVec|
    std::vector<DVec>   shift;     // lattice vector making xp_i - xp_j the minimum image
    std::vector<DVec>   xp;        // positions of the local atoms, moved by the solver

    DVec current(const BondConstraintSet& s, int c) const { return xp[s.ai[c]] - xp[s.aj[c]] + shift[c]; }
};

/* Fills g (its arrays reused from call to call) with up to numThreads
 * OpenMP threads. Throws ConstraintError when the two atoms of a
 * constraint coincide in x (the lowest such constraint). */
void gatherGeometry(const BondConstraintSet& s, const std::vector<RVec>& x, const std::vector<RVec>& xprime,
                    const Pbc& pbc, const AtomNames& names, ConstraintGeometry& g, int numThreads = 1);

/* Writes the solver's positions into xprime, corrects v by the displacement
 * / dt and adds the virial of the multipliers mu (see the file comment). */
void scatterResult(const BondConstraintSet& s, const ConstraintGeometry& g, const std::vector<double>& mu,
                   std::vector<RVec>& xprime, std::vector<RVec>* v, double dt, Matrix3* virial);

/* Removes the components of the relative velocities along the constraints
 * at x: solves T lambda = B v by Jacobi-preconditioned conjugate gradients
 * (T is symmetric positive semi-definite and B v lies in its range) to a
 * relative residual of 1e-12 and subtracts M^-1 B^T lambda. */
void projectBondVelocities(const BondConstraintSet& s, const std::vector<RVec>& x, std::vector<RVec>& v,
                           const Pbc& pbc, const AtomNames& names);

double maxBondRelativeDeviation(const BondConstraintSet& s, const std::vector<RVec>& x, const Pbc& pbc);

/* The virial of one constraint from its multiplier:
 * virial(r, c) += 0.5 mu / dt^2 * oldVec[r] * dir[c]. */
void addConstraintVirial(const DVec& oldVec, const DVec& dir, double mu, double invDt2, Matrix3& virial);

} // namespace putmd::constraint_detail
