/* Dynamics tests (double build): short runs of putmd's MD loop that check
 * properties, not numbers copied from a run — energy conservation in NVE,
 * bitwise reproducibility with a stochastic thermostat, constraints kept,
 * temperature control, and that minimisation converges. The long
 * validation runs against GROMACS are in docs/validation.md. */
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/gro.h"
#include "io/mdp.h"
#include "run/md_runner.h"
#include "run/minimize.h"
#include "run/system_inputs.h"
#include "update/constraints.h"

namespace putmd
{
namespace
{

namespace fs = std::filesystem;

struct Csv
{
    std::vector<std::string>         header;
    std::vector<std::vector<double>> rows;
    std::vector<double>              column(const std::string& name) const
    {
        const auto          it = std::find(header.begin(), header.end(), name);
        std::vector<double> c;
        for (const auto& r : rows)
        {
            c.push_back(r[it - header.begin()]);
        }
        return c;
    }
};

Csv readCsv(const std::string& path)
{
    Csv           csv;
    std::ifstream in(path);
    std::string   line;
    std::getline(in, line);
    std::stringstream hs(line);
    for (std::string cell; std::getline(hs, cell, ',');)
    {
        csv.header.push_back(cell);
    }
    while (std::getline(in, line))
    {
        std::stringstream   ls(line);
        std::vector<double> row;
        for (std::string cell; std::getline(ls, cell, ',');)
        {
            row.push_back(std::stod(cell));
        }
        csv.rows.push_back(row);
    }
    return csv;
}

/* A scratch folder with an mdp, and the system loaded from it: coordinates
 * and topology from tests/data (folder "tiny" or "systems/NAME"). */
struct ScratchRun
{
    fs::path     dir;
    SystemInputs inputs;
    RunOptions   options;

    ScratchRun(const std::string& name, const std::string& system, const std::string& coordinates, const std::string& mdpText)
    {
        const std::string data = PUTMD_TEST_DATA;
        dir                    = fs::temp_directory_path() / ("putmd-" + name);
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::ofstream(dir / "run.mdp") << mdpText;
        InputPaths paths;
        paths.topology    = data + "/" + system + "/topol.top";
        paths.coordinates = data + "/" + system + "/" + coordinates;
        paths.mdp         = (dir / "run.mdp").string();
        inputs            = loadSystem(paths);
        options.deffnm    = (dir / "run").string();
    }
    ~ScratchRun() { fs::remove_all(dir); }
};

class MdTest : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir_ = fs::temp_directory_path() / ("putmd-md-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-"
                                            + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    /* Runs water-spce-3k with the base settings plus `extra` mdp lines. */
    std::string run(const std::string& name, const std::string& extra, long nsteps, MdFinalState* state = nullptr)
    {
        const std::string sys = std::string(PUTMD_TEST_DATA) + "/systems/water-spce-3k";
        const std::string mdp = (dir_ / (name + ".mdp")).string();
        const bool ownIntegrator = extra.find("integrator") != std::string::npos;
        std::ofstream(mdp) << (ownIntegrator ? "" : "integrator = md\n") << "dt = 0.002\nconstraints = h-bonds\ncutoff-scheme = Verlet\n"
                              "coulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\nfourierspacing = 0.12\n"
                              "DispCorr = EnerPres\nnstcalcenergy = 5\nnstenergy = 5\nnstlog = 50\n"
                           << extra;
        InputPaths paths;
        paths.topology    = sys + "/topol.top";
        paths.coordinates = sys + "/conf.gro";
        paths.mdp         = mdp;
        SystemInputs in   = loadSystem(paths);
        RunOptions   opt;
        opt.deffnm         = (dir_ / name).string();
        opt.nstepsOverride = nsteps;
        opt.numThreads     = threads_;
        MdFinalState final = runMd(in, opt);
        if (state)
        {
            *state = std::move(final);
        }
        return opt.deffnm;
    }

    fs::path dir_;
    int      threads_ = 1;
};

TEST_F(MdTest, NveConservesEnergy)
{
    const auto   out       = run("nve", "tcoupl = no\ncontinuation = no\n", 150);
    const Csv    csv       = readCsv(out + ".csv");
    const auto   conserved = csv.column("Conserved En.");
    const auto   kinetic   = csv.column("Kinetic En.");
    double       lo = 1e300, hi = -1e300;
    for (double e : conserved)
    {
        lo = std::min(lo, e);
        hi = std::max(hi, e);
    }
    // fluctuations of the conserved energy stay far below those of the
    // kinetic energy (which exchanges ~1% with the potential)
    double klo = 1e300, khi = -1e300;
    for (double k : kinetic)
    {
        klo = std::min(klo, k);
        khi = std::max(khi, k);
    }
    EXPECT_LT(hi - lo, 0.1 * (khi - klo)) << "conserved energy spread " << hi - lo << " kinetic spread " << khi - klo;
    EXPECT_GT(khi - klo, 10.0);
}

/* Spread of the conserved energy against the energy the thermostat moved. */
void expectConserved(const Csv& csv, double fraction)
{
    const auto conserved = csv.column("Conserved En.");
    const auto total     = csv.column("Total Energy");
    double     lo = 1e300, hi = -1e300, moved = 0;
    for (size_t i = 0; i < conserved.size(); i++)
    {
        lo    = std::min(lo, conserved[i]);
        hi    = std::max(hi, conserved[i]);
        moved = std::max(moved, std::abs(total[i] - total[0]));
    }
    EXPECT_GT(moved, 200.0) << "the thermostat moved too little energy for a meaningful test";
    EXPECT_LT(hi - lo, fraction * moved) << "conserved energy spread " << hi - lo << ", energy moved " << moved;
}

TEST_F(MdTest, NoseHooverConservesItsExtendedEnergy)
{
    // cool from ~310 K towards 270 K; nsttcouple 10 as GROMACS's default
    const auto out = run("nh", "continuation = no\ntcoupl = nose-hoover\ntc-grps = System\ntau-t = 0.5\nref-t = 270\n"
                               "nsttcouple = 10\n", 200);
    expectConserved(readCsv(out + ".csv"), 0.02);
}

TEST_F(MdTest, VRescaleConservesItsExtendedEnergy)
{
    const auto out = run("vr", "continuation = no\ntcoupl = v-rescale\ntc-grps = System\ntau-t = 0.05\nref-t = 270\n"
                               "ld-seed = 3\n", 150);
    expectConserved(readCsv(out + ".csv"), 0.02);
}

TEST_F(MdTest, CRescaleChangesTheBoxAndKeepsTheConservedEnergy)
{
    const std::string npt = "tcoupl = v-rescale\ntc-grps = System\ntau-t = 0.1\nref-t = 300\nld-seed = 9\n"
                            "pcoupl = C-rescale\npcoupltype = isotropic\ntau-p = 0.5\nref-p = 1000\n"
                            "compressibility = 4.5e-5\nnstpcouple = 5\n";
    const auto out    = run("npt", npt, 200);
    const Csv  csv    = readCsv(out + ".csv");
    const auto volume = csv.column("Volume");
    EXPECT_LT(volume.back(), volume.front()) << "1000 bar compresses the box";
    const auto conserved = csv.column("Conserved En.");
    const auto [lo, hi]  = std::minmax_element(conserved.begin(), conserved.end());
    const auto potential = csv.column("Potential");
    const auto [plo, phi] = std::minmax_element(potential.begin(), potential.end());
    EXPECT_LT(*hi - *lo, 0.1 * (*phi - *plo)) << "the barostat's and thermostat's work are kept out of Conserved En.";
    const auto boxX = csv.column("Box-X"), boxZ = csv.column("Box-Z");
    EXPECT_NEAR(boxX.back() / boxX.front(), boxZ.back() / boxZ.front(), 1e-9) << "isotropic";
}

TEST_F(MdTest, SemiIsotropicCRescaleAndBerendsenBarostat)
{
    // xy pushed at 1000 bar, z at 1 bar: x and y scale together, z otherwise
    const auto semi = run("semi", "tcoupl = v-rescale\ntc-grps = System\ntau-t = 0.1\nref-t = 300\nld-seed = 4\n"
                                  "pcoupl = C-rescale\npcoupltype = semiisotropic\ntau-p = 0.5\nref-p = 1000 1\n"
                                  "compressibility = 4.5e-5 4.5e-5\nnstpcouple = 5\n",
                          150);
    const Csv  csv  = readCsv(semi + ".csv");
    const auto bx = csv.column("Box-X"), by = csv.column("Box-Y"), bz = csv.column("Box-Z");
    EXPECT_NEAR(bx.back() / bx.front(), by.back() / by.front(), 1e-9) << "x and y scale together";
    EXPECT_LT(bx.back(), bx.front());
    EXPECT_GT(std::abs(bx.back() / bx.front() - bz.back() / bz.front()), 1e-5) << "z scales on its own";
    // Berendsen: 1000 bar compresses the box
    const auto ber = run("ber", "tcoupl = berendsen\ntc-grps = System\ntau-t = 0.1\nref-t = 300\n"
                                "pcoupl = Berendsen\ntau-p = 0.5\nref-p = 1000\ncompressibility = 4.5e-5\n",
                         150);
    const auto volume = readCsv(ber + ".csv").column("Volume");
    EXPECT_LT(volume.back(), volume.front());
}

TEST_F(MdTest, VelocityVerletConservesEnergy)
{
    const auto out       = run("vv", "integrator = md-vv\ntcoupl = no\ncontinuation = no\n", 100);
    const auto conserved = readCsv(out + ".csv").column("Conserved En.");
    const auto kinetic   = readCsv(out + ".csv").column("Kinetic En.");
    const auto [clo, chi] = std::minmax_element(conserved.begin(), conserved.end());
    const auto [klo, khi] = std::minmax_element(kinetic.begin(), kinetic.end());
    EXPECT_LT(*chi - *clo, 0.1 * (*khi - *klo));
}

TEST_F(MdTest, SameSeedGivesBitwiseIdenticalRun)
{
    const std::string vr = "tcoupl = v-rescale\ntc-grps = System\ntau-t = 0.1\nref-t = 300\nld-seed = 1234\n"
                           "gen-vel = yes\ngen-temp = 350\ngen-seed = 99\nnstxout-compressed = 10\n";
    const auto a = run("a", vr, 40);
    const auto b = run("b", vr, 40);
    for (const char* ext : { ".csv", ".gro", ".xtc" })
    {
        std::ifstream fa(a + ext, std::ios::binary), fb(b + ext, std::ios::binary);
        std::stringstream sa, sb;
        sa << fa.rdbuf();
        sb << fb.rdbuf();
        EXPECT_FALSE(sa.str().empty()) << ext;
        EXPECT_EQ(sa.str(), sb.str()) << ext << " differs between two runs with the same seeds";
    }
    const auto c = run("c", "tcoupl = v-rescale\ntc-grps = System\ntau-t = 0.1\nref-t = 300\nld-seed = 1235\n"
                            "gen-vel = yes\ngen-temp = 350\ngen-seed = 99\n", 40);
    EXPECT_NE(readCsv(a + ".csv").column("Temperature").back(), readCsv(c + ".csv").column("Temperature").back())
            << "a different ld-seed must change the run";
}

TEST_F(MdTest, TwoThreadsAreReproducibleAndAgreeWithOne)
{
    const std::string nve = "tcoupl = no\ncontinuation = no\n";
    threads_              = 2;
    const auto a          = run("t2a", nve, 30);
    const auto b          = run("t2b", nve, 30);
    threads_              = 1;
    const auto c          = run("t1", nve, 30);
    std::ifstream fa(a + ".csv"), fb(b + ".csv");
    std::stringstream sa, sb;
    sa << fa.rdbuf();
    sb << fb.rdbuf();
    EXPECT_EQ(sa.str(), sb.str()) << "two runs with 2 threads differ";
    const auto e2 = readCsv(a + ".csv").column("Potential");
    const auto e1 = readCsv(c + ".csv").column("Potential");
    ASSERT_EQ(e1.size(), e2.size());
    for (size_t i = 0; i < e1.size(); i++)
    {
        EXPECT_NEAR(e2[i], e1[i], 1e-6 * std::abs(e1[i])) << "row " << i << ": 1 and 2 threads sum in another order only";
    }
}

TEST_F(MdTest, VRescaleBringsTemperatureToTarget)
{
    // start hot; tau-t 0.02 ps relaxes within the run
    const auto out = run("hot", "tcoupl = v-rescale\ntc-grps = System\ntau-t = 0.02\nref-t = 280\nld-seed = 7\n"
                                "gen-vel = yes\ngen-temp = 400\ngen-seed = 5\n", 150);
    const auto t   = readCsv(out + ".csv").column("Temperature");
    double     mean = 0;
    int        n    = 0;
    for (size_t i = t.size() / 2; i < t.size(); i++)
    {
        mean += t[i];
        n++;
    }
    mean /= n;
    EXPECT_NEAR(mean, 280, 10) << "mean temperature over the second half";
}

TEST_F(MdTest, LogEndsWithTimeAccountingAndPerformance)
{
    const auto    out = run("log", "tcoupl = no\n", 10);
    std::ifstream in(out + ".log");
    std::string   text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const char* want : { "A V E R A G E S", "Averages over 3 steps with energies", "R E A L   C Y C L E   A N D   T I M E   A C C O U N T I N G", "Load imbalance:", "Force", "  Nonbonded", "  PME mesh", "Constraints",
                              "Rest", "Total", "PME: grid 28 x 28 x 28", "chosen: pair list: rlist" })
    {
        EXPECT_NE(text.find(want), std::string::npos) << "log lacks '" << want << "'";
    }
    const auto restAt = text.find(" Rest ");
    ASSERT_NE(restAt, std::string::npos);
    const double rest = std::stod(text.substr(restAt + 6, 100));
    EXPECT_GE(rest, 0.0) << "stages counted twice make Rest negative";
    const auto perf = text.rfind("Performance: ");
    ASSERT_NE(perf, std::string::npos);
    EXPECT_EQ(text.find('\n', perf), text.size() - 1) << "the log ends with the Performance line";
}

TEST_F(MdTest, GeneratedVelocitiesHaveGenTemp)
{
    const auto out = run("gen", "tcoupl = no\ngen-vel = yes\ngen-temp = 400\ngen-seed = 11\n", 5);
    const auto t   = readCsv(out + ".csv").column("Temperature");
    // step 0 averages the generated half step and the next one
    EXPECT_NEAR(t.front(), 400, 8);
}

TEST_F(MdTest, WatersStayRigid)
{
    MdFinalState s;
    run("rigid", "tcoupl = no\n", 50, &s);
    const Pbc pbc(s.box);
    double    worst = 0;
    for (size_t o = 0; o + 2 < s.x.size(); o += 3)
    {
        for (int h = 1; h <= 2; h++)
        {
            worst = std::max(worst, std::abs(double(norm(pbc.dx(s.x[o], s.x[o + h]))) - 0.1));
        }
        worst = std::max(worst, std::abs(double(norm(pbc.dx(s.x[o + 1], s.x[o + 2]))) - 0.1633));
    }
    EXPECT_LT(worst, 1e-4) << "SPC/E geometry (O-H 0.1 nm, H-H 0.1633 nm) not kept";
}

TEST(MdOutput, CompressedGroupsSelectTheXtcAtoms)
{
    ScratchRun run("xtcgrp", "tiny", "conf.gro",
                   "integrator = md\nnsteps = 4\ndt = 0.001\ncoulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\n"
                   "nstxout-compressed = 2\ncompressed-x-grps = BUT\nnstenergy = 2\n");
    runMd(run.inputs, run.options);
    std::ifstream xtc(run.dir / "run.xtc", std::ios::binary);
    unsigned char head[8] = {};
    xtc.read(reinterpret_cast<char*>(head), 8);
    const int natoms = (head[4] << 24) | (head[5] << 16) | (head[6] << 8) | head[7];
    EXPECT_EQ(natoms, 4) << "the BUT molecule has 4 atoms";
}

TEST(MdCoupling, SeveralGroupsAndIncompleteGroupsAreReported)
{
    const std::string data = PUTMD_TEST_DATA;
    const fs::path    dir  = fs::temp_directory_path() / "putmd-tcgrp-test";
    fs::create_directories(dir);
    auto load = [&](const std::string& groups, const std::string& taus, const std::string& temps) {
        std::ofstream(dir / "md.mdp") << "integrator = md\nnsteps = 20\ndt = 0.001\ncoulombtype = PME\nrcoulomb = 1.0\n"
                                         "rvdw = 1.0\nnstenergy = 10\ntcoupl = v-rescale\nld-seed = 1\ntc-grps = "
                                      << groups << "\ntau-t = " << taus << "\nref-t = " << temps << "\n";
        InputPaths paths;
        paths.topology    = data + "/tiny/topol.top";
        paths.coordinates = data + "/tiny/conf.gro";
        paths.mdp         = (dir / "md.mdp").string();
        return loadSystem(paths);
    };
    RunOptions opt;
    opt.deffnm   = (dir / "md").string();
    SystemInputs two = load("BUT SOL", "0.1 0.1", "300 250");
    EXPECT_NO_THROW(runMd(two, opt));
    SystemInputs missing = load("BUT", "0.1", "300");
    try
    {
        runMd(missing, opt);
        ADD_FAILURE() << "no error for atoms outside every tc-grps group";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("is in none of the groups"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("md.mdp:10"), std::string::npos) << e.what();
    }
    EXPECT_THROW(load("BUT SOL", "0.1", "300 250"), InputError); // one tau-t for two groups
    fs::remove_all(dir);
}

TEST(Minimize, SteepestDescentConvergesWithRigidWaters)
{
    // start.gro of the SPC/E box, before any minimisation; SETTLE keeps the
    // waters rigid and trial steps it cannot satisfy are shrunk
    ScratchRun           run("min-water", "systems/water-spce-3k", "start.gro",
                             "integrator = steep\nnsteps = 500\nemtol = 1000\nemstep = 0.01\ncoulombtype = PME\n"
                             "rcoulomb = 1.0\nrvdw = 1.0\nDispCorr = EnerPres\n");
    const MinimizeResult r = minimize(run.inputs, run.options);
    EXPECT_TRUE(r.converged) << "Fmax " << r.maxForce << " after " << r.steps << " steps";
}

TEST(MdFailure, ABlowUpNamesTheStepAndTheAtoms)
{
    // 50 fs steps tear the waters apart
    ScratchRun run("blowup", "tiny", "conf.gro",
                   "integrator = md\nnsteps = 200\ndt = 0.05\ncoulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\n"
                   "gen-vel = yes\ngen-temp = 3000\ngen-seed = 1\nverlet-buffer-tolerance = -1\nrlist = 1.0\nnstlist = 1\n");
    try
    {
        runMd(run.inputs, run.options);
        ADD_FAILURE() << "no error";
    }
    catch (const SimulationError& e)
    {
        const std::string m = e.what();
        EXPECT_NE(m.find("step "), std::string::npos) << m;
        EXPECT_NE(m.find("SOL"), std::string::npos) << m;
    }
}

TEST(Minimize, SteepestDescentConvergesOnTinySystem)
{
    ScratchRun           run("min-tiny", "tiny", "conf.gro",
                             "integrator = steep\nnsteps = 2000\nemtol = 50\nemstep = 0.01\ncoulombtype = PME\n"
                             "rcoulomb = 1.0\nrvdw = 1.0\n");
    const MinimizeResult r = minimize(run.inputs, run.options);
    EXPECT_TRUE(r.converged) << "Fmax " << r.maxForce << " after " << r.steps << " steps";
    EXPECT_LT(r.maxForce, 50);
    EXPECT_TRUE(fs::exists(run.dir / "run.gro"));
}

} // namespace
} // namespace putmd
