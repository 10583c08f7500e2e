/* comm/communicator.h — the communication layer's front door.
 *
 * putmd moves data between ranks in two ways:
 *  - Exchanges (comm/exchange.h): persistent point-to-point patterns
 *    (halo coordinates and forces, migration, later PME traffic), planned at
 *    search steps and executed every step with one of four backends:
 *      p2p    MPI_Isend/MPI_Irecv, the measured baseline;
 *      rma    MPI-3 passive-target RMA: data put into the receiver's arena,
 *             then a flag word carrying the sequence number;
 *      shm    MPI-3 shared-memory window among the ranks of one node: the
 *             sender packs into its own exposed memory, the receiver reads it
 *             directly after seeing the flag;
 *      shmem  OpenSHMEM puts into the symmetric heap (built when liboshmem
 *             is present).
 *    and two mixed ones, for ranks spread over several machines:
 *      shm+p2p, shm+rma  shm between the ranks of one machine, p2p or rma
 *             between ranks on different machines (backend_mixed.cpp).
 *    Every backend moves the same bytes into the same receive buffers, so a
 *    simulation is bitwise identical whichever is chosen.
 *  - Collectives (below): reductions for energies on the steps that need
 *    them, gathers for output. They are counted per phase, so a test can
 *    show that a normal step has none.
 *
 * Without a launcher (no mpirun/oshrun environment) MPI is not initialised at
 * all and the Communicator is a single rank: every collective is the
 * identity and exchanges can only link a rank with itself.
 *
 * Sub-communicators (split()): a group of ranks (e.g. the PME ranks) gets
 * its own Communicator with the same backend, its own collectives, its own
 * exchanges and its own arena. The parent stays fully usable, so an
 * exchange made on the world Communicator can link ranks of different
 * groups (PP <-> PME) while each group runs its own traffic.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/message_sizes.h"

namespace putmd::comm
{

enum class Backend
{
    P2p,
    Rma,
    Shm,
    Shmem,
    ShmP2p, // shm within a machine, p2p across machines
    ShmRma  // shm within a machine, rma across machines
};

/* "p2p", "rma", "shm", "shmem", "shm+p2p", "shm+rma" */
const char* backendName(Backend b);
/* Whether links between ranks of one machine use shm and the others
 * another backend (the mixed backends). */
bool isMixed(Backend b);
/* The backend of links between ranks on different machines: p2p for
 * shm+p2p, rma for shm+rma, the backend itself otherwise. */
Backend acrossMachines(Backend b);
std::optional<Backend> parseBackend(std::string_view name);
/* Whether this build has the backend (shmem needs liboshmem). */
bool backendAvailable(Backend b);
/* Whether Communicator::split() may make a group smaller than the world
 * with this backend (false for shmem: OpenSHMEM allocates symmetric memory
 * on all PEs at once, so a sub-group could never grow its arena). */
bool backendSupportsSubgroups(Backend b);

/* What the traffic is for; statistics are kept per phase. */
enum class Phase
{
    HaloX,     // coordinates to the halo
    HaloF,     // halo forces back to their owners
    Migration, // atoms changing domain at search steps
    Energies,  // energy, kinetic and virial reductions
    Pme,       // PME: atom redistribution, grid borders, PP<->PME traffic
    Setup,     // plan building, arena growth, gathers for output, start-up
    Count
};
const char* phaseName(Phase p);

struct PhaseStats
{
    long   messages        = 0; // point-to-point messages sent (one per link per execution)
    long   bytes           = 0; // bytes sent
    double transferSeconds = 0; // time in start() (packing excluded): issuing the transfers
    double waitSeconds     = 0; // time in finish(): waiting for data to arrive
    long   collectives     = 0; // collective calls (reductions, gathers, broadcasts)
    long   barriers        = 0; // barriers (explicit or inside another call)
    long   arenaGrowths    = 0; // times exposed memory grew
    long   plans           = 0; // plans built
    long   oneSidedSyncs   = 0; // one-sided synchronisations: the flag put/store that completes each message
                                // of the rma, shm and shmem backends (0 with p2p)
    MessageSizes sizes;         // histogram and largest of the messages counted in `messages`

    /* Counts one point-to-point message of this many bytes (messages,
     * bytes and the size histogram together: the one place they are
     * counted). */
    void recordMessage(long nbytes)
    {
        messages++;
        bytes += nbytes;
        sizes.record(nbytes);
    }
};

class Exchange;

class Communicator
{
public:
    /* Initialise MPI when launched by mpirun/oshrun (environment variables
     * of the launcher present), otherwise do nothing. Call once at start. */
    static void initialize(int* argc, char*** argv);
    /* Finalise what initialize() started. */
    static void finalize();
    /* True when a launcher (mpirun, oshrun, smpirun) started this process:
     * its environment variables are present. Usable before initialize(). */
    static bool startedByLauncher();
    /* True when running under a launcher with MPI initialised. */
    static bool parallel();
    /* Ranks in the job (1 without a launcher), without making a Communicator. */
    static int worldSize();
    /* Ranks of the job on this machine (shared memory); 1 without MPI.
     * PUTMD_COMM_NODE_SIZE=K (for tests) makes every K consecutive ranks of
     * a machine a "machine" of their own, here and for the shm and mixed
     * backends, so that mixed links can be tested on one machine. */
    static int ranksOnThisNode();
    static int worldRank();
    /* Stop every rank of the job now with this exit code (MPI_Abort), after
     * the caller printed its message; plain exit() on one rank. */
    [[noreturn]] static void abortJob(int code);

    /* The world communicator with this backend. Collective over the world. */
    explicit Communicator(Backend backend);
    ~Communicator();
    Communicator(const Communicator&)            = delete;
    Communicator& operator=(const Communicator&) = delete;

    int     rank() const;
    int     size() const;
    Backend backend() const;
    /* Whether an exchange link from this rank to rank r goes through shared
     * memory (the receiver reads the sender's buffer in place): every rank
     * with shm, the ranks of this machine with shm+p2p and shm+rma (as
     * PUTMD_COMM_NODE_SIZE may define machines), none otherwise and in
     * serial mode. */
    bool linksThroughShm(int r) const;

    /* Collective over this communicator: the ranks passing the same color
     * (>= 0) form a new Communicator with the same backend, ranks ordered as
     * in this one. The new communicator has its own statistics (starting
     * at zero; the split itself is counted in this one's setup
     * collectives), exchanges and arena; this one stays usable, including
     * its exchanges planned before or after the split. In serial mode it
     * returns a serial Communicator.
     * shmem: a group smaller than the world is refused — every rank throws
     * std::runtime_error (see backendSupportsSubgroups); a split in which
     * every rank passes the same color is fine. */
    std::unique_ptr<Communicator> split(int color) const;
    /* This communicator's rank r as a rank of the world communicator. */
    int worldRankOf(int r) const;
    /* The MPI communicator of this group (MPI_COMM_NULL in serial mode),
     * for code that needs raw MPI on the same ranks (e.g. a distributed
     * FFT). Owned by this Communicator: do not free it; valid while it
     * lives. It carries only this Communicator's collectives (exchanges
     * use their own duplicates), so collectives issued on it in the same
     * order on every rank mix safely with the helpers below. */
    MPI_Comm mpiComm() const;

    /* A new exchange pattern owned by the caller; collective (every rank
     * creates the same exchanges in the same order). */
    std::unique_ptr<Exchange> makeExchange(Phase phase);

    /* Collectives; every one is counted in stats(phase).collectives.
     * sumInRankOrder: element-wise sum over ranks, added in rank order
     * (allgather, then sum), so every rank gets the same bits and the result
     * does not depend on the MPI library's reduction algorithm. */
    void   sumInRankOrder(Phase phase, std::span<double> values);
    /* Every rank's values, rank after rank, on every rank (each rank gives
     * the same number of them). */
    std::vector<double> allGather(Phase phase, std::span<const double> mine);
    long   maxLong(Phase phase, long value);
    long   sumLong(Phase phase, long value);
    /* Concatenation of every rank's bytes in rank order on rank 0 (empty
     * elsewhere). */
    std::vector<std::byte> gatherToRoot(Phase phase, std::span<const std::byte> mine);
    /* Rank 0's bytes on every rank. */
    void broadcast(Phase phase, std::span<std::byte> data);
    void barrier(Phase phase);

    const PhaseStats& stats(Phase phase) const;
    PhaseStats&       mutableStats(Phase phase);
    /* Zero every counter (e.g. after start-up). */
    void resetStats();

    struct Impl;
    Impl& impl() { return *impl_; }

private:
    explicit Communicator(std::unique_ptr<Impl> impl);
    static void setUpMachineGroup(Impl& impl, PhaseStats& countIn);

    std::unique_ptr<Impl> impl_;
};

} // namespace putmd::comm
