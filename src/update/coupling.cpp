#include "update/coupling.h"

#include <algorithm>
#include <cmath>

#include "core/random.h"
#include "core/units.h"

namespace putmd
{

namespace
{
constexpr double presfac = 16.605390665999998; // kJ/(mol nm^3) in bar
}

ThermostatStep vRescale(double kinetic, double dof, double refT, double tauT, double dtCouple, uint64_t seed,
                        uint64_t step, uint32_t group)
{
    ThermostatStep result;
    if (kinetic <= 0 || dof <= 0)
    {
        return result;
    }
    const double  target = 0.5 * dof * units::kBoltzmann * refT; // canonical mean kinetic energy
    const double  decay  = tauT > 0 ? std::exp(-dtCouple / tauT) : 0.0;
    CounterRandom rng(seed, RandomPurpose::VRescale, step, group);
    const double  r1 = rng.normal();
    // sum of dof-1 squared normals: a chi-squared deviate, 2 Gamma((dof-1)/2)
    const double sumSquares = dof > 1 ? 2 * rng.gamma(0.5 * (dof - 1)) : 0.0;
    const double newKinetic = kinetic + (1 - decay) * (target * (sumSquares + r1 * r1) / dof - kinetic)
                              + 2 * r1 * std::sqrt(kinetic * target / dof * (1 - decay) * decay);
    result.lambda        = std::sqrt(std::max(newKinetic, 0.0) / kinetic);
    result.energyRemoved = kinetic - std::max(newKinetic, 0.0);
    return result;
}

ThermostatStep berendsenThermostat(double kinetic, double dof, double refT, double tauT, double dtCouple)
{
    ThermostatStep result;
    const double   t = 2 * kinetic / (dof * units::kBoltzmann);
    if (t <= 0 || tauT <= 0)
    {
        return result;
    }
    const double lambda2 = 1 + dtCouple / tauT * (refT / t - 1);
    result.lambda        = std::clamp(std::sqrt(std::max(lambda2, 0.0)), 0.8, 1.25);
    result.energyRemoved = kinetic * (1 - result.lambda * result.lambda);
    return result;
}

void NoseHooverState::advance(double temperature, double refT, double tauT, double dtCouple)
{
    if (refT <= 0 || tauT <= 0)
    {
        return;
    }
    const double q = tauT * tauT * refT / (4 * units::pi * units::pi); // K ps^2
    xi += dtCouple * (temperature - refT) / q;
}

BarostatStep cRescale(const MdpOptions& mdp, const Matrix3& pressure, double volume, double temperature,
                      double dtCouple, uint64_t seed, uint64_t step)
{
    BarostatStep  b;
    const double  kt = units::kBoltzmann * temperature;
    CounterRandom rng(seed, RandomPurpose::CRescale, step, 0);
    auto factor = [&](int d) { return mdp.compressibility[d] * dtCouple / mdp.tauP; };
    if (mdp.pcouplType == PCouplType::Isotropic)
    {
        const double scalarP = (pressure(0, 0) + pressure(1, 1) + pressure(2, 2)) / 3;
        const double gauss   = rng.normal();
        for (int d = 0; d < 3; d++)
        {
            const double fac = factor(0);
            b.mu(d, d) = std::exp(-fac * (mdp.refP[0] - scalarP) / 3 + std::sqrt(2 * kt * fac * presfac / volume) * gauss / 3);
        }
    }
    else // semi-isotropic: x and y together, z separately
    {
        const double xyP    = 0.5 * (pressure(0, 0) + pressure(1, 1));
        const double gauss  = rng.normal();
        const double gauss2 = rng.normal();
        for (int d = 0; d < 2; d++)
        {
            const double fac = factor(0);
            b.mu(d, d)       = std::exp(-fac * (mdp.refP[0] - xyP) / 3
                                  + std::sqrt(2.0 * 2 * kt * fac * presfac / volume / 3) / 2 * gauss);
        }
        const double fac = factor(1);
        b.mu(2, 2) = std::exp(-fac * (mdp.refP[1] - pressure(2, 2)) / 3 + std::sqrt(2 * kt * fac * presfac / volume / 3) * gauss2);
    }
    for (int d = 0; d < 3; d++)
    {
        b.velocityScale[d] = 1 / b.mu(d, d);
    }
    return b;
}

BarostatStep berendsenBarostat(const MdpOptions& mdp, const Matrix3& pressure, double dtCouple)
{
    BarostatStep b;
    if (mdp.pcouplType == PCouplType::Isotropic)
    {
        const double scalarP = (pressure(0, 0) + pressure(1, 1) + pressure(2, 2)) / 3;
        const double mu      = 1 - mdp.compressibility[0] * dtCouple / mdp.tauP * (mdp.refP[0] - scalarP) / 3;
        for (int d = 0; d < 3; d++)
        {
            b.mu(d, d) = mu;
        }
    }
    else
    {
        const double xyP = 0.5 * (pressure(0, 0) + pressure(1, 1));
        const double mxy = 1 - mdp.compressibility[0] * dtCouple / mdp.tauP * (mdp.refP[0] - xyP) / 3;
        b.mu(0, 0) = b.mu(1, 1) = mxy;
        b.mu(2, 2) = 1 - mdp.compressibility[1] * dtCouple / mdp.tauP * (mdp.refP[1] - pressure(2, 2)) / 3;
    }
    return b;
}

Box scaledBox(const Box& box, const Matrix3& mu)
{
    Matrix3 m;
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            double s = 0;
            for (int k = 0; k < 3; k++)
            {
                s += box.vectors()(r, k) * mu(k, c);
            }
            m(r, c) = s;
        }
    }
    return Box(m);
}

} // namespace putmd
