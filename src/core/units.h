/* core/units.h — physical constants and unit conventions.
 *
 * putmd uses GROMACS units: nm, ps, amu, e, kJ/mol, K. The electric
 * conversion factor is derived from the 2019 SI defining constants exactly as
 * GROMACS 2022 derives it, so Coulomb energies agree to double precision.
 */
#pragma once

namespace putmd::units
{
constexpr double pi         = 3.14159265358979323846;
constexpr double avogadro   = 6.02214076e23;  // 1/mol
constexpr double boltzmann  = 1.380649e-23;   // J/K
constexpr double eCharge    = 1.602176634e-19; // C
constexpr double epsilon0SI = 8.8541878128e-12; // F/m
constexpr double nano       = 1e-9;
constexpr double kilo       = 1e3;

/* epsilon0 in e^2 mol / (kJ nm) */
constexpr double epsilon0 = (epsilon0SI * nano * kilo) / (eCharge * eCharge * avogadro);
/* 1/(4 pi eps0) in kJ mol^-1 nm e^-2 (about 138.935) */
constexpr double one4PiEps0 = 1.0 / (4.0 * pi * epsilon0);
/* Boltzmann constant in kJ/(mol K) */
constexpr double kBoltzmann = boltzmann * avogadro / kilo;
constexpr double deg2rad    = pi / 180.0;
constexpr double presfac    = 16.605390665999998; // kJ/(mol nm^3) -> bar
constexpr double amuPerNm3ToKgPerM3 = 1.66053906660; // density
} // namespace putmd::units
