/* update/constraints.cpp — the Constraints facade: SETTLE for [ settles ],
 * LINCS or SHAKE for the other constraints.
 *
 * The pieces live in their own files: settle.cpp (analytical waters),
 * lincs.cpp and shake.cpp (bond constraints), constraint_set.cpp (the
 * compact constraint list, geometry, write-back, the virial and the velocity
 * projection shared by both bond solvers).
 *
 * Conventions every part follows:
 *  - every constraint vector is a minimum image (Pbc), at x and at xprime
 *    separately, so molecules may be split over the box and an atom of
 *    xprime may sit in any periodic image of its position in x;
 *  - corrections lie along the start-of-step constraint vectors and the
 *    arithmetic is double also in the mixed build;
 *  - v (when given) gets exactly displacement / dt;
 *  - the virial added is Xi = -0.5 sum_c r_c (x) f_c = -0.5 sum_a x_a (x) f_a,
 *    r_c = x_i - x_j at the start of the step, f_c the constraint force on
 *    atom i (m_i * displacement_i / dt^2), the atoms made whole per molecule;
 *    element (r, c) is -0.5 sum x[r] f[c], as GROMACS's virial, in kJ/mol.
 *    It is symmetric because the forces are along the r_c.
 *  - projectVelocities removes the relative velocity along each constraint
 *    exactly (to solver precision, not to lincs-order): 3x3 solves for
 *    waters, conjugate gradients on the coupled bond constraints.
 */
#include "update/constraints.h"

#include <omp.h>

#include <algorithm>

#include "update/constraint_set.h"
#include "update/lincs.h"
#include "update/settle.h"
#include "update/shake.h"

namespace putmd
{

using namespace constraint_detail;

struct Constraints::Impl
{
    ConstraintSettings settings;
    AtomNames          names;
    SettleSet          settles;
    BondConstraintSet  bonds;
    LincsCache         lincs;    // the set's triangles and atoms' constraints, work arrays
    ConstraintGeometry geometry; // the arrays of gatherGeometry, reused
};

namespace
{

void checkSettings(const ConstraintSettings& s)
{
    if (s.algorithm == ConstraintAlgorithm::Lincs && (s.lincsOrder < 1 || s.lincsIter < 0))
    {
        throw ConstraintError("LINCS needs lincs-order >= 1 and lincs-iter >= 0 (got " + std::to_string(s.lincsOrder)
                              + " and " + std::to_string(s.lincsIter) + ")");
    }
    if (s.algorithm == ConstraintAlgorithm::Shake && !(s.shakeTol > 0))
    {
        throw ConstraintError("SHAKE needs shake-tol > 0 (got " + std::to_string(s.shakeTol) + ")");
    }
}

} // namespace

Constraints::Constraints(const Topology& top, const ConstraintSettings& settings, const std::vector<real>& invMass) :
    impl_(new Impl)
{
    try
    {
        checkSettings(settings);
        if (invMass.size() < size_t(top.numAtoms))
        {
            throw ConstraintError("constraints: " + std::to_string(invMass.size()) + " inverse masses for "
                                  + std::to_string(top.numAtoms) + " atoms");
        }
        impl_->settings = settings;
        impl_->names    = AtomNames(top);
        // molecules frozen whole (every inverse mass 0: freezegrps) neither
        // move nor need constraining
        std::vector<Settle>     settles;
        std::vector<Constraint> bonds;
        for (const auto& st : top.settles)
        {
            if (invMass[st.o] != 0 || invMass[st.h1] != 0 || invMass[st.h2] != 0)
            {
                settles.push_back(st);
            }
        }
        for (const auto& c : top.constraints)
        {
            if (invMass[c.i] != 0 || invMass[c.j] != 0)
            {
                bonds.push_back(c);
            }
        }
        impl_->settles = SettleSet(settles, invMass, top.numAtoms, impl_->names);
        impl_->bonds   = makeBondConstraintSet(bonds, invMass, top.numAtoms, impl_->names);
    }
    catch (...)
    {
        delete impl_;
        throw;
    }
}

Constraints::~Constraints()
{
    delete impl_;
}

bool Constraints::empty() const
{
    return impl_->settles.empty() && impl_->bonds.empty();
}

int Constraints::numConstraints() const
{
    return 3 * impl_->settles.size() + impl_->bonds.size();
}

void Constraints::apply(const std::vector<RVec>& x, std::vector<RVec>& xprime, std::vector<RVec>* v, double dt,
                        const Box& box, Matrix3* virial) const
{
    if (empty())
    {
        return;
    }
    if ((v || virial) && !(dt > 0))
    {
        throw ConstraintError("constraints: the time step must be positive to correct velocities or the virial");
    }
    const Pbc pbc(box);
    impl_->settles.apply(x, xprime, v, dt, pbc, virial, impl_->names);
    const BondConstraintSet& bonds = impl_->bonds;
    if (bonds.empty())
    {
        return;
    }
    const int           threads = omp_get_max_threads(); // OpenMP's count (-nt), as SETTLE
    ConstraintGeometry& g       = impl_->geometry;
    gatherGeometry(bonds, x, xprime, pbc, impl_->names, g, threads);
    std::vector<double> mu(bonds.size(), 0.0);
    const auto&         s = impl_->settings;
    if (s.algorithm == ConstraintAlgorithm::Lincs)
    {
        applyLincs(bonds, g, s.lincsOrder, s.lincsIter, mu, impl_->names, impl_->lincs, threads);
    }
    else
    {
        applyShake(bonds, g, s.shakeTol, mu, impl_->names);
    }
    scatterResult(bonds, g, mu, xprime, v, dt, virial);
}

void Constraints::projectVelocities(const std::vector<RVec>& x, std::vector<RVec>& v, const Box& box) const
{
    if (empty())
    {
        return;
    }
    const Pbc pbc(box);
    impl_->settles.projectVelocities(x, v, pbc);
    if (!impl_->bonds.empty())
    {
        projectBondVelocities(impl_->bonds, x, v, pbc, impl_->names);
    }
}

double Constraints::maxRelativeDeviation(const std::vector<RVec>& x, const Box& box) const
{
    const Pbc pbc(box);
    return std::max(impl_->settles.maxRelativeDeviation(x, pbc), maxBondRelativeDeviation(impl_->bonds, x, pbc));
}

} // namespace putmd
