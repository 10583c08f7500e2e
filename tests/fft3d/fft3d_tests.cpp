/* tests/fft3d/fft3d_tests.cpp — the distributed pencil FFT under mpirun.
 *
 * One program (double build), run by CTest on 1, 2, 3, 4, 6 and 8 ranks
 * under mpirun and once without a launcher (serial mode: MPI_COMM_NULL, MPI
 * never initialised). For every process grid the rank count allows, several
 * grid shapes (cubes, primes, sizes smaller than the process counts so that
 * parts are empty) and every transpose algorithm:
 *   - forward() per local complex element equals the serial FFTW transform
 *     (putmd::Fft3d) of the same random data within 1e-10 of the largest
 *     magnitude;
 *   - backward(forward(x)) == N x within 1e-10 relative;
 *   - a sequence forward, forward, backward, backward repeats bitwise (this
 *     drives the rma windows through both parities with both plans);
 *   - the three algorithms give bitwise identical output and equal counts.
 * Every rank runs the same tests in the same order (the FFT is collective),
 * so tests use EXPECT_* only; at the end the ranks agree on whether any of
 * them failed and all exit non-zero if one did.
 */
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "fft/fft3d.h"
#include "fft/pencil_fft.h"

using namespace putmd;

namespace
{

MPI_Comm g_comm = MPI_COMM_NULL; // MPI_COMM_WORLD under a launcher, else serial
int      g_rank = 0;
int      g_size = 1;

// cubes, primes, sizes below the process counts (empty parts), size-1 axes,
// and one with every axis over the 16-point copy tile
const std::vector<std::array<int, 3>> kGrids = {{8, 8, 8},  {7, 11, 13}, {31, 5, 3}, {12, 10, 9},
                                                {2, 3, 2},  {1, 1, 1},   {5, 1, 4},  {36, 20, 34}};
const TransposeAlgorithm kAlgorithms[]       = {TransposeAlgorithm::Alltoallv, TransposeAlgorithm::Pairwise,
                                                TransposeAlgorithm::Rma, TransposeAlgorithm::Shm};

/* All Px x Py = size. */
std::vector<std::array<int, 2>> processGrids()
{
    std::vector<std::array<int, 2>> g;
    for (int px = g_size; px >= 1; --px)
    {
        if (g_size % px == 0)
        {
            g.push_back({px, g_size / px});
        }
    }
    return g;
}

std::string label(std::array<int, 3> n, std::array<int, 2> pg, TransposeAlgorithm a)
{
    return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) + " on "
           + std::to_string(pg[0]) + "x" + std::to_string(pg[1]) + " " + transposeAlgorithmName(a);
}

/* The global random input (same seed on every rank). */
std::vector<double> globalInput(std::array<int, 3> n)
{
    std::mt19937                           rng(12345 + n[0] * 7 + n[1] * 131 + n[2] * 1031);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double>                    x(std::size_t(n[0]) * n[1] * n[2]);
    for (auto& v : x)
    {
        v = u(rng);
    }
    return x;
}

/* The serial FFTW transform of x: nx*ny*(nz/2+1), kz fastest. */
std::vector<std::complex<double>> serialForward(std::array<int, 3> n, const std::vector<double>& x)
{
    Fft3d f(n[0], n[1], n[2]);
    std::copy(x.begin(), x.end(), f.realData());
    f.forward();
    const std::size_t nc = std::size_t(n[0]) * n[1] * (n[2] / 2 + 1);
    return {f.complexData(), f.complexData() + nc};
}

void fillLocal(PencilFft3d& f, std::array<int, 3> n, const std::vector<double>& x)
{
    const auto s = f.realStart(), z = f.realSize();
    EXPECT_EQ(s[2], 0);
    EXPECT_EQ(z[2], n[2]);
    for (int i = 0; i < z[0]; ++i)
    {
        for (int j = 0; j < z[1]; ++j)
        {
            for (int k = 0; k < z[2]; ++k)
            {
                f.realData()[(long(i) * z[1] + j) * z[2] + k] = x[(std::size_t(s[0] + i) * n[1] + s[1] + j) * n[2] + k];
            }
        }
    }
}

/* The largest magnitude in v (the tolerances' scale). */
template<typename T>
double maxAbs(const std::vector<T>& v)
{
    double m = 0;
    for (const auto& e : v)
    {
        m = std::max(m, double(std::abs(e)));
    }
    return m;
}

long complexCount(const PencilFft3d& f)
{
    const auto z = f.complexSize();
    return long(z[0]) * z[1] * z[2];
}

long realCount(const PencilFft3d& f)
{
    const auto z = f.realSize();
    return long(z[0]) * z[1] * z[2];
}

/* Largest |local - serial| over the local complex block. */
double maxComplexError(PencilFft3d& f, std::array<int, 3> n, const std::vector<std::complex<double>>& ref)
{
    const auto s = f.complexStart(), z = f.complexSize(), o = f.complexOrder();
    const int  nzc = n[2] / 2 + 1;
    double     err = 0;
    std::array<int, 3> c{};
    for (c[0] = 0; c[0] < z[o[0]]; ++c[0])
    {
        for (c[1] = 0; c[1] < z[o[1]]; ++c[1])
        {
            for (c[2] = 0; c[2] < z[o[2]]; ++c[2])
            {
                std::array<int, 3> k{}; // global kx, ky, kz
                k[o[0]]          = s[o[0]] + c[0];
                k[o[1]]          = s[o[1]] + c[1];
                k[o[2]]          = s[o[2]] + c[2];
                const long local = (long(c[0]) * z[o[1]] + c[1]) * z[o[2]] + c[2];
                const auto r     = ref[(std::size_t(k[0]) * n[1] + k[1]) * nzc + k[2]];
                err              = std::max(err, std::abs(std::complex<double>(f.complexData()[local]) - r));
            }
        }
    }
    return err;
}

double allMax(double v)
{
    if (g_comm == MPI_COMM_NULL)
    {
        return v;
    }
    double r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, g_comm);
    return r;
}

long allSum(long v)
{
    if (g_comm == MPI_COMM_NULL)
    {
        return v;
    }
    long r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_LONG, MPI_SUM, g_comm);
    return r;
}

TEST(PencilFft, NamesRoundTrip)
{
    for (auto a : kAlgorithms)
    {
        auto p = parseTransposeAlgorithm(transposeAlgorithmName(a));
        ASSERT_TRUE(p.has_value());
        EXPECT_EQ(*p, a);
    }
    EXPECT_STREQ(transposeAlgorithmName(TransposeAlgorithm::Alltoallv), "alltoallv");
    EXPECT_STREQ(transposeAlgorithmName(TransposeAlgorithm::Pairwise), "pairwise");
    EXPECT_STREQ(transposeAlgorithmName(TransposeAlgorithm::Rma), "rma");
    EXPECT_STREQ(transposeAlgorithmName(TransposeAlgorithm::Shm), "shm");
    EXPECT_FALSE(parseTransposeAlgorithm("auto").has_value());
    EXPECT_FALSE(parseTransposeAlgorithm("").has_value());
}

TEST(PencilFft, ChoosePencilGrid)
{
    for (int p = 1; p <= 64; ++p)
    {
        for (auto n : {std::array<int, 3>{64, 64, 64}, std::array<int, 3>{7, 11, 13}, std::array<int, 3>{96, 80, 72}})
        {
            const auto g = choosePencilGrid(p, n);
            EXPECT_EQ(g[0] * g[1], p) << p;
            EXPECT_GE(g[0], 1);
            EXPECT_GE(g[1], 1);
        }
    }
    using G = std::array<int, 2>;
    EXPECT_EQ(choosePencilGrid(1, {32, 32, 32}), (G{1, 1}));
    EXPECT_EQ(choosePencilGrid(4, {64, 64, 64}), (G{2, 2}));
    EXPECT_EQ(choosePencilGrid(8, {64, 64, 64}), (G{4, 2}));
    EXPECT_EQ(choosePencilGrid(6, {60, 60, 60}), (G{3, 2}));
    EXPECT_EQ(choosePencilGrid(16, {128, 128, 128}), (G{4, 4}));
    // nz/2+1 = 2: more than 2 parts along kz would leave ranks empty
    EXPECT_LE(choosePencilGrid(8, {64, 64, 2})[1], 2);
}

TEST(PencilFft, BadProcessGridThrows)
{
    EXPECT_THROW(PencilFft3d(g_comm, {8, 8, 8}, {g_size + 1, 1}, TransposeAlgorithm::Alltoallv), std::invalid_argument);
    EXPECT_THROW(PencilFft3d(g_comm, {8, 0, 8}, {g_size, 1}, TransposeAlgorithm::Alltoallv), std::invalid_argument);
}

TEST(PencilFft, MatchesSerialFftw)
{
    for (auto n : kGrids)
    {
        const auto   x     = globalInput(n);
        const auto   ref   = serialForward(n, x);
        const double N     = double(n[0]) * n[1] * n[2];
        const double refMax = maxAbs(ref), xMax = maxAbs(x);
        for (auto pg : processGrids())
        {
            for (auto alg : kAlgorithms)
            {
                const std::string what = label(n, pg, alg);
                PencilFft3d       f(g_comm, n, pg, alg);
                EXPECT_EQ(f.algorithm(), alg);
                // The local blocks tile the real and complex grids exactly.
                EXPECT_EQ(allSum(realCount(f)), long(N)) << what;
                EXPECT_EQ(allSum(complexCount(f)), long(n[0]) * n[1] * (n[2] / 2 + 1)) << what;

                fillLocal(f, n, x);
                f.forward();
                const double err = allMax(maxComplexError(f, n, ref));
                EXPECT_LE(err, 1e-10 * refMax) << what << ": forward differs from serial FFTW by " << err;

                // forward again: the same bits (and the real input is kept)
                std::vector<std::complex<real>> c1(f.complexData(), f.complexData() + complexCount(f));
                f.forward();
                const bool sameForward =
                        std::memcmp(c1.data(), f.complexData(), sizeof(c1[0]) * c1.size()) == 0;
                EXPECT_TRUE(sameForward) << what << ": second forward differs";

                f.backward();
                double backErr = 0;
                const auto s = f.realStart(), z = f.realSize();
                for (int i = 0; i < z[0]; ++i)
                {
                    for (int j = 0; j < z[1]; ++j)
                    {
                        for (int k = 0; k < z[2]; ++k)
                        {
                            const double v = f.realData()[(long(i) * z[1] + j) * z[2] + k];
                            const double e = x[(std::size_t(s[0] + i) * n[1] + s[1] + j) * n[2] + k] * N;
                            backErr        = std::max(backErr, std::abs(v - e));
                        }
                    }
                }
                backErr = allMax(backErr);
                EXPECT_LE(backErr, 1e-10 * N * xMax) << what << ": backward(forward(x)) != N x, error " << backErr;

                // backward again from the same spectrum: the same bits
                std::vector<real> r1(f.realData(), f.realData() + realCount(f));
                std::copy(c1.begin(), c1.end(), f.complexData());
                f.backward();
                const bool sameBackward = std::memcmp(r1.data(), f.realData(), sizeof(real) * r1.size()) == 0;
                EXPECT_TRUE(sameBackward) << what << ": second backward differs";

                EXPECT_EQ(f.stats().transforms, 4) << what;
                if (g_size == 1)
                {
                    EXPECT_EQ(f.stats().messages, 0) << what;
                    EXPECT_EQ(f.stats().bytes, 0) << what;
                }
            }
        }
    }
}

/* A made-up solve: point (kx, ky, kz) times 1 / (1 + kx + 2 ky + 3 kz). */
std::complex<real> testFactor(int kx, int ky, int kz)
{
    return std::complex<real>(real(1.0 / (1 + kx + 2 * ky + 3 * kz)), 0);
}

TEST(PencilFft, ConvolveMatchesForwardSolveBackward)
{
    // convolve() solves each ky row between its x transforms: the same
    // result as forward(), the solve over the whole block and backward()
    // (within rounding: on threads the row and plane plans are FFTW's for
    // one row and four planes), every row solved once, and the same bits
    // for 2 and 3 threads
    for (auto n : kGrids)
    {
        const auto   x = globalInput(n);
        const double N = double(n[0]) * n[1] * n[2];
        for (auto pg : processGrids())
        {
            for (auto alg : {TransposeAlgorithm::Pairwise, TransposeAlgorithm::Rma})
            {
                const std::string what = label(n, pg, alg) + " convolve";
                PencilFft3d       f(g_comm, n, pg, alg);
                const auto        s = f.complexStart(), z = f.complexSize();
                ASSERT_EQ(f.complexOrder(), (std::array<int, 3>{1, 2, 0})) << what;
                // reference: the whole block between forward and backward
                fillLocal(f, n, x);
                f.forward();
                for (int a = 0; a < z[1]; ++a)
                {
                    for (int b = 0; b < z[2]; ++b)
                    {
                        for (int c = 0; c < z[0]; ++c)
                        {
                            f.complexData()[(long(a) * z[2] + b) * z[0] + c] *= testFactor(s[0] + c, s[1] + a, s[2] + b);
                        }
                    }
                }
                f.backward();
                const std::vector<real> ref(f.realData(), f.realData() + realCount(f));
                std::vector<real>       first;
                for (int threads : {1, 2, 3})
                {
                    fillLocal(f, n, x);
                    std::vector<int> calls(z[1], 0);
                    f.convolve(threads, [&](int a, std::complex<real>* p) {
                        calls[a]++;
                        for (int b = 0; b < z[2]; ++b)
                        {
                            for (int c = 0; c < z[0]; ++c)
                            {
                                p[long(b) * z[0] + c] *= testFactor(s[0] + c, s[1] + a, s[2] + b);
                            }
                        }
                    });
                    for (int a = 0; a < z[1]; ++a)
                    {
                        EXPECT_EQ(calls[a], z[0] * z[2] > 0 ? 1 : 0) << what << ": row " << a;
                    }
                    double err = 0, scale = 0;
                    for (long i = 0; i < realCount(f); ++i)
                    {
                        err   = std::max(err, double(std::abs(f.realData()[i] - ref[i])));
                        scale = std::max(scale, double(std::abs(ref[i])));
                    }
                    err   = allMax(err);
                    scale = allMax(scale);
                    EXPECT_LE(err, 1e-12 * std::max(scale, N)) << what << ", " << threads << " thread(s): error " << err;
                    if (threads == 2)
                    {
                        first.assign(f.realData(), f.realData() + realCount(f));
                    }
                    else if (threads == 3)
                    {
                        EXPECT_TRUE(std::equal(first.begin(), first.end(), f.realData()))
                                << what << ": 3 threads differ from 2";
                    }
                }
            }
        }
    }
}

TEST(PencilFft, RealHaloKeepsTheTransformAndIsNotTouched)
{
    // The distributed PME spreads into a buffer with p - 1 planes and rows
    // before the block (realHalo): the transforms must read and write the
    // block only, and give the spectrum of the same data without a halo.
    const std::array<int, 2> halo{3, 2};
    const real               sentinel = real(12345.5);
    for (auto n : kGrids)
    {
        const auto   x   = globalInput(n);
        const auto   ref = serialForward(n, x);
        const double N   = double(n[0]) * n[1] * n[2];
        const double refMax = maxAbs(ref), xMax = maxAbs(x);
        for (auto pg : processGrids())
        {
            const std::string what = label(n, pg, TransposeAlgorithm::Pairwise) + " with a real halo";
            PencilFft3d       f(g_comm, n, pg, TransposeAlgorithm::Pairwise, FftPlanning::Estimate, halo);
            const auto        s = f.realStart(), z = f.realSize();
            const long        rowStride = n[2], planeStride = long(z[1] + halo[1]) * n[2];
            const long        total     = long(z[0] + halo[0]) * planeStride;
            EXPECT_EQ(f.realData() - f.realBuffer(), halo[0] * planeStride + halo[1] * rowStride) << what;
            std::fill_n(f.realBuffer(), total, sentinel);
            auto at = [&](int i, int j, int k) -> real& { return f.realData()[i * planeStride + j * rowStride + k]; };
            for (int i = 0; i < z[0]; ++i)
            {
                for (int j = 0; j < z[1]; ++j)
                {
                    for (int k = 0; k < z[2]; ++k)
                    {
                        at(i, j, k) = real(x[(std::size_t(s[0] + i) * n[1] + s[1] + j) * n[2] + k]);
                    }
                }
            }
            f.forward();
            const double err = allMax(maxComplexError(f, n, ref));
            EXPECT_LE(err, 1e-10 * refMax) << what << ": forward differs from serial FFTW by " << err;
            f.backward();
            double backErr = 0;
            long   touched = 0;
            for (long q = 0; q < total; ++q)
            {
                const long i = q / planeStride, j = (q % planeStride) / rowStride, k = q % rowStride;
                const bool inHalo = i < halo[0] || j < halo[1];
                if (inHalo)
                {
                    touched += f.realBuffer()[q] != sentinel;
                    continue;
                }
                const double e = x[(std::size_t(s[0] + i - halo[0]) * n[1] + s[1] + j - halo[1]) * n[2] + k] * N;
                backErr        = std::max(backErr, std::abs(double(f.realBuffer()[q]) - e));
            }
            backErr = allMax(backErr);
            EXPECT_LE(backErr, 1e-10 * N * xMax) << what << ": backward(forward(x)) != N x, error " << backErr;
            EXPECT_EQ(allSum(touched), 0) << what << ": the transforms wrote into the halo";
        }
    }
}

TEST(PencilFft, AlgorithmsBitwiseIdentical)
{
    for (auto n : kGrids)
    {
        const auto x = globalInput(n);
        for (auto pg : processGrids())
        {
            std::vector<std::complex<real>> c0;
            std::vector<real>               r0;
            FftCommStats                    s0;
            for (auto alg : kAlgorithms)
            {
                const std::string what = label(n, pg, alg);
                PencilFft3d       f(g_comm, n, pg, alg);
                fillLocal(f, n, x);
                f.forward();
                std::vector<std::complex<real>> c(f.complexData(), f.complexData() + complexCount(f));
                f.backward();
                std::vector<real> r(f.realData(), f.realData() + realCount(f));
                if (alg == TransposeAlgorithm::Alltoallv)
                {
                    c0 = c;
                    r0 = r;
                    s0 = f.stats();
                    continue;
                }
                const bool sameC = c.size() == c0.size()
                                   && std::memcmp(c.data(), c0.data(), sizeof(c[0]) * c.size()) == 0;
                const bool sameR = r.size() == r0.size()
                                   && std::memcmp(r.data(), r0.data(), sizeof(r[0]) * r.size()) == 0;
                EXPECT_TRUE(sameC) << what << ": spectrum differs from alltoallv";
                EXPECT_TRUE(sameR) << what << ": backward differs from alltoallv";
                EXPECT_EQ(f.stats().transforms, 2) << what;
                EXPECT_EQ(f.stats().messages, s0.messages) << what;
                EXPECT_EQ(f.stats().bytes, s0.bytes) << what;
            }
        }
    }
}

TEST(PencilFft, AnyCallSequence)
{
    // A fixed pseudo-random sequence of forward() and backward() calls (runs
    // of each, so both transposes see every order of plans on their
    // windows); every forward must give the same bits, every backward too.
    const std::array<int, 3> n{12, 10, 9};
    const auto               x = globalInput(n);
    std::mt19937             rng(7);
    std::vector<int>         ops(60);
    for (auto& o : ops)
    {
        o = int(rng() % 2);
    }
    for (auto pg : processGrids())
    {
        for (auto alg : kAlgorithms)
        {
            const std::string what = label(n, pg, alg);
            PencilFft3d       f(g_comm, n, pg, alg);
            fillLocal(f, n, x);
            f.forward();
            const std::vector<std::complex<real>> c0(f.complexData(), f.complexData() + complexCount(f));
            f.backward();
            const std::vector<real> r0(f.realData(), f.realData() + realCount(f));
            int bad = 0;
            for (int o : ops)
            {
                if (o == 0)
                {
                    fillLocal(f, n, x);
                    f.forward();
                    bad += std::memcmp(c0.data(), f.complexData(), sizeof(c0[0]) * c0.size()) != 0;
                }
                else
                {
                    std::copy(c0.begin(), c0.end(), f.complexData());
                    f.backward();
                    bad += std::memcmp(r0.data(), f.realData(), sizeof(r0[0]) * r0.size()) != 0;
                }
            }
            EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << ops.size() << " calls differ";
            EXPECT_EQ(f.stats().transforms, long(ops.size()) + 2) << what;
        }
    }
}

TEST(PencilFft, SiblingGroupsAtOnce)
{
    // Separate PME ranks: the world is split into groups and every group
    // builds and runs its own FFTs at the same moment, on sibling
    // communicators (the case that broke Open MPI's osc/rdma windows).
    if (g_comm == MPI_COMM_NULL || g_size < 2)
    {
        return;
    }
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(g_comm, g_rank % 2, g_rank, &group);
    int gsize = 0;
    MPI_Comm_size(group, &gsize);
    const std::array<int, 3> n{12, 10, 9};
    const auto               x   = globalInput(n);
    const auto               ref = serialForward(n, x);
    const double             refMax = maxAbs(ref);
    for (int round = 0; round < 3; ++round)
    {
        for (auto alg : kAlgorithms)
        {
            PencilFft3d f(group, n, choosePencilGrid(gsize, n), alg);
            fillLocal(f, n, x);
            f.forward();
            double err = maxComplexError(f, n, ref);
            err        = allMax(err);
            EXPECT_LE(err, 1e-10 * refMax) << transposeAlgorithmName(alg) << " in a group of " << gsize;
        }
    }
    MPI_Comm_free(&group);
}

TEST(PencilFft, MessageCounts)
{
    // 12x10x9 (nz/2+1 = 5): with every part non-empty each rank sends one
    // block to each other member of its row and its column per transform.
    const std::array<int, 3> n{12, 10, 9};
    for (auto pg : processGrids())
    {
        if (pg[0] > 10 || pg[1] > 5)
        {
            continue;
        }
        PencilFft3d f(g_comm, n, pg, TransposeAlgorithm::Pairwise);
        f.forward();
        f.backward();
        EXPECT_EQ(f.stats().transforms, 2);
        EXPECT_EQ(f.stats().messages, 2L * ((pg[0] - 1) + (pg[1] - 1))) << pg[0] << "x" << pg[1];
        // every complex number crosses each transpose once unless it stays home
        const long moved = allSum(f.stats().bytes);
        EXPECT_LE(moved, 2L * 2 * n[0] * n[1] * (n[2] / 2 + 1) * long(sizeof(std::complex<real>)));
        EXPECT_EQ(moved > 0, g_size > 1);
        EXPECT_GE(f.stats().commSeconds, 0.0);
        EXPECT_GT(f.stats().fftSeconds, 0.0);
        f.resetStats();
        EXPECT_EQ(f.stats().transforms, 0);
        EXPECT_EQ(f.stats().messages, 0);
    }
}

TEST(PencilFft, ChooseFastestAgrees)
{
    const std::array<int, 3> n{16, 12, 10};
    const auto               pg  = choosePencilGrid(g_size, n);
    const auto               alg = PencilFft3d::chooseFastest(g_comm, n, pg, 2);
    long                     v   = static_cast<long>(alg);
    long                     lo = v, hi = v;
    if (g_comm != MPI_COMM_NULL)
    {
        MPI_Allreduce(&v, &lo, 1, MPI_LONG, MPI_MIN, g_comm);
        MPI_Allreduce(&v, &hi, 1, MPI_LONG, MPI_MAX, g_comm);
    }
    EXPECT_EQ(lo, hi) << "ranks chose different algorithms";
    if (g_size > 1)
    {
        // only the collective-free algorithms are candidates
        EXPECT_TRUE(alg == TransposeAlgorithm::Pairwise || alg == TransposeAlgorithm::Rma
                    || alg == TransposeAlgorithm::Shm)
                << "auto chose " << transposeAlgorithmName(alg);
    }
    EXPECT_TRUE(v >= 0 && v <= 3);
}

class RankPrinter : public testing::EmptyTestEventListener
{
    void OnTestPartResult(const testing::TestPartResult& r) override
    {
        if (r.failed())
        {
            std::fprintf(stderr, "[rank %d] %s:%d: %s\n", g_rank, r.file_name() ? r.file_name() : "?",
                         r.line_number(), r.summary());
        }
    }
};

/* --stall-at K [--stall-alg rma|shm]: every rank runs forward+backward
 * pairs; at pair K the last rank stops taking part (sleeps). The others must
 * give up after PUTMD_COMM_TIMEOUT with a message instead of hanging
 * (stall_test.sh). */
int stallRun(int stallAt, TransposeAlgorithm alg)
{
    const std::array<int, 3> n{16, 16, 16};
    PencilFft3d              f(g_comm, n, choosePencilGrid(g_size, n), alg);
    for (int k = 1; k <= stallAt + 5; ++k)
    {
        if (k == stallAt && g_rank == g_size - 1)
        {
            std::fprintf(stderr, "rank %d stalls at pair %d\n", g_rank, k);
            sleep(600);
        }
        f.forward();
        f.backward();
    }
    std::printf("rank %d: no timeout although a rank stalled\n", g_rank);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    // MPI (MPI_Init_thread) only under a launcher, as in putmd itself; the
    // tests then use MPI_COMM_WORLD directly.
    comm::Communicator::initialize(&argc, &argv);
    const bool parallel = comm::Communicator::parallel();
    int                stallAt  = 0;
    TransposeAlgorithm stallAlg = TransposeAlgorithm::Rma;
    for (int i = 1; i < argc; ++i)
    {
        if (std::string(argv[i]) == "--stall-at" && i + 1 < argc)
        {
            stallAt = std::atoi(argv[++i]);
        }
        else if (std::string(argv[i]) == "--stall-alg" && i + 1 < argc)
        {
            const auto a = parseTransposeAlgorithm(argv[++i]);
            if (!a)
            {
                std::fprintf(stderr, "--stall-alg: not an algorithm: %s\n", argv[i]);
                return 2;
            }
            stallAlg = *a;
        }
    }
    if (parallel)
    {
        g_comm = MPI_COMM_WORLD;
        MPI_Comm_rank(g_comm, &g_rank);
        MPI_Comm_size(g_comm, &g_size);
        auto& listeners = testing::UnitTest::GetInstance()->listeners();
        if (g_rank != 0)
        {
            delete listeners.Release(listeners.default_result_printer());
            listeners.Append(new RankPrinter);
        }
    }
    if (stallAt > 0)
    {
        const int rc = stallRun(stallAt, stallAlg);
        comm::Communicator::finalize();
        return rc;
    }
    const int mine   = RUN_ALL_TESTS();
    int       failed = mine != 0 ? 1 : 0;
    if (parallel)
    {
        int any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, g_comm);
        failed = any;
    }
    if (g_rank == 0)
    {
        std::printf("pencil FFT tests: %d rank(s)%s: %s\n", g_size, parallel ? "" : " (serial, no MPI)",
                    failed ? "FAILED" : "passed");
    }
    comm::Communicator::finalize();
    return failed ? 1 : 0;
}
