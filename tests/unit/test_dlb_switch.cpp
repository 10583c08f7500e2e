/* -dlb auto's switch (domdec/dlb_switch.h): auto turns on above
 * kDlbAutoPercent with the windows before as the reference (the first
 * measured window left out unless it is the only one); it turns off for
 * good once the last kDlbCheckWindows windows with balancing are not faster
 * than the reference, and stays on while they are; -dlb yes never turns
 * off; deterministic loads (atom counts) never turn off; a continuation
 * keeps the decision. */
#include <gtest/gtest.h>

#include "domdec/dlb_switch.h"

namespace putmd
{
namespace
{

DlbWindow win(double loss, double msPerStep, bool first = false)
{
    DlbWindow w;
    w.lossPercent    = loss;
    w.secondsPerStep = msPerStep / 1000;
    w.firstMeasured  = first;
    return w;
}

TEST(DlbSwitch, TheReferenceLeavesTheFirstWindowOut)
{
    DlbSwitch s(DlbMode::Auto, true, false);
    EXPECT_EQ(s.window(win(3, 9.0, true)), DlbDecision::Keep); // one-time costs: 9 ms a step
    EXPECT_EQ(s.window(win(3, 2.0)), DlbDecision::Keep);
    EXPECT_EQ(s.window(win(6, 2.2)), DlbDecision::TurnOn);
    EXPECT_TRUE(s.active());
    EXPECT_EQ(s.state().referenceWindows, 2);
    EXPECT_DOUBLE_EQ(s.referenceSecondsPerStep(), 2.1e-3);
}

TEST(DlbSwitch, OnAtTheFirstWindowItIsTheReference)
{
    DlbSwitch s(DlbMode::Auto, true, false);
    EXPECT_EQ(s.window(win(40, 9.0, true)), DlbDecision::TurnOn);
    EXPECT_DOUBLE_EQ(s.referenceSecondsPerStep(), 9.0e-3);
    EXPECT_EQ(s.window(win(40, 8.0)), DlbDecision::Keep);
    EXPECT_EQ(s.window(win(40, 8.5)), DlbDecision::Keep); // 8.25 < 9
    EXPECT_TRUE(s.active());
}

TEST(DlbSwitch, AutoTurnsOffForGoodWhenBalancingIsNotFaster)
{
    DlbSwitch s(DlbMode::Auto, true, false);
    s.window(win(0, 5.0, true));
    ASSERT_EQ(s.window(win(40, 6.0)), DlbDecision::TurnOn);
    EXPECT_EQ(s.window(win(20, 7.0)), DlbDecision::Keep); // one window with balancing: not judged yet
    EXPECT_TRUE(s.active());
    EXPECT_EQ(s.window(win(20, 6.5)), DlbDecision::TurnOff); // 6.75 ms against 6.0
    EXPECT_FALSE(s.active());
    EXPECT_TRUE(s.offForGood());
    EXPECT_DOUBLE_EQ(s.balancedSecondsPerStep(), 6.75e-3);
    // however unbalanced the work looks afterwards
    EXPECT_EQ(s.window(win(90, 6.0)), DlbDecision::Keep);
    EXPECT_FALSE(s.active());
}

TEST(DlbSwitch, AutoStaysOnWhileFasterThenTurnsOffWhenItIsNot)
{
    DlbSwitch s(DlbMode::Auto, true, false);
    s.window(win(0, 5.0, true));
    s.window(win(2, 10.0));
    ASSERT_EQ(s.window(win(30, 10.0)), DlbDecision::TurnOn);
    EXPECT_EQ(s.window(win(10, 9.0)), DlbDecision::Keep);
    EXPECT_EQ(s.window(win(10, 9.5)), DlbDecision::Keep); // 9.25 < 10
    EXPECT_EQ(s.window(win(10, 9.6)), DlbDecision::Keep); // the last two: 9.55
    EXPECT_TRUE(s.active());
    EXPECT_EQ(s.window(win(10, 10.5)), DlbDecision::TurnOff); // 10.05 >= 10
}

TEST(DlbSwitch, YesNeverTurnsOff)
{
    DlbSwitch s(DlbMode::Yes, true, true);
    for (double ms : { 5.0, 9.0, 12.0, 15.0 })
    {
        EXPECT_EQ(s.window(win(50, ms, ms == 5.0)), DlbDecision::Keep);
        EXPECT_TRUE(s.active());
    }
}

TEST(DlbSwitch, AtomCountsNeverTurnOff)
{
    DlbSwitch s(DlbMode::Auto, false, false);
    EXPECT_EQ(s.window(win(10, 5.0, true)), DlbDecision::TurnOn);
    for (double ms : { 9.0, 12.0, 15.0 })
    {
        EXPECT_EQ(s.window(win(10, ms)), DlbDecision::Keep);
    }
    EXPECT_TRUE(s.active());
}

TEST(DlbSwitch, NoNeverBalances)
{
    DlbSwitch s(DlbMode::No, true, false);
    EXPECT_EQ(s.window(win(90, 5.0)), DlbDecision::Keep);
    EXPECT_FALSE(s.active());
}

TEST(DlbSwitch, AContinuationKeepsTheDecision)
{
    DlbSwitch s(DlbMode::Auto, true, false);
    s.window(win(0, 5.0, true));
    s.window(win(40, 6.0));
    s.window(win(20, 7.0));
    ASSERT_EQ(s.window(win(20, 7.0)), DlbDecision::TurnOff);
    DlbSwitch c(DlbMode::Auto, true, true);
    c.restore(s.state(), true);
    EXPECT_FALSE(c.active());
    EXPECT_EQ(c.window(win(90, 6.0)), DlbDecision::Keep);
    EXPECT_FALSE(c.active());
    // on, with its reference: the continuation judges as the run would have
    DlbSwitch on(DlbMode::Auto, true, false);
    on.window(win(0, 5.0, true));
    on.window(win(40, 6.0));
    on.window(win(20, 7.0));
    DlbSwitch c2(DlbMode::Auto, true, false);
    c2.restore(on.state(), true);
    EXPECT_TRUE(c2.active());
    // its own first window carries its one-time costs: not compared
    EXPECT_EQ(c2.window(win(20, 30.0, true)), DlbDecision::Keep);
    EXPECT_TRUE(c2.active());
    EXPECT_EQ(c2.window(win(20, 7.0)), DlbDecision::TurnOff);
}

} // namespace
} // namespace putmd
