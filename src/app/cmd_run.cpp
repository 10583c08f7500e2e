/* app/cmd_run.cpp — `putmd run`: molecular dynamics or minimisation from
 * GROMACS inputs, with GROMACS's output names under -deffnm. */
#include <algorithm>
#include <array>
#include <memory>
#include <cstdlib>
#include <thread>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/input_options.h"
#include "app/npme_trial.h"
#include "app/parallel_setup.h"
#include "app/rank_layout.h"
#include "app/shared_inputs.h"
#include "comm/communicator.h"
#include "comm/link_probe.h"
#include "io/text.h"
#include "run/md_runner.h"
#include "run/minimize.h"
#include "run/stop_request.h"
#include "run/system_inputs.h"

namespace putmd
{

std::vector<OptionSpec> runCommandOptions()
{
    auto specs = inputFileOptions("starting coordinates (.gro), velocities used when present");
    specs.push_back({ "deffnm", "NAME", "output prefix: NAME.log, NAME.csv, NAME.xtc, NAME.trr, NAME.gro", "md" });
    specs.push_back({ "nsteps", "N", "number of steps, overriding the mdp's nsteps", "" });
    specs.push_back({ "nt", "N", "threads per rank (0: the cores of this machine shared by the ranks on it)", "0" });
    specs.push_back({ "maxh", "HOURS", "stop cleanly at 99% of this wall time (as gmx mdrun -maxh)", "-1" });
    specs.push_back({ "cpt", "MINUTES", "write NAME.cpt every MINUTES of wall time (0: at every pair-search step; -1: never) and at the end",
                      "15" });
    specs.push_back({ "cpi", "CPT", "continue the run saved in this checkpoint (appending to its output files)", "" });
    specs.push_back({ "noappend", "", "with -cpi: start new output files instead of appending", "" });
    specs.push_back({ "perf", "JSON", "write the performance report (stage timings over ranks, communication) as JSON "
                                      "(docs/performance-report.md)", "" });
    specs.push_back({ "dd", "NX NY NZ", "domain grid (default: chosen for the rank count; -dd 1 1 1 decomposes on one rank)",
                      "", false, false, 3 });
    specs.push_back({ "comm", "BACKEND",
                      "communication backend between ranks: auto, p2p, rma, shm, shmem, shm+p2p or shm+rma (auto: shm "
                      "when every rank is on this machine, else shm within each machine and the faster of p2p and "
                      "rma between machines, measured at start-up)",
                      "auto" });
    specs.push_back({ "npme", "K",
                      "separate PME ranks: a count (0: PME on every rank, grid in pencils), auto (npme 0 and the "
                      "estimate's best layout with PME ranks timed at start-up, when the run is long enough), measure "
                      "(timed always) or estimate (from the estimated PME cost, not timed)",
                      "auto" });
    specs.push_back({ "fft-transpose", "ALG", "3D-FFT transposes: alltoallv, pairwise, rma, shm (all PME ranks on one machine) or auto (timed at start-up)",
                      "auto" });
    specs.push_back({ "halo", "SCHEDULE", "halo exchange: staged (x, y, z pulses) or direct (every zone)", "staged" });
    specs.push_back({ "dlb", "MODE",
                      "dynamic load balancing: auto (on once the measured imbalance costs more than 5% of the step), "
                      "yes or no",
                      "auto" });
    specs.push_back({ "ntmpi", "N",
                      "ranks putmd starts itself on this machine through mpirun, when run without it: a count, auto "
                      "(every layout of ranks x threads on this machine's cores timed at start-up and the fastest "
                      "run, when the run is long enough; else one rank with threads) or measure (timed always); "
                      "under mpirun the ranks are mpirun's",
                      "auto" });
    specs.push_back({ "h", "", "print this help", "" });
    return specs;
}

int runRunCommand(const std::vector<std::string>& args, const std::string& commandLine)
{
    const auto  specs = runCommandOptions();
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
    if (!isNtmpiValue(opt.get("ntmpi")))
    {
        throw InputError("putmd run: -ntmpi '" + opt.get("ntmpi") + "' is not a rank count; valid: auto, measure or 1..1024");
    }
    if (comm::Communicator::startedByLauncher() && opt.get("ntmpi") != "auto")
    {
        throw InputError("putmd run: -ntmpi " + opt.get("ntmpi") + ": the launcher (mpirun) started "
                         + std::to_string(comm::Communicator::worldSize())
                         + (comm::Communicator::worldSize() == 1 ? " rank" : " ranks")
                         + " and sets the layout; give the rank count to mpirun (-np N), or run putmd without "
                           "mpirun and let -ntmpi start the ranks");
    }
    run.layoutChoice = rankLayoutReason();
    if (run.layoutChoice.empty())
    {
        const int ranks  = comm::Communicator::worldSize();
        run.layoutChoice = comm::Communicator::startedByLauncher()
                                   ? std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " started by the launcher"
                                   : "1 rank";
    }
    const auto nt = tryParseInt(opt.get("nt"));
    if (!nt || *nt < 0 || *nt > 1024)
    {
        throw InputError("putmd run: -nt needs a thread count from 0 (one per core) to 1024, found '" + opt.get("nt") + "'");
    }
    run.numThreads   = static_cast<int>(*nt);
    run.threadChoice = "set with -nt";
    const auto maxh = tryParseDouble(opt.get("maxh"));
    if (!maxh || (*maxh <= 0 && *maxh != -1))
    {
        throw InputError("putmd run: -maxh needs a positive number of hours (or -1 for no limit), found '" + opt.get("maxh") + "'");
    }
    run.maxHours = *maxh;
    const auto cpt = tryParseDouble(opt.get("cpt"));
    if (!cpt || (*cpt < 0 && *cpt != -1))
    {
        throw InputError("putmd run: -cpt needs minutes >= 0, or -1 for no checkpoints, found '" + opt.get("cpt") + "'");
    }
    run.checkpointMinutes = *cpt;
    run.continueFrom      = opt.get("cpi");
    run.perfJson          = opt.get("perf");
    run.append            = !opt.has("noappend");
    if (opt.has("noappend") && run.continueFrom.empty())
    {
        throw InputError("putmd run: -noappend only makes sense with -cpi");
    }
    if (opt.has("dd"))
    {
        std::array<int, 3> g{};
        const auto&        v = opt.all("dd");
        for (int d = 0; d < 3; d++)
        {
            const auto n = tryParseInt(v[d]);
            if (!n || *n < 1)
            {
                throw InputError("putmd run: -dd needs three positive domain counts (e.g. -dd 2 1 1), found '" + v[d] + "'");
            }
            g[d] = static_cast<int>(*n);
        }
        run.dd.grid = g;
        run.useDd   = true;
    }
    // --comm auto: every rank on one machine talks through shared-memory
    // windows (the fastest backend measured there, docs/performance.md);
    // ranks spread over machines use shm within each machine and, between
    // machines, the faster of p2p and rma measured now (comm/link_probe.h)
    std::optional<comm::Backend> backend;
    if (opt.get("comm") == "auto")
    {
        const int  ranks   = comm::Communicator::worldSize();
        const bool oneNode = comm::Communicator::ranksOnThisNode() == ranks;
        if (PUTMD_SMPI && ranks == 1)
        {
            // one simulated rank: nothing to send; shared memory is not
            // simulated, so not the one-machine choice below
            backend        = comm::Backend::P2p;
            run.commChoice = "automatic under SMPI: one rank, p2p (nothing is sent)";
        }
        else if (PUTMD_SMPI)
        {
            // simulated cluster: no shared memory; p2p or rma as measured
            // on the simulated network
            const auto probe = comm::probeLinksAcrossMachines();
            backend          = probe.across;
            run.commChoice   = fmt::format(
                    "automatic under SMPI (shared memory is not simulated): {} ranks on {} simulated hosts, {} "
                    "(measured at start-up, 64 KiB to a rank on another host: p2p {:.0f} us, rma {:.0f} us)",
                    ranks, probe.machines, comm::backendName(probe.across), probe.p2pSeconds * 1e6,
                    probe.rmaSeconds * 1e6);
        }
        else if (oneNode)
        {
            backend        = comm::Backend::Shm;
            run.commChoice = fmt::format("automatic: all {} ranks on one machine", ranks);
        }
        else
        {
            const auto probe = comm::probeLinksAcrossMachines();
            backend          = probe.across == comm::Backend::Rma ? comm::Backend::ShmRma : comm::Backend::ShmP2p;
            run.commChoice   = fmt::format(
                    "automatic: {} ranks on {} machines ({}): shm between ranks of one machine, {} between "
                    "machines (measured at start-up, 64 KiB to a rank on another machine: p2p {:.0f} us, "
                    "rma {:.0f} us)",
                    ranks, probe.machines, probe.ranksPerMachine, comm::backendName(probe.across),
                    probe.p2pSeconds * 1e6, probe.rmaSeconds * 1e6);
        }
    }
    else
    {
        backend        = comm::parseBackend(opt.get("comm"));
        run.commChoice = "set with --comm";
    }
    if (!backend)
    {
        throw InputError("putmd run: --comm '" + opt.get("comm") + "' is not a backend; valid: auto, p2p, rma, shm, shmem, shm+p2p, shm+rma");
    }
    if (!comm::backendAvailable(*backend))
    {
        throw InputError(std::string("putmd run: --comm ") + comm::backendName(*backend)
                         + (PUTMD_SMPI ? " cannot run under SimGrid's SMPI, which simulates messages and one-sided "
                                         "operations but not shared memory or OpenSHMEM (docs/scaling.md); use p2p, "
                                         "rma or auto"
                                       : " is not available in this build or on this machine (see "
                                         "docs/communication.md); use p2p, rma or shm"));
    }
    if (opt.get("halo") != "staged" && opt.get("halo") != "direct")
    {
        throw InputError("putmd run: --halo '" + opt.get("halo") + "' is not a schedule; valid: staged, direct");
    }
    run.dd.schedule = opt.get("halo") == "direct" ? HaloSchedule::Direct : HaloSchedule::Staged;
    const auto dlb = parseDlbMode(opt.get("dlb"));
    if (!dlb)
    {
        throw InputError("putmd run: -dlb '" + opt.get("dlb") + "' is not a mode; valid: auto, yes, no");
    }
    run.dd.dlb = *dlb;
    if (PUTMD_SMPI && run.numThreads > 1)
    {
        throw InputError(fmt::format("putmd run: -nt {}: SimGrid's SMPI simulates ranks, not the threads inside "
                                     "them (docs/scaling.md); use -nt 1 and more simulated ranks",
                                     run.numThreads));
    }
    if (PUTMD_SMPI)
    {
        run.numThreads   = 1;
        run.threadChoice = "one thread per simulated rank (SMPI)";
    }
    if (run.numThreads == 0)
    {
        // the default layout: the cores of this machine shared by the ranks
        // on it (one rank with threads is the fastest layout on one machine,
        // docs/performance.md)
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const int ranks = comm::Communicator::ranksOnThisNode();
        run.numThreads  = std::max(1, cores / ranks);
        run.threadChoice = "automatic: " + std::to_string(cores) + " cores and " + std::to_string(ranks)
                           + (ranks == 1 ? " rank" : " ranks") + " on this machine";
    }
    installStopSignalHandlers();
    const std::shared_ptr<const SystemInputs> inputs = loadSystemForRank(paths);
    const SystemInputs&                       in     = *inputs;
    for (const auto& w : in.warnings)
    {
        std::cerr << "warning: " << w << "\n";
    }
    const bool steep = in.mdp.integrator == Integrator::Steep;
    ParallelSetup parallel;
    if (comm::Communicator::worldSize() > 1 || run.useDd)
    {
        const std::string npme = opt.get("npme");
        if (steep && !isNpmeMode(npme) && npme != "0")
        {
            throw InputError("putmd run: --npme " + opt.get("npme") + ": energy minimisation (steep) runs without "
                             "separate PME ranks; leave --npme out (or give 0)");
        }
        ParallelRequest request;
        request.backend   = *backend;
        request.npme      = steep ? "0" : npme;
        request.transpose = opt.get("fft-transpose");
        request.ddGrid    = run.dd.grid;
        if (!steep && isNpmeMode(npme))
        {
            // the estimate, the measured choice and the set-up all need it
            request.haloDistance = ddHaloDistance(in);
            const NpmeDecision d = decideNpme(in, request, run, npme);
            request.npme         = d.npme;
            request.npmeWhy      = d.why;
        }
        parallel          = setUpParallelRun(in, request);
        if (parallel.world->rank() == 0)
        {
            std::cout << parallel.description << "\n";
        }
        if (parallel.isPmeRank())
        {
            runPmeRankOf(in, parallel, run.numThreads);
            return 0;
        }
        run.comm      = &parallel.pp();
        run.world     = parallel.world.get();
        run.pme       = parallel.layout;
        run.transpose = parallel.transpose;
        run.pmeChoice = parallel.description;
    }
    else if (!isNpmeMode(opt.get("npme")) && opt.get("npme") != "0")
    {
        throw InputError("putmd run: --npme " + opt.get("npme")
                         + " needs several ranks (start putmd under mpirun with more ranks than PME ranks)");
    }
    if (steep)
    {
        minimize(in, run);
    }
    else
    {
        runMd(in, run);
    }
    if (comm::Communicator::worldRank() == 0)
    {
        std::cout << "wrote " << run.deffnm << ".log and the other outputs\n";
    }
    return 0;
}

} // namespace putmd
