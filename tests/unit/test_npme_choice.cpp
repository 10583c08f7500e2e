/* --npme auto's estimate (pme/pme_ranks.h): on two ranks PME stays on
 * both (one PME rank can at best halve the step when the two costs are
 * equal); with many ranks and a PME-heavy system it takes separate PME
 * ranks; a PP rank count that cannot cut the box is never chosen. */
#include <gtest/gtest.h>

#include "pme/pme_ranks.h"

namespace putmd
{
namespace
{

const auto anyPp = [](int) { return true; };

TEST(NpmeChoice, TwoRanksKeepPmeOnBoth)
{
    // water-spce-12k: 12165 atoms, 204 pairs per atom, grid 42^3
    const NpmeChoice c = chooseNpme(2, 12165, 204, { 42, 42, 42 }, 4, anyPp);
    EXPECT_EQ(c.npme, 0) << c.reason;
    EXPECT_NE(c.reason.find("estimated PME share of the work"), std::string::npos) << c.reason;
}

TEST(NpmeChoice, ManyRanksAndHeavyPmeTakeSeparateRanks)
{
    // a fine grid (fourierspacing 0.06 on a 5 nm box) and a short cut-off
    const NpmeChoice c = chooseNpme(16, 12165, 50, { 84, 84, 84 }, 4, anyPp);
    EXPECT_GT(c.npme, 0) << c.reason;
    EXPECT_LE(c.npme, 8);
}

TEST(NpmeChoice, UnusablePpCountsAreNotChosen)
{
    const NpmeChoice free = chooseNpme(16, 12165, 50, { 84, 84, 84 }, 4, anyPp);
    ASSERT_GT(free.npme, 0);
    const int        refused = 16 - free.npme;
    const NpmeChoice c = chooseNpme(16, 12165, 50, { 84, 84, 84 }, 4, [&](int pp) { return pp != refused; });
    EXPECT_NE(c.npme, free.npme) << c.reason;
}

TEST(NpmeChoice, OneRankHasNoChoice)
{
    EXPECT_EQ(chooseNpme(1, 1000, 100, { 20, 20, 20 }, 4, anyPp).npme, 0);
}

} // namespace
} // namespace putmd
