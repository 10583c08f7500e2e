/* update/coupling.h — temperature and pressure coupling.
 *
 * Thermostats return the factor lambda that scales the velocities of one
 * coupling group, and report the kinetic energy they took out so that the
 * conserved energy can add it back:
 *  - v-rescale (Bussi, Donadio, Parrinello 2007): the kinetic energy is
 *    drawn from its canonical distribution with relaxation time tau-t; the
 *    noise comes from the counter-based generator (seed, step, group).
 *  - Berendsen: lambda^2 = 1 + (dt/tau)(T0/T - 1), bounded to [0.8, 1.25].
 * Barostats scale the box and coordinates every nstpcouple steps:
 *  - C-rescale (Bernetti & Bussi 2020): first-order stochastic cell
 *    rescaling, isotropic or semi-isotropic, velocities scaled inversely;
 *  - Berendsen: mu = 1 - (dt/tau_p) beta (P0 - P)/3.
 */
#pragma once

#include <cstdint>

#include "core/box.h"
#include "core/vec.h"
#include "io/mdp.h"

namespace putmd
{

struct ThermostatStep
{
    double lambda        = 1; // velocity scaling factor
    double energyRemoved = 0; // kinetic energy taken out (for the conserved energy)
};

/* kinetic: the group's current kinetic energy; dof: its degrees of freedom;
 * refT: reference temperature; tauT: coupling time; dtCouple: nsttcouple*dt. */
ThermostatStep vRescale(double kinetic, double dof, double refT, double tauT, double dtCouple, uint64_t seed,
                        uint64_t step, uint32_t group);
ThermostatStep berendsenThermostat(double kinetic, double dof, double refT, double tauT, double dtCouple);

/* Nose-Hoover (leap-frog, as in GROMACS's manual): a friction xi per group
 * with d xi/dt = (T - T0) / Q, Q = tau^2 T0 / (4 pi^2), advanced every
 * nsttcouple steps; the velocity update applies -xi v implicitly every step.
 * The conserved energy adds the kinetic energy the friction removed, step
 * by step (exact bookkeeping, as for v-rescale). */
struct NoseHooverState
{
    double xi = 0; // friction (1/ps)
    void   advance(double temperature, double refT, double tauT, double dtCouple);
};

struct BarostatStep
{
    Matrix3 mu;                // coordinate and box scaling matrix (x' = x mu)
    double  velocityScale[3] = { 1, 1, 1 }; // C-rescale scales velocities by 1/mu
    double  energyChange     = 0; // work done on the barostat (for the conserved energy)
};

/* pressure: the instantaneous pressure tensor (bar); volume (nm^3);
 * kinetic: current kinetic energy (for C-rescale's noise); dtCouple:
 * nstpcouple * dt. */
BarostatStep cRescale(const MdpOptions& mdp, const Matrix3& pressure, double volume, double temperature,
                      double dtCouple, uint64_t seed, uint64_t step);
BarostatStep berendsenBarostat(const MdpOptions& mdp, const Matrix3& pressure, double dtCouple);

/* Box after scaling by mu (rows are box vectors: b' = b mu). */
Box scaledBox(const Box& box, const Matrix3& mu);

} // namespace putmd
