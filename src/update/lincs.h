/* update/lincs.h — internal to the constraint code: the LINear Constraint
 * Solver (Hess, Bekker, Berendsen & Fraaije, J. Comput. Chem. 18, 1463
 * (1997); the iteration as in Hess, J. Chem. Theory Comput. 4, 116 (2008)).
 *
 * The displacement is restricted to the start-of-step directions u_c (the
 * rows of B). Linearising |r_c| = d_c along them gives T lambda = B x' - d
 * with T = B M^-1 B^T. With S = diag(1/sqrt(1/m_i + 1/m_j)), T = S^-1 (I - A)
 * S^-1 where A has zero diagonal and A_ck = -S_c S_k s_c s_k / m_a (u_c.u_k)
 * for constraints sharing atom a; (I - A)^-1 is expanded as
 * I + A + ... + A^order (lincs-order). The correction for rotational
 * lengthening (lincs-iter times) sets the target projection of each
 * constraint on u_c to p = sqrt(2 d^2 - l^2), l the current length, so that
 * the new length is d (as GROMACS: the correction is d - p, which assumes
 * the previous pass reached projection d; since l is the actual length the
 * only fixed point is the constrained one, and each pass also shrinks the
 * expansion's truncation error by a factor of order the rotation angle
 * squared). Constraints in rigid triangles (couplings with eigenvalues
 * near 0.7) get `order` more terms from their own triangle's couplings, as
 * GROMACS does; water should still use SETTLE.
 *
 * After the last pass, any constraint whose vector rotated by more than 30
 * degrees from its start-of-step direction (or whose result is not finite)
 * throws ConstraintError naming the worst one.
 */
#pragma once

#include <vector>

#include "update/constraint_set.h"

namespace putmd::constraint_detail
{

/* What applyLincs keeps between calls: what depends on the set only (the
 * rigid triangles, each atom's constraints), made again when the set
 * changes, and the work arrays. */
struct LincsCache
{
    const BondConstraintSet* set = nullptr;
    int                      size = -1;
    size_t                   couplings = 0;
    // constraints in rigid triangles and, parallel to coupled, whether a
    // coupling joins two constraints of one triangle
    std::vector<int>  triangles;
    std::vector<char> inTriangle;
    // per local atom (CSR): 2 c (its constraint c's first atom) or 2 c + 1
    std::vector<int>    atomStart, atomConstraint;
    std::vector<double> s;   // 1 / sqrt(1/m_i + 1/m_j)
    std::vector<double> a;   // coupling matrix A, parallel to BondConstraintSet::coupled
    std::vector<double> rhs, sol, tmp, m;
};

/* Moves g.xp onto the constraints; adds the multipliers to mu (see
 * constraint_set.h for their sign). Up to numThreads OpenMP threads, by
 * constraint and by atom: the same result for any count. */
/* The threads applyLincs uses for n constraints out of numThreads: one per
 * 1,024 constraints (each pass ends at a barrier). */
int lincsThreads(size_t n, int numThreads);

void applyLincs(const BondConstraintSet& s, ConstraintGeometry& g, int order, int numIter, std::vector<double>& mu,
                const AtomNames& names, LincsCache& cache, int numThreads = 1);

} // namespace putmd::constraint_detail
