/* comm/exchange_base.cpp — links, plan round 1, self links, sequence and
 * statistics common to every backend (see exchange_base.h). */
#include "comm/exchange_base.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace putmd::comm
{

namespace
{
constexpr int kTagSizes = 1;

std::vector<ExchangeBase::PeerLinks> groupByPeer(const auto& links, int self)
{
    std::map<int, std::vector<int>> byPeer;
    for (int i = 0; i < static_cast<int>(links.size()); ++i)
    {
        if (links[i].peer != self)
        {
            byPeer[links[i].peer].push_back(i);
        }
    }
    std::vector<ExchangeBase::PeerLinks> out;
    for (auto& [peer, list] : byPeer)
    {
        out.push_back({peer, std::move(list)});
    }
    return out;
}
} // namespace

namespace
{
/* waitRequests' body; statuses: one per request, or nullptr to ignore them
 * (the exchanges' per-step waits allocate nothing). */
void waitAll(std::vector<MPI_Request>& requests, MPI_Status* statuses, const std::function<std::string()>& describe)
{
    if (requests.empty())
    {
        return;
    }
#if PUTMD_SMPI
    // simulated ranks: block, so that the simulator advances to the
    // messages' arrival instead of simulating every poll; one MPI_Wait per
    // request, since SMPI's MPI_Waitall waits for any of the remaining
    // requests again after each completion (quadratic in their number: at
    // 512 simulated ranks PME's redistribution posts about 130 a rank, and
    // the simulation spent most of its own time there)
    for (std::size_t i = 0; i < requests.size(); ++i)
    {
        MPI_Wait(&requests[i], statuses != nullptr ? &statuses[i] : MPI_STATUS_IGNORE);
    }
    requests.clear();
    return;
#endif
    Waiter waiter(describe);
    int    done = 0;
    while (true)
    {
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                    statuses != nullptr ? statuses : MPI_STATUSES_IGNORE);
        if (done)
        {
            break;
        }
        waiter.poll();
    }
    requests.clear();
}
} // namespace

void waitRequests(std::vector<MPI_Request>& requests, const std::function<std::string()>& describe)
{
    waitAll(requests, nullptr, describe);
}

void waitRequests(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses,
                  const std::function<std::string()>& describe)
{
    statuses.resize(requests.size());
    waitAll(requests, statuses.data(), describe);
}

ExchangeBase::ExchangeBase(Communicator::Impl& comm, Phase phase) :
    comm_(comm), phase_(phase), id_(comm.nextExchangeId++)
{
    if (comm_.mpi)
    {
        dupComm(comm_.comm, &planComm_);
        comm_.at(Phase::Setup).collectives++;
    }
}

ExchangeBase::~ExchangeBase()
{
    int finalized = 0;
    if (planComm_ != MPI_COMM_NULL && (MPI_Finalized(&finalized), !finalized))
    {
        MPI_Comm_free(&planComm_);
    }
}

std::string ExchangeBase::describe(const char* what, int peer, std::uint64_t seq) const
{
    std::string s = std::string("in ") + backendName(comm_.backend) + " exchange #" + std::to_string(id_)
                    + " (phase " + phaseName(phase_) + (comm_.world ? "" : ", on a sub-communicator") + ") waiting for "
                    + what;
    if (peer >= 0)
    {
        s += " from " + comm_.rankName(peer);
    }
    return s + " (sequence " + std::to_string(seq) + ")";
}

void ExchangeBase::plan(std::span<const SendLink> sends, std::span<const int> recvPeers)
{
    if (inFlight_)
    {
        fail(describe("nothing: plan() called between start() and finish()", -1, seq_));
    }
    beforePlan();
    const int self = comm_.rank;

    sends_.assign(sends.size(), Link{});
    recvs_.assign(recvPeers.size(), Link{});
    std::map<int, int> sendSlots, recvSlots;
    for (std::size_t i = 0; i < sends.size(); ++i)
    {
        if (sends[i].peer < 0 || sends[i].peer >= comm_.size)
        {
            fail("exchange #" + std::to_string(id_) + ": send link " + std::to_string(i) + " names rank "
                 + std::to_string(sends[i].peer) + " but the communicator has " + std::to_string(comm_.size)
                 + " rank(s)");
        }
        sends_[i].peer  = sends[i].peer;
        sends_[i].bytes = sends[i].bytes;
        sends_[i].used  = sends[i].bytes;
        sends_[i].slot  = sendSlots[sends[i].peer]++;
    }
    for (std::size_t i = 0; i < recvPeers.size(); ++i)
    {
        if (recvPeers[i] < 0 || recvPeers[i] >= comm_.size)
        {
            fail("exchange #" + std::to_string(id_) + ": receive link " + std::to_string(i) + " names rank "
                 + std::to_string(recvPeers[i]) + " but the communicator has " + std::to_string(comm_.size)
                 + " rank(s)");
        }
        recvs_[i].peer = recvPeers[i];
        recvs_[i].slot = recvSlots[recvPeers[i]]++;
    }
    if (sendSlots[self] != recvSlots[self])
    {
        fail("exchange #" + std::to_string(id_) + ": " + std::to_string(sendSlots[self])
             + " send link(s) to this rank itself but " + std::to_string(recvSlots[self])
             + " receive link(s) from itself");
    }
    // Self links: the k-th send to self feeds the k-th receive from self.
    {
        std::vector<int> selfSends;
        for (int i = 0; i < static_cast<int>(sends_.size()); ++i)
        {
            if (sends_[i].peer == self)
            {
                selfSends.push_back(i);
            }
        }
        int k = 0;
        for (int j = 0; j < static_cast<int>(recvs_.size()); ++j)
        {
            if (recvs_[j].peer == self)
            {
                const int i     = selfSends[k++];
                recvs_[j].match = i;
                sends_[i].match = j;
                recvs_[j].bytes = sends_[i].bytes;
            }
        }
    }
    sendPeers_ = groupByPeer(sends_, self);
    recvPeers_ = groupByPeer(recvs_, self);
    if (!comm_.mpi && (!sendPeers_.empty() || !recvPeers_.empty()))
    {
        fail("exchange #" + std::to_string(id_) + " links to another rank, but this is a single-rank run");
    }

    if (comm_.mpi)
    {
        exchangeSizes();
    }

    // Local buffers: parity send buffers (for self links only when the
    // backend packs in place) and parity receive buffers of self links.
    std::size_t sendTotal = 0, selfTotal = 0;
    remoteSendLinks_ = 0;
    remoteSendBytes_ = 0;
    for (auto& l : sends_)
    {
        if (l.peer != self)
        {
            remoteSendLinks_++;
            remoteSendBytes_ += static_cast<long>(l.bytes);
        }
        if (l.peer == self || !sendsInPlace())
        {
            l.local = sendTotal;
            sendTotal += (l.bytes + 63) / 64 * 64;
        }
    }
    for (auto& l : recvs_)
    {
        if (l.peer == self)
        {
            l.local = selfTotal;
            selfTotal += (l.bytes + 63) / 64 * 64;
        }
    }
    for (int p = 0; p < 2; ++p)
    {
        localSend_[p].resize(sendTotal);
        selfRecv_[p].resize(selfTotal);
    }

    if (comm_.mpi)
    {
        planRemote();
    }
    baseline_ = seq_;
    planned_  = true;
    comm_.at(phase_).plans++;
}

void ExchangeBase::exchangeSizes()
{
    std::vector<std::vector<std::uint64_t>> out(sendPeers_.size());
    std::vector<MPI_Request>                requests(sendPeers_.size());
    for (std::size_t p = 0; p < sendPeers_.size(); ++p)
    {
        out[p].push_back(sendPeers_[p].links.size());
        for (int l : sendPeers_[p].links)
        {
            out[p].push_back(sends_[l].bytes);
        }
        MPI_Isend(out[p].data(), static_cast<int>(out[p].size()), MPI_UINT64_T, sendPeers_[p].peer, kTagSizes,
                  planComm_, &requests[p]);
    }
    // Receive from every sending peer at once. The length of each message
    // is known (a count, then one size per link this rank receives from
    // that peer), so all receives are posted before the wait and nothing
    // polls with MPI_Iprobe (under SimGrid's SMPI each failed probe is a
    // simulated event, with an injected sleep that grows with every failed
    // probe of any simulated rank). One slot more than expected catches a
    // peer that sends one link too many with the message below; a peer
    // that sends more than that is a truncated message, which MPI reports.
    std::vector<std::vector<std::uint64_t>> in(recvPeers_.size());
    std::vector<MPI_Request>                recvRequests(recvPeers_.size());
    for (std::size_t p = 0; p < recvPeers_.size(); ++p)
    {
        in[p].resize(recvPeers_[p].links.size() + 2);
        MPI_Irecv(in[p].data(), static_cast<int>(in[p].size()), MPI_UINT64_T, recvPeers_[p].peer, kTagSizes,
                  planComm_, &recvRequests[p]);
    }
    std::vector<MPI_Status> statuses(recvPeers_.size());
    waitRequests(recvRequests, statuses, [&] {
        for (std::size_t p = 0; p < recvRequests.size(); ++p)
        {
            int flag = 0;
            MPI_Request_get_status(recvRequests[p], &flag, MPI_STATUS_IGNORE);
            if (!flag)
            {
                return describe("the plan (link sizes)", recvPeers_[p].peer, seq_)
                       + "; is the peer missing a send link to this rank, or not calling plan()?";
            }
        }
        return std::string("nothing");
    });
    for (std::size_t p = 0; p < recvPeers_.size(); ++p)
    {
        int count = 0;
        MPI_Get_count(&statuses[p], MPI_UINT64_T, &count);
        const auto& links = recvPeers_[p].links;
        if (count < 1 || in[p][0] != links.size() || static_cast<std::size_t>(count) != links.size() + 1)
        {
            fail("exchange #" + std::to_string(id_) + " (phase " + phaseName(phase_) + "): "
                 + comm_.rankName(recvPeers_[p].peer) + " sends " + std::to_string(count < 1 ? 0 : in[p][0])
                 + " link(s) to this rank but this rank receives " + std::to_string(links.size())
                 + " link(s) from it");
        }
        for (std::size_t k = 0; k < links.size(); ++k)
        {
            recvs_[links[k]].bytes = in[p][k + 1];
        }
    }
    waitRequests(requests, [&] { return describe("the plan (sizes) to be delivered", -1, seq_); });
}

std::span<std::byte> ExchangeBase::localSend(int link, std::uint64_t seq)
{
    const Link& l = sends_[link];
    return {localSend_[seq & 1].data() + l.local, l.bytes};
}

std::span<std::byte> ExchangeBase::sendBuffer(int link)
{
    if (!planned_ || link < 0 || link >= numSendLinks())
    {
        fail("exchange #" + std::to_string(id_) + ": sendBuffer(" + std::to_string(link) + ") "
             + (planned_ ? "out of range" : "before plan()"));
    }
    const std::uint64_t next = seq_ + 1;
    if (sends_[link].peer != comm_.rank && sendsInPlace())
    {
        return inPlaceSendBuffer(link, next);
    }
    return localSend(link, next);
}

void ExchangeBase::setSendSize(int link, std::size_t bytes)
{
    if (!planned_ || link < 0 || link >= numSendLinks())
    {
        fail("exchange #" + std::to_string(id_) + " (phase " + phaseName(phase_) + "): setSendSize("
             + std::to_string(link) + ", " + std::to_string(bytes) + ") "
             + (planned_ ? "link out of range (" + std::to_string(numSendLinks()) + " send link(s))"
                         : "before plan()"));
    }
    Link& l = sends_[static_cast<std::size_t>(link)];
    if (bytes > l.bytes)
    {
        fail("exchange #" + std::to_string(id_) + " (phase " + phaseName(phase_) + "): setSendSize("
             + std::to_string(link) + ", " + std::to_string(bytes) + ") exceeds the " + std::to_string(l.bytes)
             + " byte(s) planned for that link (to " + comm_.rankName(l.peer)
             + "); plan() the exchange with the largest size it may need");
    }
    if (l.peer != comm_.rank)
    {
        remoteSendBytes_ += static_cast<long>(bytes) - static_cast<long>(l.used);
    }
    l.used = bytes;
}

void ExchangeBase::start()
{
    if (!planned_)
    {
        fail("exchange #" + std::to_string(id_) + ": start() before plan()");
    }
    if (inFlight_)
    {
        fail("exchange #" + std::to_string(id_) + ": start() twice without finish()");
    }
    const double t0 = nowSeconds();
    ++seq_;
    for (std::size_t j = 0; j < recvs_.size(); ++j)
    {
        const Link& r = recvs_[j];
        const std::size_t n = r.match >= 0 ? sendSize(r.match) : 0;
        if (n > 0)
        {
            std::memcpy(selfRecv_[seq_ & 1].data() + r.local, localSend(r.match, seq_).data(), n);
        }
    }
    if (comm_.mpi)
    {
        startRemote(seq_);
    }
    inFlight_     = true;
    PhaseStats& s = comm_.at(phase_);
    const int self = comm_.rank;
    for (const Link& l : sends_)
    {
        if (l.peer != self)
        {
            s.recordMessage(static_cast<long>(l.used));
        }
    }
    if (acrossMachines(comm_.backend) != Backend::P2p)
    {
        s.oneSidedSyncs += remoteSendLinks_;
    }
    s.transferSeconds += nowSeconds() - t0;
}

void ExchangeBase::finish()
{
    if (!inFlight_)
    {
        fail("exchange #" + std::to_string(id_) + ": finish() without start()");
    }
    const double t0 = nowSeconds();
    if (comm_.mpi)
    {
        finishRemote(seq_);
    }
    inFlight_ = false;
    comm_.at(phase_).waitSeconds += nowSeconds() - t0;
}

std::span<const std::byte> ExchangeBase::recvBuffer(int link)
{
    if (!planned_ || link < 0 || link >= numRecvLinks())
    {
        fail("exchange #" + std::to_string(id_) + ": recvBuffer(" + std::to_string(link) + ") "
             + (planned_ ? "out of range" : "before plan()"));
    }
    // The last finished execution (during the next one's overlap, still it).
    const std::uint64_t done = inFlight_ ? seq_ - 1 : seq_;
    const Link&         r    = recvs_[link];
    if (r.match >= 0)
    {
        return {selfRecv_[done & 1].data() + r.local, r.bytes};
    }
    return remoteRecvBuffer(link, done);
}

std::size_t ExchangeBase::recvBytes(int link) const
{
    return recvs_.at(static_cast<std::size_t>(link)).bytes;
}

} // namespace putmd::comm
