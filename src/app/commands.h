/* app/commands.h — the putmd subcommands. Each returns the process exit
 * status; errors in input are thrown as InputError and reported by main. */
#pragma once

#include <string>
#include <vector>

namespace putmd
{

int runEnergyCommand(const std::vector<std::string>& args);
int runRunCommand(const std::vector<std::string>& args, const std::string& commandLine);

} // namespace putmd
