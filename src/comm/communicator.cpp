/* comm/communicator.cpp — start-up, the Communicator, its collectives and
 * statistics.
 *
 * Start-up: MPI is initialised only when a launcher started us. Open MPI's
 * mpirun/oshrun set OMPI_COMM_WORLD_SIZE; PMIx and PMI launchers (srun,
 * hydra) set PMIX_RANK or PMI_SIZE/PMI_RANK. Without any of them putmd is a
 * single rank and makes no MPI call at all, so the many single-rank runs
 * and tests never pay MPI start-up. MPI is initialised with
 * MPI_THREAD_FUNNELED: OpenMP threads compute, only the main thread talks.
 *
 * Collectives are on the Communicator's own MPI communicator (a duplicate
 * of MPI_COMM_WORLD, or for a sub-communicator the result of split()). Each
 * helper counts one collective in its phase on every call, also on a single
 * rank (where it is the identity), so the counts do not depend on the rank
 * count. sumInRankOrder gathers every rank's values (allGather,
 * MPI_Allgather) and adds them in rank order on every rank: the same bits
 * everywhere, whatever the MPI library's reduction algorithm.
 *
 * split() is MPI_Comm_split with the parent's rank as key (ranks keep their
 * order); the new Impl records the world rank of each of its ranks
 * (MPI_Group_translate_ranks), for messages and for OpenSHMEM PE numbers.
 * The shmem backend refuses groups smaller than the world, because
 * shmem_malloc (the arena's growth) is collective over every PE: a group
 * growing its arena alone would wait forever for the other PEs.
 */
#include "comm/communicator.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "comm/arena.h"
#include "comm/backends.h"
#include "comm/comm_impl.h"

#if PUTMD_HAVE_SHMEM
#include <shmem.h>
#endif
#if PUTMD_SMPI
#include "comm/smpi_record_hooks.h"
#endif

namespace putmd::comm
{

namespace
{
bool g_parallel  = false; // MPI initialised by us
bool g_finalized = false;
int  g_rank      = 0;
int  g_size      = 1;

bool launchedByLauncher()
{
#if PUTMD_SMPI
    return true; // smpirun sets none of the variables below; every rank is simulated MPI
#endif
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    {
        if (std::getenv(v) != nullptr)
        {
            return true;
        }
    }
    return false;
}
} // namespace

const char* backendName(Backend b)
{
    switch (b)
    {
        case Backend::P2p: return "p2p";
        case Backend::Rma: return "rma";
        case Backend::Shm: return "shm";
        case Backend::Shmem: return "shmem";
        case Backend::ShmP2p: return "shm+p2p";
        case Backend::ShmRma: return "shm+rma";
    }
    return "?";
}

bool isMixed(Backend b)
{
    return b == Backend::ShmP2p || b == Backend::ShmRma;
}

Backend acrossMachines(Backend b)
{
    switch (b)
    {
        case Backend::ShmP2p: return Backend::P2p;
        case Backend::ShmRma: return Backend::Rma;
        default: return b;
    }
}

std::optional<Backend> parseBackend(std::string_view name)
{
    for (Backend b : {Backend::P2p, Backend::Rma, Backend::Shm, Backend::Shmem, Backend::ShmP2p, Backend::ShmRma})
    {
        if (name == backendName(b))
        {
            return b;
        }
    }
    return std::nullopt;
}

bool backendAvailable(Backend b)
{
#if PUTMD_SMPI
    // SimGrid's SMPI simulates messages and one-sided operations, not
    // shared-memory windows or OpenSHMEM
    return b == Backend::P2p || b == Backend::Rma;
#else
    return b != Backend::Shmem || PUTMD_HAVE_SHMEM;
#endif
}

bool backendSupportsSubgroups(Backend b)
{
    return b != Backend::Shmem;
}

const char* phaseName(Phase p)
{
    switch (p)
    {
        case Phase::HaloX: return "halo-x";
        case Phase::HaloF: return "halo-f";
        case Phase::Migration: return "migration";
        case Phase::Energies: return "energies";
        case Phase::Pme: return "pme";
        case Phase::Setup: return "setup";
        case Phase::Count: break;
    }
    return "?";
}

void Communicator::initialize(int* argc, char*** argv)
{
    if (g_parallel || !launchedByLauncher())
    {
        return;
    }
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_parallel = true;
}

void Communicator::finalize()
{
    if (!g_parallel || g_finalized)
    {
        return;
    }
    g_finalized = true;
#if PUTMD_HAVE_SHMEM
    if (shmemInitialized())
    {
        shmem_finalize(); // in Open MPI 4.1 this also finalises MPI
    }
#endif
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
    {
        MPI_Finalize();
    }
}

bool Communicator::startedByLauncher()
{
    return launchedByLauncher();
}

bool Communicator::parallel()
{
    return g_parallel && !g_finalized;
}

int Communicator::worldSize()
{
    return g_size;
}

int Communicator::ranksOnThisNode()
{
    if (!parallel() || g_size <= 1)
    {
        return 1;
    }
    MPI_Comm node = splitByMachine(MPI_COMM_WORLD, g_rank);
    int      n    = 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

int Communicator::worldRank()
{
    return g_rank;
}

void Communicator::abortJob(int code)
{
    std::fflush(stdout);
    std::fflush(stderr);
    int finalized = 1;
    if (g_parallel)
    {
        MPI_Finalized(&finalized);
    }
    if (g_parallel && !finalized)
    {
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    std::exit(code);
}

void dupComm(MPI_Comm comm, MPI_Comm* out)
{
#if PUTMD_SMPI
    smpi_bench_end();
    MPI_Comm_dup(comm, out);
    smpi_record::dup(comm, *out);
    smpi_bench_begin();
#else
    MPI_Comm_dup(comm, out);
#endif
}

MPI_Comm splitByMachine(MPI_Comm comm, int rank)
{
    // PUTMD_COMM_NODE_SIZE=K: every K consecutive ranks of a machine count
    // as a machine (tests of the mixed backends on one machine)
    static const int perMachine = [] {
        const char* v = std::getenv("PUTMD_COMM_NODE_SIZE");
        if (v == nullptr || *v == '\0')
        {
            return 0;
        }
        char*      end = nullptr;
        const long k   = std::strtol(v, &end, 10);
        if (end == v || *end != '\0' || k < 1 || k > INT_MAX)
        {
            fail(std::string("PUTMD_COMM_NODE_SIZE='") + v
                 + "' is not a rank count; valid: a positive integer (ranks per simulated machine), or unset");
        }
        return static_cast<int>(k);
    }();
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (perMachine == 0)
    {
        return node;
    }
    int nodeRank = 0;
    MPI_Comm_rank(node, &nodeRank);
    MPI_Comm part = MPI_COMM_NULL;
    MPI_Comm_split(node, nodeRank / perMachine, nodeRank, &part);
    MPI_Comm_free(&node);
    return part;
}

namespace
{
/* The world ranks of comm's ranks. */
std::vector<int> worldRanksOf(MPI_Comm comm, int size)
{
    std::vector<int> out(static_cast<std::size_t>(size));
    MPI_Group        group = MPI_GROUP_NULL, worldGroup = MPI_GROUP_NULL;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
    std::vector<int> mine(static_cast<std::size_t>(size));
    std::iota(mine.begin(), mine.end(), 0);
    MPI_Group_translate_ranks(group, size, mine.data(), worldGroup, out.data());
    MPI_Group_free(&group);
    MPI_Group_free(&worldGroup);
    return out;
}

bool isWorldInOrder(const std::vector<int>& worldRanks)
{
    bool identity = static_cast<int>(worldRanks.size()) == g_size;
    for (std::size_t r = 0; r < worldRanks.size() && identity; ++r)
    {
        identity = worldRanks[r] == static_cast<int>(r);
    }
    return identity;
}
} // namespace

Communicator::Impl::Impl() = default;

std::string Communicator::Impl::rankName(int r) const
{
    std::string s = "rank " + std::to_string(r);
    if (!world && r >= 0 && r < static_cast<int>(worldRanks.size()))
    {
        s += " (world rank " + std::to_string(worldRanks[static_cast<std::size_t>(r)]) + ")";
    }
    return s;
}

Communicator::Impl::~Impl()
{
    arena.reset(); // collective: frees the windows / symmetric blocks
    int finalized = 1;
    if (mpi)
    {
        MPI_Finalized(&finalized);
    }
    if (mpi && !finalized && comm != MPI_COMM_NULL)
    {
        MPI_Comm_free(&comm);
    }
}

Arena& Communicator::Impl::ensureArena()
{
    if (!arena)
    {
        // (mixed backends: the arena of the links across machines; the shm
        // links have their own in the machine group's Impl)
        switch (acrossMachines(backend))
        {
            case Backend::Rma: arena = makeRmaArena(*this); break;
            case Backend::Shm: arena = makeShmArena(*this); break;
            case Backend::Shmem: arena = makeShmemArena(*this); break;
            default: fail(std::string("internal: the ") + backendName(backend) + " backend has no arena");
        }
    }
    return *arena;
}

Communicator::Communicator(Backend backend) : impl_(std::make_unique<Impl>())
{
    if (!backendAvailable(backend))
    {
        fail(std::string("the ") + backendName(backend) + " backend is not available in this build");
    }
    impl_->backend = backend;
    if (parallel())
    {
        impl_->mpi  = true;
        impl_->rank = g_rank;
        impl_->size = g_size;
        impl_->worldRanks.resize(static_cast<std::size_t>(g_size));
        std::iota(impl_->worldRanks.begin(), impl_->worldRanks.end(), 0);
        dupComm(MPI_COMM_WORLD, &impl_->comm);
        impl_->at(Phase::Setup).collectives++;
        if (backend == Backend::Shm)
        {
            checkShmUsable(*impl_);
        }
        if (backend == Backend::Shmem)
        {
            checkShmemUsable(*impl_);
        }
        if (isMixed(backend))
        {
            setUpMachineGroup(*impl_, impl_->at(Phase::Setup));
        }
    }
}

/* Mixed backends: this group's ranks on this machine become a shm
 * Communicator (impl.machine) counting in impl's statistics, and
 * impl.machineRank maps every rank of impl to its rank there (-1: another
 * machine). Collective over impl.comm, counted in countIn (a split's
 * parent counts the whole split). */
void Communicator::setUpMachineGroup(Impl& impl, PhaseStats& countIn)
{
    auto     m    = std::make_unique<Impl>();
    MPI_Comm comm = splitByMachine(impl.comm, impl.rank);
    countIn.collectives++;
    m->backend = Backend::Shm;
    m->mpi     = true;
    m->comm    = comm;
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->size);
    m->worldRanks = worldRanksOf(comm, m->size);
    m->world      = isWorldInOrder(m->worldRanks);
    m->statsOwner = &impl;
    m->progressWhileWaiting = true;
    impl.machineRank.assign(static_cast<std::size_t>(impl.size), MPI_UNDEFINED);
    {
        MPI_Group parent = MPI_GROUP_NULL, mine = MPI_GROUP_NULL;
        MPI_Comm_group(impl.comm, &parent);
        MPI_Comm_group(comm, &mine);
        std::vector<int> all(static_cast<std::size_t>(impl.size));
        std::iota(all.begin(), all.end(), 0);
        MPI_Group_translate_ranks(parent, impl.size, all.data(), mine, impl.machineRank.data());
        MPI_Group_free(&parent);
        MPI_Group_free(&mine);
    }
    for (int& r : impl.machineRank)
    {
        r = r == MPI_UNDEFINED ? -1 : r;
    }
    impl.machine = std::unique_ptr<Communicator>(new Communicator(std::move(m)));
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicator::~Communicator() = default;

std::unique_ptr<Communicator> Communicator::split(int color) const
{
    if (color < 0)
    {
        fail("Communicator::split: color " + std::to_string(color) + " is negative; colors must be >= 0");
    }
    auto sub     = std::make_unique<Impl>();
    sub->backend = impl_->backend;
    impl_->at(Phase::Setup).collectives++; // counted on one rank too, like every collective
    if (!impl_->mpi)
    {
        return std::unique_ptr<Communicator>(new Communicator(std::move(sub))); // serial: one rank
    }
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(impl_->comm, color, impl_->rank, &comm);
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!backendSupportsSubgroups(impl_->backend) && size < g_size)
    {
        // Every rank gets here alike: if one group is smaller than the
        // world, there are several groups and all of them are.
        MPI_Comm_free(&comm);
        throw std::runtime_error(
                "the shmem backend cannot be used with separate PME ranks (--npme > 0) in this build: OpenSHMEM "
                "allocates symmetric memory on all PEs at once; use --comm rma or shm");
    }
    sub->mpi  = true;
    sub->comm = comm;
    sub->rank = rank;
    sub->size = size;
    sub->worldRanks = worldRanksOf(comm, size);
    sub->world      = isWorldInOrder(sub->worldRanks);
    // No backend check is repeated: a subset of ranks that could use the
    // backend can use it too (shm: a subset of one node is on one node;
    // shmem: only the whole world gets here, and OpenSHMEM is up). A mixed
    // backend's group gets its own machine groups.
    if (isMixed(sub->backend))
    {
        setUpMachineGroup(*sub, impl_->at(Phase::Setup));
    }
    return std::unique_ptr<Communicator>(new Communicator(std::move(sub)));
}

int Communicator::worldRankOf(int r) const
{
    if (r < 0 || r >= impl_->size)
    {
        fail("worldRankOf(" + std::to_string(r) + "): the communicator has " + std::to_string(impl_->size)
             + " rank(s)");
    }
    return impl_->worldRanks[static_cast<std::size_t>(r)];
}

MPI_Comm Communicator::mpiComm() const
{
    return impl_->mpi ? impl_->comm : MPI_COMM_NULL;
}

int Communicator::rank() const
{
    return impl_->rank;
}
int Communicator::size() const
{
    return impl_->size;
}
Backend Communicator::backend() const
{
    return impl_->backend;
}

bool Communicator::linksThroughShm(int r) const
{
    if (!impl_->mpi)
    {
        return false;
    }
    if (isMixed(impl_->backend))
    {
        return impl_->machineRank.at(static_cast<std::size_t>(r)) >= 0;
    }
    return impl_->backend == Backend::Shm;
}

std::unique_ptr<Exchange> Communicator::makeExchange(Phase phase)
{
    if (!impl_->mpi)
    {
        // One rank: only self links, handled alike by every backend.
        return makeP2pExchange(*impl_, phase);
    }
    switch (impl_->backend)
    {
        case Backend::P2p: return makeP2pExchange(*impl_, phase);
        case Backend::Rma: return makeRmaExchange(*impl_, phase);
        case Backend::Shm: return makeShmExchange(*impl_, phase);
        case Backend::Shmem: return makeShmemExchange(*impl_, phase);
        case Backend::ShmP2p:
        case Backend::ShmRma: return makeMixedExchange(*impl_, phase);
    }
    fail("internal: unknown backend");
}

namespace
{
/* Counts one collective and the time spent in it. */
struct CollectiveTimer
{
    PhaseStats& s;
    double      t0 = nowSeconds();
    explicit CollectiveTimer(PhaseStats& stats) : s(stats) { s.collectives++; }
    ~CollectiveTimer() { s.waitSeconds += nowSeconds() - t0; }
};
} // namespace

std::vector<double> Communicator::allGather(Phase phase, std::span<const double> mine)
{
    CollectiveTimer t(impl_->at(phase));
    if (!impl_->mpi)
    {
        return {mine.begin(), mine.end()};
    }
    std::vector<double> all(mine.size() * static_cast<std::size_t>(impl_->size));
    if (!mine.empty())
    {
        MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                      static_cast<int>(mine.size()), MPI_DOUBLE, impl_->comm);
    }
    return all;
}

void Communicator::sumInRankOrder(Phase phase, std::span<double> values)
{
    const std::vector<double> all = allGather(phase, values);
    const std::size_t         n   = values.size();
    for (std::size_t i = 0; i < n; ++i)
    {
        double sum = all[i];
        for (std::size_t r = 1; r < all.size() / n; ++r)
        {
            sum += all[r * n + i];
        }
        values[i] = sum;
    }
}

long Communicator::maxLong(Phase phase, long value)
{
    CollectiveTimer t(impl_->at(phase));
    long            out = value;
    if (impl_->mpi)
    {
        MPI_Allreduce(&value, &out, 1, MPI_LONG, MPI_MAX, impl_->comm);
    }
    return out;
}

long Communicator::sumLong(Phase phase, long value)
{
    CollectiveTimer t(impl_->at(phase));
    long            out = value;
    if (impl_->mpi)
    {
        MPI_Allreduce(&value, &out, 1, MPI_LONG, MPI_SUM, impl_->comm);
    }
    return out;
}

std::vector<std::byte> Communicator::gatherToRoot(Phase phase, std::span<const std::byte> mine)
{
    CollectiveTimer t(impl_->at(phase));
    if (!impl_->mpi)
    {
        return {mine.begin(), mine.end()};
    }
    if (mine.size() > INT_MAX)
    {
        fail("gatherToRoot: more than 2 GiB from one rank");
    }
    const int        n    = static_cast<int>(mine.size());
    std::vector<int> counts(impl_->rank == 0 ? impl_->size : 0);
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, impl_->comm);
    std::vector<int>       displs(counts.size());
    std::vector<std::byte> all;
    if (impl_->rank == 0)
    {
        long total = 0;
        for (std::size_t r = 0; r < counts.size(); ++r)
        {
            displs[r] = static_cast<int>(total);
            total += counts[r];
        }
        if (total > INT_MAX)
        {
            fail("gatherToRoot: more than 2 GiB in total");
        }
        all.resize(static_cast<std::size_t>(total));
    }
    MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, impl_->comm);
    return all;
}

void Communicator::broadcast(Phase phase, std::span<std::byte> data)
{
    CollectiveTimer t(impl_->at(phase));
    if (!impl_->mpi)
    {
        return;
    }
    constexpr std::size_t kChunk = std::size_t{1} << 30;
    for (std::size_t at = 0; at < data.size(); at += kChunk)
    {
        const std::size_t n = std::min(kChunk, data.size() - at);
        MPI_Bcast(data.data() + at, static_cast<int>(n), MPI_BYTE, 0, impl_->comm);
    }
}

void Communicator::barrier(Phase phase)
{
    PhaseStats&  s  = impl_->at(phase);
    const double t0 = nowSeconds();
    s.barriers++;
    if (impl_->mpi)
    {
        MPI_Barrier(impl_->comm);
    }
    s.waitSeconds += nowSeconds() - t0;
}

const PhaseStats& Communicator::stats(Phase phase) const
{
    return impl_->stats.at(static_cast<std::size_t>(phase));
}

PhaseStats& Communicator::mutableStats(Phase phase)
{
    return impl_->at(phase);
}

void Communicator::resetStats()
{
    impl_->stats.fill(PhaseStats{});
}

} // namespace putmd::comm
