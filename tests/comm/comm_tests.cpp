/* tests/comm/comm_tests.cpp — the communication layer under mpirun.
 *
 * One program, run by CTest for every backend (--backend p2p|rma|shm|shmem)
 * on 1, 2, 3, 4 and 8 ranks under mpirun, and once without a launcher
 * (serial mode: no MPI at all, only self links). Every rank runs the same
 * tests in the same order, because exchanges and collectives are collective.
 * Tests therefore use EXPECT_* (never return early between collectives);
 * at the end the ranks agree (maxLong) on whether any rank failed, and every
 * rank exits non-zero if one did, so mpirun fails.
 *
 * Data checks: byte i of send link `slot` from rank s to rank r in
 * execution q is pattern(s, r, slot, q, i), so a byte from the wrong sender,
 * link, execution or place is caught.
 *
 * --kill-at N makes the last rank SIGKILL itself in the N-th execution of a
 * ring exchange, --stall-at N makes it stop taking part; kill_test.sh checks
 * that the whole job then fails fast (the stall: after PUTMD_COMM_TIMEOUT,
 * with a message naming what was awaited).
 *
 * Sub-communicators (split) and variable send sizes (setSendSize) are
 * tested here too; --send-size-too-large makes the last rank ask for more
 * than it planned, and CTest checks that the job stops with the message.
 */
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"

using namespace putmd::comm;

namespace
{

Backend       g_backend = Backend::P2p;
Communicator* g_comm    = nullptr;

std::byte pattern(int sender, int receiver, int slot, long seq, std::size_t i)
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
void pack(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm)
{
    for (int k = 0; k < static_cast<int>(p.sends.size()); ++k)
    {
        auto buf = ex.sendBuffer(k);
        EXPECT_EQ(buf.size(), p.sends[k].bytes);
        for (std::size_t i = 0; i < buf.size(); ++i)
        {
            buf[i] = pattern(c.worldRankOf(me), c.worldRankOf(p.sends[k].peer), p.sendSlot[k], seq, i);
        }
    }
}

/* Returns the number of wrong bytes (reported once per link). */
long check(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm)
{
    long bad = 0;
    for (int k = 0; k < static_cast<int>(p.recvPeers.size()); ++k)
    {
        auto buf = ex.recvBuffer(k);
        EXPECT_EQ(ex.recvBytes(k), p.expectBytes[k]);
        EXPECT_EQ(buf.size(), p.expectBytes[k]);
        long      wrong = 0;
        const int from  = c.worldRankOf(p.recvPeers[k]), to = c.worldRankOf(me);
        for (std::size_t i = 0; i < buf.size(); ++i)
        {
            wrong += buf[i] != pattern(from, to, p.recvSlot[k], seq, i);
        }
        EXPECT_EQ(wrong, 0) << "receive link " << k << " from rank " << p.recvPeers[k] << " slot " << p.recvSlot[k]
                            << " execution " << seq << " size " << buf.size();
        bad += wrong;
    }
    return bad;
}

void planPattern(Exchange& ex, const Pattern& p)
{
    ex.plan(p.sends, p.recvPeers);
    EXPECT_EQ(ex.numSendLinks(), static_cast<int>(p.sends.size()));
    EXPECT_EQ(ex.numRecvLinks(), static_cast<int>(p.recvPeers.size()));
}

/* Runs `executions` executions of a pattern, checking every byte. */
void run(Exchange& ex, const Pattern& p, long& seq, int executions, const Communicator& c = *g_comm)
{
    const int me = c.rank();
    for (int e = 0; e < executions; ++e)
    {
        ++seq;
        pack(ex, p, me, seq, c);
        ex.start();
        ex.finish();
        check(ex, p, me, seq, c);
    }
}

std::vector<std::size_t> sizesOf(std::initializer_list<std::size_t> l)
{
    return l;
}

} // namespace

TEST(Comm, RingWithChangingSizes)
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::HaloX);
    long      seq = 0;
    const std::size_t sizes[] = {8, 1000, 40000, 3, 0, 200000, 64, 5000};
    for (std::size_t plan = 0; plan < std::size(sizes); ++plan)
    {
        auto p = makePattern(me, n, [&](int s, int r) {
            return r == (s + 1) % n ? sizesOf({sizes[plan] + static_cast<std::size_t>(s)}) : sizesOf({});
        });
        planPattern(*ex, p);
        run(*ex, p, seq, 12);
    }
}

TEST(Comm, AllNeighboursSeveralLinksSelfAndZeroBytes)
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex  = g_comm->makeExchange(Phase::HaloF);
    long      seq = 0;
    for (int plan = 0; plan < 4; ++plan)
    {
        // Three links between every ordered pair (self included), one of
        // them empty, sizes depending on both ends and the plan.
        auto p = makePattern(me, n, [&](int s, int r) {
            const std::size_t a = static_cast<std::size_t>(((s * 7 + r * 3 + plan * 5) % 11) * 97);
            return sizesOf({a, 0, static_cast<std::size_t>(plan * 3000 + s + 1)});
        });
        planPattern(*ex, p);
        run(*ex, p, seq, 15);
    }
}

TEST(Comm, SlowReceiverFastSender)
{
    // Ring both ways; rank 0 naps before reading, so its senders run ahead
    // and must wait for acknowledgements instead of overwriting its data.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::Migration);
    auto      p  = makePattern(me, n, [&](int s, int r) {
        const bool neighbour = r == (s + 1) % n || s == (r + 1) % n;
        return neighbour ? sizesOf({4096, 17}) : sizesOf({});
    });
    planPattern(*ex, p);
    long seq = 0;
    for (int e = 0; e < 40; ++e)
    {
        ++seq;
        pack(*ex, p, me, seq);
        ex->start();
        ex->finish();
        if (me == 0)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        check(*ex, p, me, seq);
        if (me == 0)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            check(*ex, p, me, seq); // still intact after the nap
        }
    }
}

TEST(Comm, FastSendersOneSlowReceiver)
{
    // Every other rank only sends to rank 0, which only receives and naps:
    // nothing but the acknowledgements holds the senders back, so they run
    // ahead as far as the protocol lets them.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::Migration);
    auto      p  = makePattern(me, n, [&](int s, int r) {
        return (r == 0 && s != 0) ? sizesOf({3000, 5, 70000}) : sizesOf({});
    });
    planPattern(*ex, p);
    long seq = 0;
    for (int e = 0; e < 30; ++e)
    {
        ++seq;
        pack(*ex, p, me, seq);
        ex->start();
        ex->finish();
        if (me == 0)
        {
            check(*ex, p, me, seq);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            check(*ex, p, me, seq); // not overwritten by a sender running ahead
        }
    }
}

TEST(Comm, PackNextExecutionDuringOverlap)
{
    // The caller packs execution s+1 between start(s) and finish(s), and
    // reads s's data while s+1 is in flight: the validity rules of
    // exchange.h, exercised by every rank at once.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::HaloX);
    auto      p  = makePattern(me, n, [&](int s, int r) {
        return (r == (s + 1) % n || s == (r + 1) % n) ? sizesOf({2000 + std::size_t(s)}) : sizesOf({});
    });
    planPattern(*ex, p);
    long seq = 1;
    pack(*ex, p, me, seq);
    for (int e = 0; e < 30; ++e)
    {
        ex->start(); // execution seq
        if (e > 0)
        {
            check(*ex, p, me, seq - 1); // previous data still valid in the overlap
        }
        pack(*ex, p, me, seq + 1);
        if (me == n - 1)
        {
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        ex->finish();
        check(*ex, p, me, seq);
        ++seq;
    }
    // Drain: one more execution with the data packed for it.
    ex->start();
    ex->finish();
    check(*ex, p, me, seq);
}

TEST(Comm, StatisticsCountExactlyAndNoCollectivesInExecutions)
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::HaloX);
    g_comm->resetStats();
    long seq = 0;
    for (int plan = 0; plan < 3; ++plan)
    {
        auto p = makePattern(me, n, [&](int s, int r) {
            return r != s ? sizesOf({std::size_t(100 * (plan + 1) + r), 0}) : sizesOf({50});
        });
        planPattern(*ex, p);
        long links = 0, bytes = 0;
        for (const auto& l : p.sends)
        {
            if (l.peer != me)
            {
                links++;
                bytes += static_cast<long>(l.bytes);
            }
        }
        std::vector<PhaseStats> before;
        for (int ph = 0; ph < static_cast<int>(Phase::Count); ++ph)
        {
            before.push_back(g_comm->stats(static_cast<Phase>(ph)));
        }
        const int executions = 10;
        run(*ex, p, seq, executions);
        for (int ph = 0; ph < static_cast<int>(Phase::Count); ++ph)
        {
            const auto& a = g_comm->stats(static_cast<Phase>(ph));
            const auto& b = before[static_cast<std::size_t>(ph)];
            SCOPED_TRACE(phaseName(static_cast<Phase>(ph)));
            EXPECT_EQ(a.collectives, b.collectives);
            EXPECT_EQ(a.barriers, b.barriers);
            EXPECT_EQ(a.arenaGrowths, b.arenaGrowths);
            EXPECT_EQ(a.plans, b.plans);
            if (static_cast<Phase>(ph) == Phase::HaloX)
            {
                EXPECT_EQ(a.messages - b.messages, executions * links);
                EXPECT_EQ(a.bytes - b.bytes, executions * bytes);
            }
            else
            {
                EXPECT_EQ(a.messages, b.messages);
                EXPECT_EQ(a.bytes, b.bytes);
            }
        }
    }
    EXPECT_EQ(g_comm->stats(Phase::HaloX).plans, 3);
    EXPECT_GE(g_comm->stats(Phase::HaloX).transferSeconds, 0.0);
    EXPECT_GE(g_comm->stats(Phase::HaloX).waitSeconds, 0.0);
    if (g_backend == Backend::P2p || !Communicator::parallel())
    {
        EXPECT_EQ(g_comm->stats(Phase::HaloX).arenaGrowths, 0); // nothing exposed
    }
}

TEST(Comm, PlanningOneExchangeKeepsAnothersBuffers)
{
    // Exchange A is executed; then B is planned big enough to grow the
    // arena; A's received data must still be readable and A must still work.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      a  = g_comm->makeExchange(Phase::HaloX);
    auto      b  = g_comm->makeExchange(Phase::HaloF);
    auto      pa = makePattern(me, n, [&](int s, int r) { return r == (s + 1) % n ? sizesOf({333}) : sizesOf({}); });
    auto      pb = makePattern(me, n, [&](int s, int r) {
        return r == (s + n - 1) % n ? sizesOf({1u << 20}) : sizesOf({});
    });
    planPattern(*a, pa);
    long sa = 0, sb = 0;
    run(*a, pa, sa, 3);
    const long growthsBefore = g_comm->stats(Phase::HaloF).arenaGrowths;
    planPattern(*b, pb);
    // one rank: only self links, no arena data; shm+p2p: only the shm
    // links, so a rank alone on its machine exposes nothing
    bool exposes = g_backend != Backend::P2p && g_comm->size() > 1;
    if (g_backend == Backend::ShmP2p)
    {
        exposes = false;
        for (const auto& l : pb.sends)
        {
            exposes |= l.peer != me && g_comm->linksThroughShm(l.peer);
        }
        for (int peer : pb.recvPeers)
        {
            exposes |= peer != me && g_comm->linksThroughShm(peer);
        }
    }
    if (exposes)
    {
        EXPECT_GT(g_comm->stats(Phase::HaloF).arenaGrowths, growthsBefore);
    }
    check(*a, pa, me, sa);
    run(*b, pb, sb, 3);
    check(*a, pa, me, sa);
    run(*a, pa, sa, 3);
}

TEST(Comm, ExecutionsMatchAfterIdlePlans)
{
    // A rank without links may skip executions; after a re-plan it must
    // still agree with its new peers. Here only ranks 0 and 1 talk at first.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex  = g_comm->makeExchange(Phase::Pme);
    auto      p1  = makePattern(me, n, [&](int s, int r) {
        return (s < 2 && r < 2 && s != r) || (s == r) ? sizesOf({64}) : sizesOf({});
    });
    planPattern(*ex, p1);
    long seq = 0;
    if (me < 2)
    {
        run(*ex, p1, seq, 5);
    }
    auto p2 = makePattern(me, n, [&](int s, int r) { return r == (s + 1) % n ? sizesOf({128}) : sizesOf({}); });
    planPattern(*ex, p2);
    long seq2 = 1000; // pattern values only; the layer keeps its own count
    run(*ex, p2, seq2, 5);
}

TEST(Comm, SumInRankOrderIsTheSameBitsEverywhere)
{
    const int           me = g_comm->rank(), n = g_comm->size();
    std::vector<double> v  = {0.1 * (me + 1), 1e16 * (me % 2 ? 1 : -1) + 0.3 * me, 1.0 / (3 + me), -2.5e-17 * me};
    std::vector<double> expect(v.size(), 0.0);
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        // Rank order, as the contract says.
        double sum = 0;
        for (int r = 0; r < n; ++r)
        {
            const double x[] = {0.1 * (r + 1), 1e16 * (r % 2 ? 1 : -1) + 0.3 * r, 1.0 / (3 + r), -2.5e-17 * r};
            sum              = r == 0 ? x[i] : sum + x[i];
        }
        expect[i] = sum;
    }
    const long before = g_comm->stats(Phase::Energies).collectives;
    g_comm->sumInRankOrder(Phase::Energies, v);
    EXPECT_EQ(g_comm->stats(Phase::Energies).collectives, before + 1);
    EXPECT_EQ(std::memcmp(v.data(), expect.data(), v.size() * sizeof(double)), 0);
    // allGather: rank r's two values at 2r, 2r + 1 on every rank
    const double        two[2] = {0.5 * me, -1.0 / (me + 1)};
    std::vector<double> both   = g_comm->allGather(Phase::Energies, two);
    ASSERT_EQ(both.size(), 2u * n);
    for (int r = 0; r < n; ++r)
    {
        EXPECT_EQ(both[2 * r], 0.5 * r);
        EXPECT_EQ(both[2 * r + 1], -1.0 / (r + 1));
    }
    // Every rank's bits on rank 0.
    auto all = g_comm->gatherToRoot(Phase::Energies, std::as_bytes(std::span<const double>(v)));
    if (me == 0)
    {
        ASSERT_EQ(all.size(), v.size() * sizeof(double) * static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r)
        {
            EXPECT_EQ(std::memcmp(all.data() + r * v.size() * sizeof(double), v.data(), v.size() * sizeof(double)), 0)
                    << "rank " << r << " got other bits";
        }
    }
    else
    {
        EXPECT_TRUE(all.empty());
    }
}

TEST(Comm, GatherBroadcastMaxSumAndTheirCounts)
{
    const int              me = g_comm->rank(), n = g_comm->size();
    std::vector<std::byte> mine(static_cast<std::size_t>(me * 3 + 1), static_cast<std::byte>(me + 1));
    const PhaseStats       s0  = g_comm->stats(Phase::Setup);
    auto                   all = g_comm->gatherToRoot(Phase::Setup, mine);
    if (me == 0)
    {
        std::size_t at = 0;
        for (int r = 0; r < n; ++r)
        {
            for (int i = 0; i < r * 3 + 1; ++i, ++at)
            {
                ASSERT_LT(at, all.size());
                EXPECT_EQ(all[at], static_cast<std::byte>(r + 1));
            }
        }
        EXPECT_EQ(at, all.size());
    }
    std::vector<std::byte> data(100, std::byte{0});
    if (me == 0)
    {
        for (std::size_t i = 0; i < data.size(); ++i)
        {
            data[i] = static_cast<std::byte>(i * 5);
        }
    }
    g_comm->broadcast(Phase::Setup, data);
    for (std::size_t i = 0; i < data.size(); ++i)
    {
        EXPECT_EQ(data[i], static_cast<std::byte>(i * 5));
    }
    EXPECT_EQ(g_comm->maxLong(Phase::Setup, me * 10), (n - 1) * 10L);
    EXPECT_EQ(g_comm->sumLong(Phase::Setup, me + 1), static_cast<long>(n) * (n + 1) / 2);
    g_comm->barrier(Phase::Setup);
    const PhaseStats& s1 = g_comm->stats(Phase::Setup);
    EXPECT_EQ(s1.collectives - s0.collectives, 4);
    EXPECT_EQ(s1.barriers - s0.barriers, 1);
}

namespace
{

/* setSendSize: the bytes that link `slot` from world rank `sender` sends
 * in execution `seq` — none, all, or mostly something in between. */
std::size_t usedBytes(std::size_t planned, int sender, int slot, long seq)
{
    if (planned == 0 || seq % 5 == 0)
    {
        return 0;
    }
    if (seq % 5 == 1 || planned <= 8)
    {
        return planned;
    }
    return 8 + static_cast<std::size_t>(seq * 7 + sender * 3 + slot) % (planned - 7); // in [8, planned]
}

/* Sets every send link's size for execution `seq` (after packing the whole
 * planned buffer); returns the bytes that go to other ranks. */
long setSizes(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c = *g_comm)
{
    long remote = 0;
    for (int k = 0; k < static_cast<int>(p.sends.size()); ++k)
    {
        const std::size_t n = usedBytes(p.sends[k].bytes, c.worldRankOf(me), p.sendSlot[k], seq);
        ex.setSendSize(k, n);
        if (p.sends[k].peer != me)
        {
            remote += static_cast<long>(n);
        }
    }
    return remote;
}

/* Checks the used part of every receive link of execution `seq`. With
 * `unsentDiffers` (a fresh exchange whose receive regions never held this
 * execution's data otherwise), also that the bytes past the used size did
 * not travel: they must not all be this execution's pattern. Not for shm's
 * links to other ranks, where the receiver reads the sender's buffer in
 * place (nothing travels at all). */
void checkUsed(Exchange& ex, const Pattern& p, int me, long seq, bool unsentDiffers,
               const Communicator& c = *g_comm)
{
    for (int k = 0; k < static_cast<int>(p.recvPeers.size()); ++k)
    {
        auto buf = ex.recvBuffer(k);
        EXPECT_EQ(buf.size(), p.expectBytes[k]) << "the receiver sees the planned size";
        const int         from = c.worldRankOf(p.recvPeers[k]), to = c.worldRankOf(me);
        const std::size_t used = usedBytes(p.expectBytes[k], from, p.recvSlot[k], seq);
        long              wrong = 0;
        for (std::size_t i = 0; i < std::min(used, buf.size()); ++i)
        {
            wrong += buf[i] != pattern(from, to, p.recvSlot[k], seq, i);
        }
        EXPECT_EQ(wrong, 0) << "receive link " << k << " from rank " << p.recvPeers[k] << " execution " << seq
                            << " used " << used << " of " << buf.size();
        // (shm links, all of them with shm and those within a machine with
        // shm+p2p and shm+rma, are read in place)
        const bool viaCopy = !c.linksThroughShm(p.recvPeers[k]) || p.recvPeers[k] == me;
        if (unsentDiffers && viaCopy && buf.size() >= used + 16)
        {
            std::size_t same = 0;
            for (std::size_t i = used; i < buf.size(); ++i)
            {
                same += buf[i] == pattern(from, to, p.recvSlot[k], seq, i);
            }
            EXPECT_LT(same, buf.size() - used) << "the " << buf.size() - used << " bytes past the used size " << used
                                               << " of receive link " << k << " arrived too (execution " << seq << ")";
        }
    }
}

long remoteSendLinks(const Pattern& p, int me)
{
    long n = 0;
    for (const auto& l : p.sends)
    {
        n += l.peer != me;
    }
    return n;
}

long remoteSendBytes(const Pattern& p, int me)
{
    long n = 0;
    for (const auto& l : p.sends)
    {
        n += l.peer != me ? static_cast<long>(l.bytes) : 0;
    }
    return n;
}

} // namespace

TEST(Comm, SetSendSizeVariesPerExecution)
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::Pme);
    for (int plan = 0; plan < 2; ++plan)
    {
        // Both ring neighbours and self; one empty link, one small, two larger.
        auto p = makePattern(me, n, [&](int s, int r) {
            const bool near = r == (s + 1) % n || s == (r + 1) % n || r == s;
            return near ? sizesOf({std::size_t(500 + 300 * plan + 13 * s + r), 0, 40, std::size_t(20000 + s)})
                        : sizesOf({});
        });
        planPattern(*ex, p);
        const long links = remoteSendLinks(p, me);
        long       seq   = 100 * plan; // pattern values; the layer keeps its own count
        const auto bytesSent = [&] { return g_comm->stats(Phase::Pme).bytes; };
        const auto msgsSent  = [&] { return g_comm->stats(Phase::Pme).messages; };

        // First execution after plan(): whatever was set before the plan is
        // gone, the planned size travels whole.
        ++seq;
        pack(*ex, p, me, seq);
        long b0 = bytesSent(), m0 = msgsSent();
        ex->start();
        EXPECT_EQ(bytesSent() - b0, remoteSendBytes(p, me)) << "plan() resets the sizes";
        EXPECT_EQ(msgsSent() - m0, links);
        ex->finish();
        check(*ex, p, me, seq);

        if (plan == 0)
        {
            // Plain executions, sizes set just before start().
            for (int e = 0; e < 15; ++e)
            {
                ++seq;
                pack(*ex, p, me, seq);
                const long sent = setSizes(*ex, p, me, seq);
                b0 = bytesSent(), m0 = msgsSent();
                ex->start();
                EXPECT_EQ(bytesSent() - b0, sent) << "execution " << seq;
                EXPECT_EQ(msgsSent() - m0, links);
                ex->finish();
                checkUsed(*ex, p, me, seq, true);
            }
        }
        else
        {
            // Execution s+1 packed and sized during the overlap of s.
            ++seq;
            pack(*ex, p, me, seq);
            long sent = setSizes(*ex, p, me, seq);
            for (int e = 0; e < 15; ++e)
            {
                b0 = bytesSent(), m0 = msgsSent();
                ex->start(); // execution seq
                EXPECT_EQ(bytesSent() - b0, sent) << "execution " << seq;
                EXPECT_EQ(msgsSent() - m0, links);
                pack(*ex, p, me, seq + 1);
                sent = setSizes(*ex, p, me, seq + 1);
                ex->finish();
                checkUsed(*ex, p, me, seq, false);
                ++seq;
            }
            ex->start();
            ex->finish();
            checkUsed(*ex, p, me, seq, false);
        }
    }
}

namespace
{

/* Splits g_comm by color(world rank); inside each group an exchange,
 * sumInRankOrder and maxLong run while an exchange on g_comm links every
 * rank with the ranks of the other group(s) (PP <-> PME), its executions
 * overlapping the groups' traffic. With shmem, a split into groups smaller
 * than the world must be refused with a clear error instead. */
void splitAndRun(const std::function<int(int)>& color)
{
    const int        me = g_comm->rank(), n = g_comm->size();
    std::vector<int> group; // world ranks of my group, in order
    for (int r = 0; r < n; ++r)
    {
        if (color(r) == color(me))
        {
            group.push_back(r);
        }
    }
    const int myIndex = static_cast<int>(std::find(group.begin(), group.end(), me) - group.begin());

    // The parent's exchange, planned and executed before the split.
    auto cross = g_comm->makeExchange(Phase::Pme);
    auto pc    = makePattern(me, n, [&](int s, int r) {
        if (color(s) != color(r))
        {
            return sizesOf({std::size_t(700 + 11 * s + 5 * r), 24});
        }
        return s == r ? sizesOf({16}) : sizesOf({});
    });
    planPattern(*cross, pc);
    long cseq = 0;
    run(*cross, pc, cseq, 3);

    const bool refused = Communicator::parallel() && !backendSupportsSubgroups(g_backend)
                         && static_cast<int>(group.size()) < n;
    if (refused)
    {
        bool threw = false;
        try
        {
            auto sub = g_comm->split(color(me));
        }
        catch (const std::runtime_error& e)
        {
            threw                 = true;
            const std::string msg = e.what();
            EXPECT_NE(msg.find("shmem backend cannot be used with separate PME ranks (--npme > 0)"), std::string::npos)
                    << msg;
            EXPECT_NE(msg.find("use --comm rma or shm"), std::string::npos) << msg;
        }
        EXPECT_TRUE(threw) << "a shmem split into groups smaller than the world must be refused";
        run(*cross, pc, cseq, 3); // the world is still usable
        return;
    }

    const long setupBefore = g_comm->stats(Phase::Setup).collectives;
    auto       sub         = g_comm->split(color(me));
    EXPECT_GT(g_comm->stats(Phase::Setup).collectives, setupBefore) << "the split is the parent's collective";
    EXPECT_EQ(sub->size(), static_cast<int>(group.size()));
    EXPECT_EQ(sub->rank(), myIndex);
    EXPECT_EQ(sub->backend(), g_backend);
    for (int r = 0; r < sub->size() && r < static_cast<int>(group.size()); ++r)
    {
        EXPECT_EQ(sub->worldRankOf(r), group[static_cast<std::size_t>(r)]) << "group rank " << r;
    }
    EXPECT_EQ(sub->mpiComm() != MPI_COMM_NULL, Communicator::parallel());
    if (Communicator::parallel())
    {
        int sz = 0, rk = -1;
        MPI_Comm_size(sub->mpiComm(), &sz);
        MPI_Comm_rank(sub->mpiComm(), &rk);
        EXPECT_EQ(sz, sub->size());
        EXPECT_EQ(rk, sub->rank());
    }
    for (int ph = 0; ph < static_cast<int>(Phase::Count); ++ph)
    {
        const PhaseStats& st = sub->stats(static_cast<Phase>(ph));
        SCOPED_TRACE(phaseName(static_cast<Phase>(ph)));
        EXPECT_EQ(st.messages + st.bytes + st.collectives + st.barriers + st.arenaGrowths + st.plans, 0)
                << "a new communicator starts with its own, empty statistics";
    }

    const int gn = sub->size(), gme = sub->rank();
    auto      inner = sub->makeExchange(Phase::HaloX);
    auto      pi    = makePattern(gme, gn, [&](int s, int r) {
        const bool near = r == (s + 1) % gn || s == (r + 1) % gn || r == s;
        return near ? sizesOf({std::size_t(300 + 100 * s), 5000}) : sizesOf({});
    });
    planPattern(*inner, pi);
    // Re-plan the parent's exchange after the split too (its arena may grow
    // now that the group's exists).
    pc = makePattern(me, n, [&](int s, int r) {
        if (color(s) != color(r))
        {
            return sizesOf({std::size_t(9000 + 11 * s + 5 * r), 24, 0});
        }
        return s == r ? sizesOf({16}) : sizesOf({});
    });
    planPattern(*cross, pc);

    const PhaseStats worldPme = g_comm->stats(Phase::Pme), worldHalo = g_comm->stats(Phase::HaloX),
                     worldEnergies = g_comm->stats(Phase::Energies);
    long             iseq          = 0;
    const int        executions    = 12;
    for (int e = 0; e < executions; ++e)
    {
        ++cseq;
        pack(*cross, pc, me, cseq);
        cross->start();

        ++iseq;
        pack(*inner, pi, gme, iseq, *sub);
        inner->start();
        inner->finish();
        check(*inner, pi, gme, iseq, *sub);

        const auto values = [&](int w) {
            return std::vector<double>{0.1 * (w + 1) + e, 1e16 * (w % 2 ? 1 : -1) + 0.3 * w, 1.0 / (3 + w)};
        };
        std::vector<double> v = values(me), expect = values(group[0]);
        for (std::size_t j = 1; j < group.size(); ++j)
        {
            const auto x = values(group[j]);
            for (std::size_t i = 0; i < x.size(); ++i)
            {
                expect[i] += x[i];
            }
        }
        sub->sumInRankOrder(Phase::Energies, v);
        EXPECT_EQ(std::memcmp(v.data(), expect.data(), v.size() * sizeof(double)), 0) << "execution " << e;
        EXPECT_EQ(sub->maxLong(Phase::Energies, me * 10L + e), group.back() * 10L + e);

        cross->finish();
        check(*cross, pc, me, cseq);
    }
    // Each communicator counts its own traffic.
    EXPECT_EQ(sub->stats(Phase::HaloX).messages, executions * remoteSendLinks(pi, gme));
    EXPECT_EQ(sub->stats(Phase::HaloX).bytes, executions * remoteSendBytes(pi, gme));
    EXPECT_EQ(sub->stats(Phase::Energies).collectives, 2L * executions);
    EXPECT_EQ(sub->stats(Phase::Pme).messages, 0);
    EXPECT_EQ(g_comm->stats(Phase::Pme).messages - worldPme.messages, executions * remoteSendLinks(pc, me));
    EXPECT_EQ(g_comm->stats(Phase::Pme).bytes - worldPme.bytes, executions * remoteSendBytes(pc, me));
    EXPECT_EQ(g_comm->stats(Phase::HaloX).messages, worldHalo.messages);
    EXPECT_EQ(g_comm->stats(Phase::Energies).collectives, worldEnergies.collectives);

    // Variable sizes on the parent's exchange (coordinates to PME ranks).
    for (int e = 0; e < 6; ++e)
    {
        ++cseq;
        pack(*cross, pc, me, cseq);
        setSizes(*cross, pc, me, cseq);
        cross->start();
        cross->finish();
        checkUsed(*cross, pc, me, cseq, false);
    }

    // A split of the group: world ranks still translate.
    {
        auto             subsub = sub->split(gme % 2);
        std::vector<int> expectWorld;
        for (int j = gme % 2; j < gn; j += 2)
        {
            expectWorld.push_back(group[static_cast<std::size_t>(j)]);
        }
        EXPECT_EQ(subsub->size(), static_cast<int>(expectWorld.size()));
        for (int r = 0; r < subsub->size() && r < static_cast<int>(expectWorld.size()); ++r)
        {
            EXPECT_EQ(subsub->worldRankOf(r), expectWorld[static_cast<std::size_t>(r)]);
        }
        const int sn = subsub->size(), sme = subsub->rank();
        auto      ring = subsub->makeExchange(Phase::Migration);
        auto      pr   = makePattern(sme, sn, [&](int s, int r) {
            return r == (s + 1) % sn ? sizesOf({std::size_t(128 + s)}) : sizesOf({});
        });
        planPattern(*ring, pr);
        long rseq = 0;
        run(*ring, pr, rseq, 4, *subsub);
        EXPECT_EQ(subsub->sumLong(Phase::Setup, 1), sn);
    }

    // The group's exchange re-planned (its arena grows), the parent's still works.
    pi = makePattern(gme, gn, [&](int s, int r) {
        return r == (s + gn - 1) % gn ? sizesOf({std::size_t(1) << 18}) : sizesOf({});
    });
    planPattern(*inner, pi);
    run(*inner, pi, iseq, 3, *sub);
    run(*cross, pc, cseq, 3);
}

} // namespace

TEST(Comm, SplitFirstRanksAndTheRest)
{
    const int n = g_comm->size();
    splitAndRun([n](int r) { return r < (n + 1) / 2 ? 3 : 8; });
}

TEST(Comm, SplitEvenAndOddRanks)
{
    splitAndRun([](int r) { return r % 2 == 0 ? 0 : 1; });
}

TEST(Comm, SplitWithOneColorIsTheWorld)
{
    // Every backend, shmem included: the group is the whole world.
    const int me = g_comm->rank(), n = g_comm->size();
    auto      sub = g_comm->split(5);
    EXPECT_EQ(sub->size(), n);
    EXPECT_EQ(sub->rank(), me);
    for (int r = 0; r < n; ++r)
    {
        EXPECT_EQ(sub->worldRankOf(r), r);
    }
    auto inner = sub->makeExchange(Phase::HaloF);
    auto outer = g_comm->makeExchange(Phase::HaloF);
    auto p     = makePattern(me, n, [&](int s, int r) {
        return sizesOf({std::size_t((s * 7 + r * 3) % 11 * 97), std::size_t(3000 + s)});
    });
    planPattern(*inner, p);
    planPattern(*outer, p);
    long si = 0, so = 0;
    for (int e = 0; e < 4; ++e)
    {
        run(*inner, p, si, 2, *sub);
        run(*outer, p, so, 2);
    }
    EXPECT_EQ(sub->maxLong(Phase::Setup, me), n - 1);
    EXPECT_EQ(sub->stats(Phase::HaloF).messages, 8 * remoteSendLinks(p, me));
}

namespace
{

/* --kill-at N: a ring exchange in which the last rank kills itself.
 * --stall-at N: the last rank stops taking part (sleeps) instead; the
 * others must give up after PUTMD_COMM_TIMEOUT with a message. */
int killRun(int killAt, bool stall)
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::HaloX);
    auto      p  = makePattern(me, n, [&](int s, int r) { return r == (s + 1) % n ? sizesOf({1024}) : sizesOf({}); });
    ex->plan(p.sends, p.recvPeers);
    for (long seq = 1; seq < 1000000; ++seq)
    {
        if (seq == killAt && me == n - 1)
        {
            if (!stall)
            {
                raise(SIGKILL);
            }
            std::this_thread::sleep_for(std::chrono::seconds(600));
        }
        pack(*ex, p, me, seq);
        ex->start();
        ex->finish();
        check(*ex, p, me, seq);
    }
    return 0;
}

/* --send-size-too-large: the last rank asks to send more than planned;
 * the job must stop with a message saying so. */
int tooLargeRun()
{
    const int me = g_comm->rank(), n = g_comm->size();
    auto      ex = g_comm->makeExchange(Phase::Pme);
    auto      p  = makePattern(me, n, [&](int s, int r) { return r == (s + 1) % n ? sizesOf({100}) : sizesOf({}); });
    ex->plan(p.sends, p.recvPeers);
    if (me == n - 1)
    {
        ex->setSendSize(0, 100); // the planned size is fine
        ex->setSendSize(0, 101);
    }
    g_comm->barrier(Phase::Setup);
    std::printf("rank %d: setSendSize accepted more than planned\n", me);
    return 0;
}

class RankPrinter : public testing::EmptyTestEventListener
{
    void OnTestPartResult(const testing::TestPartResult& r) override
    {
        if (r.failed())
        {
            std::fprintf(stderr, "[rank %d] %s:%d: %s\n", g_comm->rank(), r.file_name() ? r.file_name() : "?",
                         r.line_number(), r.summary());
        }
    }
};

} // namespace

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    Communicator::initialize(&argc, &argv);
    int  killAt   = 0;
    bool stall    = false;
    bool tooLarge = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc)
        {
            auto b = parseBackend(argv[++i]);
            if (!b)
            {
                std::fprintf(stderr, "unknown backend %s\n", argv[i]);
                return 2;
            }
            g_backend = *b;
        }
        else if (a == "--send-size-too-large")
        {
            tooLarge = true;
        }
        else if ((a == "--kill-at" || a == "--stall-at") && i + 1 < argc)
        {
            stall  = a == "--stall-at";
            killAt = std::atoi(argv[++i]);
        }
    }
    if (!backendAvailable(g_backend))
    {
        std::fprintf(stderr, "backend %s not available in this build\n", backendName(g_backend));
        return 2;
    }
    int failed = 0;
    {
        Communicator comm(g_backend);
        g_comm = &comm;
        if (killAt > 0)
        {
            return killRun(killAt, stall);
        }
        if (tooLarge)
        {
            return tooLargeRun();
        }
        auto& listeners = testing::UnitTest::GetInstance()->listeners();
        if (comm.rank() != 0)
        {
            delete listeners.Release(listeners.default_result_printer());
            listeners.Append(new RankPrinter);
        }
        const int mine = RUN_ALL_TESTS();
        failed         = static_cast<int>(comm.maxLong(Phase::Setup, mine != 0 ? 1 : 0));
        if (comm.rank() == 0)
        {
            std::printf("comm tests: backend %s, %d rank(s)%s: %s\n", backendName(g_backend), comm.size(),
                        Communicator::parallel() ? "" : " (serial, no MPI)", failed ? "FAILED" : "passed");
        }
        g_comm = nullptr;
    }
    Communicator::finalize();
    return failed ? 1 : 0;
}
