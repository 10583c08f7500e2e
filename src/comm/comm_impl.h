/* comm/comm_impl.h — what the pieces of src/comm share and nobody else sees.
 *
 * Communicator::Impl is the state behind a Communicator: its MPI
 * communicator (parallel mode only: a duplicate of MPI_COMM_WORLD, or the
 * result of split() for a sub-communicator), the world rank of each of its
 * ranks, the per-phase statistics and the arena of the one-sided backends
 * (created lazily at the first plan()). Nothing in src/comm may assume
 * that `comm` is the world: ranks in exchanges, windows and messages are
 * ranks of `comm` (worldRanks translates them for messages and for
 * OpenSHMEM PE numbers).
 *
 * Also here (from comm/waiter.h): the waiting policy every backend uses
 * (Waiter) and the fatal error path (fail), so that a rank never hangs
 * silently; waiter.h is public because the pencil FFT's rma transposes wait
 * the same way.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/waiter.h"

namespace putmd::comm
{

class Arena;

/* Wall-clock seconds (monotonic). */
double nowSeconds();

struct Communicator::Impl
{
    Backend backend = Backend::P2p;
    int     rank    = 0;
    int     size    = 1;
    bool    mpi     = false;          // parallel mode: comm is valid
    MPI_Comm comm   = MPI_COMM_NULL;  // duplicate of MPI_COMM_WORLD, or a split of it
    bool    world   = true;           // the group is the whole job, in world order
    std::vector<int> worldRanks{0};   // world rank of each rank of comm

    /* "rank 3" on the world, "rank 1 (world rank 3)" on a sub-communicator. */
    std::string rankName(int r) const;

    std::array<PhaseStats, static_cast<int>(Phase::Count)> stats{};
    /* The statistics this group counts in: its own, or for the machine
     * group of a mixed backend its parent's (statsOwner). */
    Impl*       statsOwner = nullptr;
    PhaseStats& at(Phase p) { return statsOwner ? statsOwner->at(p) : stats[static_cast<int>(p)]; }

    /* Mixed backends (shm+p2p, shm+rma): the ranks of this group on this
     * rank's machine as a shm Communicator of their own, and each rank's
     * rank in it (-1: another machine). Empty otherwise. */
    std::unique_ptr<Communicator> machine;
    std::vector<int>              machineRank;
    /* The machine group of a mixed backend: its shm waits keep MPI's
     * progress engine turning for the traffic between machines
     * (backend_shm.cpp). */
    bool progressWhileWaiting = false;

    int nextExchangeId = 0;

    /* Exposed memory of the one-sided backends (nullptr until first use). */
    std::unique_ptr<Arena> arena;
    Arena&                 ensureArena();

    Impl();
    ~Impl();
};

/* Collective over comm: the ranks of comm on this rank's machine (split by
 * MPI_COMM_TYPE_SHARED, then by PUTMD_COMM_NODE_SIZE if set), ordered as in
 * comm. The caller frees it. */
MPI_Comm splitByMachine(MPI_Comm comm, int rank);

/* MPI_Comm_dup. In the SMPI build the call is kept out of the rank's timed
 * computation: SimGrid 3.32's MPI_Comm_dup does not stop the timer of the
 * computation burst, yet blocks in a broadcast while the other simulated
 * ranks run on the same thread, so their CPU time was counted as this
 * rank's computation (at 128 simulated ranks up to 2.2 s of simulated time
 * per duplicate, growing with the rank). */
void dupComm(MPI_Comm comm, MPI_Comm* out);

/* True once shmem_init() ran (the shmem backend was constructed). */
bool shmemInitialized();
/* shmem_init() once, checking that PE numbers equal MPI world ranks. */
void shmemInitOnce();

} // namespace putmd::comm
