/* Unit tests of topology parsing, parameter lookup and the global topology. */
#include <gtest/gtest.h>

#include <cmath>

#include "io/preprocessor.h"
#include "test_helpers.h"
#include "topology/build_topology.h"
#include "topology/topology_parser.h"

namespace putmd
{
namespace
{

Topology build(const std::string& text, ConstraintsMode cm = ConstraintsMode::None)
{
    test::TempDir d;
    const auto    top = d.write("t.top", text);
    return buildTopology(parseTopology(preprocessTopology(top, {})), cm);
}

const char* header = "[ defaults ]\n1 2 yes 0.5 0.8333\n"
                     "[ atomtypes ]\n"
                     "A  A_b  6 12.0 0.0 A 0.30 0.50\n"
                     "B  B_b  1  1.0 0.0 A 0.20 0.10\n"
                     "H  H_b  1  1.0 0.0 A 0.10 0.05\n";

TEST(Topology, CombinationRuleTwoAndNonbondParams)
{
    const std::string t = std::string(header) + "[ nonbond_params ]\nA B 1 0.4 0.9\n"
                          "[ moleculetype ]\nM 3\n[ atoms ]\n1 A 1 R A1 1 0.5\n2 B 1 R B1 1 -0.5\n"
                          "[ system ]\ns\n[ molecules ]\nM 2\n";
    const Topology top = build(t);
    ASSERT_EQ(top.numAtoms, 4);
    const int a = top.ljType[0], b = top.ljType[1];
    // A-A from the rule: sigma 0.3, eps 0.5
    EXPECT_NEAR(top.c6Of(a, a), 4 * 0.5 * std::pow(0.3, 6), 1e-15);
    EXPECT_NEAR(top.c12Of(a, a), 4 * 0.5 * std::pow(0.3, 12), 1e-18);
    // A-B overridden by nonbond_params
    EXPECT_NEAR(top.c6Of(a, b), 4 * 0.9 * std::pow(0.4, 6), 1e-15);
    EXPECT_DOUBLE_EQ(top.charge[3], -0.5);
    EXPECT_DOUBLE_EQ(top.mass[2], 12.0); // mass from the atom type
}

TEST(Topology, GenPairsUseFinalMatrixTimesFudgeAndPairtypesAreNotFudged)
{
    const std::string t = std::string(header) + "[ nonbond_params ]\nA B 1 0.4 0.9\n[ pairtypes ]\nA A 1 0.33 0.7\n"
                          "[ moleculetype ]\nM 3\n[ atoms ]\n1 A 1 R A1 1 0.5\n2 B 1 R B1 1 -0.5\n3 A 1 R A2 1 0.1\n"
                          "[ pairs ]\n1 2 1\n1 3 1\n2 3 1 0.25 0.3\n"
                          "[ system ]\ns\n[ molecules ]\nM 1\n";
    const Topology top = build(t);
    const auto&    p   = top.listed.pairs;
    ASSERT_EQ(p.size(), 3u);
    EXPECT_NEAR(p[0].c6, 0.5 * 4 * 0.9 * std::pow(0.4, 6), 1e-15); // gen-pairs from nonbond_params
    EXPECT_NEAR(p[1].c6, 4 * 0.7 * std::pow(0.33, 6), 1e-15);      // pairtypes, no fudge
    EXPECT_NEAR(p[2].c6, 4 * 0.3 * std::pow(0.25, 6), 1e-15);      // inline
    EXPECT_NEAR(p[0].qq, 0.8333 * 0.5 * -0.5, 1e-15);
}

TEST(Topology, ExclusionsFollowNrexclBondsButNotSettles)
{
    const std::string t = std::string(header)
                          + "[ moleculetype ]\nC 2\n[ atoms ]\n1 A 1 R X1\n2 A 1 R X2\n3 A 1 R X3\n4 A 1 R X4\n5 A 1 R X5\n"
                            "[ bonds ]\n1 2 1 0.1 1000\n2 3 1 0.1 1000\n3 4 5\n4 5 1 0.1 1000\n"
                            "[ moleculetype ]\nW 2\n[ atoms ]\n1 A 1 W O\n2 H 1 W H1\n3 H 1 W H2\n"
                            "[ settles ]\n1 1 0.1 0.16\n"
                            "[ system ]\ns\n[ molecules ]\nC 1\nW 1\n";
    const Topology top   = build(t);
    auto           excl  = [&](int i) {
        return std::vector<int>(top.exclusions.begin() + top.exclusionStart[i], top.exclusions.begin() + top.exclusionStart[i + 1]);
    };
    EXPECT_EQ(excl(0), (std::vector<int>{ 1, 2 }));       // two bonds away
    EXPECT_EQ(excl(2), (std::vector<int>{ 0, 1, 3, 4 })); // the connection (type 5) counts
    EXPECT_TRUE(excl(5).empty());                          // settles are not bonds
    EXPECT_EQ(top.settles.size(), 1u);
    EXPECT_EQ(top.settles[0].o, 5);
    EXPECT_EQ(top.listed.bonds.size(), 3u); // the connection has no energy
}

TEST(Topology, HBondsBecomeConstraints)
{
    const std::string t = std::string(header) + "[ bondtypes ]\nA_b H_b 1 0.109 2000\nA_b A_b 1 0.153 1000\n"
                          "[ moleculetype ]\nM 3\n[ atoms ]\n1 A 1 R C1\n2 H 1 R H1\n3 A 1 R C2\n"
                          "[ bonds ]\n2 1 1\n1 3 1\n"
                          "[ system ]\ns\n[ molecules ]\nM 1\n";
    const Topology none = build(t, ConstraintsMode::None);
    EXPECT_EQ(none.listed.bonds.size(), 2u);
    EXPECT_DOUBLE_EQ(none.listed.bonds[0].b0, 0.109); // found in reverse order
    const Topology h = build(t, ConstraintsMode::HBonds);
    ASSERT_EQ(h.listed.bonds.size(), 1u);
    EXPECT_DOUBLE_EQ(h.listed.bonds[0].b0, 0.153);
    ASSERT_EQ(h.constraints.size(), 1u);
    EXPECT_DOUBLE_EQ(h.constraints[0].length, 0.109);
    const Topology all = build(t, ConstraintsMode::AllBonds);
    EXPECT_TRUE(all.listed.bonds.empty());
    EXPECT_EQ(all.constraints.size(), 2u);
}

TEST(Topology, DihedralLookupPrefersSpecificMatchAndCollectsType9Blocks)
{
    const std::string t = std::string(header)
                          + "[ dihedraltypes ]\n"
                            "X A_b A_b X 9 0.0 1.0 3\n"
                            "B_b A_b A_b B_b 9 0.0 2.0 1\n"
                            "B_b A_b A_b B_b 9 180.0 3.0 2\n"
                            "A_b B_b 9 0.0 4.0 2\n"  // two-type proper form: X A B X
                            "B_b H_b 2 10.0 50.0\n" // two-type improper form: B X X H
                            "[ moleculetype ]\nM 3\n[ atoms ]\n1 B 1 R B1\n2 A 1 R A1\n3 A 1 R A2\n4 B 1 R B2\n5 H 1 R H1\n"
                            "[ dihedrals ]\n1 2 3 4 9\n5 2 3 1 9\n4 3 2 1 1\n1 2 4 5 2\n5 2 4 1 9\n"
                            "[ system ]\ns\n[ molecules ]\nM 1\n";
    const Topology top = build(t);
    const auto&    d   = top.listed.properDihedrals;
    // 1-2-3-4: specific two-term block; 5-2-3-1: wildcard; 4-3-2-1: reversed
    // specific block (function 1 uses the shared table); 5-2-4-1: X A B X
    ASSERT_EQ(d.size(), 2u + 1u + 2u + 1u);
    EXPECT_DOUBLE_EQ(d[0].kphi, 2.0);
    EXPECT_DOUBLE_EQ(d[1].kphi, 3.0);
    EXPECT_EQ(d[1].mult, 2);
    EXPECT_DOUBLE_EQ(d[2].kphi, 1.0);
    EXPECT_DOUBLE_EQ(d[3].kphi, 2.0);
    EXPECT_DOUBLE_EQ(d[5].kphi, 4.0);
    ASSERT_EQ(top.listed.impropers.size(), 1u);
    EXPECT_DOUBLE_EQ(top.listed.impropers[0].kxi, 50.0);
}

TEST(Topology, NonAdjacentType9RepeatIsAnError)
{
    const std::string t = std::string(header) + "[ dihedraltypes ]\nX A_b A_b X 9 0.0 1.0 3\nX B_b B_b X 9 0.0 1.0 3\n"
                          "X A_b A_b X 9 0.0 2.0 1\n"
                          "[ moleculetype ]\nM 3\n[ atoms ]\n1 A 1 R A1\n[ system ]\ns\n[ molecules ]\nM 1\n";
    EXPECT_THROW(build(t), InputError);
}

TEST(Topology, MissingParametersNameTheLine)
{
    const std::string t = std::string(header) + "[ moleculetype ]\nM 3\n[ atoms ]\n1 A 1 R A1\n2 B 1 R B1\n"
                          "[ bonds ]\n1 2 1\n[ system ]\ns\n[ molecules ]\nM 1\n";
    try
    {
        build(t);
        FAIL();
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("t.top:13"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("A_b B_b"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace putmd
