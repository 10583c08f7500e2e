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
#include <exception>

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
    bool               bondsBesideWaters = true; // setBondsBesideWaters
};

namespace
{

/* A bond constraint's gather and LINCS solve cost about as much as three
 * waters' SETTLE (rnase, one thread of an Emerald Rapids Xeon: about 100 us
 * for its 1,000 constraints' gather and solve against 330 us for 10,500
 * waters): the weight of the bonds when the thread that solves them takes a
 * smaller share of the waters. */
constexpr int c_bondCostInWaters = 3;

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
    const Pbc                pbc(box);
    const BondConstraintSet& bonds   = impl_->bonds;
    const int                threads = omp_get_max_threads(); // OpenMP's count (-nt), as SETTLE
    ConstraintGeometry&      g       = impl_->geometry;
    const auto&              s       = impl_->settings;
    std::vector<double>      mu(bonds.size(), 0.0);
    // the bonds' solve on one thread (gather and solve; the scatter after)
    auto solveBonds = [&](int bondThreads) {
        gatherGeometry(bonds, x, xprime, pbc, impl_->names, g, bondThreads);
        if (s.algorithm == ConstraintAlgorithm::Lincs)
        {
            applyLincs(bonds, g, s.lincsOrder, s.lincsIter, mu, impl_->names, impl_->lincs, bondThreads);
        }
        else
        {
            applyShake(bonds, g, s.shakeTol, mu, impl_->names);
        }
    };
    const int numWaters = impl_->settles.size();
    if (impl_->bondsBesideWaters && threads > 1 && numWaters > 0 && !bonds.empty()
        && (s.algorithm != ConstraintAlgorithm::Lincs || lincsThreads(bonds.size(), threads) == 1))
    {
        // a few bond constraints (a protein's in water) take one thread
        // anyway: that thread solves them and fewer waters while the
        // others take the rest of the waters, instead of all threads
        // waiting for it after SETTLE (waters and bonds share no atom)
        const long total = numWaters + long(c_bondCostInWaters) * bonds.size();
        std::vector<size_t> first(threads + 1, 0);
        const long          firstShare = std::max(0L, total / threads - long(c_bondCostInWaters) * long(bonds.size()));
        first[1] = size_t(std::min<long>(firstShare, numWaters));
        for (int t = 2; t <= threads; t++)
        {
            first[t] = first[1] + (numWaters - first[1]) * size_t(t - 1) / size_t(threads - 1);
        }
        std::vector<Matrix3>            virs(threads);
        std::vector<std::exception_ptr> failure(threads + 1);
#pragma omp parallel num_threads(threads)
        {
            // share u on thread u (a smaller team than asked takes the rest in turn)
            for (int u = omp_get_thread_num(); u < threads; u += omp_get_num_threads())
            {
                if (u == 0)
                {
                    try
                    {
                        solveBonds(1);
                    }
                    catch (...)
                    {
                        failure[threads] = std::current_exception();
                    }
                }
                try
                {
                    impl_->settles.applyShare(x, xprime, v, dt, pbc, virial != nullptr, impl_->names, first[u],
                                              first[u + 1], virs[u]);
                }
                catch (...)
                {
                    failure[u] = std::current_exception();
                }
            }
        }
        // SETTLE's failures first, as when it ran before the bonds
        for (const auto& e : failure)
        {
            if (e)
            {
                std::rethrow_exception(e);
            }
        }
        SettleSet::addVirials(virs, dt, virial);
    }
    else
    {
        impl_->settles.apply(x, xprime, v, dt, pbc, virial, impl_->names);
        if (bonds.empty())
        {
            return;
        }
        solveBonds(threads);
    }
    scatterResult(bonds, g, mu, xprime, v, dt, virial);
}

void Constraints::setBondsBesideWaters(bool on)
{
    impl_->bondsBesideWaters = on;
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
