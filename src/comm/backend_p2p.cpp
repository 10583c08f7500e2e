/* comm/backend_p2p.cpp — the baseline backend: MPI_Irecv/MPI_Isend.
 *
 * start() posts one MPI_Irecv per receive link (into a local buffer of the
 * sequence's parity) and then one MPI_Isend per send link (from the local
 * parity send buffer), tag = the link's slot, on the exchange's own
 * duplicate communicator; finish() waits for all of them. Messages between
 * one pair with one tag are non-overtaking, so executions never mix even
 * when a sender runs ahead. Zero-byte links still send an empty message:
 * every backend counts one message per link per execution. A link sends
 * sendSize(k) bytes (setSendSize), which may be fewer than the receive
 * posted for the planned size: MPI allows a shorter message.
 *
 * The parity buffers give the same validity as the one-sided backends: the
 * caller may pack execution s+1 while s is in flight, and recvBuffer() of s
 * stays valid until finish() of s+1.
 */
#include <array>
#include <vector>

#include "comm/backends.h"
#include "comm/exchange_base.h"

namespace putmd::comm
{

namespace
{

class P2pExchange final : public ExchangeBase
{
public:
    using ExchangeBase::ExchangeBase;

private:
    void planRemote() override
    {
        std::size_t total = 0;
        offset_.assign(recvs_.size(), 0);
        for (auto& p : recvPeers_)
        {
            for (int j : p.links)
            {
                offset_[j] = total;
                total += (recvs_[j].bytes + 63) / 64 * 64;
            }
        }
        for (auto& b : recv_)
        {
            b.resize(total);
        }
    }

    void startRemote(std::uint64_t seq) override
    {
        requests_.clear();
        auto& buf = recv_[seq & 1];
        for (auto& p : recvPeers_)
        {
            for (int j : p.links)
            {
                requests_.emplace_back();
                MPI_Irecv(buf.data() + offset_[j], static_cast<int>(recvs_[j].bytes), MPI_BYTE, p.peer,
                          recvs_[j].slot, planComm_, &requests_.back());
            }
        }
        for (auto& p : sendPeers_)
        {
            for (int k : p.links)
            {
                auto data = localSend(k, seq);
                requests_.emplace_back();
                MPI_Isend(data.data(), static_cast<int>(sendSize(k)), MPI_BYTE, p.peer, sends_[k].slot, planComm_,
                          &requests_.back());
            }
        }
    }

    void finishRemote(std::uint64_t seq) override
    {
        waitRequests(requests_, [&] {
            std::string who;
            for (auto& p : recvPeers_)
            {
                who += (who.empty() ? "" : ", ") + comm_.rankName(p.peer);
            }
            return describe("messages (p2p)", -1, seq) + "; receiving from: " + (who.empty() ? "none" : who)
                   + " (or its own sends to be delivered)";
        });
    }

    std::span<const std::byte> remoteRecvBuffer(int link, std::uint64_t seq) override
    {
        return {recv_[seq & 1].data() + offset_[link], recvs_[link].bytes};
    }

    std::array<std::vector<std::byte>, 2> recv_;
    std::vector<std::size_t>              offset_;
    std::vector<MPI_Request>              requests_;
};

} // namespace

std::unique_ptr<Exchange> makeP2pExchange(Communicator::Impl& comm, Phase phase)
{
    return std::make_unique<P2pExchange>(comm, phase);
}

} // namespace putmd::comm
