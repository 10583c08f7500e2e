/* comm/backend_shm.cpp — MPI-3 shared-memory windows on one node.
 *
 * Arena: each generation is one MPI_Win_allocate_shared window over all
 * ranks of the communicator (the world or a split of it), which must share
 * a node: checkShmUsable splits the communicator
 * with MPI_COMM_TYPE_SHARED and stops the job with advice to use rma or p2p
 * otherwise). MPI_Win_shared_query maps every rank's part into this
 * process, so all traffic below is plain loads and stores: no MPI call at
 * all in start()/finish().
 *
 * Execution s:
 *   sender:   sendBuffer(k) returns region s % 3 of link k in the sender's
 *             OWN exposed memory, after waiting until the receiver
 *             acknowledged s-3 (the last user of that region); the caller
 *             packs there; start() stores s into its flag word for each
 *             receiving peer with release ordering.
 *   receiver: finish() stores s-1 into its ack word for each sending peer
 *             (release: it is done reading s-1), then waits until each
 *             sender's flag word reaches s (acquire); recvBuffer(k) is a
 *             span straight into the sender's region — no copy at all.
 * setSendSize needs nothing here: the receiver reads the sender's region in
 * place, whatever part of it the sender packed.
 * Every control word has exactly one writer (its owner) and is accessed
 * only through std::atomic_ref with release stores / acquire loads, which
 * orders the plain data stores before the flag and the data loads after
 * it (and the reads of s-1 before its ack) on any architecture; 64-bit
 * lock-free atomics are address-free, so this holds between processes
 * mapping the same pages. No MPI_Win_sync is needed because no MPI RMA
 * call touches this memory.
 *
 * Why three regions, not two: the caller may pack execution s+1 between
 * start(s) and finish(s). With two regions that needs the ack of s-1, which
 * the receiver gives in its finish(s); two ranks packing for each other
 * before finishing would wait for each other forever. With three, packing
 * s+1 needs the ack of s-2, given in a finish() both have already passed.
 * (rma and shmem pack into local buffers and wait for acks only in start(),
 * after the caller's own finish(s-1), so parity suffices there.)
 *
 * Re-planning: the sender's regions move when it re-plans, and a receiver
 * of the previous plan may still be reading them. So at plan() entry every
 * rank acknowledges everything to its old senders, and a sender does not
 * return from plan() (and so lets the caller pack) until all its old
 * receivers have done so.
 */
#include <atomic>
#include <cstring>
#include <string>

#include "comm/backends.h"
#include "comm/onesided.h"
#include "comm/shared_flag.h"

namespace putmd::comm
{

namespace
{

class ShmArena final : public Arena
{
public:
    using Arena::Arena;
    ~ShmArena() override
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized)
        {
            return;
        }
        for (auto& g : gens_)
        {
            MPI_Win_free(&g.win);
        }
    }

protected:
    Generation create(std::size_t size) override
    {
        Generation g;
        g.size = size;
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        void* base = nullptr;
        MPI_Win_allocate_shared(static_cast<MPI_Aint>(size), 1, info, comm_.comm, &base, &g.win);
        MPI_Info_free(&info);
        g.base = static_cast<std::byte*>(base);
        std::memset(g.base, 0, size);
        g.peerBase.resize(comm_.size);
        for (int r = 0; r < comm_.size; ++r)
        {
            MPI_Aint size_r = 0;
            int      unit   = 0;
            void*    ptr    = nullptr;
            MPI_Win_shared_query(g.win, r, &size_r, &unit, &ptr);
            g.peerBase[r] = static_cast<std::byte*>(ptr);
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return g;
    }
};

class ShmExchange final : public OneSidedExchange
{
public:
    ShmExchange(Communicator::Impl& comm, Phase phase) : OneSidedExchange(comm, phase, false, 3) {}

private:
    bool sendsInPlace() const override { return true; }

    std::byte* word(int rank, ArenaBlock ctrl, std::size_t offset) { return arena().peer(rank, ctrl.gen, offset); }

    /* Within a mixed backend this rank also has messages and one-sided
     * operations with other machines in flight, and MPI moves them only
     * while some rank is inside an MPI call (osc/pt2pt carries a put as a
     * message that the target must receive; a large p2p message needs both
     * sides). A rank waiting here with plain loads would never let them
     * progress, and a peer on another machine waiting for them, whose own
     * machine-mate waits for it, closes a cycle. So each wait also
     * turns MPI's progress engine (MPI_Iprobe, which delivers nothing). */
    void progressOtherTraffic()
    {
        if (comm_.progressWhileWaiting)
        {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_.comm, &flag, MPI_STATUS_IGNORE);
        }
    }
    /* The ack that receiver `peer` gives this rank. */
    std::byte* ackFrom(int peer) { return word(peer, peerCtrl_[peer], ackOffset(peerCtrl_[peer], comm_.rank)); }

    void waitAck(int peer, std::uint64_t value)
    {
        if (loadAcquire(ackFrom(peer)) >= value)
        {
            return;
        }
        Waiter waiter([&] { return describe("an acknowledgement (shm)", peer, value); });
        while (loadAcquire(ackFrom(peer)) < value)
        {
            progressOtherTraffic();
            waiter.poll();
        }
    }

    void beforePlan() override
    {
        oldReceivers_.clear();
        if (ctrl_.gen < 0)
        {
            return;
        }
        for (const auto& p : recvPeers_)
        {
            storeRelease(word(comm_.rank, ctrl_, ackOffset(ctrl_, p.peer)), seq_);
        }
        for (const auto& p : sendPeers_)
        {
            oldReceivers_.push_back(p.peer);
        }
        oldSeq_ = seq_;
    }

    void planRemote() override
    {
        OneSidedExchange::planRemote();
        for (int peer : oldReceivers_)
        {
            waitAck(peer, oldSeq_);
        }
    }

    std::span<std::byte> inPlaceSendBuffer(int link, std::uint64_t seq) override
    {
        const Link& l = sends_[link];
        if (seq >= baseline_ + 4)
        {
            waitAck(l.peer, seq - 3);
        }
        const Region& r = own_[link];
        return {arena().local(ArenaBlock{r.gen, r.off[seq % 3]}), l.bytes};
    }

    void startRemote(std::uint64_t seq) override
    {
        for (const auto& p : sendPeers_)
        {
            if (seq >= baseline_ + 4)
            {
                waitAck(p.peer, seq - 3);
            }
            storeRelease(word(comm_.rank, ctrl_, flagOffset(ctrl_, p.peer)), seq);
        }
    }

    void finishRemote(std::uint64_t seq) override
    {
        if (seq >= baseline_ + 2)
        {
            for (const auto& p : recvPeers_)
            {
                storeRelease(word(comm_.rank, ctrl_, ackOffset(ctrl_, p.peer)), seq - 1);
            }
        }
        for (const auto& p : recvPeers_)
        {
            std::byte* flag = word(p.peer, peerCtrl_[p.peer], flagOffset(peerCtrl_[p.peer], comm_.rank));
            if (loadAcquire(flag) >= seq)
            {
                continue;
            }
            Waiter waiter([&] { return describe("data (shm flag)", p.peer, seq); });
            while (loadAcquire(flag) < seq)
            {
                progressOtherTraffic();
                waiter.poll();
            }
        }
    }

    std::span<const std::byte> remoteRecvBuffer(int link, std::uint64_t seq) override
    {
        const Link&   l = recvs_[link];
        const Region& r = remote_[link];
        return {arena().peer(l.peer, r.gen, r.off[seq % 3]), l.bytes};
    }

    std::vector<int> oldReceivers_;
    std::uint64_t    oldSeq_ = 0;
};

} // namespace

void checkShmUsable(Communicator::Impl& comm)
{
    MPI_Comm node     = splitByMachine(comm.comm, comm.rank);
    int      nodeSize = 0;
    MPI_Comm_size(node, &nodeSize);
    MPI_Comm_free(&node);
    comm.at(Phase::Setup).collectives++;
    if (nodeSize != comm.size)
    {
        fail("the shm backend needs every rank on one node (shared memory), but this rank shares its node with "
             + std::to_string(nodeSize) + " of " + std::to_string(comm.size)
             + " ranks. Choose --comm auto (shm within machines, measured p2p or rma between them), shm+p2p, shm+rma, "
             "rma or p2p for multi-node runs.");
    }
}

std::unique_ptr<Arena> makeShmArena(Communicator::Impl& comm)
{
    return std::make_unique<ShmArena>(comm);
}

std::unique_ptr<Exchange> makeShmExchange(Communicator::Impl& comm, Phase phase)
{
    return std::make_unique<ShmExchange>(comm, phase);
}

} // namespace putmd::comm
