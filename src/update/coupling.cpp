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

Matrix3 multiply(const Matrix3& a, const Matrix3& b)
{
    Matrix3 c;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
        {
            double s = 0;
            for (int j = 0; j < 3; j++)
            {
                s += a(r, j) * b(j, k);
            }
            c(r, k) = s;
        }
    return c;
}

Matrix3 transpose(const Matrix3& a)
{
    Matrix3 t;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            t(r, k) = a(k, r);
    return t;
}
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
    else if (mdp.pcouplType == PCouplType::SemiIsotropic)
    {
        const double xyP = 0.5 * (pressure(0, 0) + pressure(1, 1));
        const double mxy = 1 - mdp.compressibility[0] * dtCouple / mdp.tauP * (mdp.refP[0] - xyP) / 3;
        b.mu(0, 0) = b.mu(1, 1) = mxy;
        b.mu(2, 2) = 1 - mdp.compressibility[1] * dtCouple / mdp.tauP * (mdp.refP[1] - pressure(2, 2)) / 3;
    }
    else
    {
        // every element with its own compressibility and reference, then
        // the upper off-diagonal elements moved to the lower triangle (to
        // first order), so that the box stays lower-triangular
        const Matrix3 refP = pressureTensorOf(mdp.refP, PCouplType::Anisotropic);
        const Matrix3 beta = pressureTensorOf(mdp.compressibility, PCouplType::Anisotropic);
        for (int d = 0; d < 3; d++)
            for (int n = 0; n < 3; n++)
                b.mu(d, n) = (d == n ? 1.0 : 0.0) - beta(d, n) * dtCouple / mdp.tauP * (refP(d, n) - pressure(d, n)) / 3;
        for (int d = 1; d < 3; d++)
            for (int n = 0; n < d; n++)
            {
                b.mu(d, n) += b.mu(n, d);
                b.mu(n, d) = 0;
            }
    }
    return b;
}

Box scaledBox(const Box& box, const Matrix3& mu)
{
    return Box(multiply(box.vectors(), mu));
}

} // namespace putmd

namespace putmd
{

namespace
{

/* Dimensions whose elements keep their ratio to b_xx: 3 (isotropic), 2
 * (semi-isotropic: rows b and c in their x and y columns), 0 (anisotropic). */
int shapeDims(PCouplType type)
{
    return type == PCouplType::Isotropic ? 3 : type == PCouplType::SemiIsotropic ? 2 : 0;
}

void preserveShape(PCouplType type, const Matrix3& boxRel, Matrix3* b)
{
    const int ndim = shapeDims(type);
    for (int d = 1; d < 3; d++)
        for (int d2 = 0; d2 < ndim; d2++)
            (*b)(d, d2) = (*b)(0, 0) * boxRel(d, d2);
}

/* W^-1 per element (1/(bar ps^2 nm)... in GROMACS's units: the pressure
 * unit drops out as pressure and compressibility come as a product). */
Matrix3 inverseMass(const MdpOptions& mdp, const Box& box)
{
    const Matrix3& b    = box.vectors();
    const double   maxl = std::max({ b(0, 0), b(1, 1), b(2, 2) });
    const Matrix3  c    = pressureTensorOf(mdp.compressibility, mdp.pcouplType);
    Matrix3        w;
    for (int d = 0; d < 3; d++)
        for (int n = 0; n < 3; n++)
            w(d, n) = 4 * units::pi * units::pi * c(d, n) / (3 * mdp.tauP * mdp.tauP * maxl);
    return w;
}

} // namespace

Matrix3 pressureTensorOf(const std::vector<double>& v, PCouplType type)
{
    Matrix3 t;
    if (v.empty())
    {
        return t;
    }
    switch (type)
    {
        case PCouplType::Isotropic: t(0, 0) = t(1, 1) = t(2, 2) = v[0]; break;
        case PCouplType::SemiIsotropic:
            t(0, 0) = t(1, 1) = v[0];
            t(2, 2)           = v.size() > 1 ? v[1] : 0;
            break;
        case PCouplType::Anisotropic:
            for (int d = 0; d < 3 && d < int(v.size()); d++)
            {
                t(d, d) = v[d];
            }
            if (v.size() >= 6)
            {
                t(0, 1) = t(1, 0) = v[3];
                t(0, 2) = t(2, 0) = v[4];
                t(1, 2) = t(2, 1) = v[5];
            }
            break;
    }
    return t;
}

Matrix3 ParrinelloRahman::shapeOf(const Box& box, PCouplType type)
{
    Matrix3        rel;
    const Matrix3& b    = box.vectors();
    const int      ndim = shapeDims(type);
    for (int d = 1; d < 3; d++)
        for (int d2 = 0; d2 < ndim; d2++)
            rel(d, d2) = b(d, d2) / b(0, 0);
    return rel;
}

void ParrinelloRahman::accelerate(const MdpOptions& mdp, const Matrix3& pressure, const Box& box, double dtc)
{
    const Matrix3& b    = box.vectors();
    const double   vol  = b(0, 0) * b(1, 1) * b(2, 2);
    const Matrix3  winv = inverseMass(mdp, box);
    const Matrix3  p0   = pressureTensorOf(mdp.refP, mdp.pcouplType);
    Matrix3        pdiff;
    for (int d = 0; d < 3; d++)
        for (int n = 0; n < 3; n++)
            pdiff(d, n) = pressure(d, n) - p0(d, n);
    Matrix3 t = multiply(transpose(box.inverse()), pdiff);
    // the off-diagonal 'force' acts on the lower triangle only (box form)
    for (int d = 0; d < 3; d++)
        for (int n = 0; n < d; n++)
        {
            t(d, n) += t(n, d);
            t(n, d) = 0;
        }
    switch (mdp.pcouplType)
    {
        case PCouplType::Anisotropic:
            for (int d = 0; d < 3; d++)
                for (int n = 0; n <= d; n++)
                    t(d, n) *= winv(d, n) * vol;
            break;
        case PCouplType::Isotropic:
        {
            // equal relative accelerations with the total volume acceleration
            const double atot = b(0, 0) * b(1, 1) * t(2, 2) + b(0, 0) * t(1, 1) * b(2, 2) + t(0, 0) * b(1, 1) * b(2, 2);
            const double arel = atot / (3 * vol);
            for (int d = 0; d < 3; d++)
                for (int n = 0; n <= d; n++)
                    t(d, n) = winv(0, 0) * vol * arel * b(d, n);
            break;
        }
        case PCouplType::SemiIsotropic:
        {
            const double atot = b(0, 0) * t(1, 1) + t(0, 0) * b(1, 1);
            const double arel = atot / (2 * b(0, 0) * b(1, 1));
            for (int d = 0; d < 2; d++)
                for (int n = 0; n <= d; n++)
                    t(d, n) = winv(d, n) * vol * arel * b(d, n);
            for (int n = 0; n < 3; n++)
                t(2, n) *= winv(2, n) * vol;
            break;
        }
    }
    for (int d = 0; d < 3; d++)
        for (int n = 0; n <= d; n++)
            boxVelocity(d, n) += dtc * t(d, n);
    preserveShape(mdp.pcouplType, boxRel, &boxVelocity);
}

void ParrinelloRahman::step(const MdpOptions& mdp, const Box& box, double dtc, Matrix3* m, Box* next, Matrix3* mu) const
{
    const Matrix3& b   = box.vectors();
    const Matrix3& inv = box.inverse();
    *m                 = multiply(multiply(inv, multiply(boxVelocity, transpose(b))), transpose(inv));
    Matrix3 nb;
    for (int d = 0; d < 3; d++)
        for (int n = 0; n <= d; n++)
            nb(d, n) = b(d, n) + dtc * boxVelocity(d, n);
    preserveShape(mdp.pcouplType, boxRel, &nb);
    *mu   = multiply(inv, nb);
    *next = Box(nb);
}

double ParrinelloRahman::conservedEnergy(const MdpOptions& mdp, const Box& box) const
{
    const Matrix3 winv = inverseMass(mdp, box);
    double        e    = 0;
    for (int d = 0; d < 3; d++)
        for (int n = 0; n <= d; n++)
            if (winv(d, n) > 0)
            {
                e += 0.5 * boxVelocity(d, n) * boxVelocity(d, n) / (winv(d, n) * presfac);
            }
    const Matrix3 p0 = pressureTensorOf(mdp.refP, mdp.pcouplType);
    e += box.volume() * (p0(0, 0) + p0(1, 1) + p0(2, 2)) / (3 * presfac);
    return e;
}

} // namespace putmd
