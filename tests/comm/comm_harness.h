/* tests/comm/comm_harness.h — what the communication-layer tests share:
 * the communicator under test, the byte pattern, link patterns and the
 * helpers that plan, pack, run and check an exchange with one.
 *
 * The tests (comm_exchange_tests.cpp: exchanges, variable send sizes;
 * comm_collective_tests.cpp: collectives and sub-communicators) are one
 * program, run by CTest for every backend (--backend p2p|rma|shm|shmem)
 * on 1, 2, 3, 4 and 8 ranks under mpirun, and once without a launcher
 * (serial mode: no MPI at all, only self links). Every rank runs the same
 * tests in the same order, because exchanges and collectives are
 * collective. Tests therefore use EXPECT_* (never return early between
 * collectives); at the end the ranks agree (maxLong) on whether any rank
 * failed, and every rank exits non-zero if one did, so mpirun fails
 * (comm_harness.cpp, with main).
 *
 * Data checks: byte i of send link `slot` from rank s to rank r in
 * execution q is pattern(s, r, slot, q, i), so a byte from the wrong
 * sender, link, execution or place is caught.
 */
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"

namespace comm_test
{
using namespace putmd::comm;

extern Backend       g_backend;
extern Communicator* g_comm;

inline std::byte pattern(int sender, int receiver, int slot, long seq, std::size_t i)
{
    return static_cast<std::byte>((sender * 131 + receiver * 29 + slot * 17 + seq * 7 + i * 3 + (i >> 8)) & 0xff);
}

/* A pattern description: the links this rank sends and receives. */
struct Pattern
{
    std::vector<SendLink> sends;
    std::vector<int>      recvPeers;
    std::vector<int>      sendSlot, recvSlot; // k-th link between the pair
    std::vector<std::size_t> expectBytes;    // per receive link
};

/* `links(s, r)` = byte counts of the links from s to r, in slot order. */
template<typename Links>
Pattern makePattern(int me, int size, Links links)
{
    Pattern p;
    for (int r = 0; r < size; ++r)
    {
        auto l = links(me, r);
        for (std::size_t k = 0; k < l.size(); ++k)
        {
            p.sends.push_back({r, l[k]});
            p.sendSlot.push_back(static_cast<int>(k));
        }
    }
    for (int s = 0; s < size; ++s)
    {
        auto l = links(s, me);
        for (std::size_t k = 0; k < l.size(); ++k)
        {
            p.recvPeers.push_back(s);
            p.recvSlot.push_back(static_cast<int>(k));
            p.expectBytes.push_back(l[k]);
        }
    }
    return p;
}

/* Ranks in patterns are world ranks (c.worldRankOf), so that data from a
 * rank of another group (sub-communicators) is caught too. `me` and the
 * peers are ranks of c. */
void pack(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm);
/* Returns the number of wrong bytes (reported once per link). */
long check(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm);
void planPattern(Exchange& ex, const Pattern& p);
/* Runs `executions` executions of a pattern, checking every byte. */
void run(Exchange& ex, const Pattern& p, long& seq, int executions, const Communicator& c = *g_comm);
std::vector<std::size_t> sizesOf(std::initializer_list<std::size_t> l);

/* setSendSize: the bytes that link `slot` from world rank `sender` sends
 * in execution `seq` — none, all, or mostly something in between. */
std::size_t usedBytes(std::size_t planned, int sender, int slot, long seq);
/* Sets every send link's size for execution `seq` (after packing the whole
 * planned buffer); returns the bytes that go to other ranks. */
long setSizes(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm);
/* Checks the used part of every receive link of execution `seq`; with
 * `unsentDiffers`, also that the bytes past the used size did not travel
 * (comm_harness.cpp says when that can be checked). */
void checkUsed(Exchange& ex, const Pattern& p, int me, long seq, bool unsentDiffers,
               const Communicator& c = *g_comm);
long remoteSendLinks(const Pattern& p, int me);
long remoteSendBytes(const Pattern& p, int me);

} // namespace comm_test
