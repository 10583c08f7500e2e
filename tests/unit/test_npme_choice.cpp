/* --npme's prediction (pme/npme_model.h, chooseNpme in pme/pme_ranks.h):
 * on two ranks of one machine PME stays on both; on a free network the
 * arithmetic alone never favours separate PME ranks; on a latency-bound
 * cluster of 1,024 ranks it takes separate PME ranks in a pencil grid with
 * few transpose peers (the arithmetic-only estimate took 254 in 127 x 2
 * pencils, which ran 9.4 times slower than 64 in 8 x 8 on the simulated fat
 * tree); more latency never buys more transpose peers; a PP rank count that
 * cannot cut the box is never chosen. */
#include <gtest/gtest.h>

#include <optional>

#include "domdec/dd_grid.h"
#include "fft/pencil_fft.h"
#include "pme/pme_ranks.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

/* A water box like water-spce-12k (5 nm, 42^3) or water-spce-96k (10 nm,
 * 84^3): 98.3 atoms per nm^3, a 1 nm cut-off, halo 1.3 nm. */
NpmeModelInput water(int ranks, double edge, int grid)
{
    NpmeModelInput in;
    in.worldSize    = ranks;
    in.box          = test::cubicBox(edge);
    in.numAtoms     = static_cast<long>(98.3 * edge * edge * edge);
    in.pairsPerAtom = 0.5 * 98.3 * 4.0 / 3.0 * 3.14159265 * 1.0;
    in.pmeGrid      = { grid, grid, grid };
    in.haloDistance = 1.3;
    in.ddGrid       = [box = in.box](int numPp) -> std::optional<DdGrid> {
        try
        {
            return chooseDdGrid(box, numPp, 1.3, std::nullopt);
        }
        catch (const std::exception&)
        {
            return std::nullopt;
        }
    };
    return in;
}

NetworkCost network(double latencyUs, double perMessageUs, double gbPerSecond)
{
    NetworkCost n;
    n.latency    = latencyUs * 1e-6;
    n.perMessage = perMessageUs * 1e-6;
    n.perByte    = gbPerSecond > 0 ? 1e-9 / gbPerSecond : 0.0;
    n.source     = "test";
    return n;
}

/* Dependent transpose messages per step of a layout's pencil grid. */
int transposeChain(const NpmeModelInput& in, int npme)
{
    const auto pg = choosePencilGrid(npme == 0 ? in.worldSize : npme, in.pmeGrid);
    return 2 * (pg[0] - 1 + pg[1] - 1);
}

TEST(NpmeChoice, TwoRanksOnOneMachineKeepPmeOnBoth)
{
    const NpmeChoice c = chooseNpme(water(2, 5.0, 42), NetworkCost{});
    EXPECT_EQ(c.npme, 0) << c.reason;
    EXPECT_NE(c.reason.find("predicted step npme 0"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("one machine"), std::string::npos) << c.reason;
}

TEST(NpmeChoice, AFreeNetworkNeverTakesSeparateRanks)
{
    // (pp + pme) / N is never more than max(pp / (N - K), pme / K)
    for (int ranks : { 4, 16, 128, 1024 })
    {
        const NpmeChoice c = chooseNpme(water(ranks, 10.0, 84), network(0, 0, 0));
        EXPECT_EQ(c.npme, 0) << ranks << " ranks: " << c.reason;
        EXPECT_GT(c.bestSeparate, 0) << ranks;
    }
}

TEST(NpmeChoice, ALatencyBoundClusterTakesFewTransposePeers)
{
    const NpmeModelInput in  = water(1024, 10.0, 84);
    const NetworkCost    net = network(20, 2, 10);
    const NpmeChoice     c   = chooseNpme(in, net);
    ASSERT_GT(c.npme, 0) << c.reason;
    // 127 x 2 pencils chain 254 transpose messages, 32 x 32 (npme 0) 124
    EXPECT_LT(transposeChain(in, c.npme), transposeChain(in, 0)) << c.reason;
    const auto chosen = predictLayout(in, net, c.npme);
    const auto old    = predictLayout(in, net, 254);
    const auto zero   = predictLayout(in, net, 0);
    ASSERT_TRUE(chosen && old && zero);
    EXPECT_LT(2 * chosen->seconds, old->seconds) << c.reason;
    EXPECT_LT(2 * chosen->seconds, zero->seconds) << c.reason;
    EXPECT_TRUE(chosen->pmeSideSlower) << c.reason;
}

TEST(NpmeChoice, MoreLatencyNeverBuysMoreTransposePeers)
{
    const NpmeModelInput in    = water(1024, 10.0, 84);
    int                  chain = 1 << 30;
    for (double latencyUs : { 0.5, 2.0, 10.0, 50.0, 200.0 })
    {
        const NpmeChoice c = chooseNpme(in, network(latencyUs, latencyUs / 10, 10));
        EXPECT_LE(transposeChain(in, c.npme), chain) << latencyUs << " us: " << c.reason;
        chain = transposeChain(in, c.npme);
    }
}

TEST(NpmeChoice, ASharedNetworksThroughputIsSplitAmongTheRanksThatUseIt)
{
    // GbE as measured under SimGrid with 512 ranks at once: 3.7 MB/s a
    // rank through the shared backplane, 100 MB/s for two ranks alone
    NetworkCost shared = network(259, 15.9, 0.00373);
    shared.perByteAlone = 1e-9 / 0.1;
    shared.loadedRanks  = 512;
    EXPECT_EQ(shared.perByteWith(512), shared.perByte);
    EXPECT_EQ(shared.perByteWith(2), shared.perByteAlone);
    EXPECT_DOUBLE_EQ(shared.perByteWith(256), shared.perByte / 2);
    // taken as every rank's own bandwidth, the bytes favour many PME ranks
    // (each moves less); split among the ranks moving them, few PME ranks
    // move their transposes faster. Simulated (water-spce-96k, 512 GbE
    // ranks): 256 PME ranks 63.7 ms a step, 64 PME ranks 37.7 ms.
    NetworkCost unshared = shared;
    unshared.loadedRanks = 0;
    const NpmeModelInput in    = water(512, 10.0, 84);
    const NpmeChoice     split = chooseNpme(in, shared);
    const NpmeChoice     whole = chooseNpme(in, unshared);
    EXPECT_LT(split.npme, whole.npme) << split.reason << "\n" << whole.reason;
    EXPECT_LT(predictLayout(in, shared, 64)->seconds, predictLayout(in, shared, 256)->seconds);
}

TEST(NpmeChoice, UnusablePpCountsAreNotChosen)
{
    NpmeModelInput    in  = water(1024, 10.0, 84);
    const NetworkCost net = network(20, 2, 10);
    const NpmeChoice  free = chooseNpme(in, net);
    ASSERT_GT(free.npme, 0);
    const int refused = 1024 - free.npme;
    const auto ddGrid = in.ddGrid;
    in.ddGrid = [&](int numPp) { return numPp == refused ? std::nullopt : ddGrid(numPp); };
    const NpmeChoice c = chooseNpme(in, net);
    EXPECT_NE(c.npme, free.npme) << c.reason;
    EXPECT_FALSE(predictLayout(in, net, free.npme).has_value());
}

TEST(NpmeChoice, OneRankHasNoChoice)
{
    EXPECT_EQ(chooseNpme(water(1, 5.0, 42), NetworkCost{}).npme, 0);
}

} // namespace
} // namespace putmd
