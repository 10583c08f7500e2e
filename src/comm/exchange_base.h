/* comm/exchange_base.h — what every exchange backend shares.
 *
 * ExchangeBase owns the bookkeeping that does not depend on how bytes move:
 *  - the links, numbered as the caller gave them, and for each the "slot"
 *    (the k-th link between the same two ranks), which is how a send link
 *    finds its receive link;
 *  - plan round 1: every sender tells each receiving peer the byte counts of
 *    its links (one small message per peer pair, on the exchange's own
 *    duplicate communicator, so plans never mix with other traffic); the
 *    receiver checks that the number of links matches;
 *  - self links (a rank sending to itself), handled identically in every
 *    backend and in serial mode: start() copies the send buffer into a
 *    receive buffer of the current parity;
 *  - local send buffers, double-buffered by sequence parity, so the caller
 *    may pack execution s+1 while execution s is still in flight;
 *  - the sequence number, the in-flight state and the statistics;
 *  - the size actually sent on each send link (setSendSize; the planned
 *    size unless set): backends move sendSize(k) bytes, self links copy
 *    that many, and the statistics count them.
 *
 * Backends override planRemote(), startRemote(), finishRemote() and the
 * span accessors for links to other ranks.
 *
 * Sequence numbers: seq_ counts executions started since the exchange was
 * made (the first is 1) and never restarts, so a flag or acknowledgement
 * written under an older plan is only ever smaller than any value waited
 * for. baseline_ is seq_ at the last plan(): everything up to it has been
 * consumed by definition (plan() is only called between executions).
 */
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "comm/comm_impl.h"
#include "comm/exchange.h"

namespace putmd::comm
{

class ExchangeBase : public Exchange
{
public:
    ExchangeBase(Communicator::Impl& comm, Phase phase);
    ~ExchangeBase() override;

    void                       plan(std::span<const SendLink> sends, std::span<const int> recvPeers) final;
    std::span<std::byte>       sendBuffer(int link) final;
    void                       setSendSize(int link, std::size_t bytes) final;
    void                       start() final;
    void                       finish() final;
    std::span<const std::byte> recvBuffer(int link) final;
    std::size_t                recvBytes(int link) const final;
    int                        numSendLinks() const final { return static_cast<int>(sends_.size()); }
    int                        numRecvLinks() const final { return static_cast<int>(recvs_.size()); }

    struct Link
    {
        int         peer  = -1;
        std::size_t bytes = 0;  // planned size
        std::size_t used  = 0;  // send links: bytes start() sends (setSendSize; = bytes after plan())
        int         slot  = 0;  // k-th link between this pair of ranks
        int         match = -1; // self links: the matching link on this rank
        std::size_t local = 0;  // offset in the local (parity) buffer
    };
    /* The links to (or from) one other rank, in slot order. */
    struct PeerLinks
    {
        int              peer = -1;
        std::vector<int> links;
    };


protected:
    /* Called in plan() after round 1 (every link's size known), before the
     * caller gets any buffer. May use collectives (plan is collective). */
    virtual void planRemote() = 0;
    /* Called at the start of plan(), before the links change. */
    virtual void beforePlan() {}
    virtual void startRemote(std::uint64_t seq)  = 0;
    virtual void finishRemote(std::uint64_t seq) = 0;
    /* Links to other ranks whose send buffer is not the local parity
     * buffer (shm packs straight into exposed memory). */
    virtual bool                 sendsInPlace() const { return false; }
    virtual std::span<std::byte> inPlaceSendBuffer(int link, std::uint64_t seq) { return {}; }
    virtual std::span<const std::byte> remoteRecvBuffer(int link, std::uint64_t seq) = 0;

    std::span<std::byte> localSend(int link, std::uint64_t seq);
    /* Bytes start() sends on send link k (setSendSize, else planned). */
    std::size_t          sendSize(int link) const { return sends_[static_cast<std::size_t>(link)].used; }
    std::string          describe(const char* what, int peer, std::uint64_t seq) const;
    bool                 parallel() const { return comm_.mpi; }

    Communicator::Impl&    comm_;
    Phase                  phase_;
    int                    id_;
    MPI_Comm               planComm_ = MPI_COMM_NULL;
    std::vector<Link>      sends_, recvs_;
    std::vector<PeerLinks> sendPeers_, recvPeers_; // other ranks only, by rank
    std::uint64_t          seq_      = 0;
    std::uint64_t          baseline_ = 0;
    bool                   planned_  = false;
    bool                   inFlight_ = false;
    long                   remoteSendLinks_ = 0;
    long                   remoteSendBytes_ = 0;

private:
    void exchangeSizes();

    std::array<std::vector<std::byte>, 2> localSend_;
    std::array<std::vector<std::byte>, 2> selfRecv_;
};

/* Post-and-wait helpers on a request list with the common waiting policy. */
void waitRequests(std::vector<MPI_Request>& requests, const std::function<std::string()>& describe);
/* The same, keeping each request's status (for the received counts). */
void waitRequests(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses,
                  const std::function<std::string()>& describe);

} // namespace putmd::comm
