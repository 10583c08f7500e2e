/* Dynamic load balancing's boundary rule (domdec/load_balance.h): equal
 * loads keep the boundaries; a density step is balanced within a few
 * balances (loads measured anew from the density each time, as a run
 * measures them at each search); the width and move limits hold; the
 * result is a pure function of its inputs. */
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "domdec/domain_bounds.h"
#include "domdec/load_balance.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

/* The load of each slab under a density profile (integrated numerically). */
std::vector<double> slabLoads(const std::vector<double>& bounds, const std::function<double(double)>& density)
{
    std::vector<double> loads;
    for (size_t i = 0; i + 1 < bounds.size(); i++)
    {
        const int steps = 2000;
        double    sum   = 0;
        for (int k = 0; k < steps; k++)
        {
            const double s = bounds[i] + (bounds[i + 1] - bounds[i]) * (k + 0.5) / steps;
            sum += density(s);
        }
        loads.push_back(sum * (bounds[i + 1] - bounds[i]) / steps);
    }
    return loads;
}

/* The staggered-boundary tests' grid: 2 x 2 x 1 domains. */
DdGrid twoByTwoByOne()
{
    DdGrid grid;
    grid.n = { 2, 2, 1 };
    return grid;
}

TEST(LoadBalance, EqualLoadsKeepTheBoundaries)
{
    const std::vector<double> b{ 0, 0.25, 0.5, 0.75, 1 };
    const auto                out = balancedBounds(b, { 1, 1, 1, 1 }, 0.1, 0.1);
    for (size_t k = 0; k < b.size(); k++)
    {
        EXPECT_NEAR(out[k], b[k], 1e-15);
    }
}

TEST(LoadBalance, TwoSlabsMovePartOfTheWayToTheTarget)
{
    // 3:1 over two equal slabs: the equal-work cut is at 1/3; damped part of the way
    const auto out = balancedBounds({ 0, 0.5, 1 }, { 3, 1 }, 0.1, 0.5);
    EXPECT_NEAR(out[1], 0.5 + kDlbDamping * (1.0 / 3 - 0.5), 1e-14);
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(out[2], 1);
}

TEST(LoadBalance, DensityStepIsBalancedWithinAFewSearches)
{
    // a slab of water at a tenth of the density over half the box
    auto density = [](double s) { return s < 0.5 ? 0.1 : 1.0; };
    std::vector<double> b{ 0, 1.0 / 3, 2.0 / 3, 1 };
    const double        before = loadImbalance(slabLoads(b, density));
    EXPECT_GT(before, 0.4);
    for (int balance = 0; balance < 12; balance++)
    {
        b = balancedBounds(b, slabLoads(b, density), 0.05, 0.05);
    }
    EXPECT_LT(loadImbalance(slabLoads(b, density)), 0.05) << before;
}

TEST(LoadBalance, WidthAndMoveLimitsHold)
{
    const std::vector<double> b{ 0, 0.25, 0.5, 0.75, 1 };
    const double              minWidth = 0.2, maxMove = 0.03;
    const auto                out = balancedBounds(b, { 100, 0, 0, 0 }, minWidth, maxMove);
    for (size_t k = 0; k + 1 < out.size(); k++)
    {
        EXPECT_GE(out[k + 1] - out[k], minWidth * (1 - 1e-12));
        EXPECT_LE(std::abs(out[k] - b[k]), maxMove * (1 + 1e-12));
    }
    EXPECT_LT(out[1], b[1]); // the loaded slab shrinks
    // without a move limit the width limit alone binds the loaded slab
    std::vector<double> free = b;
    for (int i = 0; i < 40; i++)
    {
        free = balancedBounds(free, { 100, 0, 0, 0 }, minWidth, 1.0);
    }
    EXPECT_NEAR(free[1], minWidth, 1e-9);
    for (size_t k = 0; k + 1 < free.size(); k++)
    {
        EXPECT_GE(free[k + 1] - free[k], minWidth * (1 - 1e-12));
    }
}

TEST(LoadBalance, ImbalanceIsMaxOverMean)
{
    EXPECT_DOUBLE_EQ(loadImbalance({ 1, 1, 1, 1 }), 0);
    EXPECT_DOUBLE_EQ(loadImbalance({ 3, 1 }), 0.5);
}

} // namespace
} // namespace putmd

namespace putmd
{
namespace
{

using test::cubicBox;

/* Staggered boundaries (domdec/domain_bounds.h): on a 2 x 2 x 1 grid the
 * two x columns want opposite y cuts; each gets its own, no further apart
 * than the stagger limit, every slab at least the allowed width, every move
 * at most half of it; set() takes back what balance() made and refuses
 * counts or staggers that do not fit. */
TEST(DomainBounds, ColumnsStaggerWithinTheLimits)
{
    const Box    box  = cubicBox(5.0);
    const double halo = 1.386;
    const DdGrid grid = twoByTwoByOne();
    DomainBounds b(grid, box, halo);
    EXPECT_EQ(b.numColumns(1), 2);
    EXPECT_GT(b.staggerLimit(1), 0.0);
    EXPECT_EQ(b.staggerLimit(0), 0.0); // the first cut dimension is shared
    const std::array<double, 3> widths{ 5, 5, 5 };
    // ranks (x fastest): (0,0) (1,0) (0,1) (1,1); column 0 heavy below, column 1 heavy above
    const std::vector<double> loads{ 3, 1, 1, 3 };
    DomainBounds::Flat        previous = b.flat();
    for (int balance = 0; balance < 10; balance++)
    {
        b.balance(loads, widths);
        for (int d = 0; d < 2; d++)
        {
            EXPECT_LE(b.stagger(d), b.staggerLimit(d) * (1 + 1e-12) + 1e-15);
            EXPECT_GE(b.narrowest(d), b.minWidth(d, 5.0) * (1 - 1e-12));
            for (size_t k = 0; k < b.flat()[d].size(); k++)
            {
                EXPECT_LE(std::abs(b.flat()[d][k] - previous[d][k]), 0.5 * b.minWidth(d, 5.0) * (1 + 1e-12));
            }
        }
        previous = b.flat();
    }
    // column 0's y cut went down, column 1's up, as far apart as allowed
    EXPECT_LT(b.face(1, 0, 1), 0.5);
    EXPECT_GT(b.face(1, 1, 1), 0.5);
    EXPECT_NEAR(b.stagger(1), b.staggerLimit(1), 1e-9);
    EXPECT_EQ(b.maxFace(1, 1), b.face(1, 1, 1));
    // a domain follows its column's cut
    EXPECT_EQ(b.domainOf(DVec(0.25, 0.49, 0.5))[1], 1);
    EXPECT_EQ(b.domainOf(DVec(0.75, 0.49, 0.5))[1], 0);

    DomainBounds copy(grid, box, halo);
    EXPECT_TRUE(copy.set(b.flat(), widths));
    EXPECT_EQ(copy.flat(), b.flat());
    DomainBounds::Flat wrongCount = b.flat();
    wrongCount[1].pop_back();
    EXPECT_FALSE(copy.set(wrongCount, widths));
    DomainBounds::Flat tooStaggered = b.flat();
    tooStaggered[1][1] -= 0.05; // column 0's cut further down
    EXPECT_FALSE(copy.set(tooStaggered, widths));
}

/* Balancing turned off (domdec/dlb_switch.h): the boundaries return to
 * equal domains a limited step at a time (every move at most half the
 * narrowest allowed slab, every state one set() accepts), and get there. */
TEST(DomainBounds, RelaxToUniformReturnsWithinTheMoveLimits)
{
    const Box    box  = cubicBox(5.0);
    const double halo = 1.386;
    const DdGrid grid = twoByTwoByOne();
    DomainBounds b(grid, box, halo);
    const DomainBounds::Flat    uniform = b.flat();
    const std::array<double, 3> widths{ 5, 5, 5 };
    const std::vector<double>   loads{ 5, 1, 3, 1 }; // x: 8 against 2; y in column 0: 5 against 3
    for (int balance = 0; balance < 10; balance++)
    {
        b.balance(loads, widths);
    }
    ASSERT_GT(std::abs(b.face(0, 0, 1) - 0.5), 0.05); // far from equal, more than one move away
    DomainBounds::Flat previous = b.flat();
    int                calls    = 0;
    bool               done     = false;
    while (!done && calls < 50)
    {
        done = b.relaxToUniform(widths);
        calls++;
        DomainBounds check(grid, box, halo);
        EXPECT_TRUE(check.set(b.flat(), widths)) << "after " << calls << " call(s)";
        for (int d = 0; d < 2; d++)
        {
            for (size_t k = 0; k < b.flat()[d].size(); k++)
            {
                EXPECT_LE(std::abs(b.flat()[d][k] - previous[d][k]), 0.5 * b.minWidth(d, 5.0) * (1 + 1e-12));
            }
        }
        previous = b.flat();
    }
    EXPECT_TRUE(done);
    EXPECT_GT(calls, 1); // the limit held it back at least once
    for (int d = 0; d < 3; d++)
    {
        for (size_t k = 0; k < uniform[d].size(); k++)
        {
            EXPECT_NEAR(b.flat()[d][k], uniform[d][k], 1e-12);
        }
    }
    EXPECT_TRUE(b.relaxToUniform(widths)); // and stays
}

} // namespace
/* The log's slab widths: every width while there are few, column after
 * column; on a large grid each dimension's range and counts only. */
TEST(DomainBounds, SlabWidthsTextListsFewAndSummarisesMany)
{
    DdGrid fewGrid;
    fewGrid.n = { 2, 2, 1 };
    const DomainBounds::Flat fewWidths{ std::vector<double>{ 2.0, 3.0 }, std::vector<double>{ 1.5, 3.5, 2.5, 2.5 },
                                        std::vector<double>{ 5.0, 5.0, 5.0, 5.0 } };
    EXPECT_EQ(slabWidthsText(fewGrid, fewWidths), "x: 2.000 3.000, y: 1.500 3.500 | 2.500 2.500");

    DdGrid large;
    large.n = { 4, 4, 4 }; // 4 + 16 + 64 widths
    DomainBounds::Flat many;
    for (int d = 0; d < 3; d++)
    {
        const int columns = d == 0 ? 1 : (d == 1 ? 4 : 16);
        many[d].assign(size_t(4 * columns), 1.25);
    }
    many[1][5]  = 1.1;  // one narrower slab in y
    many[2][63] = 1.42; // one wider in z
    EXPECT_EQ(slabWidthsText(large, many), "x: 1.250 to 1.250 (4 slabs in 1 column(s)), y: 1.100 to 1.250 (16 slabs in "
                                           "4 column(s)), z: 1.250 to 1.420 (64 slabs in 16 column(s))");
    // the same widths listed when the limit allows
    const std::string listed = slabWidthsText(large, many, 84);
    EXPECT_NE(listed.find("1.100"), std::string::npos);
    EXPECT_EQ(listed.find(" to "), std::string::npos);

    // only the dimensions printed count: 24 x 1 x 1 lists its 24 x widths
    // (the uncut y and z carry 24 and 24 more)
    DdGrid slabs;
    slabs.n = { 24, 1, 1 };
    const DomainBounds::Flat slabWidths{ std::vector<double>(24, 0.5), std::vector<double>(24, 12.0),
                                         std::vector<double>(24, 12.0) };
    const std::string        text = slabWidthsText(slabs, slabWidths);
    EXPECT_EQ(text.find(" to "), std::string::npos) << text;
    EXPECT_EQ(text.rfind("x: 0.500 0.500", 0), 0u) << text;
}

} // namespace putmd
