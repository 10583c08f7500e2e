#include "nonbonded/dispersion_correction.h"

#include <cmath>
#include <vector>

#include "core/units.h"

namespace putmd
{

namespace
{
constexpr double pi         = units::pi;
constexpr double tableScale = 2000; // points per nm of GROMACS's dispersion table

/* Modified dispersion potential per unit C6 (V = -C6 * phi6_modified). */
double switchedDispersion(const InteractionConst& ic, double r)
{
    if (r >= ic.rvdw)
    {
        return 0;
    }
    const double s   = std::max(r - ic.rvdwSwitch, 0.0);
    const auto&  sw  = ic.fswitch6;
    const double phi = std::pow(r, -6) - sw.a / 3 * s * s * s - sw.b / 4 * s * s * s * s - sw.c;
    return -phi;
}

/* 4 pi int_a^b r^2 g(r) dr by composite Simpson on n intervals. */
template<typename G>
double sphericalIntegral(G g, double a, double b, int n)
{
    if (b <= a)
    {
        return 0;
    }
    const double h   = (b - a) / n;
    double       sum = a * a * g(a) + b * b * g(b);
    for (int i = 1; i < n; i++)
    {
        const double r = a + i * h;
        sum += (i % 2 ? 4 : 2) * r * r * g(r);
    }
    return 4 * pi * sum * h / 3;
}
} // namespace

double averageC6(const Topology& top)
{
    std::vector<double> count(top.numLjTypes, 0.0);
    for (int t : top.ljType)
    {
        count[t] += 1;
    }
    double csix = 0, npair = 0;
    for (int a = 0; a < top.numLjTypes; a++)
    {
        for (int b = a; b < top.numLjTypes; b++)
        {
            const double n = a == b ? count[a] * (count[a] - 1) / 2 : count[a] * count[b];
            csix += n * top.c6Of(a, b);
            npair += n;
        }
    }
    csix -= top.excludedPairC6Sum;
    npair -= top.excludedPairCount;
    return npair > 0 ? csix / npair : 0;
}

DispersionCorrection makeDispersionCorrection(const Topology& top, const InteractionConst& ic, DispCorr mode)
{
    DispersionCorrection dc;
    if (mode == DispCorr::No)
    {
        return dc;
    }
    dc.withPressure = mode == DispCorr::EnerPres;
    dc.avcsix       = averageC6(top);
    switch (ic.vdwModifier)
    {
        case InteractionModifier::None:
        {
            const double rc3 = std::pow(ic.rvdw, 3);
            dc.enerdiffsix   = -4 * pi / (3 * rc3);
            dc.virdiffsix    = 0.5 * 8 * pi / rc3;
            break;
        }
        case InteractionModifier::PotentialShift:
        {
            const double r0  = std::ceil(ic.rvdw * tableScale) / tableScale;
            const double r03 = r0 * r0 * r0;
            dc.enershiftsix  = -1 / (r03 * r03);
            dc.enerdiffsix   = 4 * pi / 3 * r03 * dc.enershiftsix - 4 * pi / (3 * r03);
            dc.virdiffsix    = 0.5 * 8 * pi / r03;
            break;
        }
        case InteractionModifier::ForceSwitch:
        {
            const double r0   = std::floor(ic.rvdwSwitch * tableScale) / tableScale;
            const double rEnd = std::ceil(ic.rvdw * tableScale) / tableScale;
            const double r03  = r0 * r0 * r0;
            const double cpot6 = -ic.fswitch6.c; // potential offset inside rvdw-switch
            auto         v     = [&](double r) { return switchedDispersion(ic, r); };
            const double integral = sphericalIntegral(v, r0, ic.rvdwSwitch, 200)
                                    + sphericalIntegral(v, ic.rvdwSwitch, std::min(ic.rvdw, rEnd), 20000);
            dc.enershiftsix = cpot6;
            dc.enerdiffsix  = 4 * pi / 3 * r03 * cpot6 - integral - 4 * pi / (3 * r03);
            // virial: 4 pi int r^3 dV/dr over the switched region, then the tail
            auto dv = [&](double r) {
                const double h = 1e-6;
                return r * (switchedDispersion(ic, r + h) - switchedDispersion(ic, r - h)) / (2 * h);
            };
            const double virsum = sphericalIntegral(dv, r0, std::min(ic.rvdw, rEnd), 20000);
            dc.virdiffsix       = 0.5 * (-virsum + 8 * pi / r03);
            break;
        }
    }
    return dc;
}

double DispersionCorrection::energy(int numAtoms, double volume) const
{
    const double numCorr = 0.5 * numAtoms;
    const double density = numAtoms / volume;
    return avcsix * numCorr * (density * enerdiffsix - enershiftsix);
}

double DispersionCorrection::virialDiagonal(int numAtoms, double volume) const
{
    if (!withPressure)
    {
        return 0;
    }
    const double numCorr = 0.5 * numAtoms;
    const double density = numAtoms / volume;
    return numCorr * density * avcsix * virdiffsix / 3;
}

double DispersionCorrection::pressure(int numAtoms, double volume) const
{
    constexpr double presfac = 16.605390665999998; // kJ/(mol nm^3) -> bar
    return -2 / volume * virialDiagonal(numAtoms, volume) * presfac;
}

} // namespace putmd
