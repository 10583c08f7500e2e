/* topology/build_topology.h — from a parsed topology to the global Topology.
 *
 * Parameters missing from interaction lines are looked up in the type tables
 * by bonded atom type (grompp's rules); 1-4 pairs use [ pairtypes ] by
 * nonbonded type or, with gen-pairs, the combination rule scaled by fudgeLJ.
 * Exclusions are generated from the chemical-bond graph (bonds 1, 2, 5,
 * constraints 1 and settles) up to nrexcl bonds, plus [ exclusions ].
 * With constraints = h-bonds / all-bonds the matching bonds become
 * constraints, as grompp converts them.
 */
#pragma once

#include "io/mdp.h"
#include "topology/moleculetype.h"
#include "topology/topology.h"

namespace putmd
{

Topology buildTopology(const TopologyFile& top, ConstraintsMode constraints);

/* A [ cmaptypes ] grid (n x n energies, phi-major) with the derivatives
 * bicubic interpolation needs (see CmapGrid). */
CmapGrid makeCmapGrid(int n, const std::vector<double>& grid);

} // namespace putmd
