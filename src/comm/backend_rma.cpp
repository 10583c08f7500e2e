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
 * see writeControl) and read only with fetch-and-op (loads under SimGrid),
 * so every concurrent access to them is atomic; data regions are never
 * written while their owner reads them (parity + ack).
 *
 * Under SimGrid (putmd_smpi, kSimGrid), two more things differ; the same
 * bytes reach the same memory in the same order, and the results are the
 * same (docs/scaling.md, "rma under SimGrid"):
 *  - the epoch: SMPI 3.32 checks at every put and fetch-and-op that the
 *    origin holds a lock on the target's window by walking that window's
 *    list of lockers, and MPI_Win_lock_all puts every rank on every list
 *    (a walk of ~1,000 per call at 1,024 ranks); its MPI_Win_flush_all
 *    visits every rank's window, each under a simulated mutex. So a rank
 *    locks (shared, MPI_MODE_NOCHECK) only the windows it accesses, at the
 *    first access (RmaArena::access), and flushes the targets it wrote to
 *    one by one;
 *  - reading its own flags and waiting for them: a load, and a sleep on
 *    the rank's bell, which every writer of flags or acknowledgements rings
 *    right after the flush that completed them (comm/smpi_bell.h: the
 *    polls were the simulation's main cost and, through a mutex of the
 *    window, held back the senders).
 * With an MPI library the epoch stays lock_all, the flush flush_all and the
 * read fetch-and-op with a polling Waiter.
 */
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "comm/backends.h"
#include "comm/onesided.h"
#include "comm/shared_flag.h"
#include "comm/smpi_bell.h"
#include "comm/waiter.h"
#include "core/clock.h"

namespace putmd::comm
{

namespace
{

#if PUTMD_SMPI
constexpr bool kSimGrid = true;
#else
constexpr bool kSimGrid = false;
#endif

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
        for (std::size_t g = 0; g < gens_.size(); ++g)
        {
            if constexpr (kSimGrid)
            {
                for (int t = 0; t < comm_.size; ++t)
                {
                    if (locked_[g][static_cast<std::size_t>(t)])
                    {
                        MPI_Win_unlock(t, gens_[g].win);
                    }
                }
            }
            else
            {
                MPI_Win_unlock_all(gens_[g].win);
            }
            MPI_Win_free(&gens_[g].win);
        }
    }

    /* Before a one-sided call on generation gen's window at target: under
     * SimGrid, the target's shared lock at the first access (see above). */
    void access(int gen, int target)
    {
        if constexpr (kSimGrid)
        {
            auto locked = locked_[static_cast<std::size_t>(gen)].begin() + target;
            if (!*locked)
            {
                MPI_Win_lock(MPI_LOCK_SHARED, target, MPI_MODE_NOCHECK, window(gen));
                *locked = true;
            }
        }
    }

#if PUTMD_SMPI
    SmpiBells& bells() { return *bells_; }
#endif

protected:
    Generation create(std::size_t size) override
    {
        Generation g;
        g.size = size;
        void* base = nullptr;
        MPI_Win_allocate(static_cast<MPI_Aint>(size), 1, MPI_INFO_NULL, comm_.comm, &base, &g.win);
        g.base = static_cast<std::byte*>(base);
        std::memset(g.base, 0, size);
        if constexpr (kSimGrid)
        {
            locked_.emplace_back(static_cast<std::size_t>(comm_.size), false);
        }
        else
        {
            MPI_Win_lock_all(MPI_MODE_NOCHECK, g.win);
        }
#if PUTMD_SMPI
        if (!bells_) // the first generation (collective)
        {
            bells_ = std::make_unique<SmpiBells>(comm_.comm);
        }
#endif
        MPI_Win_sync(g.win);
        return g;
    }

private:
    std::vector<std::vector<bool>> locked_; // per generation, per target (kSimGrid)
#if PUTMD_SMPI
    std::unique_ptr<SmpiBells> bells_; // destroyed after the windows (members go after the body)
#endif
};

class RmaExchange final : public OneSidedExchange
{
public:
    RmaExchange(Communicator::Impl& comm, Phase phase) : OneSidedExchange(comm, phase, true, 2) {}

private:
    RmaArena& rmaArena() { return static_cast<RmaArena&>(arena()); }

    std::uint64_t readOwn(std::size_t offset)
    {
#if PUTMD_SMPI
        return loadAcquire(arena().local(ArenaBlock{ctrl_.gen, offset})); // see above
#else
        std::uint64_t value = 0, dummy = 0;
        MPI_Win       w     = arena().window(ctrl_.gen);
        MPI_Fetch_and_op(&dummy, &value, MPI_UINT64_T, comm_.rank, static_cast<MPI_Aint>(offset), MPI_NO_OP, w);
        MPI_Win_flush(comm_.rank, w);
        return value;
#endif
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
#if PUTMD_SMPI
            const double since = clockSeconds();
            while (readOwn(offset(p.peer)) < value)
            {
                rmaArena().bells().wait(since, [&] { return describe(what, p.peer, value); });
            }
#else
            Waiter waiter([&] { return describe(what, p.peer, value); });
            while (readOwn(offset(p.peer)) < value)
            {
                waiter.poll();
            }
#endif
        }
    }

    /* Completes every put issued since the last call: flush_all per
     * generation written, or under SimGrid each target written, ringing its
     * bell right after its flush when `ring` (control words; see above). */
    void flushTouched(bool ring = false)
    {
        if constexpr (kSimGrid)
        {
            for (const auto& [gen, target] : touchedTargets_)
            {
                MPI_Win_flush(target, arena().window(gen));
#if PUTMD_SMPI
                if (ring)
                {
                    rmaArena().bells().ring(target);
                }
#endif
            }
            touchedTargets_.clear();
            return;
        }
        (void)ring;
        for (std::size_t g = 0; g < touched_.size(); ++g)
        {
            if (touched_[g])
            {
                MPI_Win_flush_all(arena().window(static_cast<int>(g)));
                touched_[g] = false;
            }
        }
    }
    /* Before a put into target's memory in generation gen. */
    void touch(int gen, int target)
    {
        if constexpr (kSimGrid)
        {
            rmaArena().access(gen, target);
            const std::pair<int, int> t{gen, target};
            if (std::find(touchedTargets_.begin(), touchedTargets_.end(), t) == touchedTargets_.end())
            {
                touchedTargets_.push_back(t);
            }
            return;
        }
        touched_.resize(static_cast<std::size_t>(arena().generations()), false);
        touched_[static_cast<std::size_t>(gen)] = true;
    }

    /* A flag or an acknowledgement into peer's control block, completed by
     * the next flush (putFlagWord: an accumulate, a put under SimGrid). */
    void writeControl(const std::uint64_t* value, int peer, std::size_t offset, int gen)
    {
        touch(gen, peer);
        putFlagWord(value, peer, static_cast<MPI_Aint>(offset), arena().window(gen));
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
                touch(r.gen, p.peer);
                MPI_Put(data.data(), static_cast<int>(n), MPI_BYTE, p.peer, static_cast<MPI_Aint>(r.off[seq % 2]),
                        static_cast<int>(n), MPI_BYTE, arena().window(r.gen));
            }
        }
        flushTouched();
        flagValue_ = seq;
        for (const auto& p : sendPeers_)
        {
            const ArenaBlock c = peerCtrl_[p.peer];
            writeControl(&flagValue_, p.peer, flagOffset(c, comm_.rank), c.gen);
        }
        flushTouched(true);
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
            flushTouched(true);
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
    std::vector<bool>                touched_;        // per generation (flush_all)
    std::vector<std::pair<int, int>> touchedTargets_; // (generation, target) under SimGrid
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
