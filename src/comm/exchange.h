/* comm/exchange.h — a persistent point-to-point exchange pattern.
 *
 * An Exchange is a set of send links (peer, bytes) and receive links (peer)
 * that stays fixed between plan() calls. plan() is called at search steps
 * (halo, migration) and learns from each sender how many bytes arrive on
 * each receive link; for one-sided backends it also places every link in
 * the receiver's arena and tells the sender the offset, so a normal step
 * only moves data and flags.
 *
 * One execution (a "step" of this exchange) is
 *     for each send link k: pack into sendBuffer(k)
 *     start();                         // data on its way
 *     ... other work (overlap) ...
 *     finish();                        // every receive link has arrived
 *     for each receive link k: read recvBuffer(k)
 * and every rank that appears as a peer executes the exchange the same
 * number of times. Several links may join the same pair of ranks (and a
 * rank may link to itself); the k-th send link from A to B matches the k-th
 * receive link at B from A.
 *
 * Protocol of the one-sided backends: each execution has a sequence number;
 * data goes to the region of the current sequence parity, then a flag word
 * carrying the sequence number, ordered after the data. The receiver waits
 * until its flag shows the number. After it has read the data (at its next
 * finish(), or at plan()), it acknowledges, and a sender only reuses a
 * parity region once the receiver has acknowledged the execution that last
 * used it. No barrier and no collective in start()/finish().
 *
 * Validity: sendBuffer(k) may be packed from plan() (or the previous
 * start()) until start(); it may wait for an acknowledgement. recvBuffer(k)
 * is valid from finish() until the next finish() or plan().
 *
 * Variable sizes: setSendSize(k, n) makes start() send only the first n
 * bytes of send link k (n <= the planned size), e.g. PP -> PME coordinates
 * whose count changes every step within a bound planned at search steps.
 * The receiver's buffer keeps the planned size and the bytes past n are
 * whatever was there before; the receiver learns n from the data (a
 * header).
 */
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "comm/communicator.h"

namespace putmd::comm
{

struct SendLink
{
    int         peer;
    std::size_t bytes;
};

class Exchange
{
public:
    virtual ~Exchange() = default;

    /* Collective over the communicator (every rank calls plan() on the same
     * exchanges in the same order): sets this rank's send links and the
     * peers it receives from (in link order). May grow exposed memory. */
    virtual void plan(std::span<const SendLink> sends, std::span<const int> recvPeers) = 0;

    virtual std::span<std::byte>       sendBuffer(int link) = 0;
    /* Send only the first `bytes` bytes of send link k in the next start()
     * and later ones, until changed or until plan() resets it to the
     * planned size (bytes <= the planned size, else the job stops with a
     * message). The receiver still sees a buffer of the planned size and
     * must learn the used size from the data itself (e.g. a header).
     * Statistics count the bytes actually sent. Call it outside
     * start()..finish() of the execution it is meant for, i.e. before that
     * execution's start() (during the previous execution's overlap is
     * fine). */
    virtual void                       setSendSize(int link, std::size_t bytes) = 0;
    virtual void                       start()              = 0;
    virtual void                       finish()             = 0;
    virtual std::span<const std::byte> recvBuffer(int link) = 0;

    /* Bytes arriving on receive link k (known after plan()). */
    virtual std::size_t recvBytes(int link) const = 0;
    virtual int         numSendLinks() const      = 0;
    virtual int         numRecvLinks() const      = 0;
};

} // namespace putmd::comm
