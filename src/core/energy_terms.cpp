#include "core/energy_terms.h"

namespace putmd
{

const char* energyTermName(EnergyTerm t)
{
    switch (t)
    {
        case EnergyTerm::Bond: return "Bond";
        case EnergyTerm::G96Bond: return "G96Bond";
        case EnergyTerm::Morse: return "Morse";
        case EnergyTerm::ConnectBonds: return "Connect Bonds";
        case EnergyTerm::HarmonicPot: return "Harmonic Pot.";
        case EnergyTerm::RestraintPot: return "Restraint Pot.";
        case EnergyTerm::Angle: return "Angle";
        case EnergyTerm::G96Angle: return "G96Angle";
        case EnergyTerm::RestrictedAngles: return "Restr. Angles";
        case EnergyTerm::UreyBradley: return "U-B";
        case EnergyTerm::ProperDih: return "Proper Dih.";
        case EnergyTerm::RyckaertBell: return "Ryckaert-Bell.";
        case EnergyTerm::FourierDih: return "Fourier Dih.";
        case EnergyTerm::ImproperDih: return "Improper Dih.";
        case EnergyTerm::PerImpDih: return "Per. Imp. Dih.";
        case EnergyTerm::CmapDih: return "CMAP Dih.";
        case EnergyTerm::LJ14: return "LJ-14";
        case EnergyTerm::Coulomb14: return "Coulomb-14";
        case EnergyTerm::LJSR: return "LJ (SR)";
        case EnergyTerm::DispCorr: return "Disper. corr.";
        case EnergyTerm::CoulombSR: return "Coulomb (SR)";
        case EnergyTerm::CoulRecip: return "Coul. recip.";
        case EnergyTerm::PositionRest: return "Position Rest.";
        case EnergyTerm::FlatBottomPosRest: return "Flat-b. P-R."; // GROMACS 2022's name (later versions: "Flat-bottom posres")
        case EnergyTerm::Potential: return "Potential";
        case EnergyTerm::Count: break;
    }
    return "?";
}

void EnergyTerms::sumPotential()
{
    double sum = 0;
    for (int t = 0; t < static_cast<int>(EnergyTerm::Potential); t++)
    {
        if (present[t])
        {
            sum += value[t];
        }
    }
    value[static_cast<int>(EnergyTerm::Potential)]   = sum;
    present[static_cast<int>(EnergyTerm::Potential)] = true;
}

} // namespace putmd
