/* tests/comm/comm_harness.cpp — the shared helpers of the communication
 * tests (comm_harness.h) and their main.
 *
 * --kill-at N makes the last rank SIGKILL itself in the N-th execution of a
 * ring exchange, --stall-at N makes it stop taking part; kill_test.sh checks
 * that the whole job then fails fast (the stall: after PUTMD_COMM_TIMEOUT,
 * with a message naming what was awaited). --send-size-too-large makes the
 * last rank ask for more than it planned, --plan-mismatch makes two ranks
 * disagree on the links between them, and CTest checks that the job stops
 * with the message.
 */
#include "comm_harness.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace comm_test
{

Backend       g_backend = Backend::P2p;
Communicator* g_comm    = nullptr;

void pack(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c)
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

long check(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c)
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

void run(Exchange& ex, const Pattern& p, long& seq, int executions, const Communicator& c)
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
long setSizes(Exchange& ex, const Pattern& p, int me, long seq, const Communicator& c)
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
               const Communicator& c)
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

} // namespace comm_test

using namespace comm_test;

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

/* --plan-mismatch: rank 0 plans two links to rank 1, which plans to
 * receive one from it; rank 1 must stop the job naming both counts. */
int planMismatchRun()
{
    const int me = g_comm->rank();
    auto      ex = g_comm->makeExchange(Phase::Pme);
    std::vector<SendLink> sends;
    std::vector<int>      recvPeers;
    if (me == 0)
    {
        sends = { { 1, 100 }, { 1, 200 } };
    }
    else if (me == 1)
    {
        recvPeers = { 0 };
    }
    ex->plan(sends, recvPeers);
    g_comm->barrier(Phase::Setup);
    std::printf("rank %d: the plan accepted a link count the peer does not send\n", me);
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
    bool mismatch = false;
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
        else if (a == "--plan-mismatch")
        {
            mismatch = true;
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
        if (mismatch)
        {
            return planMismatchRun();
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
