/* app/input_options.h — the input-file options every command shares
 * (-p, -c, -f, -I) and the InputPaths they describe, including GMXLIB
 * (GROMACS's force-field search path, read from the environment as
 * GROMACS does). */
#pragma once

#include <vector>

#include "app/command_line.h"
#include "run/system_inputs.h"

namespace putmd
{

/* -p, -c, -f and -I with their defaults and help; coordinatesHelp lets a
 * command say what it does with velocities. */
std::vector<OptionSpec> inputFileOptions(const std::string& coordinatesHelp);

InputPaths inputPathsFrom(const ParsedOptions& options);

} // namespace putmd
