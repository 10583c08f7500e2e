/* comm/arena.h — the exposed memory of the one-sided backends.
 *
 * Each Communicator using rma, shm or shmem owns one Arena: memory that
 * other ranks may write (rma, shmem) or read (shm). It is a short chain of
 * "generations", each one collective allocation of the same size on every
 * rank (MPI_Win_allocate, MPI_Win_allocate_shared, shmem_malloc). Exchanges
 * take blocks from it at plan() time; a block is named by (generation,
 * offset), which its owner tells its peers in plan().
 *
 * Growth. allocate() is called by every rank in every plan() of a one-sided
 * exchange (plan is collective) with the blocks this rank needs. A rank
 * whose blocks fit the free tail of the newest generation bumps them there;
 * otherwise it asks for a new generation of max(2 x newest, what it needs).
 * One MPI_Allreduce(MAX) of the requests tells every rank whether, and how
 * big, a new generation is created, so growth is geometric and rare, and it
 * happens only inside plan().
 *
 * Old generations are never moved or freed before the Communicator dies:
 * the blocks an exchange already uses stay where they are (so planning one
 * exchange never invalidates another's buffers, and no copying or quiescing
 * is needed), at the price of at most about twice the memory of a perfectly
 * packed arena. An exchange whose needs grow takes a new, geometrically
 * larger block; the old block is abandoned.
 *
 * Sub-communicators. Disjoint groups (e.g. PP and PME ranks) grow their
 * arenas independently, possibly at the same moment on the same node. Open
 * MPI 4.1's osc/rdma (the default one-sided component behind rma) names a
 * temporary file in /dev/shm after the window communicator's context id,
 * which disjoint groups made by one split share: two groups creating a
 * window at once then break each other's window. So on a communicator that
 * is not the whole world, a generation is only created under the node-wide
 * window-creation lock (creationLock_ below, window_lock.h), whose
 * collectives are counted in stats(Setup). Window creation is rare (arena
 * growth at plans only), so the cost does not matter; the world
 * communicator never takes the lock.
 */
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/comm_impl.h"
#include "comm/window_lock.h"

namespace putmd::comm
{

struct ArenaBlock
{
    int         gen    = -1;
    std::size_t offset = 0;
};

class Arena
{
public:
    struct Generation
    {
        std::size_t             size = 0;
        std::size_t             used = 0;
        std::byte*              base = nullptr; // this rank's memory
        MPI_Win                 win  = MPI_WIN_NULL;
        std::vector<std::byte*> peerBase;       // shm: every rank's memory, mapped here
    };

    explicit Arena(Communicator::Impl& comm) : comm_(comm), creationLock_(comm.comm, comm.world) {}
    virtual ~Arena() = default;

    /* Collective (see above). Returns one block per requested size (64-byte
     * aligned); growth is counted in stats(phase).arenaGrowths, the
     * allreduce and the allocation in stats(Setup). The same allreduce
     * replaces `sequence` by its maximum over ranks, so that a rank that
     * sat out some executions (it had no links) agrees with its new peers
     * on the next sequence number. */
    std::vector<ArenaBlock> allocate(Phase phase, std::span<const std::size_t> sizes, std::uint64_t& sequence);

    std::byte* local(ArenaBlock b) { return gens_[b.gen].base + b.offset; }
    MPI_Win    window(int gen) const { return gens_[gen].win; }
    std::byte* peer(int rank, int gen, std::size_t offset) { return gens_[gen].peerBase[rank] + offset; }
    int        generations() const { return static_cast<int>(gens_.size()); }
    std::size_t bytes() const;

    static constexpr std::size_t kAlign = 64;
    static std::size_t           aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

protected:
    /* Collective: a new generation of `size` bytes on every rank, zeroed. */
    virtual Generation create(std::size_t size) = 0;

    Communicator::Impl&     comm_;
    std::vector<Generation> gens_;

private:
    WindowCreationLock creationLock_; // around create() (see above)
};

std::unique_ptr<Arena> makeRmaArena(Communicator::Impl& comm);
std::unique_ptr<Arena> makeShmArena(Communicator::Impl& comm);
std::unique_ptr<Arena> makeShmemArena(Communicator::Impl& comm);

} // namespace putmd::comm
