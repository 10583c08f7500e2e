/* update/shake.h — internal to the constraint code: SHAKE (Ryckaert,
 * Ciccotti & Berendsen, J. Comput. Phys. 23, 327 (1977)).
 *
 * Gauss-Seidel sweeps over the constraints: a constraint whose length l
 * violates |d^2 - l^2| <= 2 tol d^2 (relative length deviation about tol,
 * shake-tol) is corrected along its start-of-step vector r0 by
 * g = (d^2 - l^2) / (2 (1/m_i + 1/m_j) r0.r), which satisfies it to first
 * order. Sweeps stop when one sweep needed no correction, so on return every
 * constraint is within tolerance. ConstraintError after 1000 sweeps, or when
 * a constraint has rotated by about 90 degrees or more (r0.r <= 0, where the
 * correction is undefined).
 */
#pragma once

#include <vector>

#include "update/constraint_set.h"

namespace putmd::constraint_detail
{

/* Moves g.xp onto the constraints; adds the multipliers to mu (see
 * constraint_set.h for their sign). */
void applyShake(const BondConstraintSet& s, ConstraintGeometry& g, double tol, std::vector<double>& mu,
                const AtomNames& names);

} // namespace putmd::constraint_detail
