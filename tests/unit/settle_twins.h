/* SETTLE run the two ways on the same start, for the tests that compare
 * the vectorised blocks with the plain twin (the double unit tests and the
 * mixed build's). */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/vec.h"
#include "update/settle.h"

namespace putmd::test
{

struct SettleOutcome
{
    std::vector<Vec3<real>> x, v;
    Matrix3                 virial;
};

/* xp constrained against the start-of-step x by the vectorised blocks or
 * the plain twin, the velocities from (0.5, -0.25, 1.0). */
inline SettleOutcome settleOnce(constraint_detail::SettleSet& set, bool vectorised, const std::vector<Vec3<real>>& x,
                                const std::vector<Vec3<real>>& xp, double dt, const Pbc& pbc,
                                const constraint_detail::AtomNames& names)
{
    SettleOutcome r;
    set.setVectorised(vectorised);
    r.x = xp;
    r.v.assign(xp.size(), Vec3<real>(0.5, -0.25, 1.0));
    set.apply(x, r.x, &r.v, dt, pbc, &r.virial, names);
    return r;
}

} // namespace putmd::test
