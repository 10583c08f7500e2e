/* Every force field shipped with GROMACS (Debian's gromacs-data) loads:
 * its forcefield.itp, the three-site water models it supports and the ions, with the
 * preprocessor, the parser and the topology builder (every type lookup the
 * water and ion molecules need). Skipped where GROMACS's data directory is
 * absent; `make test` installs it. */
#include <gtest/gtest.h>

#include <filesystem>

#include "io/preprocessor.h"
#include "../test_names.h"
#include "test_helpers.h"
#include "topology/build_topology.h"
#include "topology/topology_parser.h"

namespace putmd
{
namespace
{

namespace fs = std::filesystem;

const fs::path kDataDir = "/usr/share/gromacs/top";

std::vector<std::string> shippedForceFields()
{
    std::vector<std::string> ffs;
    if (fs::exists(kDataDir))
    {
        for (const auto& e : fs::directory_iterator(kDataDir))
        {
            if (e.path().extension() == ".ff")
            {
                ffs.push_back(e.path().filename().string());
            }
        }
    }
    std::sort(ffs.begin(), ffs.end());
    return ffs;
}

class ShippedForceField : public ::testing::TestWithParam<std::string>
{
};

TEST_P(ShippedForceField, LoadsWithWatersAndIons)
{
    const std::string ff = GetParam();
    if (ff == "none-installed")
    {
        GTEST_SKIP() << kDataDir << " not installed (Debian package gromacs-data)";
    }
    // GROMOS ships a tip3p.itp whose atom types no GROMOS [ atomtypes ]
    // defines (grompp rejects that combination too)
    const bool gromos = ff.rfind("gromos", 0) == 0;
    for (const char* water : { "spc", "spce", "tip3p" })
    {
        if (gromos && std::string(water) == "tip3p")
        {
            continue;
        }
        test::TempDir d;
        const auto    top = d.write("topol.top", "#include \"" + ff + "/forcefield.itp\"\n#include \"" + ff + "/" + water
                                                         + ".itp\"\n#include \"" + ff + "/ions.itp\"\n"
                                                         "[ system ]\ntest\n[ molecules ]\nSOL 10\n");
        PreprocessorOptions o;
        o.dataDir = kDataDir.string();
        try
        {
            const TopologyFile file = parseTopology(preprocessTopology(top, o), top);
            EXPECT_GT(file.ff.numAtomTypes(), 10u);
            EXPECT_NE(file.moleculeType("SOL"), nullptr);
            const Topology t = buildTopology(file, ConstraintsMode::HBonds);
            EXPECT_EQ(t.numAtoms, 30);
            EXPECT_NEAR(t.totalCharge(), 0.0, 1e-9);
            EXPECT_EQ(t.settles.size(), 10u) << water;
        }
        catch (const InputError& e)
        {
            ADD_FAILURE() << ff << " with " << water << ": " << e.what();
        }
    }
}

std::vector<std::string> paramsOrPlaceholder()
{
    auto ffs = shippedForceFields();
    if (ffs.empty())
    {
        ffs.push_back("none-installed");
    }
    return ffs;
}

INSTANTIATE_TEST_SUITE_P(Gromacs, ShippedForceField, ::testing::ValuesIn(paramsOrPlaceholder()),
                         [](const auto& info) { return test::sanitizedTestName(info.param); });

TEST(ShippedForceFields, AllFamiliesArePresent)
{
    if (!fs::exists(kDataDir))
    {
        GTEST_SKIP() << kDataDir << " not installed (Debian package gromacs-data)";
    }
    const auto ffs = shippedForceFields();
    for (const char* want : { "amber99sb-ildn.ff", "charmm27.ff", "oplsaa.ff", "gromos54a7.ff" })
    {
        EXPECT_NE(std::find(ffs.begin(), ffs.end(), want), ffs.end()) << want;
    }
}

} // namespace
} // namespace putmd
