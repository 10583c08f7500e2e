/* update/constraints.h — holonomic constraints: SETTLE for rigid waters,
 * LINCS and SHAKE for bond constraints.
 *
 * After the unconstrained update has moved atoms from x (start of the step,
 * satisfying the constraints) to xprime, apply() moves xprime back onto the
 * constraint surface along the directions of the constraints at x. Each
 * water with [ settles ] is handled analytically by SETTLE (Miyamoto &
 * Kollman 1992); the other constraints (bonds converted by
 * constraints = h-bonds / all-bonds, and [ constraints ]) by LINCS (Hess et
 * al. 1997: lincs-order terms of the matrix expansion, lincs-iter
 * corrections for rotational lengthening) or SHAKE (iterative, to
 * shake-tol relative). Velocities are corrected by the displacement / dt and
 * the constraint forces' contribution to the virial is accumulated, as
 * GROMACS does, so pressure includes it.
 *
 * Reference implementation: plain loops, one thread. A constraint that
 * cannot be satisfied (SHAKE not converging, LINCS deviating by more than
 * 30 degrees, SETTLE on a collapsed water) throws ConstraintError naming the
 * atoms.
 */
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/error.h"
#include "core/real.h"
#include "core/vec.h"
#include "io/mdp.h"
#include "topology/topology.h"

namespace putmd
{

using RVec = Vec3<real>;

struct ConstraintSettings
{
    ConstraintAlgorithm algorithm  = ConstraintAlgorithm::Lincs;
    int                 lincsOrder = 4;
    int                 lincsIter  = 1;
    double              shakeTol   = 1e-4;
};

class ConstraintError : public SimulationError
{
public:
    using SimulationError::SimulationError;
};

class Constraints
{
public:
    /* invMass: 1/m per atom (topology order). */
    Constraints(const Topology& top, const ConstraintSettings& settings, const std::vector<real>& invMass);
    ~Constraints();

    bool empty() const;
    /* Number of constrained degrees of freedom (for the temperature). */
    int numConstraints() const;

    /* Constrain positions xprime (after an unconstrained step from x).
     * v (may be null): corrected by (xprime_after - xprime_before) / dt.
     * virial (may be null): the constraint virial -0.5 sum r_ij (x) f_ij is
     * ADDED to it (kJ/mol), with r_ij from x and f_ij the constraint force
     * m * displacement / dt^2. */
    void apply(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt, const Box& box,
               Matrix3* virial) const;

    /* true (default): where the bond constraints are few enough to be
     * solved on one thread (LINCS below 2,048 of them, SHAKE always) and
     * there are waters, one thread solves them while the others start on
     * the waters (the same result to rounding: SETTLE's vectorised blocks of
     * waters fall differently among the threads, and its last partial
     * block may round differently; a given thread count gives the same
     * bits from run to run); false: SETTLE, then the bonds. */
    void setBondsBesideWaters(bool on);

    /* Remove the velocity components along the constraints at x (used by
     * velocity Verlet and after generating velocities). */
    void projectVelocities(const std::vector<RVec>& x, std::vector<RVec>& v, const Box& box) const;

    /* Largest relative deviation |r - d|/d over all constraints at x. */
    double maxRelativeDeviation(const std::vector<RVec>& x, const Box& box) const;

private:
    Constraints(const Constraints&)            = delete; // owns impl_
    Constraints& operator=(const Constraints&) = delete;

    struct Impl;
    Impl* impl_;
};

} // namespace putmd
