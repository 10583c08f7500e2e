/* update/settle.h — internal to the constraint code: SETTLE, the analytical
 * constraint solution for rigid three-site waters (Miyamoto & Kollman,
 * J. Comput. Chem. 13, 952 (1992)).
 *
 * The constraint forces lie in the plane of the start-of-step triangle and
 * conserve the centre of mass, so in a frame whose Z' axis is that plane's
 * normal, with the origin at the new centre of mass, every atom keeps its
 * unconstrained z'. The z' of O fixes the tilt phi of the rigid triangle
 * about X', the z' difference of the hydrogens the tilt psi about Y'; the
 * remaining rotation theta about Z' follows from the forces being along the
 * old bonds: sum_a m_a r0_a x (new_a - unconstrained_a) = 0 (r0: old
 * positions), whose z' component is alpha sin(theta) + beta cos(theta) =
 * gamma. The root with cos(theta) > 0 is the small rotation. Both hydrogens
 * must have the same mass.
 *
 * The displacement is computed in the build's precision by the vectorised
 * blocks (float in the mixed build, as GROMACS's mixed-precision SETTLE;
 * double in the double build) and in double by the plain twin, one water
 * at a time (setVectorised(false)); it is added to x', and divided by dt
 * for the velocity; the virial is -0.5 sum_a r0_a (x) m_a disp_a / dt^2 with
 * r0 the start-of-step positions made whole around the oxygen (the same
 * value as the per-constraint form of LINCS and SHAKE, since the forces are
 * along the old bonds and sum to zero).
 *
 * Velocities are projected exactly: the 3x3 system T lambda = B v of the
 * water's three constraints is solved by Cramer's rule.
 */
#pragma once

#include <vector>

#include "update/constraint_set.h"

namespace putmd::constraint_detail
{

struct SettleParameters
{
    double mO, mH, invMO, invMH;
    double doh, dhh;
    double ra, rb, rc; // canonical triangle: O at (0, ra), H at (-+rc, -rb) from the centre of mass
};

class SettleSet
{
public:
    SettleSet() = default;
    /* Throws ConstraintError for bad indices, unequal or infinite hydrogen
     * masses, or a geometry with doh <= dhh/2. */
    SettleSet(const std::vector<Settle>& settles, const std::vector<real>& invMass, int numAtoms,
              const AtomNames& names);

    bool empty() const { return settles_.empty(); }
    int  size() const { return int(settles_.size()); }

    void apply(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt,
               const Pbc& pbc, Matrix3* virial, const AtomNames& names) const;
    /* apply() for waters [begin, end) on the calling thread: their virial
     * (before the 1/dt^2, as addVirials takes it) to shareVirial when
     * wantVirial. Throws ConstraintError as apply(). */
    void applyShare(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt,
                    const Pbc& pbc, bool wantVirial, const AtomNames& names, size_t begin, size_t end,
                    Matrix3& shareVirial) const;
    /* The shares' virials, summed in order and scaled by 1/dt^2, added to
     * virial (null: nothing). */
    static void addVirials(const std::vector<Matrix3>& shareVirials, double dt, Matrix3* virial);
    /* true (default): blocks of waters through the branch-free,
     * vectorised solution; false: the plain twin, one water at a time. */
    void   setVectorised(bool on) { vectorised_ = on; }
    void   projectVelocities(const std::vector<RVec>& x, std::vector<RVec>& v, const Pbc& pbc) const;
    double maxRelativeDeviation(const std::vector<RVec>& x, const Pbc& pbc) const;

private:
    std::vector<Settle>           settles_;
    std::vector<int>              paramIndex_; // per settle, into params_
    std::vector<SettleParameters> params_;
    bool                          vectorised_ = true;
};

} // namespace putmd::constraint_detail
