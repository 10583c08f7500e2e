/* comm/backend_rma.cpp — MPI-3 passive-target RMA.
 *
 * Arena: each generation is one MPI_Win_allocate window, opened once with
 * MPI_Win_lock_all(MPI_MODE_NOCHECK) and kept in that passive-target epoch
 * until the Communicator dies. No fence, no barrier, no collective ever
 * happens in start()/finish().
 *
 * Execution s, sender side (start):
 *   1. for each receiving peer p, wait until acks[p] in this rank's control
 *      block reaches s-2 (p has consumed the execution that last used the
 *      parity region of s); acks older than the last plan count as given;
 *   2. MPI_Put every link's bytes (sendSize(k), see setSendSize) into the
 *      receiver's region of parity s;
 *   3. MPI_Win_flush_all: the data is complete at the targets;
 *   4. MPI_Accumulate(MPI_REPLACE) the value s into flags[me] of each
 *      receiver, then MPI_Win_flush_all. Because step 3 completed the data
 *      remotely before the flag was even issued, a receiver that sees the
 *      flag sees the data — the ordering does not depend on the library
 *      ordering puts.
 * Receiver side (finish):
 *   1. acknowledge s-1 to every sending peer (MPI_Accumulate REPLACE into
 *      acks[me] at the sender, flush): the caller is done with the buffers
 *      of s-1 now, as recvBuffer() promises them only until this finish();
 *   2. poll flags[p] >= s for every sending peer with MPI_Fetch_and_op
 *      (MPI_NO_OP) on its own window — an atomic read, so it may race with
 *      the sender's accumulate legally under the MPI-3 memory model;
 *   3. MPI_Win_sync on the data window, then the caller reads the regions
 *      with ordinary loads.
 * Flags and acks are written only with accumulates (puts under SimGrid,
 * see writeControl) and read only with
 * fetch-and-op, so every concurrent access to them is atomic; data regions
 * are never written while their owner reads them (parity + ack).
 */
#include <cstring>

#include "comm/backends.h"
#include "comm/onesided.h"

namespace putmd::comm
{

namespace
{

class RmaArena final : public Arena
{
public:
    using Arena::Arena;
    ~RmaArena() override
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized)
        {
            return;
        }
        for (auto& g : gens_)
        {
            MPI_Win_unlock_all(g.win);
            MPI_Win_free(&g.win);
        }
    }

protected:
    Generation create(std::size_t size) override
    {
        Generation g;
        g.size = size;
        void* base = nullptr;
        MPI_Win_allocate(static_cast<MPI_Aint>(size), 1, MPI_INFO_NULL, comm_.comm, &base, &g.win);
        g.base = static_cast<std::byte*>(base);
        std::memset(g.base, 0, size);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, g.win);
        MPI_Win_sync(g.win);
        return g;
    }
};

class RmaExchange final : public OneSidedExchange
{
public:
    RmaExchange(Communicator::Impl& comm, Phase phase) : OneSidedExchange(comm, phase, true, 2) {}

private:
    std::uint64_t readOwn(std::size_t offset)
    {
        std::uint64_t value = 0, dummy = 0;
        MPI_Win       w     = arena().window(ctrl_.gen);
        MPI_Fetch_and_op(&dummy, &value, MPI_UINT64_T, comm_.rank, static_cast<MPI_Aint>(offset), MPI_NO_OP, w);
        MPI_Win_flush(comm_.rank, w);
        return value;
    }

    /* Wait until own control word [offset(p)] >= value for every peer in list. */
    template<typename Offset>
    void waitOwn(const std::vector<PeerLinks>& peers, std::uint64_t value, Offset offset, const char* what)
    {
        for (const auto& p : peers)
        {
            if (readOwn(offset(p.peer)) >= value)
            {
                continue;
            }
            Waiter waiter([&] { return describe(what, p.peer, value); });
            while (readOwn(offset(p.peer)) < value)
            {
                waiter.poll();
            }
        }
    }

    void flushTouched()
    {
        for (std::size_t g = 0; g < touched_.size(); ++g)
        {
            if (touched_[g])
            {
                MPI_Win_flush_all(arena().window(static_cast<int>(g)));
                touched_[g] = false;
            }
        }
    }
    void touch(int gen)
    {
        touched_.resize(static_cast<std::size_t>(arena().generations()), false);
        touched_[static_cast<std::size_t>(gen)] = true;
    }

    /* A flag or an acknowledgement into peer's control block: an atomic
     * write (accumulate with MPI_REPLACE), completed by the next flush.
     * Under SimGrid (putmd_smpi) a put: SMPI 3.32 completes every
     * MPI_Accumulate before returning (smpi_win.cpp flushes the target after
     * each, a workaround for accumulate ordering it does not implement), so
     * the flags to L peers cost L round trips one after the other, where an
     * RMA library overlaps them; SMPI copies a put whole when it completes,
     * and its fetch-and-op reads are copies too, so a put is as atomic there.
     * The data and the results are the same either way. */
    void writeControl(const std::uint64_t* value, int peer, std::size_t offset, int gen)
    {
#if PUTMD_SMPI
        MPI_Put(value, 1, MPI_UINT64_T, peer, static_cast<MPI_Aint>(offset), 1, MPI_UINT64_T, arena().window(gen));
#else
        MPI_Accumulate(value, 1, MPI_UINT64_T, peer, static_cast<MPI_Aint>(offset), 1, MPI_UINT64_T, MPI_REPLACE,
                       arena().window(gen));
#endif
        touch(gen);
    }

    void startRemote(std::uint64_t seq) override
    {
        if (seq >= baseline_ + 3)
        {
            waitOwn(sendPeers_, seq - 2, [&](int peer) { return ackOffset(ctrl_, peer); },
                    "an acknowledgement (rma)");
        }
        for (const auto& p : sendPeers_)
        {
            for (int k : p.links)
            {
                const auto        data = localSend(k, seq);
                const std::size_t n    = sendSize(k); // setSendSize: maybe fewer than planned
                if (n == 0)
                {
                    continue;
                }
                const Region& r = remote_[k];
                MPI_Put(data.data(), static_cast<int>(n), MPI_BYTE, p.peer, static_cast<MPI_Aint>(r.off[seq % 2]),
                        static_cast<int>(n), MPI_BYTE, arena().window(r.gen));
                touch(r.gen);
            }
        }
        flushTouched();
        flagValue_ = seq;
        for (const auto& p : sendPeers_)
        {
            const ArenaBlock c = peerCtrl_[p.peer];
            writeControl(&flagValue_, p.peer, flagOffset(c, comm_.rank), c.gen);
        }
        flushTouched();
    }

    void finishRemote(std::uint64_t seq) override
    {
        if (seq >= baseline_ + 2)
        {
            ackValue_ = seq - 1;
            for (const auto& p : recvPeers_)
            {
                const ArenaBlock c = peerCtrl_[p.peer];
                writeControl(&ackValue_, p.peer, ackOffset(c, comm_.rank), c.gen);
            }
            flushTouched();
        }
        waitOwn(recvPeers_, seq, [&](int peer) { return flagOffset(ctrl_, peer); }, "data (rma flag)");
        if (!recvPeers_.empty())
        {
            MPI_Win_sync(arena().window(data_.gen));
        }
    }

    std::span<const std::byte> remoteRecvBuffer(int link, std::uint64_t seq) override
    {
        const Region& r = own_[link];
        return {arena().local(ArenaBlock{r.gen, r.off[seq % 2]}), recvs_[link].bytes};
    }

    std::uint64_t     flagValue_ = 0, ackValue_ = 0; // origin buffers live until flushed
    std::vector<bool> touched_;
};

} // namespace

std::unique_ptr<Arena> makeRmaArena(Communicator::Impl& comm)
{
    return std::make_unique<RmaArena>(comm);
}

std::unique_ptr<Exchange> makeRmaExchange(Communicator::Impl& comm, Phase phase)
{
    return std::make_unique<RmaExchange>(comm, phase);
}

} // namespace putmd::comm
