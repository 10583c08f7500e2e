/* tests/comm/comm_exchange_tests.cpp — exchanges: link patterns, slow and
 * fast peers, overlap, statistics, plans, and send sizes that vary per
 * execution (setSendSize). Shared helpers and main: comm_harness.h/.cpp. */
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "comm_harness.h"

using namespace comm_test;

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
