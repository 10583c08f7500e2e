/* PME spread and gather on several threads: each thread spreads its share
 * of the atoms onto its own grid and the grids are summed in thread order,
 * so the result must match one thread to rounding and repeat exactly. */
#include <gtest/gtest.h>

#include <cmath>

#include "nonbonded/interaction_const.h"
#include "fft/fft3d.h"
#include "pme/pme.h"
#include "run/force_calculator.h"
#include "run/system_inputs.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

TEST(PmeThreads, SameForcesAndEnergyAsOneThread)
{
    const test::TestSystem         s   = test::loadTestSystem("peptide-amber-triclinic");
    const SystemInputs&            in  = s.in;
    const std::vector<Vec3<real>>& x   = s.x;
    const InteractionConst         ic  = makeInteractionConst(in.mdp);
    const Box&                     box = in.coordinates.box;
    const PmeParameters p = pmeParametersFor(box, in.mdp, ic.ewaldCoeff, ic.epsfac);
    auto run = [&](int threads, std::vector<Vec3<real>>& f, Matrix3& virial) {
        Pme pme(p);
        pme.setNumThreads(threads);
        f.assign(x.size(), Vec3<real>());
        return pme.compute(box, x, in.topology.charge, f, &virial);
    };
    std::vector<Vec3<real>> f1, f3, f3again;
    Matrix3                 v1, v3, v3again;
    const double            e1 = run(1, f1, v1);
    const double            e3 = run(3, f3, v3);
    const double            e3again = run(3, f3again, v3again);
    EXPECT_EQ(e3, e3again);
    EXPECT_NEAR(e3, e1, 1e-6 * std::abs(e1));
    double worst = 0, largest = 0;
    for (size_t i = 0; i < x.size(); i++)
    {
        worst   = std::max(worst, double(norm(f3[i] - f1[i])));
        largest = std::max(largest, double(norm(f1[i])));
        EXPECT_EQ(norm(f3[i] - f3again[i]), 0) << i;
    }
    EXPECT_LT(worst, 1e-9 * largest);
    EXPECT_GT(largest, 0);
}

/* The MD runner sets the planning after constructing PME (from
 * PUTMD_FFTW_PLAN); FFTW's threads must then follow the measured rule
 * (from 32k points), not the estimated one (from 128k): a 42^3 grid (the
 * 12k water box) gets both threads only with measured plans. */
TEST(PmeThreads, PlanningSetAfterConstructionDecidesFftwThreads)
{
    PmeParameters p;
    p.gridSize   = { 42, 42, 42 };
    p.order      = 4;
    p.ewaldCoeff = 3.12;
    p.epsfac     = 138.935458;
    ASSERT_EQ(p.fftPlanning, FftPlanning::Estimate);
    Pme measured(p);
    measured.setFftPlanning(FftPlanning::Measure);
    measured.setNumThreads(2);
    EXPECT_EQ(measured.fftThreads(), 2);
    Pme estimated(p);
    estimated.setNumThreads(2);
    EXPECT_EQ(estimated.fftThreads(), 1);
}

/* On one rank the MD runner calls prepareFft at set-up: the whole-grid FFT
 * and its measured plans are made then, not lazily in the first step (where
 * the planning, 0.27 s for a 42^3 grid, was timed as PME mesh and cut the
 * reported ns/day of a 500-step water run by 14%). The measured plans are
 * recorded per grid and thread count when they are made. */
TEST(PmeThreads, OneRankMakesItsFftPlansAtSetUp)
{
    const test::TestSystem s  = test::loadTestSystem("water-spce-3k");
    const SystemInputs&    in = s.in;
    const InteractionConst ic = makeInteractionConst(in.mdp);
    const PmeParameters    p  = pmeParametersFor(in.coordinates.box, in.mdp, ic.ewaldCoeff, ic.epsfac);
    const std::string key = std::to_string(p.gridSize[0]) + " " + std::to_string(p.gridSize[1]) + " "
                            + std::to_string(p.gridSize[2]) + " 1 ";
    ForceCalculator forces(in.topology, in.mdp, in.coordinates.box, 1.1);
    forces.setFftPlanning(FftPlanning::Measure);
    forces.setNumThreads(1);
    ASSERT_EQ(chosenFftPlans().find(key), std::string::npos) << "planned before prepareFft";
    forces.prepareFft();
    EXPECT_NE(chosenFftPlans().find(key), std::string::npos) << chosenFftPlans().substr(0, 200);
}

TEST(PmeInfluenceCache, SecondStepWithTheSameBoxGivesTheSameResult)
{
    // a step without virial and the box of the last full solve reuses the
    // stored influence function: same forces (bitwise: the same factors),
    // same energy to rounding; a new box is solved again
    const test::TestSystem         s  = test::loadTestSystem("water-spce-3k");
    const SystemInputs&            in = s.in;
    const std::vector<Vec3<real>>& x  = s.x;
    const InteractionConst         ic = makeInteractionConst(in.mdp);
    const PmeParameters p = pmeParametersFor(in.coordinates.box, in.mdp, ic.ewaldCoeff, ic.epsfac);
    for (int threads : { 1, 2 })
    {
        Pme pme(p);
        pme.setNumThreads(threads);
        std::vector<Vec3<real>> f1(x.size()), f2(x.size()), f3(x.size());
        Matrix3                 virial;
        const double            e1 = pme.compute(in.coordinates.box, x, in.topology.charge, f1, &virial);
        const double            e2 = pme.compute(in.coordinates.box, x, in.topology.charge, f2, nullptr);
        EXPECT_NEAR(e2, e1, 1e-6 * std::abs(e1)) << threads;
        for (size_t i = 0; i < x.size(); i++)
        {
            ASSERT_EQ(norm(f2[i] - f1[i]), 0) << i;
        }
        // a box 1% larger: solved again, so a different energy
        Matrix3 bigger = in.coordinates.box.vectors();
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                bigger(a, b) *= 1.01;
            }
        }
        Pme          fresh(p);
        const double e3     = pme.compute(Box(bigger), x, in.topology.charge, f3, nullptr);
        std::vector<Vec3<real>> f4(x.size());
        const double e4     = fresh.compute(Box(bigger), x, in.topology.charge, f4, nullptr);
        EXPECT_NE(e3, e1);
        EXPECT_NEAR(e3, e4, 1e-6 * std::abs(e4));
    }
}

} // namespace
} // namespace putmd
