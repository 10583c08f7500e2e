/* Unit tests of the .gro and .mdp readers. */
#include <gtest/gtest.h>

#include "io/gro.h"
#include "io/mdp.h"

namespace putmd
{
namespace
{

TEST(Gro, ReadsPositionsVelocitiesAndRectangularBox)
{
    const std::string text = "title line\n    2\n"
                             "    1SOL     OW    1   1.000   2.000   3.000  0.1000 -0.2000  0.3000\n"
                             "    1SOL    HW1    2   1.100   2.000   3.000  0.0000  0.0000  1.0000\n"
                             "   3.00000   4.00000   5.00000\n";
    const GroFile g = parseGro(text, "x.gro");
    ASSERT_EQ(g.x.size(), 2u);
    EXPECT_EQ(g.title, "title line");
    EXPECT_EQ(g.atoms[1].atomName, "HW1");
    EXPECT_EQ(g.atoms[0].residueName, "SOL");
    EXPECT_DOUBLE_EQ(g.x[1].x, 1.1);
    ASSERT_EQ(g.v.size(), 2u);
    EXPECT_DOUBLE_EQ(g.v[0].y, -0.2);
    EXPECT_DOUBLE_EQ(g.box.volume(), 60.0);
    EXPECT_FALSE(g.box.isTriclinic());
}

TEST(Gro, ReadsWiderFieldsAndTriclinicBox)
{
    // %10.5f coordinates: the field width comes from the decimal points
    const std::string text = "t\n1\n    1ALA     CA    1   1.00000   2.50000   0.12345\n"
                             "   3.23743   3.23743   2.28921   0.00000   0.00000   0.00000   0.00000   1.61871   1.61871\n";
    const GroFile g = parseGro(text, "x.gro");
    EXPECT_DOUBLE_EQ(g.x[0].z, 0.12345);
    EXPECT_TRUE(g.v.empty());
    EXPECT_TRUE(g.box.isTriclinic());
    EXPECT_DOUBLE_EQ(g.box.vectors()(2, 0), 1.61871);
    EXPECT_NEAR(g.box.volume(), 3.23743 * 3.23743 * 2.28921, 1e-12);
}

TEST(Gro, TruncatedFileNamesLineAndCounts)
{
    const std::string text = "t\n    3\n    1SOL     OW    1   1.000   2.000   3.000\n";
    try
    {
        parseGro(text, "short.gro");
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("short.gro:3"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
}

TEST(Mdp, DashAndUnderscoreAreEquivalentAndValuesTyped)
{
    const auto r = parseMdp("coulombtype = pme\nrcoulomb=1.2\nvdw_modifier = Force-switch\nrvdw-switch = 0.8\n"
                            "fourier_nx = 32 ; comment\nDispCorr = EnerPres\nconstraints = h-bonds\n",
                            "a.mdp");
    EXPECT_EQ(r.options.coulombType, CoulombType::Pme);
    EXPECT_DOUBLE_EQ(r.options.rcoulomb, 1.2);
    EXPECT_EQ(r.options.vdwModifier, InteractionModifier::ForceSwitch);
    EXPECT_EQ(r.options.fourierN[0], 32);
    EXPECT_EQ(r.options.dispCorr, DispCorr::EnerPres);
    EXPECT_EQ(r.options.constraints, ConstraintsMode::HBonds);
    EXPECT_EQ(r.options.where("vdw-modifier").line, 3);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(Mdp, UnknownKeyIsAWarningWithLocation)
{
    const auto r = parseMdp("rcoulomb = 1.0\nnstcheckpoint = 1000\n", "a.mdp");
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("a.mdp:2"), std::string::npos);
    EXPECT_NE(r.warnings[0].find("nstcheckpoint"), std::string::npos);
}

TEST(Mdp, UnsupportedValueIsAnErrorListingValidValues)
{
    try
    {
        parseMdp("\ncoulombtype = Ewald\n", "b.mdp");
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        const std::string m = e.what();
        EXPECT_NE(m.find("b.mdp:2"), std::string::npos) << m;
        EXPECT_NE(m.find("Reaction-Field"), std::string::npos) << m;
    }
    EXPECT_THROW(parseMdp("pme-order = 13\n", "c.mdp"), InputError);
    EXPECT_THROW(parseMdp("rcoulomb = abc\n", "c.mdp"), InputError);
    EXPECT_THROW(parseMdp("rvdw = 1\nrvdw = 1.1\n", "c.mdp"), InputError);
}

TEST(Mdp, DefinesAndIncludes)
{
    const auto r = parseMdp("define = -DPOSRES -DFLEXIBLE=1\ninclude = -I/opt/ff\n", "d.mdp");
    ASSERT_EQ(r.options.defines.size(), 2u);
    EXPECT_EQ(r.options.defines[1], "FLEXIBLE=1");
    ASSERT_EQ(r.options.includeDirs.size(), 1u);
    EXPECT_EQ(r.options.includeDirs[0], "/opt/ff");
}

} // namespace
} // namespace putmd
