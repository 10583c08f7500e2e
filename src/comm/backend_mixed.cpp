/* comm/backend_mixed.cpp — shm within a machine, p2p or rma across machines.
 *
 * A job spread over several machines has two kinds of links: between ranks
 * of one machine, where shared memory is fastest (no copy, no MPI call),
 * and between machines, where the network decides which of p2p and rma is
 * faster (on TCP, MPI's one-sided calls are emulated with messages). The
 * mixed backends give each link its kind:
 *
 *   shm+p2p, shm+rma   links to ranks of this machine: a shm exchange on the
 *                      machine group (Communicator::Impl::machine, a shm
 *                      Communicator of this group's ranks on this machine);
 *                      links to other machines: a p2p or rma exchange on the
 *                      whole group.
 *
 * A MixedExchange owns one exchange of each kind and gives every link of
 * the caller to one of them, keeping the caller's link numbers: send link k
 * is link near(k) or far(k) of its sub-exchange. plan() plans both (each
 * collective over its own group: the machine group first, then the whole
 * group, in the same order on every rank); start() and finish() run both,
 * the shm part first because it is only flag stores. Both sub-exchanges
 * count in the group's statistics (the machine group counts in its
 * parent's), so the log's table adds up as for one backend, and the bytes
 * moved are the same as with any single backend: results stay bitwise
 * identical.
 */
#include <utility>

#include "comm/backends.h"

namespace putmd::comm
{

namespace
{

class MixedExchange final : public Exchange
{
public:
    MixedExchange(Communicator::Impl& comm, Phase phase)
        : comm_(comm),
          phase_(phase),
          near_(comm.machine->makeExchange(phase)),
          far_(acrossMachines(comm.backend) == Backend::Rma ? makeRmaExchange(comm, phase)
                                                            : makeP2pExchange(comm, phase))
    {
    }

    void plan(std::span<const SendLink> sends, std::span<const int> recvPeers) override
    {
        std::vector<SendLink> nearSends, farSends;
        std::vector<int>      nearRecvs, farRecvs;
        sendAt_.clear();
        recvAt_.clear();
        for (const SendLink& l : sends)
        {
            const int m = machineRank(l.peer);
            if (m >= 0)
            {
                sendAt_.push_back({near_.get(), static_cast<int>(nearSends.size())});
                nearSends.push_back({m, l.bytes});
            }
            else
            {
                sendAt_.push_back({far_.get(), static_cast<int>(farSends.size())});
                farSends.push_back(l);
            }
        }
        for (int peer : recvPeers)
        {
            const int m = machineRank(peer);
            if (m >= 0)
            {
                recvAt_.push_back({near_.get(), static_cast<int>(nearRecvs.size())});
                nearRecvs.push_back(m);
            }
            else
            {
                recvAt_.push_back({far_.get(), static_cast<int>(farRecvs.size())});
                farRecvs.push_back(peer);
            }
        }
        near_->plan(nearSends, nearRecvs);
        far_->plan(farSends, farRecvs);
        comm_.at(phase_).plans--; // both counted one: it is one plan of the caller's
    }

    std::span<std::byte> sendBuffer(int link) override
    {
        const auto& [ex, k] = sendAt_.at(static_cast<std::size_t>(link));
        return ex->sendBuffer(k);
    }
    void setSendSize(int link, std::size_t bytes) override
    {
        const auto& [ex, k] = sendAt_.at(static_cast<std::size_t>(link));
        ex->setSendSize(k, bytes);
    }
    void start() override
    {
        near_->start();
        far_->start();
    }
    void finish() override
    {
        near_->finish();
        far_->finish();
    }
    std::span<const std::byte> recvBuffer(int link) override
    {
        const auto& [ex, k] = recvAt_.at(static_cast<std::size_t>(link));
        return ex->recvBuffer(k);
    }
    std::size_t recvBytes(int link) const override
    {
        const auto& [ex, k] = recvAt_.at(static_cast<std::size_t>(link));
        return ex->recvBytes(k);
    }
    int numSendLinks() const override { return static_cast<int>(sendAt_.size()); }
    int numRecvLinks() const override { return static_cast<int>(recvAt_.size()); }

private:
    int machineRank(int peer) const
    {
        if (peer < 0 || peer >= comm_.size)
        {
            fail("exchange link to rank " + std::to_string(peer) + ", but the group has " + std::to_string(comm_.size)
                 + " ranks");
        }
        return comm_.machineRank[static_cast<std::size_t>(peer)];
    }

    Communicator::Impl&                    comm_;
    Phase                                  phase_;
    std::unique_ptr<Exchange>              near_, far_;
    std::vector<std::pair<Exchange*, int>> sendAt_, recvAt_; // the caller's link -> (sub-exchange, its link)
};

} // namespace

std::unique_ptr<Exchange> makeMixedExchange(Communicator::Impl& comm, Phase phase)
{
    return std::make_unique<MixedExchange>(comm, phase);
}

} // namespace putmd::comm
