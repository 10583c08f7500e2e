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
 *  - Berendsen: mu = 1 - (dt/tau_p) beta (P0 - P)/3, isotropic, semi-
 *    isotropic or anisotropic (each element of mu from its own beta and
 *    P0; the upper off-diagonal elements folded into the lower ones, as
 *    GROMACS does, so the box stays lower-triangular).
 *  - Parrinello-Rahman (below): the box has a velocity and a mass, and the
 *    particles feel the box's motion through a friction-like term.
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

/* Parrinello-Rahman (leap-frog, as GROMACS integrates it). The box b
 * (rows a, b, c; lower-triangular) has a velocity bdot and an inverse mass
 * W^-1 = 4 pi^2 beta / (3 tau_p^2 L), L the longest box diagonal. Every
 * nstpcouple steps, with dtc = nstpcouple dt:
 *   - after the step whose pressure P was computed, the box accelerates:
 *     bdot += dtc W^-1 V (b^-1)^T (P - P0), off-diagonal terms moved to the
 *     lower triangle; isotropic coupling keeps the relative accelerations
 *     equal (and semi-isotropic those of x and y), anisotropic takes each
 *     element with its own compressibility;
 *   - the next step applies it: velocities get -dtc M v with
 *     M = b^-1 bdot b^T b^-T, the box moves by dtc bdot, and coordinates
 *     follow the box (x' = x b^-1 b').
 * Isotropic and semi-isotropic coupling keep the box's shape: the ratios
 * of its elements to b_xx (all of them, or those of a and b) stay as they
 * were at the start (boxRel). The conserved energy adds the box's kinetic
 * energy, 1/2 sum bdot^2 / W^-1, and P0 V. */
struct ParrinelloRahman
{
    Matrix3 boxVelocity; // nm/ps
    Matrix3 boxRel;      // shape ratios to b_xx (isotropic, semi-isotropic)

    /* Shape ratios of the starting box. */
    static Matrix3 shapeOf(const Box& box, PCouplType type);
    /* The box acceleration from pressure (bar), integrated over dtc. */
    void accelerate(const MdpOptions& mdp, const Matrix3& pressure, const Box& box, double dtc);
    /* M for the velocities, the box after dtc, and mu for the coordinates. */
    void step(const MdpOptions& mdp, const Box& box, double dtc, Matrix3* m, Box* next, Matrix3* mu) const;
    /* The barostat's share of the conserved energy (kJ/mol), box after the step. */
    double conservedEnergy(const MdpOptions& mdp, const Box& box) const;
};

/* GROMACS's tensors from the mdp values: isotropic one value, semi-
 * isotropic (xy, z), anisotropic (xx, yy, zz, xy, xz, yz), symmetric. */
Matrix3 pressureTensorOf(const std::vector<double>& values, PCouplType type);

} // namespace putmd
