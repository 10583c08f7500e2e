/* Unit tests of the Verlet buffer estimate (nonbonded/verlet_buffer.h):
 * rlist and nstlist against what GROMACS 2022 chooses for the shared test
 * systems, the intermediate drift against gmx's debug output, the
 * directions in which rlist must move with tolerance, dt and nstlist, and
 * the explicit-rlist and special cases.
 *
 * The GROMACS numbers come from gmx 2022.5 (Debian, mixed precision,
 * SSE4.1, so mdrun's list is 4x4), in a directory holding the system's
 * files and run.mdp = the system's md.mdp with the overrides listed:
 *   gmx grompp -f run.mdp -c conf.gro -p topol.top -o run.tpr
 *     -> "Calculated rlist for 1x1 atom pair-list as A nm" (rlist1x1),
 *        "Set rlist, assuming 4x4 atom pair-list, to B nm" (rlist4x4),
 *        "NVE simulation: will use the initial temperature of T K"
 *   gmx mdrun -s run.tpr -nsteps 0 -ntmpi 1 -ntomp 1
 *     -> md.log "Changing nstlist from 10 to N, rlist from B to C", or
 *        "Can not increase nstlist because an NVE ensemble is used"
 *   gmx grompp -debug 1 / gmx mdrun -debug 1 -> gmx.debug lines
 *     "ib lo mid hi rb X 4x4 fac F drift D" (the drift at rc + X).
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "core/error.h"
#include "io/mdp.h"
#include "nonbonded/verlet_buffer.h"
#include "run/system_inputs.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

const std::string dataDir = PUTMD_TEST_DATA;

std::string readText(const std::string& path)
{
    std::ifstream     in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/* The mdp text with the value of each overridden key replaced, and
 * overrides for keys it lacks appended. */
std::string withOverrides(const std::string& text, const std::map<std::string, std::string>& overrides)
{
    std::istringstream                 in(text);
    std::ostringstream                 out;
    std::map<std::string, std::string> left = overrides;
    std::string                        line;
    while (std::getline(in, line))
    {
        const auto eq  = line.find('=');
        std::string key = eq == std::string::npos ? "" : line.substr(0, eq);
        key.erase(key.find_last_not_of(" \t") + 1);
        key.erase(0, key.find_first_not_of(" \t"));
        key = normaliseMdpKey(key);
        if (left.count(key))
        {
            out << key << " = " << left[key] << "\n";
            left.erase(key);
        }
        else
        {
            out << line << "\n";
        }
    }
    for (const auto& [k, v] : left)
    {
        out << k << " = " << v << "\n";
    }
    return out.str();
}

SystemInputs loadWithMdp(const std::string& system, const std::map<std::string, std::string>& overrides)
{
    static test::TempDir dir;
    const std::string    sys = dataDir + "/systems/" + system;
    InputPaths           paths;
    paths.topology    = sys + "/topol.top";
    paths.coordinates = sys + "/conf.gro";
    paths.mdp         = dir.write(system + "-run.mdp", withOverrides(readText(sys + "/md.mdp"), overrides));
    return loadSystem(paths);
}

/* Degrees of freedom as grompp counts them for one group with
 * centre-of-mass removal. */
double degreesOfFreedom(const Topology& top)
{
    return 3.0 * top.numAtoms - double(top.constraints.size()) - 3.0 * double(top.settles.size()) - 3;
}

struct GromacsCase
{
    const char*                        name;
    const char*                        system;
    std::map<std::string, std::string> overrides;
    bool                               nve;
    double                             temperature; // max ref-t, or grompp's NVE note
    double                             rlist1x1, rlist4x4;
    int                                mdrunNstlist; // md.log
    double                             mdrunRlist;
};

void PrintTo(const GromacsCase& c, std::ostream* os)
{
    *os << c.name;
}

const std::map<std::string, std::string> nve = { { "tcoupl", "no" } };

const GromacsCase gromacsCases[] = {
    { "WaterSpce12k", "water-spce-12k", {}, false, 300, 1.036, 1.000, 40, 1.098 },
    { "WaterSpce12kNve", "water-spce-12k", nve, true, 300.356, 1.036, 1.000, 10, 1.000 },
    { "RnaseAmber", "rnase-amber-cubic", {}, false, 300, 1.034, 1.000, 50, 1.106 },
    { "RnaseAmberNve", "rnase-amber-cubic", nve, true, 299.968, 1.034, 1.000, 10, 1.000 },
    { "RnaseTwoGroups",
      "rnase-amber-cubic",
      { { "tcoupl", "berendsen" },
        { "tc-grps", "Protein Non-Protein" },
        { "tau-t", "0.1 0.1" },
        { "ref-t", "310 290" } },
      false,
      310,
      1.036,
      1.000,
      50,
      1.108 },
    { "WaterTol0005Nstlist20",
      "water-spce-12k",
      { { "verlet-buffer-tolerance", "0.0005" }, { "nstlist", "20" } },
      false,
      300,
      1.158,
      1.098,
      25,
      1.130 },
    { "Water3kDt1Nstlist15",
      "water-spce-3k",
      { { "dt", "0.001" }, { "nstlist", "15" } },
      false,
      300,
      1.025,
      1.000,
      80,
      1.100 },
    { "Water3kPlainCutoff",
      "water-spce-3k",
      { { "coulombtype", "Cut-off" } },
      false,
      300,
      1.129,
      1.106,
      20,
      1.232 },
    { "CharmmForceSwitch12",
      "peptide-charmm27-cubic",
      { { "rcoulomb", "1.2" }, { "rvdw", "1.2" }, { "vdw-modifier", "Force-switch" }, { "rvdw-switch", "1.0" } },
      false,
      300,
      1.234,
      1.200,
      80,
      1.321 },
    { "AmberTriclinicRf78",
      "peptide-amber-triclinic",
      { { "coulombtype", "Reaction-Field" }, { "epsilon-rf", "78" } },
      false,
      300,
      1.098,
      1.072,
      20,
      1.174 },
    { "AmberTriclinicRfInfEpsR2",
      "peptide-amber-triclinic",
      { { "coulombtype", "Reaction-Field" }, { "epsilon-rf", "0" }, { "epsilon-r", "2" } },
      false,
      300,
      1.085,
      1.058,
      20,
      1.153 },
};

/* GROMACS's rlist lies on a 0.001 nm grid; agreement within half a grid
 * step means the same grid point. */
constexpr double gridTolerance = 0.0005;

class VerletBufferGromacsTest : public ::testing::TestWithParam<GromacsCase>
{
};

TEST_P(VerletBufferGromacsTest, RlistAndNstlistMatchGromacs)
{
    const GromacsCase& c  = GetParam();
    const SystemInputs in = loadWithMdp(c.system, c.overrides);
    const Box&         box = in.coordinates.box;
    double             temperature = maxReferenceTemperature(in.mdp);
    if (c.nve)
    {
        EXPECT_EQ(temperature, -1);
        temperature = initialTemperature(in.topology, in.coordinates.v, degreesOfFreedom(in.topology));
        EXPECT_NEAR(temperature, c.temperature, 0.01);
    }
    else
    {
        EXPECT_EQ(temperature, c.temperature);
    }
    EXPECT_NEAR(estimateRlist(in.topology, in.mdp, box, in.mdp.nstlist, temperature, { 1, 1 }), c.rlist1x1,
                gridTolerance);
    EXPECT_NEAR(estimateRlist(in.topology, in.mdp, box, in.mdp.nstlist, temperature), c.rlist4x4, gridTolerance);

    const VerletBufferResult r = chooseNstlistAndRlist(in.topology, in.mdp, box, temperature);
    EXPECT_EQ(r.nstlist, c.mdrunNstlist);
    EXPECT_NEAR(r.rlist, c.mdrunRlist, gridTolerance);
    ASSERT_FALSE(r.notes.empty());
    const std::string& last = r.notes.back();
    if (c.nve)
    {
        EXPECT_NE(last.find("NVE"), std::string::npos) << last;
    }
    else
    {
        EXPECT_NE(last.find("Changing nstlist from"), std::string::npos) << last;
    }
}

INSTANTIATE_TEST_SUITE_P(Gmx2022, VerletBufferGromacsTest, ::testing::ValuesIn(gromacsCases),
                         [](const auto& info) { return std::string(info.param.name); });

/* The drift itself at buffers gmx's bisection visited (gmx.debug, two
 * significant digits): water-spce-12k, 300 K. */
TEST(VerletBuffer, DriftMatchesGromacsDebugOutput)
{
    const SystemInputs in = loadWithMdp("water-spce-12k", {});
    struct Point
    {
        int           nstlist;
        PairListSetup setup;
        double        buffer, drift;
    };
    const Point points[] = {
        { 10, { 1, 1 }, 0.070, 3.3e-4 }, { 10, { 1, 1 }, 0.052, 1.4e-3 }, { 10, { 1, 1 }, 0.034, 5.5e-3 },
        { 10, { 4, 4 }, 0.000, 4.4e-3 }, { 10, { 4, 4 }, 0.016, 1.7e-3 }, { 40, { 4, 4 }, 0.152, 1.7e-3 },
        { 40, { 4, 4 }, 0.097, 5.0e-3 }, { 40, { 4, 4 }, 0.075, 7.6e-3 }, { 20, { 4, 4 }, 0.017, 7.4e-3 },
    };
    for (const auto& p : points)
    {
        const double d = estimateDriftPerAtom(in.topology, in.mdp, in.coordinates.box, p.nstlist, 300, 1.0 + p.buffer,
                                              p.setup);
        // the same two significant digits as gmx prints (%.1e)
        char mine[32], theirs[32];
        std::snprintf(mine, sizeof mine, "%.1e", d);
        std::snprintf(theirs, sizeof theirs, "%.1e", p.drift);
        EXPECT_STREQ(mine, theirs) << "nstlist " << p.nstlist << " buffer " << p.buffer << " "
                                   << p.setup.clusterSizeI << "x" << p.setup.clusterSizeJ << ": " << d;
    }
}

TEST(VerletBuffer, RlistMovesWithToleranceDtAndNstlist)
{
    SystemInputs    in  = loadWithMdp("water-spce-3k", {});
    const Box&      box = in.coordinates.box;
    const Topology& top = in.topology;
    const PairListSetup atomPairs{ 1, 1 };
    auto rlistFor = [&](double tolerance, double dt, int nstlist) {
        MdpOptions mdp            = in.mdp;
        mdp.verletBufferTolerance = tolerance;
        mdp.dt                    = dt;
        return estimateRlist(top, mdp, box, nstlist, 300, atomPairs);
    };
    double previous = 1e9;
    for (double tolerance : { 1e-4, 5e-4, 2e-3, 5e-3, 2e-2 })
    {
        const double r = rlistFor(tolerance, 0.002, 10);
        EXPECT_LT(r, previous) << "tolerance " << tolerance;
        previous = r;
    }
    previous = 0;
    for (double dt : { 0.0005, 0.001, 0.002, 0.004 })
    {
        const double r = rlistFor(0.005, dt, 10);
        EXPECT_GT(r, previous) << "dt " << dt;
        previous = r;
    }
    previous = 0;
    for (int nstlist : { 5, 10, 20, 40, 80 })
    {
        const double r = rlistFor(0.005, 0.002, nstlist);
        EXPECT_GT(r, previous) << "nstlist " << nstlist;
        previous = r;
    }
    // the drift itself falls with the buffer and the clusters reduce it
    const double d1 = estimateDriftPerAtom(top, in.mdp, box, 10, 300, 1.02, atomPairs);
    const double d2 = estimateDriftPerAtom(top, in.mdp, box, 10, 300, 1.05, atomPairs);
    EXPECT_GT(d1, d2);
    EXPECT_LT(estimateDriftPerAtom(top, in.mdp, box, 10, 300, 1.02), d1);
    // nstlist 1: nothing moves between searches, no buffer
    EXPECT_DOUBLE_EQ(rlistFor(0.005, 0.002, 1), 1.0);
}

TEST(VerletBuffer, ExplicitRlistWithToleranceMinusOne)
{
    SystemInputs in           = loadWithMdp("water-spce-3k", {});
    in.mdp.verletBufferTolerance = -1;
    in.mdp.rlist                 = 1.15;
    const Box& box               = in.coordinates.box;
    EXPECT_DOUBLE_EQ(estimateRlist(in.topology, in.mdp, box, 10, 300), 1.15);
    const VerletBufferResult r = chooseNstlistAndRlist(in.topology, in.mdp, box, 300);
    EXPECT_DOUBLE_EQ(r.rlist, 1.15);
    EXPECT_EQ(r.nstlist, in.mdp.nstlist);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes.back().find("verlet-buffer-tolerance"), std::string::npos);

    in.mdp.rlist = 1.0; // equal to the cut-off is allowed
    EXPECT_DOUBLE_EQ(estimateRlist(in.topology, in.mdp, box, 10, 300), 1.0);
    in.mdp.rlist = 0.9;
    EXPECT_THROW(estimateRlist(in.topology, in.mdp, box, 10, 300), InputError);
    in.mdp.verletBufferTolerance = 0;
    EXPECT_THROW(estimateRlist(in.topology, in.mdp, box, 10, 300), InputError);
}

TEST(VerletBuffer, SpecialCases)
{
    SystemInputs in  = loadWithMdp("water-spce-3k", { { "tcoupl", "no" } });
    const Box&   box = in.coordinates.box;
    // NVE at 0 K: a fixed 10% buffer, and nstlist is kept
    const VerletBufferResult cold = chooseNstlistAndRlist(in.topology, in.mdp, box, 0);
    EXPECT_NEAR(cold.rlist, 1.1, 1e-12);
    EXPECT_EQ(cold.nstlist, 10);
    EXPECT_THROW(estimateRlist(in.topology, in.mdp, box, 10, -1), InputError);
    // minimisation searches every step
    in.mdp.integrator = Integrator::Steep;
    EXPECT_DOUBLE_EQ(estimateRlist(in.topology, in.mdp, box, 10, 0), 1.0);
    EXPECT_EQ(maxReferenceTemperature(in.mdp), 0);
    // a list radius beyond half the box is an error
    in.mdp.integrator            = Integrator::Md;
    in.mdp.tcoupl                = TCoupl::VRescale;
    in.mdp.verletBufferTolerance = 1e-9;
    in.mdp.nstlist               = 100;
    EXPECT_THROW(chooseNstlistAndRlist(in.topology, in.mdp, box, 300), InputError);
}

TEST(VerletBuffer, ReferenceTemperatureIsTheLargestCoupled)
{
    MdpOptions mdp;
    mdp.tcoupl = TCoupl::VRescale;
    mdp.refT   = { 300, 350, 320 };
    mdp.tauT   = { 0.1, -1, 0.1 };
    EXPECT_EQ(maxReferenceTemperature(mdp), 320);
    mdp.tauT = { 0.1, 0.1, 0.1 };
    EXPECT_EQ(maxReferenceTemperature(mdp), 350);
    mdp.tcoupl = TCoupl::No;
    EXPECT_EQ(maxReferenceTemperature(mdp), -1);
}

} // namespace
} // namespace putmd
