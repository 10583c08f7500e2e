/* app/main.cpp — the `putmd` command: dispatches subcommands and turns every
 * error into a message and a non-zero exit status (never a crash). */
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "core/real.h"

namespace
{

void printHelp()
{
    std::cout << "putmd " << PUTMD_VERSION << " (" << putmd::precisionName() << " precision)\n"
              << "usage: putmd COMMAND [options]\n"
              << "commands:\n"
              << "  run       molecular dynamics or energy minimisation (as gmx mdrun)\n"
              << "  energy    single-point energies and forces (as gmx mdrun -rerun on one frame)\n"
              << "  version   print the version\n"
              << "'putmd COMMAND -h' lists a command's options; see docs/ for the user guide.\n";
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help")
    {
        printHelp();
        return args.empty() ? 1 : 0;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    try
    {
        if (command == "energy")
        {
            return putmd::runEnergyCommand(args);
        }
        if (command == "run")
        {
            std::string line = "putmd";
            for (int i = 1; i < argc; i++)
            {
                line += std::string(" ") + argv[i];
            }
            return putmd::runRunCommand(args, line);
        }
        if (command == "version" || command == "--version")
        {
            std::cout << "putmd " << PUTMD_VERSION << " (" << putmd::precisionName() << " precision)\n";
            return 0;
        }
        std::cerr << "putmd: unknown command '" << command << "'; valid commands: run, energy, version\n";
        return 1;
    }
    catch (const putmd::InputError& e)
    {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
    catch (const putmd::SimulationError& e)
    {
        std::cerr << "error: the simulation failed: " << e.what() << "\n";
        return 1;
    }
    catch (const std::bad_alloc&)
    {
        std::cerr << "error: out of memory\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "internal error: " << e.what() << "\n(this is a bug in putmd; please report it with the inputs)\n";
        return 3;
    }
}
