/* io/index_file.h — GROMACS index files (.ndx): named atom groups.
 *
 *   [ Protein ]
 *   1 2 3 4 5 ...
 *   [ Frozen ]
 *   ...
 *
 * Atom numbers are 1-based, any number per line; a group may span lines
 * and be empty. With `-n FILE` the groups of the mdp's tc-grps,
 * freezegrps and compressed-x-grps are looked up in the file only (as
 * grompp does: the default groups are not made then), by name, ignoring
 * case, the first group of that name. Errors name the file and line.
 */
#pragma once

#include <string>
#include <vector>

#include "topology/topology.h"

namespace putmd
{

std::vector<IndexGroup> parseIndexFile(const std::string& text, const std::string& path);
std::vector<IndexGroup> readIndexFile(const std::string& path);

} // namespace putmd
