/* run/groups.h — atom groups named as GROMACS's default index groups.
 *
 * Used by tc-grps (temperature coupling) and compressed-x-grps. A name may
 * be: System; a default group — Protein, non-Protein, Water, non-Water,
 * Ion, Water_and_ions, SOL; a molecule type name from [ molecules ]; or a
 * residue name. Membership is by residue and molecule names as gmx
 * make_ndx defines its default groups. With an index file (-n), the
 * file's groups only, as grompp.
 */
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "topology/topology.h"

namespace putmd
{

/* Atoms of the named group, or an InputError at `where` listing valid names. */
std::vector<bool> atomsOfGroup(const Topology& top, const std::string& name, const SourceLocation& where);

/* Partition into the listed groups (each atom in exactly one): returns the
 * group index of every atom, or an InputError naming an atom left out or
 * claimed twice. */
std::vector<int> partitionIntoGroups(const Topology& top, const std::vector<std::string>& names, const SourceLocation& where);

} // namespace putmd
