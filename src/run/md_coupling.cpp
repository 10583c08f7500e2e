/* run/md_coupling.cpp — the MD run's coupling stages (see md_run.h):
 * thermostats (the scaling factors per group and the kinetic energy they
 * take out), the first-order barostats (C-rescale, Berendsen) and
 * Parrinello-Rahman's two halves around the update, and frozen atoms. */
#include "run/md_run.h"

#include <cmath>

#include <fmt/format.h>

#include "update/coupling.h"
#include "update/kinetic.h"

namespace putmd::md_detail
{

namespace
{

/* x' = x mu for every atom (rows times the scaling matrix). */
void scaleCoordinates(std::vector<RVec>& x, const Matrix3& mu)
{
    for (auto& xi : x)
    {
        const RVec o = xi;
        for (int c = 0; c < 3; c++)
        {
            xi[c] = real(o.x * mu(0, c) + o.y * mu(1, c) + o.z * mu(2, c));
        }
    }
}

} // namespace

Matrix3 MdRun::groupKinetic(std::vector<double>* perGroup) const
{
    if (perGroup)
    {
        perGroup->assign(settings_.groups.size(), 0);
        for (size_t i = 0; i < v_.size(); i++)
        {
            (*perGroup)[tcGroup_[i]] += 0.5 * mass_[i] * double(norm2(v_[i]));
        }
        reduce(*perGroup);
    }
    return kineticEnergyTensor(v_, mass_);
}

/* The kinetic energy after the thermostat scaled each group's velocities. */
Matrix3 MdRun::scaledKinetic(const Matrix3& unscaled, const std::vector<double>& lambda) const
{
    bool allOne = true;
    for (double l : lambda)
    {
        allOne = allOne && l == 1.0;
    }
    if (allOne)
    {
        return unscaled;
    }
    Matrix3 k;
    for (size_t i = 0; i < v_.size(); i++)
    {
        const double l2 = lambda[tcGroup_[i]] * lambda[tcGroup_[i]];
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                k(a, b) += 0.5 * l2 * mass_[i] * double(v_[i][a]) * double(v_[i][b]);
            }
        }
    }
    return k;
}

/* Velocity scaling per group for this step (1 when not coupling now). */
double MdRun::couplingLambdas(long step, std::vector<double>& lambda)
{
    lambda.assign(settings_.groups.size(), 1.0);
    // as GROMACS, coupling acts on steps 1, n+1, 2n+1, ... (do_per_step(step + n - 1, n))
    if (mdp_.tcoupl == TCoupl::No || !every(step + settings_.nsttcouple - 1, settings_.nsttcouple))
    {
        return 0;
    }
    std::vector<double> kinetic;
    groupKinetic(&kinetic);
    double removed = 0;
    for (int g = 0; g < settings_.groups.size(); g++)
    {
        const double tau = settings_.groups.tauT[g];
        const double dtc = settings_.nsttcouple * mdp_.dt;
        if (tau < 0)
        {
            continue; // tau-t = -1: this group is not coupled
        }
        if (mdp_.tcoupl == TCoupl::NoseHoover)
        {
            noseHoover_[g].advance(temperatureOf(kinetic[g], settings_.groups.dof[g]), settings_.groups.refT[g], tau, dtc);
            continue;
        }
        ThermostatStep ts;
        if (mdp_.tcoupl == TCoupl::VRescale)
        {
            ts = vRescale(kinetic[g], settings_.groups.dof[g], settings_.groups.refT[g], tau, dtc, settings_.ldSeed, step, g);
        }
        else
        {
            ts = berendsenThermostat(kinetic[g], settings_.groups.dof[g], settings_.groups.refT[g], tau, dtc);
        }
        lambda[g] = ts.lambda;
        removed += ts.energyRemoved;
    }
    return removed;
}

/* Parrinello-Rahman, before the update: whether this step applies the
 * barostat (the step after one whose pressure accelerated the box), and
 * its matrices from the box velocity and the box. */
void MdRun::parrinelloRahmanStart(long step)
{
    prApply_ = mdp_.pcoupl == PCoupl::ParrinelloRahman && every(step + settings_.nstpcouple - 1, settings_.nstpcouple);
    if (prApply_)
    {
        pr_.step(mdp_, box_, settings_.nstpcouple * mdp_.dt, &prM_, &prNextBox_, &prMu_);
    }
}

/* Parrinello-Rahman, after this step's energies (whose pressure is that of
 * the box before the move, as GROMACS's): the box moves and the coordinates
 * follow it; then this step's pressure, if computed for coupling,
 * accelerates the box for the next application. */
void MdRun::parrinelloRahmanFinish(long step, bool pressureComputed, const Matrix3& pressure)
{
    if (prApply_)
    {
        scaleCoordinates(xprime_, prMu_);
        box_ = prNextBox_;
        if (dd_)
        {
            dd_->setBox(box_);
        }
    }
    if (pressureComputed && every(step, settings_.nstpcouple))
    {
        pr_.accelerate(mdp_, pressure, box_, settings_.nstpcouple * mdp_.dt);
    }
}

void MdRun::zeroFrozenVelocities()
{
    for (size_t i = 0; i < freeze_.size() && i < v_.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            if (freeze_[i] & (1 << d))
            {
                v_[i][d] = 0;
            }
        }
    }
}

/* virial: force plus constraint virial of this step; kinetic: its tensor.
 * apply: scale the box, coordinates and velocities (else only count the
 * work, for the conserved energy of the last step). */
void MdRun::pressureCoupling(long step, const Matrix3& pressure, double temperature, const Matrix3& virial,
                             const Matrix3& kinetic, bool apply)
{
    if (mdp_.pcoupl == PCoupl::No || !every(step, settings_.nstpcouple))
    {
        return;
    }
    const double dtc    = settings_.nstpcouple * mdp_.dt;
    const double volume = box_.volume();
    BarostatStep b      = mdp_.pcoupl == PCoupl::CRescale
                                  ? cRescale(mdp_, pressure, volume, mdp_.refT.empty() ? temperature : mdp_.refT[0], dtc,
                                             settings_.ldSeed, step)
                                  : berendsenBarostat(mdp_, pressure, dtc);
    // the work the barostat does, kept out of the conserved energy: scaling
    // the coordinates changes the potential by 2 sum (mu - 1) Xi (force and
    // constraint virial, as GROMACS counts it) ...
    for (int d = 0; d < 3; d++)
    {
        for (int n = 0; n <= d; n++)
        {
            barostatIntegral_ -= 2 * (b.mu(d, n) - (n == d ? 1.0 : 0.0)) * virial(d, n);
        }
    }
    if (mdp_.pcoupl == PCoupl::CRescale)
    {
        // ... and C-rescale's velocity scaling changes the kinetic energy
        for (int d = 0; d < 3; d++)
        {
            barostatIntegral_ -= (b.velocityScale[d] * b.velocityScale[d] - 1) * kinetic(d, d);
        }
    }
    if (!apply)
    {
        return;
    }
    scaleCoordinates(xprime_, b.mu);
    if (mdp_.pcoupl == PCoupl::CRescale)
    {
        for (auto& vi : v_)
        {
            for (int d = 0; d < 3; d++)
            {
                vi[d] *= real(b.velocityScale[d]);
            }
        }
    }
    box_ = scaledBox(box_, b.mu);
    if (dd_)
    {
        dd_->setBox(box_);
    }
}

} // namespace putmd::md_detail
