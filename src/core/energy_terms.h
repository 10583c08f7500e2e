/* core/energy_terms.h — energy terms, named exactly as `gmx energy` names them.
 *
 * Terms are an enum so that tables, JSON output and timers index arrays, not
 * strings. A term is "present" when the system has interactions of its kind
 * (as GROMACS lists only those); Potential is the sum of the present terms.
 */
#pragma once

#include <array>
#include <string>

namespace putmd
{

enum class EnergyTerm
{
    Bond,
    G96Bond,
    Morse,
    ConnectBonds,
    HarmonicPot,
    RestraintPot,
    Angle,
    G96Angle,
    RestrictedAngles,
    UreyBradley,
    ProperDih,
    RyckaertBell,
    FourierDih,
    ImproperDih,
    PerImpDih,
    CmapDih,
    LJ14,
    Coulomb14,
    LJSR,
    DispCorr,
    CoulombSR,
    CoulRecip,
    PositionRest,
    FlatBottomPosRest,
    Potential,
    Count
};

constexpr int numEnergyTerms = static_cast<int>(EnergyTerm::Count);

const char* energyTermName(EnergyTerm t);

struct EnergyTerms
{
    std::array<double, numEnergyTerms> value{};
    std::array<bool, numEnergyTerms>   present{};

    double& operator[](EnergyTerm t) { return value[static_cast<int>(t)]; }
    double  operator[](EnergyTerm t) const { return value[static_cast<int>(t)]; }
    bool    has(EnergyTerm t) const { return present[static_cast<int>(t)]; }
    void    add(EnergyTerm t, double v)
    {
        value[static_cast<int>(t)] += v;
        present[static_cast<int>(t)] = true;
    }
    void markPresent(EnergyTerm t) { present[static_cast<int>(t)] = true; }
    /* Sets Potential to the sum of every other present term. */
    void sumPotential();
};

} // namespace putmd
