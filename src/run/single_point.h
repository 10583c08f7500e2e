/* run/single_point.h — energies and forces for one configuration.
 *
 * The force calculation of a step, without the step: short-range nonbonded
 * (reference kernel), listed interactions, PME reciprocal space and the
 * dispersion correction, each into its GROMACS-named energy term. Used by
 * `putmd energy` (as `gmx mdrun -rerun` on one frame) and by the tests.
 */
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "io/mdp.h"
#include "topology/topology.h"

namespace putmd
{

struct SinglePointResult
{
    EnergyTerms             energies;
    std::vector<Vec3<real>> forces;           // topology order, kJ/mol/nm
    std::array<int, 3>      pmeGrid{};        // zeros without PME
    double                  ewaldCoeff = 0;   // 1/nm, 0 without PME
    double                  dispCorrPressure = 0; // bar
    // energygrps: the group-pair terms (run/energy_groups.h), names and values
    std::vector<std::string> groupTermNames;
    std::vector<double>      groupTerms;
};

/* coordinatesFile names the coordinates in errors about them (overlapping
 * atoms, non-finite energies); it may be empty. */
SinglePointResult computeSinglePoint(const Topology& top, const MdpOptions& mdp, const Box& box,
                                     const std::vector<DVec>& x, const std::string& coordinatesFile = "");

} // namespace putmd
