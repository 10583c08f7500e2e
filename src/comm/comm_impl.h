/* comm/comm_impl.h — what the pieces of src/comm share and nobody else sees.
 *
 * Communicator::Impl is the state behind a Communicator: its duplicate of
 * MPI_COMM_WORLD (parallel mode only), the per-phase statistics and the
 * arena of the one-sided backends (created lazily at the first plan()).
 *
 * Also here: the waiting policy every backend uses (Waiter) and the fatal
 * error path (fail), so that a rank never hangs silently. A wait spins a
 * little (the peer is usually a few microseconds behind), then yields the
 * core with sched_yield (tests run 8 ranks on 2 cores, and a spinning rank
 * would starve the very peer it waits for), then sleeps in short naps. After
 * PUTMD_COMM_TIMEOUT seconds (default 120) without progress it prints what
 * it was waiting for and stops the whole job.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "comm/communicator.h"

namespace putmd::comm
{

class Arena;

/* Print "putmd comm (rank R): message" on stderr and stop the job. */
[[noreturn]] void fail(const std::string& message);

/* Seconds a wait may last before the job is stopped (PUTMD_COMM_TIMEOUT). */
double commTimeoutSeconds();

/* One wait loop. Call poll() each time the condition is still false; it
 * spins, yields or naps, and after the timeout calls fail(describe()). */
class Waiter
{
public:
    template<typename Describe>
    explicit Waiter(Describe describe) : describe_(std::move(describe))
    {
    }
    void poll()
    {
        ++polls_;
        if (polls_ < kSpins)
        {
            return;
        }
        pollSlow();
    }

private:
    static constexpr long kSpins = 64;
    void                  pollSlow();

    std::function<std::string()>          describe_;
    long                                  polls_ = 0;
    std::chrono::steady_clock::time_point since_{};
};

/* Wall-clock seconds (monotonic). */
double nowSeconds();

struct Communicator::Impl
{
    Backend backend = Backend::P2p;
    int     rank    = 0;
    int     size    = 1;
    bool    mpi     = false;          // parallel mode: comm is valid
    MPI_Comm comm   = MPI_COMM_NULL;  // duplicate of MPI_COMM_WORLD

    std::array<PhaseStats, static_cast<int>(Phase::Count)> stats{};
    PhaseStats& at(Phase p) { return stats[static_cast<int>(p)]; }

    int nextExchangeId = 0;

    /* Exposed memory of the one-sided backends (nullptr until first use). */
    std::unique_ptr<Arena> arena;
    Arena&                 ensureArena();

    Impl();
    ~Impl();
};

/* True once shmem_init() ran (the shmem backend was constructed). */
bool shmemInitialized();
/* shmem_init() once, checking that PE numbers equal MPI world ranks. */
void shmemInitOnce();

} // namespace putmd::comm
