/* topology/topology_parser.h — turns preprocessed topology lines into
 * force-field tables, molecule types and the system's molecule list.
 *
 * The parser is a state machine over [ directive ] headers. Force-field
 * directives are accepted before the first [ moleculetype ] (and, as grompp
 * allows, between molecule types); molecule directives need a current
 * molecule type. Unsupported directives and function types are errors that
 * name the directive, the file and the line, and list what is supported.
 */
#pragma once

#include <vector>

#include "io/preprocessor.h"
#include "topology/moleculetype.h"

namespace putmd
{

/* path names the topology in errors that concern the whole file. */
TopologyFile parseTopology(const std::vector<SourceLine>& lines, const std::string& path = "");

} // namespace putmd
