/* app/parallel_setup.h — how the ranks of `putmd run` divide the work:
 * the communicators, --npme (separate PME ranks or PME on every rank) and
 * the 3D-FFT transpose algorithm, each chosen or checked here, once.
 */
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "fft/pencil_fft.h"
#include "pme/pme_ranks.h"
#include "run/md_runner.h"
#include "run/system_inputs.h"

namespace putmd
{

struct ParallelRequest
{
    comm::Backend backend   = comm::Backend::P2p;
    std::string   npme      = "auto"; // --npme: auto (the estimate, chooseNpme) or a count
    std::string   npmeWhy;            // with a count: why it was chosen, for the log (empty: "from --npme")
    std::string   transpose = "auto"; // --fft-transpose
    std::optional<std::array<int, 3>> ddGrid; // -dd: then only its rank count can be the PP ranks
    double haloDistance = 0; // nm, the domain decomposition's halo (ddHaloDistance); 0: computed where needed (npme > 0)
};

/* The halo the run's domain decomposition will need: the pair-list radius
 * the run will choose plus twice the largest update-group radius. Computed
 * once (cmd_run, when --npme is auto, measure or estimate) and carried in
 * ParallelRequest::haloDistance. */
double ddHaloDistance(const SystemInputs& in);

struct ParallelSetup
{
    std::unique_ptr<comm::Communicator> world;
    std::unique_ptr<comm::Communicator> group; // PP or PME ranks (null with npme 0: use world)
    RankLayout                          layout;
    TransposeAlgorithm                  transpose = TransposeAlgorithm::Alltoallv;
    std::string                         description; // the choices and why, for the log and stdout
    bool isPmeRank() const { return layout.isPme(world->rank()); }
    comm::Communicator& pp() { return group ? *group : *world; }
};

/* The estimate's choice of npme for these ranks (chooseNpme over the
 * layouts whose PP ranks can cut the box); not collective. */
NpmeChoice estimateNpme(const SystemInputs& in, const ParallelRequest& request, int worldSize);

/* Whether npme separate PME ranks (0: none) can run on worldSize ranks:
 * the backend allows PME ranks and the PP ranks left can cut the box. */
bool npmeUsable(const SystemInputs& in, const ParallelRequest& request, int worldSize, int npme);

/* Collective over all ranks. Throws InputError for bad --npme or
 * --fft-transpose values. */
ParallelSetup setUpParallelRun(const SystemInputs& in, const ParallelRequest& request);

/* The PME rank's part of `putmd run` (numThreads: -nt, as the PP ranks). */
void runPmeRankOf(const SystemInputs& in, ParallelSetup& setup, int numThreads);

} // namespace putmd
