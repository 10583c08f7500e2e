/* app/main.cpp — the `putmd` command: dispatches subcommands and turns every
 * error into a message and a non-zero exit status (never a crash). */
#include <malloc.h>

#include <exception>
#include <chrono>
#include <iostream>
#include <thread>
#include <new>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/rank_layout.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "core/real.h"
#include "timing/stage_timer.h"

#if PUTMD_SMPI
extern "C" unsigned int smpi_sleep(unsigned int secs); // SimGrid's simulated sleep
#endif

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

namespace
{

int dispatch(int argc, char** argv);

// an input error this rank left to rank 0 to print
bool g_inputErrorLeftToRoot = false;

/* With several ranks an error on one must stop all (never a hang): the
 * message is printed (once, by the first rank, for input errors, which every
 * rank finds alike) and the job aborted. The other ranks wait a moment
 * before aborting on an input error, so that the abort does not kill the
 * first rank before its message is out (seen with 8 ranks on 2 cores). */
int finish(int code)
{
    if (code != 0 && putmd::comm::Communicator::parallel() && putmd::comm::Communicator::worldSize() > 1)
    {
        std::cerr.flush();
        if (g_inputErrorLeftToRoot)
        {
#if PUTMD_SMPI
            // simulated ranks share one thread: a real nap would stop them
            // all (1,023 naps of 3 s took 51 minutes); a simulated one lets
            // rank 0 print meanwhile
            smpi_sleep(3);
#else
            std::this_thread::sleep_for(std::chrono::seconds(3));
#endif
        }
        putmd::comm::Communicator::abortJob(code);
    }
    putmd::comm::Communicator::finalize();
    return code;
}

bool quietRank()
{
    return putmd::comm::Communicator::worldRank() != 0;
}

} // namespace

int main(int argc, char** argv)
{
    // Blocks of 128 KiB and more are mapped and given back to the system
    // when freed. glibc would otherwise raise this threshold after the first
    // large free and keep later large blocks (pair lists rebuilt every
    // nstlist steps) in a heap that never shrinks, so the resident size
    // would follow the high-water mark of the heap instead of the live data
    // (33k-atom rnase: 73 -> 56 MB peak; no measurable cost in speed).
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    // -ntmpi: a run started without mpirun may start its ranks itself (and
    // then this process becomes the launcher), before MPI is initialised
    if (argc > 1 && std::string(argv[1]) == "run")
    {
        try
        {
            putmd::chooseRankLayout(std::vector<std::string>(argv + 2, argv + argc));
        }
        catch (const putmd::InputError& e)
        {
            std::cerr << "error: " << e.what() << "\n";
            return 1;
        }
    }
    putmd::comm::Communicator::initialize(&argc, &argv);
    return finish(dispatch(argc, argv));
}

namespace
{

int dispatch(int argc, char** argv)
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
        putmd::stageTimingEnabled(); // PUTMD_TIMING checked before anything is timed
        if (command == "energy")
        {
            if (putmd::comm::Communicator::worldSize() > 1)
            {
                throw putmd::InputError("putmd energy runs on one rank; run it without mpirun");
            }
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
        if (!quietRank())
        {
            std::cerr << "error: " << e.what() << "\n";
        }
        g_inputErrorLeftToRoot = quietRank();
        return 1;
    }
    catch (const putmd::SimulationError& e)
    {
        std::cerr << (quietRank() ? "rank " + std::to_string(putmd::comm::Communicator::worldRank()) + ": " : std::string())
                  << "error: the simulation failed: " << e.what() << "\n";
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

} // namespace
