/* listed/listed_simd.h — the most numerous listed interactions of a protein
 * (periodic dihedrals, harmonic angles, 1-4 pairs, harmonic bonds) over
 * SIMD registers.
 *
 * Rnase (1,869 protein atoms: 5,489 dihedral terms, 4,863 pairs, 3,368
 * angles) spent about 1 ms per step in the listed forces on one Emerald
 * Rapids core, ~70 ns per term: 4% of the step, one term at a time, each
 * minimum image through double precision. Here W terms (Highway, capped by
 * PUTMD_SIMD like the cluster kernel) share a register: their coordinates
 * are gathered, their geometry and force factors computed side by side,
 * and their forces added back lane by lane.
 *
 * The same bits as the plain loops of listed.cpp, which are the plain twin:
 * the same float operations in the same order (compiled without
 * contraction), the minimum image by rounding in float (it picks the same
 * image as the plain loop's double rounding wherever the image is not a
 * tie, i.e. for any bonded distance shorter than half the box), the forces
 * added term by term in list order, and the energies summed in double
 * per term in list order. The angle itself (atan2) is taken lane by lane
 * with the C library's atan2f, as the plain loop does. Used on steps
 * without a virial, in a rectangular box, in the mixed-precision build;
 * the tests compare both paths bit for bit.
 */
#pragma once

#include <cmath>

#include "core/units.h"
#include "topology/topology.h"

namespace putmd
{

/* The rectangular box the terms see: edges and their inverses. */
struct ListedSimdBox
{
    float len[3] = { 0, 0, 0 };
    float inv[3] = { 0, 0, 0 };
};

/* Whether the SIMD loops run (true at start; PUTMD_SIMD=reference turns
 * them off with the cluster kernel's SIMD, and tests compare both). */
void allowListedSimd(bool allowed);
bool listedSimdAllowed();

/* Whether every term of a periodic-dihedral list has a multiplicity the
 * SIMD loop handles (0 .. 16, as the plain loop's rotations). */
bool periodicDihedralsFitSimd(const PeriodicDihedral* list, int n);

/* The forces of the terms added to f (3 floats per atom); the energy
 * returned (summed in double in list order). x: 3 floats per atom. */
double periodicDihedralsSimd(const PeriodicDihedral* list, int n, const float* x, float* f, const ListedSimdBox& box);
double harmonicBondsSimd(const HarmonicBond* list, int n, const float* x, float* f, const ListedSimdBox& box);
double harmonicAnglesSimd(const HarmonicAngle* list, int n, const float* x, float* f, const ListedSimdBox& box);
/* Lennard-Jones and Coulomb 1-4 energies added to *vlj, *vcoul. */
void pairs14Simd(const Pair14* list, int n, double epsfac, const float* x, float* f, const ListedSimdBox& box,
                 double* vlj, double* vcoul);

/* cos and sin of a dihedral term's phase phi0 (radians): exact for 0 and
 * 180 degrees, where nearly every force field puts them (inline: both
 * loops take it for every term of every step). */
inline void dihedralPhaseCosSin(double phi0, double* c, double* s)
{
    if (std::abs(phi0) < 1e-9)
    {
        *c = 1, *s = 0;
    }
    else if (std::abs(phi0 - units::pi) < 1e-9 || std::abs(phi0 + units::pi) < 1e-9)
    {
        *c = -1, *s = 0;
    }
    else
    {
        *c = std::cos(phi0), *s = std::sin(phi0);
    }
}

} // namespace putmd
