/* app/commands.h — the putmd subcommands. Each returns the process exit
 * status; errors in input are thrown as InputError and reported by main. */
#pragma once

#include <string>
#include <vector>

#include "app/command_line.h"

namespace putmd
{

int runEnergyCommand(const std::vector<std::string>& args);
/* The options of `putmd run` (also parsed before MPI starts, app/rank_layout.h). */
std::vector<OptionSpec> runCommandOptions();
int runRunCommand(const std::vector<std::string>& args, const std::string& commandLine);

} // namespace putmd
