/* fft/transpose.cpp — the four transpose algorithms of the pencil FFT.
 *
 * alltoallv: pack every block for another rank, copy the self block,
 *   MPI_Alltoallv on the sub-communicator, unpack every received block.
 *
 * Blocks are packed in the storage order of the source layout; unpacking
 * (and the direct copy of the self block) is a 2D transpose between the
 * source's and the destination's contiguous axes, done in 32x32 tiles.
 *
 * pairwise: copy the self block, then p-1 rounds; in each round every rank
 *   exchanges with exactly one partner by MPI_Sendrecv. For p a power of two
 *   round r pairs rank k with k XOR r (send and receive partner the same);
 *   otherwise rank k sends to (k + r) mod p and receives from (k - r) mod p.
 *   Empty directions use MPI_PROC_NULL (both sides know the sizes), so a
 *   round with nothing to move costs nothing.
 *
 * rma: MPI-3 passive target. One window per transport (row, column),
 *   allocated once (MPI_Win_allocate) and kept in one
 *   MPI_Win_lock_all(MPI_MODE_NOCHECK) epoch until the FFT is destroyed.
 *   The window is made over the parent communicator, not the row / column
 *   one, and addressed by parent ranks: Open MPI 4.1's osc/rdma names the
 *   shared-memory segment of a window after the communicator's context id,
 *   which sibling split communicators (two rows) can share, and concurrent
 *   windows on two rows then silently shared one segment (seen here: wrong
 *   spectra and "unlink(2) /dev/shm/osc_rdma..." errors on a 2x2 grid).
 *   When the parent itself is not the whole world (separate PME ranks), the
 *   window is created under the node-wide window-creation lock of
 *   src/comm/window_lock.h, as the communication layer's arenas are.
 *   Layout of a window:
 *     flags[P] (uint64, one per parent rank) | receive region parity 0 | parity 1
 *   each region holding the largest receive of any plan on this window. The
 *   byte offsets where an origin's block lands in each target's regions are
 *   exchanged once (MPI_Alltoall) when the transport is built.
 *   Execution number s on a sub-communicator (s = 1, 2, ..., counted per
 *   sub-communicator, the same on every member because execute is
 *   collective), origin side:
 *     1. for each other rank q: pack the block for q, MPI_Put it into q's
 *        region of parity s%2, MPI_Win_flush(q) (the data is complete at q),
 *        then MPI_Accumulate(MPI_REPLACE) the value s into q's flags[me] —
 *        also when the block is empty, so every member hears from every
 *        other member in every execution; finally MPI_Win_flush_all;
 *     2. copy the self block;
 *   target side:
 *     3. poll own flags[q] >= s for all other q (MPI_Fetch_and_op MPI_NO_OP
 *        on its own window, an atomic read), and as soon as one is set,
 *        MPI_Win_sync and unpack that block (arrival order).
 *   Why a block is never overwritten before its receiver read it: origin o
 *   writes parity s%2 of q in execution s only. q read that region last in
 *   execution s-2, and q finished execution s-2 before it started s-1 and
 *   sent its flag s-1 to o; o in turn only starts execution s after its own
 *   execution s-1 saw every flag s-1, q's included. So the flag of the next
 *   execution is the acknowledgement of the previous one, for any sequence of
 *   plans (forward, forward, backward, ...) on the window. An origin can be
 *   at most one execution ahead of a target (it needs the target's flag of
 *   the execution before), so flags never run more than one past the value
 *   awaited and `>=` suffices.
 *   Under SimGrid (putmd_smpi) as in the rma backend (comm/backend_rma.cpp):
 *   each rank locks only its peers' windows (SMPI walks a list of every
 *   locker at every one-sided call), the flag is a put (SMPI completes each
 *   accumulate before it returns), flush_all becomes a flush of each peer
 *   followed by a ring of its bell, and a rank reads its flags with loads
 *   and sleeps on its bell between them (comm/smpi_bell.h).
 *
 * shm: the stage arrays of every rank of the FFT live in one shared-memory
 *   window (SharedStageArrays, MPI_Win_allocate_shared, all ranks on one
 *   machine), and a rank copies each peer's block straight from the peer's
 *   source array into its own destination (the same 2D transpose as the
 *   unpacking above): no packing, no put, no receive buffer. Each rank has
 *   one flag word per transport in its segment, counting up. Execution s:
 *     1. store 2s-1 into my flag (release): my source is complete;
 *     2. wait until every other rank's flag is >= 2s-1 (acquire loads);
 *     3. copy the self block and every peer's block into my destination;
 *     4. store 2s: I have read all I need of the others' arrays;
 *     5. wait until every other rank's flag is >= 2s.
 *   So no rank reads a peer's array outside the peer's execute(): before
 *   step 2 the source is complete, after step 5 nobody reads any more, and
 *   the caller may write any array between calls in any order (forward,
 *   forward, backward, ...; the FFT's local passes, the PME solve). Step 5
 *   costs one more meeting of the ranks per transpose, little where the
 *   copies are balanced. A rank is at most one step of the count ahead of
 *   another, so `>=` suffices. No MPI call in an execution: an MD step
 *   makes none for the transposes.
 *
 *   Waits never hang silently: they are the communication layer's Waiter
 *   (src/comm/waiter.h), so after PUTMD_COMM_TIMEOUT seconds the rank
 *   prints which peers' flags of which execution it awaited and aborts.
 *   While waiting it spins a little, then yields the core (sched_yield) and
 *   naps, since the tests run 8 ranks on 2 cores.
 */
#include "fft/transpose.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "comm/shared_flag.h"
#include "comm/smpi_bell.h"
#include "comm/waiter.h"
#include "comm/window_lock.h"
#include "core/clock.h"
#include "fft/fftw_precision.h"

namespace putmd::fft
{

namespace
{

#if PUTMD_DOUBLE
const MPI_Datatype kMpiReal = MPI_DOUBLE;
#else
const MPI_Datatype kMpiReal = MPI_FLOAT;
#endif

std::int64_t round64(std::int64_t n)
{
    return (n + 63) / 64 * 64;
}

/* A buffer of complex numbers, allocated once (FFTW alignment). */
class Buffer
{
public:
    explicit Buffer(long n)
    {
        p_ = static_cast<Complex*>(PUTMD_FFTW(malloc)(sizeof(Complex) * std::size_t(std::max(1L, n))));
        if (p_ == nullptr)
        {
            throw std::runtime_error("out of memory allocating a transpose buffer");
        }
    }
    ~Buffer() { PUTMD_FFTW(free)(p_); }
    Buffer(const Buffer&)            = delete;
    Buffer& operator=(const Buffer&) = delete;
    Complex* get() const { return p_; }

private:
    Complex* p_ = nullptr;
};

Layout packedLayout(const Box& box, const Layout& source)
{
    return Layout{box, source.order};
}

/* The common part: sub-communicator, self copy, pack and unpack. */
class TransportBase : public Transport
{
public:
    TransportBase(MPI_Comm comm, const std::vector<TransposePlan*>& plans, std::vector<int> peerRanks,
                  const char* name) :
        comm_(comm), p_(static_cast<int>(peerRanks.size())), peerRanks_(std::move(peerRanks)), name_(name)
    {
        for (const TransposePlan* t : plans)
        {
            me_       = t->me;
            maxSend_  = std::max(maxSend_, t->sendTotal);
            maxRecv_  = std::max(maxRecv_, t->recvTotal);
        }
    }

protected:
    void selfCopy(const TransposePlan& t, const Complex* src, Complex* dst)
    {
        copyBox(src, t.from, dst, t.to, t.send[me_]);
    }
    void pack(const TransposePlan& t, int k, const Complex* src, Complex* sendBuf)
    {
        if (t.send[k].volume() > 0)
        {
            copyBox(src, t.from, sendBuf + t.sendOffset[k], packedLayout(t.send[k], t.from), t.send[k]);
        }
    }
    void unpack(const TransposePlan& t, int k, const Complex* packed, Complex* dst)
    {
        if (t.recv[k].volume() > 0)
        {
            // Blocks are packed in the storage order of the sender's source
            // layout, which has the same order as ours (same stage).
            copyBox(packed, packedLayout(t.recv[k], t.from), dst, t.to, t.recv[k]);
        }
    }
    static void count(const TransposePlan& t, FftCommStats& stats)
    {
        stats.messages += t.messages;
        stats.bytes += t.bytes;
        for (long b : t.messageBytes)
        {
            stats.sizes.record(b);
        }
    }

    MPI_Comm         comm_;
    int              p_;
    int              me_ = 0;
    std::vector<int> peerRanks_;
    const char*      name_;
    long             maxSend_ = 0, maxRecv_ = 0;
};

/* A one-rank sub-communicator: the transpose is a local reordering. */
class SelfTransport final : public TransportBase
{
public:
    using TransportBase::TransportBase;
    void execute(TransposePlan& t, const Complex* src, Complex* dst, FftCommStats&) override
    {
        selfCopy(t, src, dst);
    }
};

class AlltoallvTransport final : public TransportBase
{
public:
    AlltoallvTransport(MPI_Comm comm, const std::vector<TransposePlan*>& plans, std::vector<int> peerRanks,
                       const char* name) :
        TransportBase(comm, plans, std::move(peerRanks), name), send_(maxSend_), recv_(maxRecv_)
    {
    }
    void execute(TransposePlan& t, const Complex* src, Complex* dst, FftCommStats& stats) override
    {
        for (int k = 0; k < p_; ++k)
        {
            if (k != me_)
            {
                pack(t, k, src, send_.get());
            }
        }
        selfCopy(t, src, dst);
        MPI_Alltoallv(send_.get(), t.mpiSendCounts.data(), t.mpiSendDispls.data(), kMpiReal, recv_.get(),
                      t.mpiRecvCounts.data(), t.mpiRecvDispls.data(), kMpiReal, comm_);
        stats.collectives++;
        for (int k = 0; k < p_; ++k)
        {
            if (k != me_)
            {
                unpack(t, k, recv_.get() + t.recvOffset[k], dst);
            }
        }
        count(t, stats);
    }

private:
    Buffer send_, recv_;
};

class PairwiseTransport final : public TransportBase
{
public:
    PairwiseTransport(MPI_Comm comm, const std::vector<TransposePlan*>& plans, std::vector<int> peerRanks,
                      const char* name) :
        TransportBase(comm, plans, std::move(peerRanks), name), send_(maxSend_), recv_(maxRecv_)
    {
        powerOfTwo_ = (p_ & (p_ - 1)) == 0;
    }
    void execute(TransposePlan& t, const Complex* src, Complex* dst, FftCommStats& stats) override
    {
        selfCopy(t, src, dst);
        for (int r = 1; r < p_; ++r)
        {
            const int to   = powerOfTwo_ ? (me_ ^ r) : (me_ + r) % p_;
            const int from = powerOfTwo_ ? (me_ ^ r) : (me_ - r + p_) % p_;
            const int sendCount = t.mpiSendCounts[to];
            const int recvCount = t.mpiRecvCounts[from];
            if (sendCount == 0 && recvCount == 0)
            {
                continue;
            }
            pack(t, to, src, send_.get());
            MPI_Sendrecv(send_.get() + t.sendOffset[to], sendCount, kMpiReal, sendCount > 0 ? to : MPI_PROC_NULL, 7,
                         recv_.get() + t.recvOffset[from], recvCount, kMpiReal,
                         recvCount > 0 ? from : MPI_PROC_NULL, 7, comm_, MPI_STATUS_IGNORE);
            unpack(t, from, recv_.get() + t.recvOffset[from], dst);
        }
        count(t, stats);
    }

private:
    Buffer send_, recv_;
    bool   powerOfTwo_ = false;
};

class RmaTransport final : public TransportBase
{
public:
    RmaTransport(MPI_Comm comm, MPI_Comm parent, const std::vector<TransposePlan*>& plans,
                 std::vector<int> peerRanks, const char* name) :
        TransportBase(comm, plans, std::move(peerRanks), name), parent_(parent), send_(maxSend_)
    {
        int parentSize = 0;
        MPI_Comm_size(parent_, &parentSize);
        MPI_Comm_rank(parent_, &parentRank_);
        flagBytes_                   = round64(std::int64_t(parentSize) * 8);
        const std::int64_t flagBytes = flagBytes_;
        regionBytes_                 = round64(maxRecv_ * std::int64_t(sizeof(Complex)));
        const std::int64_t total     = flagBytes + 2 * regionBytes_;
        void*              base      = nullptr;
        comm::withWindowCreationLock(parent_, [&] {
            MPI_Win_allocate(static_cast<MPI_Aint>(total), 1, MPI_INFO_NULL, parent_, &base, &win_);
        });
        base_ = static_cast<std::byte*>(base);
        std::memset(base_, 0, static_cast<std::size_t>(total));
#if PUTMD_SMPI
        // SimGrid: the peers' windows only, and the bells (see the top)
        for (int d = 1; d < p_; ++d)
        {
            MPI_Win_lock(MPI_LOCK_SHARED, peerRanks_[(me_ + d) % p_], MPI_MODE_NOCHECK, win_);
        }
        bells_ = std::make_unique<comm::SmpiBells>(parent_);
#else
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
#endif
        MPI_Win_sync(win_);
        // The offsets where each origin's blocks land, per plan and parity.
        std::vector<std::int64_t> mine(2 * std::size_t(p_)), theirs(2 * std::size_t(p_));
        for (TransposePlan* t : plans)
        {
            for (int k = 0; k < p_; ++k)
            {
                for (int par = 0; par < 2; ++par)
                {
                    mine[2 * k + par] = flagBytes + par * regionBytes_ + t->recvOffset[k] * std::int64_t(sizeof(Complex));
                }
            }
            MPI_Alltoall(mine.data(), 2, MPI_INT64_T, theirs.data(), 2, MPI_INT64_T, comm_);
            for (int k = 0; k < p_; ++k)
            {
                t->remoteOffset[k] = {theirs[2 * k], theirs[2 * k + 1]};
            }
        }
        // No origin may touch a window before its owner zeroed it.
        MPI_Barrier(parent_);
        pending_.reserve(std::size_t(p_));
    }

    ~RmaTransport() override
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
        {
#if PUTMD_SMPI
            for (int d = 1; d < p_; ++d)
            {
                MPI_Win_unlock(peerRanks_[(me_ + d) % p_], win_);
            }
#else
            MPI_Win_unlock_all(win_);
#endif
            MPI_Win_free(&win_); // then bells_ goes: every ring came before its barriers
        }
    }

    void execute(TransposePlan& t, const Complex* src, Complex* dst, FftCommStats& stats) override
    {
        const std::uint64_t s   = ++seq_;
        const int           par = static_cast<int>(s % 2);
        flagValue_              = s;
        // Start with the next rank so that not everybody puts to rank 0 first.
        for (int d = 1; d < p_; ++d)
        {
            const int  q      = (me_ + d) % p_;
            const int  target = peerRanks_[q];
            const long n      = t.send[q].volume();
            if (n > 0)
            {
                pack(t, q, src, send_.get());
                // counts in reals (checked to fit an int), displacement in bytes
                MPI_Put(send_.get() + t.sendOffset[q], t.mpiSendCounts[q], kMpiReal, target,
                        static_cast<MPI_Aint>(t.remoteOffset[q][par]), t.mpiSendCounts[q], kMpiReal, win_);
                MPI_Win_flush(target, win_);
            }
            comm::putFlagWord(&flagValue_, target, static_cast<MPI_Aint>(8 * parentRank_), win_);
        }
#if PUTMD_SMPI
        // each target's flag completed, then its bell (comm/smpi_bell.h)
        for (int d = 1; d < p_; ++d)
        {
            const int target = peerRanks_[(me_ + d) % p_];
            MPI_Win_flush(target, win_);
            bells_->ring(target);
        }
#else
        if (p_ > 1)
        {
            MPI_Win_flush_all(win_);
        }
#endif
        selfCopy(t, src, dst);

        pending_.clear();
        for (int d = 1; d < p_; ++d)
        {
            pending_.push_back((me_ + p_ - d) % p_);
        }
#if PUTMD_SMPI
        const double since = clockSeconds();
#else
        comm::Waiter waiter([&] { return describeWait(s); });
#endif
        while (!pending_.empty())
        {
            bool progress = false;
            for (std::size_t i = 0; i < pending_.size();)
            {
                const int q = pending_[i];
                if (readOwnFlag(q) >= s)
                {
                    MPI_Win_sync(win_);
                    unpack(t, q,
                           reinterpret_cast<const Complex*>(base_ + flagBytes_ + par * regionBytes_
                                                            + t.recvOffset[q] * long(sizeof(Complex))),
                           dst);
                    pending_[i] = pending_.back();
                    pending_.pop_back();
                    progress = true;
                }
                else
                {
                    ++i;
                }
            }
            if (!progress && !pending_.empty())
            {
#if PUTMD_SMPI
                bells_->wait(since, [&] { return describeWait(s); });
#else
                waiter.poll();
#endif
            }
        }
        count(t, stats);
    }

private:

    std::string describeWait(std::uint64_t s) const
    {
        std::string who;
        for (int q : pending_)
        {
            who += (who.empty() ? "" : ", ") + std::to_string(peerRanks_[q]);
        }
        return std::string("in the rma ") + name_ + " transpose waiting for the ready flags of execution "
               + std::to_string(s) + " from rank(s) " + who + " of the FFT communicator";
    }

    std::uint64_t readOwnFlag(int q)
    {
#if PUTMD_SMPI
        return comm::loadAcquire(base_ + 8 * peerRanks_[q]); // comm/smpi_bell.h
#else
        std::uint64_t value = 0, dummy = 0;
        MPI_Fetch_and_op(&dummy, &value, MPI_UINT64_T, parentRank_, static_cast<MPI_Aint>(8 * peerRanks_[q]),
                         MPI_NO_OP, win_);
        MPI_Win_flush(parentRank_, win_);
        return value;
#endif
    }

    MPI_Comm         parent_;          // the window's communicator
    int              parentRank_ = 0;
    Buffer           send_;
    MPI_Win          win_        = MPI_WIN_NULL;
    std::byte*       base_       = nullptr;
    std::int64_t     flagBytes_  = 0; // flags[parent size], rounded up to 64 bytes
    std::int64_t     regionBytes_ = 0; // one parity's receive region
    std::uint64_t    seq_ = 0, flagValue_ = 0; // flagValue_: origin buffer of the flag accumulates
    std::vector<int> pending_;
#if PUTMD_SMPI
    std::unique_ptr<comm::SmpiBells> bells_; // comm/smpi_bell.h
#endif
};

class ShmTransport final : public TransportBase
{
public:
    ShmTransport(MPI_Comm comm, MPI_Comm parent, const std::vector<TransposePlan*>& plans,
                 std::vector<int> peerRanks, const char* name, SharedStageArrays& shared, int index) :
        TransportBase(comm, plans, std::move(peerRanks), name), shared_(shared), index_(index)
    {
        MPI_Comm_rank(parent, &parentRank_);
        for (int d = 1; d < p_; ++d)
        {
            others_.push_back((me_ + d) % p_);
        }
    }

    void execute(TransposePlan& t, const Complex* src, Complex* dst, FftCommStats& stats) override
    {
        const int array = shared_.arrayOf(src);
        if (array < 0)
        {
            throw std::logic_error(std::string("shm ") + name_ + " transpose: the source is not a shared stage array");
        }
        const std::uint64_t s = ++seq_;
        comm::storeRelease(shared_.flag(parentRank_, index_), 2 * s - 1);
        // every peer ready for s has finished s - 1, its reads included
        awaitAll(2 * s - 1, "ready", s);
        unread_ = -1;
        selfCopy(t, src, dst);
        for (int q : others_)
        {
            if (t.recv[q].volume() > 0)
            {
                copyBox(shared_.peer(peerRanks_[q], array), t.peerFrom[q], dst, t.to, t.recv[q]);
            }
        }
        comm::storeRelease(shared_.flag(parentRank_, index_), 2 * s);
        // The peers may still be reading src: their done flags are awaited
        // only before src is written again (settle), which in an FFT is
        // mostly the next execution, whose ready flags already say so. One
        // meeting per transpose instead of two.
        unread_ = array;
        count(t, stats);
    }

    void settle(const Complex* array) override
    {
        if (unread_ >= 0 && shared_.arrayOf(array) == unread_)
        {
            awaitAll(2 * seq_, "done", seq_);
            unread_ = -1;
        }
    }

    ~ShmTransport() override
    {
        // the peers' reads end before the window can go (it outlives the
        // transports); no wait after a failed execution
        if (unread_ >= 0 && std::uncaught_exceptions() == 0)
        {
            awaitAll(2 * seq_, "done", seq_); // (a peer that stopped: the wait's timeout aborts)
        }
    }

private:
    void awaitAll(std::uint64_t value, const char* what, std::uint64_t s)
    {
        comm::Waiter waiter([&] { return describeWait(value, what, s); });
        while (true)
        {
            std::size_t ready = 0;
            for (int q : others_)
            {
                ready += comm::loadAcquire(shared_.flag(peerRanks_[q], index_)) >= value ? 1 : 0;
            }
            if (ready == others_.size())
            {
                return;
            }
            waiter.poll();
        }
    }

    std::string describeWait(std::uint64_t value, const char* what, std::uint64_t s) const
    {
        std::string who;
        for (int q : others_)
        {
            if (comm::loadAcquire(shared_.flag(peerRanks_[q], index_)) < value)
            {
                who += (who.empty() ? "" : ", ") + std::to_string(peerRanks_[q]);
            }
        }
        return std::string("in the shm ") + name_ + " transpose waiting for the " + what + " flags of execution "
               + std::to_string(s) + " from rank(s) " + who + " of the FFT communicator";
    }

    SharedStageArrays& shared_;
    int                index_      = 0;
    int                parentRank_ = 0;
    std::uint64_t      seq_        = 0;
    int                unread_     = -1; // the stage array peers may still read (seq_'s source), or -1
    std::vector<int>   others_; // the other ranks, from the next one on
};

int checkedInt(long v)
{
    if (v > std::numeric_limits<int>::max())
    {
        throw std::runtime_error("pencil FFT: a transpose block is too large for an MPI count");
    }
    return static_cast<int>(v);
}

} // namespace

Box intersect(const Box& a, const Box& b)
{
    Box r;
    for (int d = 0; d < 3; ++d)
    {
        const int lo = std::max(a.start[d], b.start[d]);
        const int hi = std::min(a.start[d] + a.size[d], b.start[d] + b.size[d]);
        r.start[d]   = lo;
        r.size[d]    = std::max(0, hi - lo);
    }
    return r;
}

std::array<long, 3> Layout::strides() const
{
    std::array<long, 3> s{};
    s[order[2]] = 1;
    s[order[1]] = box.size[order[2]];
    s[order[0]] = long(box.size[order[2]]) * box.size[order[1]];
    return s;
}

void copyBox(const Complex* src, const Layout& srcLayout, Complex* dst, const Layout& dstLayout, const Box& box)
{
    if (box.volume() == 0)
    {
        return;
    }
    const auto ss = srcLayout.strides();
    const auto ds = dstLayout.strides();
    long       s0 = 0, d0 = 0;
    for (int a = 0; a < 3; ++a)
    {
        s0 += (box.start[a] - srcLayout.box.start[a]) * ss[a];
        d0 += (box.start[a] - dstLayout.box.start[a]) * ds[a];
    }
    const int  a0 = srcLayout.order[0], a1 = srcLayout.order[1], a2 = srcLayout.order[2];
    const int  df = dstLayout.order[2]; // the destination's contiguous axis
    if (df == a2)
    {
        // Both contiguous along the same axis: row copies.
        const int n0 = box.size[a0], n1 = box.size[a1], n2 = box.size[a2];
        for (int i0 = 0; i0 < n0; ++i0)
        {
            for (int i1 = 0; i1 < n1; ++i1)
            {
                std::memcpy(static_cast<void*>(dst + d0 + i0 * ds[a0] + i1 * ds[a1]), src + s0 + i0 * ss[a0] + i1 * ss[a1],
                            sizeof(Complex) * std::size_t(n2));
            }
        }
        return;
    }
    // A 2D transpose between the source's contiguous axis a2 and the
    // destination's df, for every point of the third axis; in tiles, so that
    // the strided side stays in cache.
    constexpr int kTile = 32;
    const int     ao    = 3 - a2 - df;
    const int     no = box.size[ao], nj = box.size[df], nk = box.size[a2];
    const long    dk    = ds[a2];
    const long    sj    = ss[df];
    for (int io = 0; io < no; ++io)
    {
        const Complex* so = src + s0 + io * ss[ao];
        Complex*       dO = dst + d0 + io * ds[ao];
        for (int jb = 0; jb < nj; jb += kTile)
        {
            const int je = std::min(nj, jb + kTile);
            for (int kb = 0; kb < nk; kb += kTile)
            {
                const int ke = std::min(nk, kb + kTile);
                int j = jb;
                if constexpr (sizeof(Complex) == 8)
                {
                    // single precision: 2 x 2 blocks, a complex pair per
                    // 128-bit load and store (bytes only: the same bits)
                    for (; j + 1 < je; j += 2)
                    {
                        const Complex* s0 = so + j * sj;
                        const Complex* s1 = s0 + sj;
                        Complex*       dr = dO + j;
                        int            k  = kb;
                        for (; k + 1 < ke; k += 2)
                        {
                            const __m128d a = _mm_loadu_pd(reinterpret_cast<const double*>(s0 + k));
                            const __m128d b = _mm_loadu_pd(reinterpret_cast<const double*>(s1 + k));
                            _mm_storeu_pd(reinterpret_cast<double*>(dr + k * dk), _mm_unpacklo_pd(a, b));
                            _mm_storeu_pd(reinterpret_cast<double*>(dr + (k + 1) * dk), _mm_unpackhi_pd(a, b));
                        }
                        for (; k < ke; ++k)
                        {
                            dr[k * dk]     = s0[k];
                            dr[k * dk + 1] = s1[k];
                        }
                    }
                }
                for (; j < je; ++j)
                {
                    const Complex* sr = so + j * sj;
                    Complex*       dr = dO + j;
                    for (int k = kb; k < ke; ++k)
                    {
                        dr[k * dk] = sr[k];
                    }
                }
            }
        }
    }
}

bool allOnOneMachine(MPI_Comm comm)
{
#if PUTMD_SMPI
    (void)comm;
    return false; // SimGrid's SMPI simulates messages and one-sided calls, not shared memory
#else
    if (comm == MPI_COMM_NULL)
    {
        return true;
    }
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int size = 0, nodeSize = 0, all = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &nodeSize);
    MPI_Comm_free(&node);
    const int mine = nodeSize == size ? 1 : 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    return all == 1;
#endif
}

namespace
{
constexpr std::int64_t kFlagBytes = 64; // one flag word per transport, each on its own cache line
} // namespace

SharedStageArrays::SharedStageArrays(MPI_Comm parent, std::array<long, 3> counts)
{
#if PUTMD_SMPI
    (void)parent;
    (void)counts;
    throw std::invalid_argument("shm transposes need shared memory, which the SMPI build does not simulate");
#else
    int size = 0;
    MPI_Comm_size(parent, &size);
    MPI_Comm_rank(parent, &rank_);
    // offsets from a 64-byte aligned start: Open MPI's segments begin 8
    // bytes past a boundary, and FFTW's plans (made on these arrays) must
    // see the alignment fftw_malloc gives, or they may round differently
    std::array<std::int64_t, 4> mine{}; // the flags' start, then the three arrays'
    std::int64_t                total = 2 * kFlagBytes;
    for (int a = 0; a < 3; ++a)
    {
        mine[a + 1] = total;
        total += round64(std::max(1L, counts[a]) * std::int64_t(sizeof(Complex)));
    }
    total += 64; // room for the alignment
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    comm::withWindowCreationLock(parent, [&] {
        MPI_Win_allocate_shared(static_cast<MPI_Aint>(total), 1, info, parent, &base, &win_);
    });
    MPI_Info_free(&info);
    std::memset(base, 0, static_cast<std::size_t>(total));
    const std::int64_t start = (64 - std::int64_t(reinterpret_cast<std::uintptr_t>(base) % 64)) % 64;
    for (auto& o : mine)
    {
        o += start;
    }
    offsets_.resize(std::size_t(size));
    MPI_Allgather(mine.data(), 4, MPI_INT64_T, offsets_.data(), 4, MPI_INT64_T, parent);
    base_.resize(std::size_t(size));
    for (int r = 0; r < size; ++r)
    {
        MPI_Aint bytes = 0;
        int      unit  = 0;
        void*    ptr   = nullptr;
        MPI_Win_shared_query(win_, r, &bytes, &unit, &ptr);
        base_[std::size_t(r)] = static_cast<std::byte*>(ptr);
    }
    // every rank's flags are zero before any rank reads them
    std::atomic_thread_fence(std::memory_order_seq_cst);
    MPI_Barrier(parent);
#endif
}

SharedStageArrays::~SharedStageArrays()
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && win_ != MPI_WIN_NULL)
    {
        MPI_Win_free(&win_);
    }
}

Complex* SharedStageArrays::mine(int array) const
{
    return reinterpret_cast<Complex*>(base_[std::size_t(rank_)] + offsets_[std::size_t(rank_)][std::size_t(array) + 1]);
}

const Complex* SharedStageArrays::peer(int parentRank, int array) const
{
    return reinterpret_cast<const Complex*>(base_[std::size_t(parentRank)]
                                            + offsets_[std::size_t(parentRank)][std::size_t(array) + 1]);
}

std::uint64_t* SharedStageArrays::flag(int parentRank, int transport) const
{
    return reinterpret_cast<std::uint64_t*>(base_[std::size_t(parentRank)] + offsets_[std::size_t(parentRank)][0]
                                            + transport * kFlagBytes);
}

int SharedStageArrays::arrayOf(const Complex* p) const
{
    for (int a = 0; a < 3; ++a)
    {
        if (p == mine(a))
        {
            return a;
        }
    }
    return -1;
}

std::unique_ptr<Transport> makeTransport(TransposeAlgorithm alg, MPI_Comm comm, MPI_Comm parent,
                                         std::vector<TransposePlan*> plans, std::vector<int> peerRanks,
                                         const char* name, SharedStageArrays* shared, int transportIndex)
{
    const int p = static_cast<int>(peerRanks.size());
    for (TransposePlan* t : plans)
    {
        for (int k = 0; k < p; ++k)
        {
            if (k == t->me)
            {
                continue;
            }
            t->mpiSendCounts[k] = checkedInt(2 * t->send[k].volume());
            t->mpiSendDispls[k] = checkedInt(2 * t->sendOffset[k]);
            t->mpiRecvCounts[k] = checkedInt(2 * t->recv[k].volume());
            t->mpiRecvDispls[k] = checkedInt(2 * t->recvOffset[k]);
        }
    }
    // All rows (columns) of the process grid have the same size, so every
    // rank of the parent makes the same choice here: the rma window, which
    // is collective over the parent, is made by all ranks or none.
    if (p == 1 || comm == MPI_COMM_NULL)
    {
        return std::make_unique<SelfTransport>(comm, plans, std::move(peerRanks), name);
    }
    switch (alg)
    {
        case TransposeAlgorithm::Alltoallv:
            return std::make_unique<AlltoallvTransport>(comm, plans, std::move(peerRanks), name);
        case TransposeAlgorithm::Pairwise:
            return std::make_unique<PairwiseTransport>(comm, plans, std::move(peerRanks), name);
        case TransposeAlgorithm::Rma:
            return std::make_unique<RmaTransport>(comm, parent, plans, std::move(peerRanks), name);
        case TransposeAlgorithm::Shm:
            if (shared == nullptr)
            {
                throw std::logic_error("shm transpose without shared stage arrays");
            }
            return std::make_unique<ShmTransport>(comm, parent, plans, std::move(peerRanks), name, *shared,
                                                  transportIndex);
    }
    throw std::logic_error("unknown transpose algorithm");
}

} // namespace putmd::fft
