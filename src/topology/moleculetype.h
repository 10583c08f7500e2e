/* topology/moleculetype.h — molecule types and the system as a topology
 * declares them, before any parameter lookup.
 *
 * Atom indices here are 0-based within the molecule. Each interaction keeps
 * the location of its line so that a failed parameter lookup later can name
 * the user's file and line.
 */
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "topology/forcefield.h"

namespace putmd
{

enum class InteractionKind { Bonds, Pairs, Angles, Dihedrals, Constraints, Settles, PositionRestraints, Cmap, VirtualSites2, VirtualSites3, VirtualSites4, VirtualSitesN, Count };

const char* directiveName(InteractionKind k);

struct MolAtom
{
    std::string    type;
    int            residueNumber = 0;
    std::string    residueName;
    std::string    name;
    double         charge = 0;
    double         mass   = 0;
    SourceLocation where;
};

struct Interaction
{
    std::vector<int>    atoms;
    int                 func = 0;
    std::vector<double> params; // empty: look up in the type tables
    SourceLocation      where;
    bool                swapParity = false; // virtual_sites3 -3/-4: mirrored construction
};

struct MoleculeType
{
    std::string                           name;
    int                                   nrexcl = 0;
    std::vector<MolAtom>                  atoms;
    std::vector<Interaction>              interactions[static_cast<int>(InteractionKind::Count)];
    std::vector<std::pair<int, int>>      explicitExclusions;
    SourceLocation                        where;

    std::vector<Interaction>&       list(InteractionKind k) { return interactions[static_cast<int>(k)]; }
    const std::vector<Interaction>& list(InteractionKind k) const { return interactions[static_cast<int>(k)]; }
};

struct MoleculeBlock
{
    std::string    name;
    long           count = 0;
    SourceLocation where;
};

struct TopologyFile
{
    ForceField                 ff;
    std::vector<MoleculeType>  moleculeTypes;
    std::string                systemName;
    std::vector<MoleculeBlock> molecules;
    std::vector<std::string>   warnings;

    const MoleculeType* moleculeType(const std::string& name) const;
};

} // namespace putmd
