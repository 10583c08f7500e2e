/* Unit tests of the counter-based random numbers. */
#include <gtest/gtest.h>

#include <cmath>

#include "core/random.h"

namespace putmd
{
namespace
{

TEST(Philox, MatchesRandom123KnownAnswers)
{
    // philox4x32-10 known-answer vectors published with Random123
    using A4 = std::array<uint32_t, 4>;
    EXPECT_EQ(philox4x32({ 0, 0, 0, 0 }, { 0, 0 }), (A4{ 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 }));
    EXPECT_EQ(philox4x32({ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff }),
              (A4{ 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd }));
    EXPECT_EQ(philox4x32({ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 }),
              (A4{ 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 }));
}

TEST(CounterRandom, StreamsAreReproducibleAndDistinct)
{
    CounterRandom a(42, RandomPurpose::VRescale, 7, 0), b(42, RandomPurpose::VRescale, 7, 0);
    CounterRandom c(42, RandomPurpose::VRescale, 8, 0), d(42, RandomPurpose::CRescale, 7, 0);
    const double  x = a.normal();
    EXPECT_EQ(x, b.normal());
    EXPECT_NE(x, c.normal());
    EXPECT_NE(x, d.normal());
}

TEST(CounterRandom, MomentsOfUniformNormalAndGamma)
{
    const int n = 200000;
    double    su = 0, sn = 0, sn2 = 0, sg = 0, sg2 = 0;
    for (int i = 0; i < n; i++)
    {
        CounterRandom r(1, RandomPurpose::VelocityGeneration, 0, static_cast<uint32_t>(i));
        const double  u = r.uniform();
        ASSERT_GT(u, 0.0);
        ASSERT_LT(u, 1.0);
        su += u;
        const double z = r.normal();
        sn += z;
        sn2 += z * z;
        const double g = r.gamma(2.5); // mean 2.5, variance 2.5
        sg += g;
        sg2 += g * g;
    }
    EXPECT_NEAR(su / n, 0.5, 0.003);
    EXPECT_NEAR(sn / n, 0.0, 0.01);
    EXPECT_NEAR(sn2 / n, 1.0, 0.01);
    EXPECT_NEAR(sg / n, 2.5, 0.02);
    EXPECT_NEAR(sg2 / n - (sg / n) * (sg / n), 2.5, 0.05);
}

} // namespace
} // namespace putmd
