/* update/kinetic.h — kinetic energy, temperature, degrees of freedom and
 * centre-of-mass motion.
 *
 * With leap-frog the velocities are at half steps; the kinetic energy at a
 * full step is the average of the two half-step kinetic energies, as
 * GROMACS reports it. Degrees of freedom: 3 per atom, minus one per
 * constraint (3 per SETTLE water), minus 3 for centre-of-mass removal.
 */
#pragma once

#include <vector>

#include "core/real.h"
#include "core/vec.h"

namespace putmd
{

/* 0.5 sum m v (x) v, in kJ/mol. */
Matrix3 kineticEnergyTensor(const std::vector<Vec3<real>>& v, const std::vector<double>& mass);
double  trace(const Matrix3& m);
Matrix3 averageOf(const Matrix3& a, const Matrix3& b);

double temperatureOf(double kineticEnergy, double degreesOfFreedom);

/* Subtracts the centre-of-mass velocity; returns it. */
DVec removeCenterOfMassVelocity(std::vector<Vec3<real>>& v, const std::vector<double>& mass);

} // namespace putmd
