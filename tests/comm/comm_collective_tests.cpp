/* tests/comm/comm_collective_tests.cpp — the communicator's collectives
 * (rank-order sums, allGather, gather, broadcast, max and sum with their
 * counts) and sub-communicators (split) with exchanges inside and across
 * them. Shared helpers and main: comm_harness.h/.cpp. */
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/link_probe.h"
#include "comm_harness.h"

using namespace comm_test;

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

/* The network's costs for --npme (comm/link_probe.h): every rank gets rank
 * 0's figures; on one machine the fixed constants (the same choice in every
 * run), across "machines" (PUTMD_COMM_NODE_SIZE) a measurement. */
TEST(Comm, NetworkCostIsTheSameOnEveryRank)
{
    const NetworkCost cost = probeNetworkCost();
    const double      mine[5] = { cost.latency, cost.perMessage, cost.perByte, cost.perByteAlone,
                                      double(cost.loadedRanks) };
    const std::vector<double> all = g_comm->allGather(Phase::Setup, mine);
    for (int r = 0; r < g_comm->size(); ++r)
    {
        for (int k = 0; k < 5; ++k)
        {
            EXPECT_EQ(all[5 * r + k], mine[k]) << "rank " << r << ", value " << k;
        }
    }
    const bool spansMachines = std::getenv("PUTMD_COMM_NODE_SIZE") != nullptr && g_comm->size() > 2;
    if (spansMachines)
    {
        EXPECT_NE(cost.source.find("measured"), std::string::npos) << cost.source;
        EXPECT_GT(cost.latency, 0.0);
        EXPECT_GE(cost.perMessage, 0.0);
        EXPECT_GE(cost.perByte, 0.0);
        EXPECT_LE(cost.perByteAlone, cost.perByte);
        EXPECT_EQ(cost.loadedRanks, g_comm->size());
    }
    else
    {
        const NetworkCost constants;
        EXPECT_EQ(cost.latency, constants.latency);
        EXPECT_EQ(cost.perByte, constants.perByte);
        EXPECT_EQ(cost.source, constants.source);
    }
}
