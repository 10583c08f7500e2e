/* comm/onesided.h — the part of plan() that the one-sided backends share.
 *
 * Every one-sided exchange owns, on every rank, two things in the arena:
 *
 *  - a control block, allocated at the first plan() and never moved:
 *        words [0, P)    flag words, one per rank
 *        words [P, 2P)   acknowledgement words, one per rank
 *    (P = ranks in the communicator; 16 bytes per rank per exchange).
 *    Because the block never moves and sequence numbers only grow, a late write from
 *    an older plan can only leave a smaller number behind, which nobody
 *    waits for. Who writes which word depends on the backend:
 *      rma, shmem: flags[p] at the receiver is written by sender p;
 *                  acks[p] at the sender is written by receiver p;
 *      shm:        flags[p] at the sender is its flag towards receiver p;
 *                  acks[p] at the receiver is its ack towards sender p;
 *                  every word has one writer, its owner (plain atomics).
 *
 *  - a data block with two regions (sequence parities 0 and 1; three for
 *    shm, see backend_shm.cpp) per link
 *    whose data lives on this rank: receive links for rma and shmem (the
 *    sender puts into the receiver), send links for shm (the sender packs
 *    in place and the receiver reads). Its capacity grows geometrically and
 *    is reused while it is big enough.
 *
 * plan() round 2 (after round 1 gave every link its size): every rank lays
 * out its data block, calls Arena::allocate (the collective that may grow
 * the arena), then sends each peer one message with its control block's
 * place and the places of the regions of the links it shares with that
 * peer, and receives the same from the peer. After that a normal execution
 * moves only data, flags and acknowledgements.
 */
#pragma once

#include <vector>

#include "comm/arena.h"
#include "comm/exchange_base.h"

namespace putmd::comm
{

class OneSidedExchange : public ExchangeBase
{
public:
    /* regions: 2 (rma, shmem: sequence parity) or 3 (shm, see its file). */
    OneSidedExchange(Communicator::Impl& comm, Phase phase, bool dataAtReceiver, int regions);

protected:
    struct Region
    {
        int         gen = -1;
        std::size_t off[3]{}; // offset of the region of sequence s is off[s % regions_]
    };

    void planRemote() override;

    Arena& arena() { return *comm_.arena; }
    /* Byte offsets of flag / ack word `index` in a control block. */
    std::size_t flagOffset(ArenaBlock ctrl, int index) const { return ctrl.offset + 8 * std::size_t(index); }
    std::size_t ackOffset(ArenaBlock ctrl, int index) const
    {
        return ctrl.offset + 8 * (std::size_t(comm_.size) + std::size_t(index));
    }

    bool                    dataAtReceiver_;
    int                     regions_;
    ArenaBlock              ctrl_;     // this rank's control block
    std::vector<ArenaBlock> peerCtrl_; // every peer's control block, by rank
    ArenaBlock              data_;     // this rank's data block
    std::size_t             dataCap_ = 0;
    /* Regions in this rank's memory: per receive link (rma, shmem) or per
     * send link (shm). Regions in a peer's memory: per send link (rma,
     * shmem) or per receive link (shm). Indexed by link number. */
    std::vector<Region> own_, remote_;
};

} // namespace putmd::comm
