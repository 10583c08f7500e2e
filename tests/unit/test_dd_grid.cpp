/* The domain grid (domdec/dd_grid.h) with multi-pulse halos: a dimension
 * cut into domains narrower than the halo distance takes P = ceil(halo /
 * width) pulses, at most kMaxHaloPulses and fewer than its domain count;
 * the automatic choice keeps one-pulse grids where any exists, so rank
 * counts that worked before keep their grid; the counts that were
 * impossible with one pulse now decompose, and the error for the rest
 * lists what works. */
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/box.h"
#include "core/error.h"
#include "domdec/dd_grid.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

using test::cubicBox;

// water-spce-3k: a 3.1 nm cube, halo distance 1.386 nm
const double kHalo3k = 1.386;

TEST(DdGrid, PulsesCoverTheHaloAndStayBelowTheDomainCount)
{
    const Box box = cubicBox(3.1);
    EXPECT_EQ(haloPulses(box, 0, 1, kHalo3k), 1);
    EXPECT_EQ(haloPulses(box, 0, 2, kHalo3k), 1); // 1.55 nm
    EXPECT_EQ(haloPulses(box, 0, 3, kHalo3k), 2); // 1.033 nm
    EXPECT_EQ(haloPulses(box, 0, 4, kHalo3k), 2); // 0.775 nm
    EXPECT_EQ(haloPulses(box, 0, 5, kHalo3k), 3); // 0.62 nm
    EXPECT_EQ(haloPulses(box, 0, 6, kHalo3k), 3); // 0.517 nm: 1.55 covers 1.386
    EXPECT_EQ(haloPulses(box, 0, 7, kHalo3k), 0); // 0.443 nm: 3 pulses reach 1.329
    // two domains narrower than the halo would need the halo to wrap into
    // the domain itself
    EXPECT_EQ(haloPulses(cubicBox(2.0), 0, 2, kHalo3k), 0);
}

TEST(DdGrid, OnePulseGridsArePreferred)
{
    const Box box = cubicBox(3.1);
    // 4 x 1 x 1 has the smaller halo volume but needs 2 pulses
    const DdGrid g4 = chooseDdGrid(box, 4, kHalo3k, std::nullopt);
    EXPECT_EQ(g4.n, (std::array<int, 3>{ 2, 2, 1 }));
    EXPECT_EQ(g4.extraPulses(), 0);
    EXPECT_EQ(describeGrid(g4), "2 x 2 x 1");
    const DdGrid g8 = chooseDdGrid(box, 8, kHalo3k, std::nullopt);
    EXPECT_EQ(g8.n, (std::array<int, 3>{ 2, 2, 2 }));
}

TEST(DdGrid, CountsImpossibleWithOnePulseNowDecompose)
{
    const Box box = cubicBox(3.1);
    const DdGrid g3 = chooseDdGrid(box, 3, kHalo3k, std::nullopt);
    EXPECT_EQ(g3.n, (std::array<int, 3>{ 3, 1, 1 }));
    EXPECT_EQ(g3.pulses, (std::array<int, 3>{ 2, 1, 1 }));
    EXPECT_EQ(describeGrid(g3), "3 x 1 x 1 (halo pulses: 2 in x)");
    for (int n : { 5, 6, 9, 10, 12 })
    {
        const DdGrid g = chooseDdGrid(box, n, kHalo3k, std::nullopt);
        EXPECT_EQ(g.size(), n);
        EXPECT_GT(g.extraPulses(), 0) << n << " ranks: " << describeGrid(g);
        for (int d = 0; d < 3; d++)
        {
            // P pulses of the domain width cover the halo
            EXPECT_GE(g.pulses[d] * box.perpendicularWidth(d) / g.n[d], g.n[d] > 1 ? kHalo3k : 0.0);
            EXPECT_LE(g.pulses[d], kMaxHaloPulses);
        }
    }
    // forced: -dd 4 1 1 takes 2 pulses in x
    const DdGrid f = chooseDdGrid(box, 4, kHalo3k, std::array<int, 3>{ 4, 1, 1 });
    EXPECT_EQ(f.pulses, (std::array<int, 3>{ 2, 1, 1 }));
}

TEST(DdGrid, ImpossibleCountsNameWhatWorks)
{
    const Box box = cubicBox(3.1);
    try
    {
        chooseDdGrid(box, 7, kHalo3k, std::nullopt);
        FAIL() << "7 ranks were accepted";
    }
    catch (const InputError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("cannot decompose the box over 7 ranks"), std::string::npos) << what;
        EXPECT_NE(what.find("Rank counts up to 64 that work here: 1, 2, 3, 4, 5, 6, 8, 9, 10, 12,"), std::string::npos)
                << what;
    }
    try
    {
        chooseDdGrid(box, 7, kHalo3k, std::array<int, 3>{ 7, 1, 1 });
        FAIL() << "-dd 7 1 1 was accepted";
    }
    catch (const InputError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("domains in dimension x would be 0.443 nm wide"), std::string::npos) << what;
        EXPECT_NE(what.find("P at most 3"), std::string::npos) << what;
    }
}

} // namespace
} // namespace putmd
