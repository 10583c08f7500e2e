/* Domain-decomposed forces against the single-rank ForceCalculator, run
 * under mpirun with several rank counts: the double build (atom-pair lists,
 * bar 1e-9) and the mixed build (cluster lists searched over the local
 * atoms with zone masks, single-precision forces: bar kTolerance below).
 *
 * Every rank reads the same system, so each can compute the plain
 * single-rank forces itself; the decomposed forces are gathered to rank 0
 * and compared atom by atom, and the energy terms and virial summed over
 * ranks are compared term by term. This is repeated after moving the atoms
 * (a uniform shift that makes many groups migrate and cross the periodic
 * edge, then random displacements), for every available backend and both
 * halo schedules: backends must give identical bits, schedules agree to
 * rounding.
 *
 * Usage: putmd_dd_force_tests SYSTEM_DIR [conf.gro] [--pme-layouts] [--staggered]
 *            [--backends p2p,rma,...]   (under mpirun -np N)
 * --pme-layouts adds every PME layout that fits (npme 0, 1, 2), each with
 * every transpose algorithm and backend, on the first two frames (the
 * input and the shift; the backend loop has the random moves).
 * --backends limits the backends (default: every available one); CMake
 * gives most entries p2p and one other backend, a few all of them
 * (tests/domdec/CMakeLists.txt).
 * PUTMD_DD_TEST_FRAMES=N keeps only the first N of the three frames.
 */
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "comm/communicator.h"
#include "core/random.h"
#include "domdec/domdec.h"
#include "nonbonded/interaction_const.h"
#include "pme/pme_ranks.h"
#include "run/force_calculator.h"
#include "run/system_inputs.h"

using namespace putmd;
using RVec = Vec3<real>;

namespace
{

/* Decomposed against one rank: the same arithmetic summed in another order
 * (double: 1e-9 relative; mixed: float forces, 1e-4 of the RMS force and
 * relative per term, the mixed build's bar against GROMACS). Halo schedules against each other: rounding. The
 * pair count is compared where both sides list atom pairs (double). */
constexpr bool   kDouble             = std::is_same_v<real, double>;
constexpr double kTolerance          = kDouble ? 1e-9 : 1e-4;
constexpr double kScheduleTolerance  = kDouble ? 1e-12 : 2e-6;

int failures = 0;

void check(bool ok, const std::string& what)
{
    if (!ok)
    {
        failures++;
        std::fprintf(stderr, "rank %d: FAILED: %s\n", comm::Communicator::worldRank(), what.c_str());
    }
}

struct Result
{
    std::vector<RVec>   f; // rank 0: global order
    std::vector<double> energies;
    Matrix3             virial;
    long                pairs = 0;
};

/* x + shift, each molecule moved as a whole by up to `random` per coordinate. */
std::vector<RVec> displaced(const Topology& top, const std::vector<RVec>& x, const RVec& shift, double random, uint64_t seed)
{
    std::vector<RVec> out = x;
    for (size_t i = 0; i < out.size(); i++)
    {
        out[i] += shift;
        if (random > 0)
        {
            CounterRandom rng(seed, RandomPurpose::VelocityGeneration, uint64_t(top.moleculeIndex[i]), 0);
            for (int d = 0; d < 3; d++)
            {
                out[i][d] += real(random * (2 * rng.uniform() - 1));
            }
        }
    }
    return out;
}

Result serial(const SystemInputs& in, const std::vector<RVec>& x, double rlist)
{
    ForceCalculator fc(in.topology, in.mdp, in.coordinates.box, rlist);
    ForceOutput     out;
    fc.compute(x, in.coordinates.box, true, true, out);
    Result r;
    r.f      = out.f;
    r.virial = out.virial;
    for (int t = 0; t < numEnergyTerms; t++)
    {
        r.energies.push_back(out.energies.value[t]);
    }
    r.pairs = static_cast<long>(fc.numPairs());
    return r;
}

/* How PME is spread over the ranks. */
struct PmeLayout
{
    int                npme      = 0;
    TransposeAlgorithm transpose = TransposeAlgorithm::Alltoallv;
};

/* Decomposed forces for each coordinate set, repartitioning in between.
 * With separate PME ranks the last npme ranks serve the others and return
 * empty results. */
std::vector<Result> decomposed(comm::Communicator& world, const SystemInputs& in,
                               const std::vector<std::vector<RVec>>& frames, double rlist, HaloSchedule schedule,
                               const PmeLayout& layout = {}, const DomainBounds::Flat* bounds = nullptr)
{
    DdOptions options;
    options.schedule = schedule;
    const Box& box   = in.coordinates.box;
    RankLayout ranks;
    ranks.worldSize = world.size();
    ranks.npme      = layout.npme;
    std::unique_ptr<comm::Communicator> group;
    if (layout.npme > 0)
    {
        group = world.split(ranks.isPme(world.rank()) ? 1 : 0);
        if (ranks.isPme(world.rank()))
        {
            const InteractionConst ic = makeInteractionConst(in.mdp);
            runPmeRank(world, *group, ranks, pmeParametersFor(box, in.mdp, ic.ewaldCoeff, ic.epsfac),
                       layout.transpose, in.topology.totalCharge());
            return std::vector<Result>(frames.size());
        }
    }
    comm::Communicator& comm = group ? *group : world;
    DomainDecomposition dd(comm, in.topology, frames[0], box, rlist, options);
    if (bounds && !dd.setBounds(*bounds))
    {
        throw std::runtime_error("the staggered test boundaries do not fit the grid");
    }
    ForceCalculator     fc(in.topology, in.mdp, box, rlist);
    std::vector<Result> results;
    std::vector<RVec>   xHome, vHome;
    dd.distribute(frames[0], {}, box, xHome, vHome);
    std::unique_ptr<PmeClient>   client;
    ForceCalculator::ParallelPme ppme;
    ppme.transpose = layout.transpose;
    if (layout.npme > 0)
    {
        client      = std::make_unique<PmeClient>(world, comm, ranks, dd.numHome());
        ppme.client = client.get();
    }
    fc.setDomainDecomposition(&dd, &comm, ppme);
    for (size_t k = 0; k < frames.size(); k++)
    {
        if (k > 0)
        {
            // move the home atoms to the next frame's positions, then repartition
            for (int a = 0; a < dd.numHome(); a++)
            {
                xHome[a] += frames[k][dd.globalIndex()[a]] - frames[k - 1][dd.globalIndex()[a]];
            }
            dd.repartition(xHome, vHome, box);
        }
        ForceOutput out;
        fc.compute(xHome, box, true, true, out);
        Result r;
        r.f = dd.gatherHome(out.f);
        std::vector<double> sums;
        for (int t = 0; t < numEnergyTerms; t++)
        {
            sums.push_back(out.energies.value[t]);
        }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                sums.push_back(out.virial(a, b));
        sums.push_back(kDouble ? double(dd.localPairs().j.size() + dd.nonlocalPairs().j.size()) : 0.0);
        comm.sumInRankOrder(comm::Phase::Energies, sums);
        r.energies.assign(sums.begin(), sums.begin() + numEnergyTerms);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                r.virial(a, b) = sums[numEnergyTerms + 3 * a + b];
        r.pairs = static_cast<long>(sums.back());
        results.push_back(std::move(r));
    }
    if (client)
    {
        client->stop();
    }
    return results;
}

double relativeForceDifference(const std::vector<RVec>& a, const std::vector<RVec>& b)
{
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); i++)
    {
        diff = std::max(diff, std::sqrt(norm2(DVec(a[i]) - DVec(b[i]))));
        norm += norm2(DVec(b[i]));
    }
    return diff / std::sqrt(norm / a.size());
}

/* Returns the largest relative difference seen (forces, energies, virial). */
double compare(const Result& got, const Result& want, double tol, const std::string& label, bool comparePairs)
{
    if (comm::Communicator::worldRank() != 0)
    {
        return 0;
    }
    check(got.f.size() == want.f.size(), label + ": gathered force count");
    if (got.f.size() != want.f.size())
    {
        return 1;
    }
    const double df = relativeForceDifference(got.f, want.f);
    double       worst = df;
    check(df < tol, fmt::format("{}: largest force difference {:.3e} of the RMS force (bar {:.0e})", label, df, tol));
    for (int t = 0; t < numEnergyTerms; t++)
    {
        const double e = want.energies[t], g = got.energies[t];
        worst          = std::max(worst, std::abs(g - e) / std::max(1.0, std::abs(e)));
        check(std::abs(g - e) <= tol * std::max(1.0, std::abs(e)),
              fmt::format("{}: {} {:.12g} vs {:.12g}", label, energyTermName(static_cast<EnergyTerm>(t)), g, e));
    }
    double vmax = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            vmax = std::max(vmax, std::abs(want.virial(a, b)));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            worst = std::max(worst, std::abs(got.virial(a, b) - want.virial(a, b)) / std::max(1.0, vmax));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            check(std::abs(got.virial(a, b) - want.virial(a, b)) <= tol * std::max(1.0, vmax),
                  fmt::format("{}: virial({},{}) {:.12g} vs {:.12g}", label, a, b, got.virial(a, b), want.virial(a, b)));
    if (comparePairs)
    {
        // the same pairs, except (rarely) one exactly at rlist that rounding puts
        // on the other side when the coordinates are images
        check(std::abs(got.pairs - want.pairs) <= std::max(2L, want.pairs / 1000000),
              fmt::format("{}: {} pairs in the ranks' lists, {} in the single-rank list", label, got.pairs, want.pairs));
    }
    return worst;
}

bool bitwiseEqual(const Result& a, const Result& b)
{
    if (a.f.size() != b.f.size())
    {
        return false;
    }
    for (size_t i = 0; i < a.f.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            if (a.f[i][d] != b.f[i][d])
            {
                return false;
            }
        }
    }
    return a.energies == b.energies;
}

} // namespace

int main(int argc, char** argv)
{
    comm::Communicator::initialize(&argc, &argv);
    if (argc < 2)
    {
        std::fprintf(stderr, "usage: putmd_dd_force_tests SYSTEM_DIR [conf.gro] [--pme-layouts]\n");
        comm::Communicator::finalize();
        return 2;
    }
    const std::string dir = argv[1];
    InputPaths        paths;
    paths.topology    = dir + "/topol.top";
    // --pme-layouts: also every PME layout (npme 0, 1, 2) x transposes x backends
    bool        pmeLayouts = false;
    bool        staggered  = false; // --staggered: also load-balanced (staggered) boundaries
    std::string coordinates = "conf.gro";
    std::vector<comm::Backend> backends{ comm::Backend::P2p, comm::Backend::Rma, comm::Backend::Shm,
                                         comm::Backend::Shmem };
    for (int i = 2; i < argc; i++)
    {
        const std::string arg = argv[i];
        if (arg == "--pme-layouts")
        {
            pmeLayouts = true;
        }
        else if (arg == "--staggered")
        {
            staggered = true;
        }
        else if (arg == "--backends" && i + 1 < argc)
        {
            backends.clear();
            std::string names = argv[++i];
            for (size_t at = 0; at <= names.size();)
            {
                const size_t comma = std::min(names.find(',', at), names.size());
                const auto   b     = comm::parseBackend(names.substr(at, comma - at));
                if (!b)
                {
                    std::fprintf(stderr, "--backends: '%s' is not a backend (p2p, rma, shm, shmem)\n",
                                 names.substr(at, comma - at).c_str());
                    comm::Communicator::finalize();
                    return 2;
                }
                backends.push_back(*b);
                at = comma + 1;
            }
        }
        else
        {
            coordinates = arg;
        }
    }
    paths.coordinates = dir + "/" + coordinates;
    paths.mdp         = dir + "/md.mdp";
    SystemInputs in   = loadSystem(paths);
    const double rlist = std::max(in.mdp.rcoulomb, in.mdp.rvdw) + 0.1;
    std::vector<RVec> x0;
    for (const auto& p : in.coordinates.x)
    {
        x0.push_back(RVec(p));
    }
    // frames: the input, a shift across domain and box edges, random moves
    const Box&      box = in.coordinates.box;
    const Topology& top = in.topology;
    const double    haloDistance = rlist + 2 * makeUpdateGroups(top, x0, box).maxRadius;
    // how far a group may move between two searches in the grids this run
    // decomposes into (the world and, with --pme-layouts, 1 or 2 ranks
    // fewer): a domain per halo pulse, so the narrowest P x width
    double narrowest = std::numeric_limits<double>::infinity();
    bool   multiPulse = false;
    for (int npme = 0; npme <= (pmeLayouts ? 2 : 0); npme++)
    {
        try
        {
            const DdGrid g = chooseDdGrid(box, comm::Communicator::worldSize() - npme, haloDistance, std::nullopt);
            if (comm::Communicator::worldRank() == 0)
            {
                std::printf("%d PP ranks: grid %s\n", comm::Communicator::worldSize() - npme, describeGrid(g).c_str());
            }
            for (int d = 0; d < 3; d++)
            {
                if (g.n[d] > 1)
                {
                    narrowest  = std::min(narrowest, g.pulses[d] * box.perpendicularWidth(d) / g.n[d]);
                    multiPulse = multiPulse || (g.pulses[d] > 1 && npme == 0);
                }
            }
        }
        catch (const std::exception&)
        {
        }
    }
    // less than that (with the random moves after it), as between two
    // searches: 0.8 nm for domains of one halo pulse (> 1 nm); with several
    // pulses groups cross two or three domains (migration in rounds)
    RVec shift(real(0.61), real(0.43), real(-0.29));
    // (multi-pulse grids: as far as that allows, so groups cross more than
    // one domain; other grids keep the 0.8 nm shift)
    const double scale = 0.6 * narrowest / std::sqrt(norm2(DVec(shift)));
    shift *= real(multiPulse ? scale : std::min(1.0, scale));
    std::vector<std::vector<RVec>> frames{ x0, displaced(top, x0, shift, 0, 1),
                                           displaced(top, displaced(top, x0, shift, 0, 1), RVec(), 0.08, 7) };
    // PUTMD_DD_TEST_FRAMES=1: only the input frame (for large systems in sweeps)
    if (const char* nf = std::getenv("PUTMD_DD_TEST_FRAMES"); nf && std::atoi(nf) >= 1 && size_t(std::atoi(nf)) < frames.size())
    {
        frames.resize(std::atoi(nf));
    }
    // the single-rank reference: only rank 0 compares (compare() returns
    // on the others), so only rank 0 computes it; with more ranks than
    // cores the others' copies cost as much as the decomposed runs
    std::vector<Result> want(frames.size());
    if (comm::Communicator::worldRank() == 0)
    {
        for (size_t k = 0; k < frames.size(); k++)
        {
            want[k] = serial(in, frames[k], rlist);
        }
    }
    const double tol = kTolerance;
    auto         decomposable = [&](int ranks) {
        try
        {
            chooseDdGrid(box, ranks, haloDistance, std::nullopt);
            return true;
        }
        catch (const std::exception&)
        {
            return false;
        }
    };
    std::map<std::string, std::vector<Result>> staged;
    for (auto backend : backends)
    {
        if (!comm::backendAvailable(backend) || !decomposable(comm::Communicator::worldSize()))
        {
            continue;
        }
        comm::Communicator comm(backend);
        for (auto schedule : { HaloSchedule::Staged, HaloSchedule::Direct })
        {
            const std::string name = fmt::format("{} ranks, {}, {}", comm.size(), comm::backendName(backend),
                                                 schedule == HaloSchedule::Staged ? "staged" : "direct");
            try
            {
                const auto got = decomposed(comm, in, frames, rlist, schedule);
                for (size_t k = 0; k < frames.size(); k++)
                {
                    compare(got[k], want[k], tol, fmt::format("{} {}, frame {}", dir, name, k), kDouble);
                }
                const std::string key = schedule == HaloSchedule::Staged ? "staged" : "direct";
                if (comm.rank() == 0 && staged.count(key))
                {
                    for (size_t k = 0; k < frames.size(); k++)
                    {
                        check(bitwiseEqual(got[k], staged[key][k]),
                              fmt::format("{}: frame {} differs in some bit from the {} backend", name, k,
                                          comm::backendName(comm::Backend::P2p)));
                    }
                }
                if (!staged.count(key))
                {
                    staged[key] = got;
                }
            }
            catch (const std::exception& e)
            {
                check(false, name + ": " + e.what());
            }
        }
        // schedules agree to rounding
        if (comm.rank() == 0 && staged.count("staged") && staged.count("direct"))
        {
            for (size_t k = 0; k < frames.size(); k++)
            {
                compare(staged["direct"][k], staged["staged"][k], kScheduleTolerance,
                        fmt::format("direct vs staged, frame {}", k), kDouble);
            }
        }
    }
    // Staggered boundaries (load balancing, domain_bounds.h): moved by 12
    // balances from random loads, so every column of domains has its own
    // cuts up to the stagger limit, and the same with the columns in
    // reverse order (a column's face above or below its neighbour's);
    // every pair still once (forces and the pair count against one rank),
    // both schedules, two backends.
    if (staggered && decomposable(comm::Communicator::worldSize()))
    {
        const DdGrid grid = chooseDdGrid(box, comm::Communicator::worldSize(), haloDistance, std::nullopt);
        DomainBounds moved(grid, box, haloDistance);
        CounterRandom rng(20261125, RandomPurpose::VelocityGeneration, 0, 0);
        std::vector<double> loads(grid.size());
        for (int balance = 0; balance < 12; balance++)
        {
            for (double& l : loads)
            {
                l = 0.2 + rng.uniform();
            }
            moved.balance(loads, { box.perpendicularWidth(0), box.perpendicularWidth(1), box.perpendicularWidth(2) });
        }
        double stagger = 0;
        for (int d = 0; d < 3; d++)
        {
            stagger = std::max(stagger, moved.stagger(d) * box.perpendicularWidth(d));
        }
        DomainBounds::Flat reversed = moved.flat();
        for (int d = 1; d < 3; d++)
        {
            const size_t per = grid.n[d] + 1, cols = reversed[d].size() / per;
            for (size_t c = 0; c < cols / 2; c++)
            {
                std::swap_ranges(reversed[d].begin() + c * per, reversed[d].begin() + (c + 1) * per,
                                 reversed[d].begin() + (cols - 1 - c) * per);
            }
        }
        for (auto backend : { comm::Backend::P2p, comm::Backend::Shm })
        {
            if (!comm::backendAvailable(backend))
            {
                continue;
            }
            comm::Communicator comm(backend);
            for (int variant = 0; variant < 4; variant++)
            {
                const HaloSchedule schedule = variant % 2 == 0 ? HaloSchedule::Staged : HaloSchedule::Direct;
                const bool         reverse  = variant >= 2;
                if (backend != comm::Backend::P2p && (reverse || schedule == HaloSchedule::Direct))
                {
                    continue; // shm: the first variant
                }
                const std::string name = fmt::format(
                        "{} ranks, {}, {}, staggered boundaries{} (largest stagger {:.3f} nm)", comm.size(),
                        comm::backendName(backend), schedule == HaloSchedule::Staged ? "staged" : "direct",
                        reverse ? ", columns reversed" : "", stagger);
                try
                {
                    const auto got = decomposed(comm, in, frames, rlist, schedule, {}, reverse ? &reversed : &moved.flat());
                    for (size_t k = 0; k < frames.size(); k++)
                    {
                        compare(got[k], want[k], tol, fmt::format("{} {}, frame {}", dir, name, k), kDouble);
                    }
                    if (comm.rank() == 0)
                    {
                        std::printf("%s: agrees with one rank\n", name.c_str());
                    }
                }
                catch (const std::exception& e)
                {
                    check(false, name + ": " + e.what());
                }
            }
        }
    }
    // PME layouts: npme 0 (pencils over all ranks) and separate PME ranks,
    // each with every transpose algorithm (p2p) and every backend
    // (alltoallv); within a layout every variant must give the same bits.
    const int n             = comm::Communicator::worldSize();
    int       layoutsTested = 0;
    // (the input and the shift: atoms change grid owners; the random moves
    // are the backend loop's)
    const std::vector<std::vector<RVec>> layoutFrames(frames.begin(),
                                                      frames.begin() + std::min<size_t>(2, frames.size()));
    for (int npme = 0; pmeLayouts && npme <= std::min(2, n / 2); npme++)
    {
        if (!decomposable(n - npme))
        {
            if (comm::Communicator::worldRank() == 0)
            {
                std::printf("npme %d: %d PP ranks cannot decompose this box; layout skipped\n", npme, n - npme);
            }
            continue;
        }
        layoutsTested++;
        std::vector<std::pair<comm::Backend, TransposeAlgorithm>> variants;
        for (auto t : { TransposeAlgorithm::Alltoallv, TransposeAlgorithm::Pairwise, TransposeAlgorithm::Rma,
                        TransposeAlgorithm::Shm })
        {
            variants.push_back({ comm::Backend::P2p, t });
        }
        for (auto b : { comm::Backend::Rma, comm::Backend::Shm, comm::Backend::Shmem })
        {
            if (comm::backendAvailable(b) && (npme == 0 || comm::backendSupportsSubgroups(b))
                && std::find(backends.begin(), backends.end(), b) != backends.end())
            {
                variants.push_back({ b, TransposeAlgorithm::Alltoallv });
            }
        }
        std::vector<Result> first;
        double              worst = 0;
        int                 ran   = 0;
        for (const auto& [backend, transpose] : variants)
        {
            if (npme == 0 && backend != comm::Backend::P2p && transpose == TransposeAlgorithm::Alltoallv)
            {
                continue; // the backend loop above ran these
            }
            comm::Communicator world(backend);
            const std::string  name = fmt::format("{} ranks, npme {}, {} backend, {} transposes", n, npme,
                                                  comm::backendName(backend), transposeAlgorithmName(transpose));
            try
            {
                const auto got = decomposed(world, in, layoutFrames, rlist, HaloSchedule::Staged, { npme, transpose });
                if (world.rank() != 0)
                {
                    continue;
                }
                for (size_t k = 0; k < layoutFrames.size(); k++)
                {
                    worst = std::max(worst, compare(got[k], want[k], tol, fmt::format("{} {}, frame {}", dir, name, k), kDouble));
                    if (!first.empty())
                    {
                        check(bitwiseEqual(got[k], first[k]),
                              fmt::format("{}: frame {} differs in some bit from the first variant of this layout", name, k));
                    }
                }
                if (first.empty())
                {
                    first = got;
                }
                ran++;
            }
            catch (const std::exception& e)
            {
                check(false, name + ": " + e.what());
            }
        }
        if (comm::Communicator::worldRank() == 0)
        {
            std::printf("npme %d (%d PP ranks): %d variants (backends x transposes), %zu frames each, largest relative "
                        "difference from one rank %.2e\n",
                        npme, n - npme, ran, layoutFrames.size(), worst);
        }
    }
    check(decomposable(n) || layoutsTested > 0, fmt::format("{} ranks cannot decompose this box in any layout tested", n));
    const int myFailures = failures;
    if (comm::Communicator::worldRank() == 0)
    {
        std::printf("%s: %s on %d ranks\n", dir.c_str(), myFailures == 0 ? "all checks passed" : "FAILED",
                    comm::Communicator::worldSize());
    }
    comm::Communicator::finalize();
    return myFailures == 0 ? 0 : 1;
}
