/* app/cmd_run.cpp — `putmd run`: molecular dynamics or minimisation from
 * GROMACS inputs, with GROMACS's output names under -deffnm. */
#include <algorithm>
#include <cstdlib>
#include <thread>
#include <iostream>
#include <sstream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/input_options.h"
#include "io/text.h"
#include "run/md_runner.h"
#include "run/minimize.h"
#include "run/stop_request.h"
#include "run/system_inputs.h"

namespace putmd
{

namespace
{

std::vector<OptionSpec> runOptions()
{
    auto specs = inputFileOptions("starting coordinates (.gro), velocities used when present");
    specs.push_back({ "deffnm", "NAME", "output prefix: NAME.log, NAME.csv, NAME.xtc, NAME.trr, NAME.gro", "md" });
    specs.push_back({ "nsteps", "N", "number of steps, overriding the mdp's nsteps", "" });
    specs.push_back({ "nt", "N", "threads (0: one per core of this machine)", "0" });
    specs.push_back({ "maxh", "HOURS", "stop cleanly at 99% of this wall time (as gmx mdrun -maxh)", "-1" });
    specs.push_back({ "h", "", "print this help", "" });
    return specs;
}

} // namespace

int runRunCommand(const std::vector<std::string>& args, const std::string& commandLine)
{
    const auto  specs = runOptions();
    const auto  opt   = parseOptions("run", specs, args);
    if (opt.has("h"))
    {
        std::cout << usage("run", "molecular dynamics (integrator md) or energy minimisation (steep)", specs);
        return 0;
    }
    const InputPaths paths = inputPathsFrom(opt);
    RunOptions run;
    run.deffnm      = opt.get("deffnm");
    run.commandLine = commandLine;
    if (opt.has("nsteps"))
    {
        const auto n = tryParseInt(opt.get("nsteps"));
        if (!n || *n < 0)
        {
            throw InputError("putmd run: -nsteps needs a non-negative integer, found '" + opt.get("nsteps") + "'");
        }
        run.nstepsOverride = *n;
    }
    const auto nt = tryParseInt(opt.get("nt"));
    if (!nt || *nt < 0 || *nt > 1024)
    {
        throw InputError("putmd run: -nt needs a thread count from 0 (one per core) to 1024, found '" + opt.get("nt") + "'");
    }
    run.numThreads = *nt > 0 ? static_cast<int>(*nt) : std::max(1u, std::thread::hardware_concurrency());
    const auto maxh = tryParseDouble(opt.get("maxh"));
    if (!maxh || (*maxh <= 0 && *maxh != -1))
    {
        throw InputError("putmd run: -maxh needs a positive number of hours (or -1 for no limit), found '" + opt.get("maxh") + "'");
    }
    run.maxHours = *maxh;
    installStopSignalHandlers();
    SystemInputs in = loadSystem(paths);
    for (const auto& w : in.warnings)
    {
        std::cerr << "warning: " << w << "\n";
    }
    if (in.mdp.integrator == Integrator::Steep)
    {
        minimize(in, run);
    }
    else
    {
        runMd(in, run);
    }
    std::cout << "wrote " << run.deffnm << ".log and the other outputs\n";
    return 0;
}

} // namespace putmd
