#include "run/system_inputs.h"

#include <algorithm>
#include <sstream>

#include "io/index_file.h"
#include "io/preprocessor.h"
#include "listed/position_restraints.h"
#include "topology/build_topology.h"
#include "topology/topology_parser.h"

namespace putmd
{

void checkCutoffAgainstBox(const MdpOptions& mdp, const Box& box, const std::string& coordinatesFile)
{
    const double rc    = std::max(mdp.rcoulomb, mdp.rvdw);
    const double width = box.minPerpendicularWidth();
    if (rc >= 0.5 * width)
    {
        std::ostringstream msg;
        msg << "the cut-off " << rc << " nm is not below half the smallest box width (" << width << " nm, box from "
            << coordinatesFile << "); use a cut-off below " << 0.5 * width << " nm or a larger box";
        throw InputError(mdp.where(mdp.rcoulomb >= mdp.rvdw ? "rcoulomb" : "rvdw"), msg.str());
    }
}

SystemInputs loadSystem(const InputPaths& paths)
{
    SystemInputs in;
    auto         mdp = readMdp(paths.mdp);
    in.mdp           = std::move(mdp.options);
    in.warnings      = std::move(mdp.warnings);

    PreprocessorOptions pp;
    pp.includeDirs = paths.includeDirs;
    for (const auto& d : in.mdp.includeDirs)
    {
        pp.includeDirs.push_back(d);
    }
    pp.gmxlibDirs = paths.gmxlibDirs;
    pp.dataDir    = paths.dataDir;
    for (const auto& d : in.mdp.defines)
    {
        const auto eq = d.find('=');
        pp.defines[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 1);
    }
    TopologyFile topFile = parseTopology(preprocessTopology(paths.topology, pp), paths.topology);
    for (auto& w : topFile.warnings)
    {
        in.warnings.push_back(std::move(w));
    }
    in.topology    = buildTopology(topFile, in.mdp.constraints);
    in.coordinates = readGro(paths.coordinates);
    if (!paths.indexFile.empty())
    {
        in.topology.indexGroups = readIndexFile(paths.indexFile);
        in.topology.indexFile   = paths.indexFile;
    }

    const int ngro = static_cast<int>(in.coordinates.x.size());
    if (ngro != in.topology.numAtoms)
    {
        std::ostringstream msg;
        msg << "the topology has " << in.topology.numAtoms << " atoms (from [ molecules ]) but " << paths.coordinates
            << " has " << ngro << "; check the molecule counts in [ molecules ] against the coordinate file";
        throw InputError(topFile.molecules.back().where, msg.str());
    }
    int mismatches = 0;
    for (int i = 0; i < ngro && mismatches < 5; i++)
    {
        if (in.coordinates.atoms[i].atomName != in.topology.atomName[i])
        {
            in.warnings.push_back(paths.coordinates + ":" + std::to_string(i + 3) + ": atom name '"
                                  + in.coordinates.atoms[i].atomName + "' differs from the topology's '"
                                  + in.topology.atomName[i] + "' for " + in.topology.describeAtom(i)
                                  + " (the topology's is used)");
            mismatches++;
        }
    }
    checkCutoffAgainstBox(in.mdp, in.coordinates.box, paths.coordinates);
    if (!in.topology.positionRestraints.empty())
    {
        if (paths.restraintReference.empty() || paths.restraintReference == paths.coordinates)
        {
            setPositionRestraintReferences(&in.topology, in.coordinates.x, in.coordinates.box, in.mdp.refcoordScaling,
                                           paths.coordinates);
        }
        else
        {
            const GroFile ref = readGro(paths.restraintReference);
            setPositionRestraintReferences(&in.topology, ref.x, ref.box, in.mdp.refcoordScaling, paths.restraintReference);
        }
    }
    else if (!paths.restraintReference.empty())
    {
        in.warnings.push_back("-r " + paths.restraintReference
                              + ": the topology has no position restraints (is POSRES defined? define = -DPOSRES in the "
                                ".mdp); the file is not used");
    }
    return in;
}

} // namespace putmd
