#include "app/parallel_setup.h"

#include <cmath>

#include <fmt/format.h>

#include "comm/link_probe.h"
#include "core/real.h"
#include "core/units.h"
#include "domdec/dd_grid.h"
#include "domdec/update_groups.h"
#include "io/text.h"
#include "nonbonded/interaction_const.h"
#include "pme/grid_size.h"
#include "pme/pme.h"
#include "run/md_setup.h"
#include "core/error.h"

namespace putmd
{

/* The halo the run's domain decomposition will need: its pair-list radius
 * plus twice the largest update-group radius (DomainDecomposition). The
 * radius is the one the run will choose (prepareMd: the Verlet buffer, with
 * nstlist raised where that is safe; steep: the cut-off), not a guess: the
 * PME-rank estimate must not pick a PP count the run then cannot decompose
 * (rnase-amber-cubic on 1,024 ranks: rc + 0.1 nm said 975 PP ranks fit,
 * the run's rlist 1.156 nm says they do not). A continuation keeps its
 * checkpoint's rlist, the same unless an NVE run's temperature moved. */
double ddHaloDistance(const SystemInputs& in)
{
    const std::vector<Vec3<real>> x(in.coordinates.x.begin(), in.coordinates.x.end());
    double rlist = std::max(in.mdp.rcoulomb, in.mdp.rvdw);
    if (in.mdp.integrator != Integrator::Steep)
    {
        std::vector<Vec3<real>> v(in.coordinates.v.begin(), in.coordinates.v.end());
        v.resize(x.size());
        rlist = prepareMd(in.topology, in.mdp, topologyConstraintDof(in.topology), in.coordinates.box, v).rlist;
    }
    return rlist + 2 * makeUpdateGroups(in.topology, x, in.coordinates.box).maxRadius;
}

namespace
{

int parseNpme(const std::string& value, int worldSize)
{
    const auto n = tryParseInt(value);
    if (!n || *n < 0 || *n > worldSize / 2)
    {
        throw InputError(fmt::format("putmd run: --npme '{}' is not usable with {} ranks; valid: auto, measure, estimate "
                                     "or 0..{} (at most half the ranks, so that every PME rank serves at least one PP rank)",
                                     value, worldSize, worldSize / 2));
    }
    return static_cast<int>(*n);
}

double ddHalo(const SystemInputs& in, const ParallelRequest& request)
{
    return request.haloDistance > 0 ? request.haloDistance : ddHaloDistance(in);
}

/* The domain grid of numPp ranks, or nothing and (in *problem) why they
 * cannot decompose the box. */
std::optional<DdGrid> tryDdGrid(const SystemInputs& in, const ParallelRequest& request, double halo, int numPp,
                                std::string* problem = nullptr)
{
    try
    {
        return chooseDdGrid(in.coordinates.box, numPp, halo, request.ddGrid);
    }
    catch (const std::exception& e)
    {
        if (problem != nullptr)
        {
            *problem = e.what();
        }
        return std::nullopt;
    }
}

/* Why numPp ranks cannot decompose the box (empty: they can). */
std::string ddProblem(const SystemInputs& in, const ParallelRequest& request, double halo, int numPp)
{
    std::string problem;
    tryDdGrid(in, request, halo, numPp, &problem);
    return problem;
}

NpmeChoice estimateWithHalo(const SystemInputs& in, const ParallelRequest& request, int n, double halo)
{
    const MdpOptions& mdp = in.mdp;
    NpmeModelInput    model;
    model.worldSize    = n;
    model.numAtoms     = in.topology.numAtoms;
    const double rc    = std::max(mdp.rcoulomb, mdp.rvdw);
    const double density = in.topology.numAtoms / in.coordinates.box.volume();
    model.pairsPerAtom = 0.5 * density * 4.0 / 3.0 * units::pi * rc * rc * rc;
    model.pmeGrid      = choosePmeGrid(in.coordinates.box, mdp).n;
    model.pmeOrder     = mdp.pmeOrder;
    model.box          = in.coordinates.box;
    model.haloDistance = halo;
    model.bytesPerReal = sizeof(real);
    model.ddGrid       = [&](int numPp) -> std::optional<DdGrid> {
        if (numPp < n && !comm::backendSupportsSubgroups(request.backend))
        {
            return std::nullopt; // shmem: no separate PME ranks
        }
        return tryDdGrid(in, request, halo, numPp);
    };
    // the network's costs: measured when the ranks span machines (collective)
    const comm::NetworkCost net = n > 1 ? comm::probeNetworkCost() : comm::NetworkCost{};
    return chooseNpme(model, net);
}

} // namespace

NpmeChoice estimateNpme(const SystemInputs& in, const ParallelRequest& request, int worldSize)
{
    return estimateWithHalo(in, request, worldSize, ddHalo(in, request));
}

bool npmeUsable(const SystemInputs& in, const ParallelRequest& request, int worldSize, int npme)
{
    if (npme == 0)
    {
        return true;
    }
    return npme > 0 && npme <= worldSize / 2 && comm::backendSupportsSubgroups(request.backend)
           && ddProblem(in, request, ddHalo(in, request), worldSize - npme).empty();
}

ParallelSetup setUpParallelRun(const SystemInputs& in, const ParallelRequest& request)
{
    ParallelSetup s;
    s.world                = std::make_unique<comm::Communicator>(request.backend);
    const int        n     = s.world->size();
    const MdpOptions& mdp  = in.mdp;
    const bool       isPme = mdp.coulombType == CoulombType::Pme;
    s.layout.worldSize     = n;

    std::optional<TransposeAlgorithm> transpose;
    if (request.transpose != "auto")
    {
        transpose = parseTransposeAlgorithm(request.transpose);
        if (!transpose)
        {
            throw InputError("putmd run: --fft-transpose '" + request.transpose
                             + "' is not an algorithm; valid: alltoallv, pairwise, rma, shm (all PME ranks on one machine), auto");
        }
    }
    if (!isPme)
    {
        if (request.npme != "auto" && request.npme != "0")
        {
            throw InputError(mdp.where("coulombtype"), "--npme " + request.npme
                                                           + " needs coulombtype = PME; without PME there is nothing "
                                                             "for PME ranks to do (use --npme 0 or leave it out)");
        }
        s.description = "PME: none (coulombtype is not PME)";
        return s;
    }
    const PmeGridChoice grid = choosePmeGrid(in.coordinates.box, mdp);
    std::string         why;
    if (request.npme == "auto")
    {
        const NpmeChoice c = estimateWithHalo(in, request, n, ddHalo(in, request));
        s.layout.npme      = c.npme;
        why                = "automatic: " + c.reason;
    }
    else
    {
        s.layout.npme = parseNpme(request.npme, n);
        why           = request.npmeWhy.empty() ? "from --npme" : request.npmeWhy;
        if (s.layout.npme > 0)
        {
            const std::string problem = ddProblem(in, request, ddHalo(in, request), n - s.layout.npme);
            if (!problem.empty())
            {
                throw InputError(fmt::format("putmd run: --npme {} leaves {} PP ranks of {}, and {}", s.layout.npme,
                                             n - s.layout.npme, n, problem));
            }
        }
    }
    if (s.layout.npme > 0 && !comm::backendSupportsSubgroups(request.backend))
    {
        throw InputError(fmt::format("putmd run: --comm {} cannot be used with separate PME ranks (--npme {}): OpenSHMEM "
                                     "allocates symmetric memory on all ranks at once; use --comm rma or shm, or --npme 0",
                                     comm::backendName(request.backend), s.layout.npme));
    }
    if (s.layout.npme > 0)
    {
        const bool pme = s.layout.isPme(s.world->rank());
        s.group        = s.world->split(pme ? 1 : 0);
    }
    comm::Communicator& pmeGroup = s.layout.npme > 0 ? *s.group : *s.world;
    const bool          pmeSide  = s.layout.npme == 0 || s.layout.isPme(s.world->rank());
    const int           pmeRanks = s.layout.npme > 0 ? s.layout.npme : n;
    const auto          pencils  = choosePencilGrid(pmeRanks, grid.n);
    std::string         howTranspose = "from --fft-transpose";
    if (transpose)
    {
        s.transpose = *transpose;
    }
    else if (pmeRanks == 1)
    {
        s.transpose  = TransposeAlgorithm::Alltoallv;
        howTranspose = "one PME rank: no transposes";
    }
    else
    {
        // only the PME ranks time the algorithms; the PP ranks never transpose
        if (pmeSide)
        {
            s.transpose = PencilFft3d::chooseFastest(pmeGroup.mpiComm(), grid.n, pencils);
        }
        // and tell the PP ranks, for the log
        const long chosen = s.world->maxLong(comm::Phase::Setup, pmeSide ? static_cast<long>(s.transpose) : -1);
        s.transpose       = static_cast<TransposeAlgorithm>(chosen);
        howTranspose = "automatic: the fastest of pairwise, rma and, where the PME ranks share a machine, shm (no collective "
                       "call) timed at start-up";
    }
    // one process row: slabs, with the column transpose only (pencil_fft.h)
    s.description = fmt::format("PME: {} ({}); {} grid {}x{} on {} rank{}, grid {}x{}x{}; 3D-FFT transposes: {} ({})",
                                s.layout.npme == 0 ? std::string("on every rank (--npme 0)")
                                                   : fmt::format("{} separate PME rank{} (--npme {})", s.layout.npme,
                                                                 s.layout.npme > 1 ? "s" : "", s.layout.npme),
                                why, pencils[1] == 1 ? "slab" : "pencil", pencils[0], pencils[1], pmeRanks, pmeRanks > 1 ? "s" : "", grid.n[0], grid.n[1],
                                grid.n[2], transposeAlgorithmName(s.transpose), howTranspose);
    return s;
}

void runPmeRankOf(const SystemInputs& in, ParallelSetup& setup, int numThreads)
{
    const InteractionConst ic     = makeInteractionConst(in.mdp);
    PmeParameters          params = pmeParametersFor(in.coordinates.box, in.mdp, ic.ewaldCoeff, ic.epsfac);
    params.fftPlanning            = fftPlanningFromEnvironment(); // as the PP ranks' PME (md_runner.cpp)
    runPmeRank(*setup.world, *setup.group, setup.layout, params, setup.transpose, in.topology.totalCharge(), numThreads);
}

} // namespace putmd
