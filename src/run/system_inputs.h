/* run/system_inputs.h — loading a simulation's inputs and checking that they
 * fit together.
 *
 * Reads the .mdp (typed options), preprocesses and parses the topology,
 * builds the global topology, reads the coordinates, and checks what no
 * single reader can: the atom counts of topology and coordinates, the
 * cut-offs against the box, the PME grid against the spline order. Every
 * failure is an InputError naming the files and lines involved.
 */
#pragma once

#include <string>
#include <vector>

#include "io/gro.h"
#include "io/mdp.h"
#include "topology/topology.h"

namespace putmd
{

struct InputPaths
{
    std::string              topology;
    std::string              coordinates;
    std::string              mdp;
    std::string              restraintReference; // -r: position-restraint reference (empty: the coordinates)
    std::string              indexFile;          // -n: index groups (empty: GROMACS's default groups)
    std::vector<std::string> includeDirs; // -I
    std::vector<std::string> gmxlibDirs;  // from GMXLIB
    std::string              dataDir = PUTMD_GMX_DATA_DIR;
};

struct SystemInputs
{
    MdpOptions               mdp;
    Topology                 topology;
    GroFile                  coordinates;
    std::vector<std::string> warnings;
};

SystemInputs loadSystem(const InputPaths& paths);

/* The cut-off must be below half the smallest perpendicular box width. */
void checkCutoffAgainstBox(const MdpOptions& mdp, const Box& box, const std::string& coordinatesFile);

} // namespace putmd
