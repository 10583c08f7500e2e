/* PME on several threads: the spread puts slabs straight onto the grid in
 * a fixed order, the transforms run the same lines whatever the thread
 * count and the solve sums per ky, gather splits the atoms: forces, energy
 * and virial must equal one thread's bitwise and repeat exactly. */
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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
    EXPECT_EQ(e3, e1);
    double largest = 0;
    for (size_t i = 0; i < x.size(); i++)
    {
        largest = std::max(largest, double(norm(f1[i])));
        ASSERT_EQ(norm(f3[i] - f1[i]), 0) << i;
        ASSERT_EQ(norm(f3[i] - f3again[i]), 0) << i;
    }
    EXPECT_GT(largest, 0);
    for (int a = 0; a < 3; a++)
    {
        for (int b = 0; b < 3; b++)
        {
            EXPECT_EQ(v3(a, b), v1(a, b)) << a << b;
        }
    }
}

/* On one rank the MD runner calls prepareFft at set-up: the whole-grid FFT
 * and its measured line plans are made then, not lazily in the first step
 * (where the planning, 0.27 s for a 42^3 grid, was timed as PME mesh and
 * cut the reported ns/day of a 500-step water run by 14%). The measured
 * line plans are recorded per grid (thread count 0) when they are made. */
TEST(PmeThreads, OneRankMakesItsFftPlansAtSetUp)
{
    const test::TestSystem s  = test::loadTestSystem("water-spce-3k");
    const SystemInputs&    in = s.in;
    const InteractionConst ic = makeInteractionConst(in.mdp);
    const PmeParameters    p  = pmeParametersFor(in.coordinates.box, in.mdp, ic.ewaldCoeff, ic.epsfac);
    const std::string key = std::to_string(p.gridSize[0]) + " " + std::to_string(p.gridSize[1]) + " "
                            + std::to_string(p.gridSize[2]) + " 0 ";
    ForceCalculator forces(in.topology, in.mdp, in.coordinates.box, 1.1);
    forces.setFftPlanning(FftPlanning::Measure);
    forces.setNumThreads(1);
    ASSERT_EQ(chosenFftPlans().find(key), std::string::npos) << "planned before prepareFft";
    forces.prepareFft();
    EXPECT_NE(chosenFftPlans().find(key), std::string::npos) << chosenFftPlans().substr(0, 200);
}

/* Fft3d::convolve (line transforms with the solve between, threaded)
 * against the 3D transforms with the same factors applied between them:
 * equal to rounding, bitwise the same for every thread count, every ky
 * solved once; grids whose rows or planes break FFTW's alignment (odd
 * sizes) included. */
TEST(Fft3dConvolve, MatchesTheWholeGridTransformsOnAnyThreadCount)
{
    for (const std::array<int, 3> n : { std::array<int, 3>{ 16, 12, 10 }, std::array<int, 3>{ 25, 27, 21 },
                                        std::array<int, 3>{ 9, 7, 5 } })
    {
        const int    nx = n[0], ny = n[1], nz = n[2], nzc = nz / 2 + 1;
        const size_t nreal = size_t(nx) * ny * nz;
        std::mt19937 rng(n[0] * 1000 + n[2]);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<real> input(nreal);
        for (real& v : input)
        {
            v = real(u(rng));
        }
        auto factor = [&](int kx, int ky, int kz) { return real(1.0 / (1 + kx + 2 * ky + 3 * kz)); };
        // the 3D transforms with the factors applied over the whole spectrum
        Fft3d whole(nx, ny, nz);
        std::copy(input.begin(), input.end(), whole.realData());
        whole.forward();
        for (int kx = 0; kx < nx; kx++)
        {
            for (int ky = 0; ky < ny; ky++)
            {
                for (int kz = 0; kz < nzc; kz++)
                {
                    whole.complexData()[(size_t(kx) * ny + ky) * nzc + kz] *= factor(kx, ky, kz);
                }
            }
        }
        whole.backward();
        double largest = 0;
        for (size_t i = 0; i < nreal; i++)
        {
            largest = std::max(largest, std::abs(double(whole.realData()[i])));
        }
        ASSERT_GT(largest, 0);
        std::vector<real> first;
        for (int threads : { 1, 2, 3 })
        {
            Fft3d lines(nx, ny, nz);
            std::copy(input.begin(), input.end(), lines.realData());
            std::vector<int> solved(ny, 0);
            lines.convolve(threads, [&](int t, int ky, std::complex<real>* points) {
                EXPECT_GE(t, 0);
                EXPECT_LT(t, threads);
                solved[ky]++; // each ky by one thread only
                for (int kx = 0; kx < nx; kx++)
                {
                    for (int kz = 0; kz < nzc; kz++)
                    {
                        points[size_t(kx) * nzc + kz] *= factor(kx, ky, kz);
                    }
                }
            });
            for (int ky = 0; ky < ny; ky++)
            {
                EXPECT_EQ(solved[ky], 1) << ky;
            }
            double worst = 0;
            for (size_t i = 0; i < nreal; i++)
            {
                worst = std::max(worst, std::abs(double(lines.realData()[i]) - whole.realData()[i]));
            }
            EXPECT_LT(worst, 1e-10 * largest) << nx << "x" << ny << "x" << nz << " on " << threads;
            if (first.empty())
            {
                first.assign(lines.realData(), lines.realData() + nreal);
            }
            else
            {
                EXPECT_TRUE(std::equal(first.begin(), first.end(), lines.realData()))
                        << nx << "x" << ny << "x" << nz << " on " << threads << " threads differs from 1";
            }
        }
    }
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
