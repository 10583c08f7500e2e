/* bench/fft3d.cpp — the distributed pencil FFT, per transpose algorithm.
 *
 * For each cubic grid (default 32, 64, 96, 128) the three PencilFft3d plans
 * (alltoallv, pairwise, rma) are built side by side on the process grid of
 * choosePencilGrid(); after warm-up, each repetition times one forward +
 * backward pair of every algorithm in turn (the order rotates from one
 * repetition to the next, so that slow drift of a shared machine hits all
 * three alike), with an untimed barrier before each pair. The time of a
 * pair is the slowest rank's; the result is the median over repetitions.
 * Build: the default (mixed, float) library, as MD runs.
 *
 * Output, one line per grid and algorithm (rank 0):
 *   fft3d ranks px py n alg median_ms min_ms comm_ms fft_ms msgs_per_transform bytes_per_transform
 * comm_ms / fft_ms: median over repetitions of the slowest rank's transpose
 * and FFTW time per pair; msgs and bytes: summed over all ranks, per
 * transform (forward or backward), to other ranks only.
 * With --auto, also a line "auto ranks px py n alg" with chooseFastest()'s
 * answer (3 pairs per algorithm). On one rank, also a line "serial 1 1 1 n
 * fftw3d median_ms min_ms ..." with the serial FFTW transform (putmd::Fft3d)
 * for reference.
 *
 * Usage: mpirun -np P fft3d_bench [--grids 32,64,96,128] [--reps N]
 *        [--warmup W] [--auto]
 * Repetitions default to about 2 s of work per grid on 2 cores (fewer for
 * larger grids); --reps fixes them.
 */
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "fft/fft3d.h"
#include "fft/pencil_fft.h"
#include "fft/transpose.h"

using namespace putmd;

namespace
{

// (the simulated clock under SimGrid's SMPI, core/clock.h)
double now()
{
    return clockSeconds();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double maxOverRanks(double v)
{
    double r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

long sumOverRanks(long v)
{
    long r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return r;
}

void fill(PencilFft3d& f)
{
    const auto s = f.realStart(), z = f.realSize();
    long       k = 0;
    for (int i = 0; i < z[0]; ++i)
    {
        for (int j = 0; j < z[1]; ++j)
        {
            for (int l = 0; l < z[2]; ++l)
            {
                f.realData()[k++] = real(std::sin(0.1 * (s[0] + i) + 0.37 * (s[1] + j) + 0.73 * l));
            }
        }
    }
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    std::vector<int> grids{32, 64, 96, 128};
    int              reps = 0, warmup = 2;
    bool             doAuto = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--grids" && i + 1 < argc)
        {
            grids.clear();
            std::stringstream ss(argv[++i]);
            std::string       item;
            while (std::getline(ss, item, ','))
            {
                grids.push_back(std::atoi(item.c_str()));
            }
        }
        else if (a == "--reps" && i + 1 < argc)
        {
            reps = std::atoi(argv[++i]);
        }
        else if (a == "--warmup" && i + 1 < argc)
        {
            warmup = std::atoi(argv[++i]);
        }
        else if (a == "--auto")
        {
            doAuto = true;
        }
        else
        {
            if (rank == 0)
            {
                std::fprintf(stderr, "usage: fft3d_bench [--grids 32,64,96,128] [--reps N] [--warmup W] [--auto]\n");
            }
            MPI_Finalize();
            return 2;
        }
    }

    // shm where the ranks share a machine (not under SMPI)
    std::vector<TransposeAlgorithm> algs = {TransposeAlgorithm::Alltoallv, TransposeAlgorithm::Pairwise,
                                            TransposeAlgorithm::Rma};
    if (fft::allOnOneMachine(MPI_COMM_WORLD))
    {
        algs.push_back(TransposeAlgorithm::Shm);
    }
    for (int g : grids)
    {
        const std::array<int, 3> n{g, g, g};
        const auto               pg = choosePencilGrid(size, n);
        std::vector<std::unique_ptr<PencilFft3d>> ffts;
        for (auto a : algs)
        {
            ffts.push_back(std::make_unique<PencilFft3d>(MPI_COMM_WORLD, n, pg, a));
        }
        for (int w = 0; w < warmup; ++w)
        {
            for (auto& f : ffts)
            {
                fill(*f);
                f->forward();
                f->backward();
            }
        }
        // about 2 s of work in all (every algorithm), from the warm-up's pace
        int r = reps;
        if (r <= 0)
        {
            const double t0 = now();
            for (auto& f : ffts)
            {
                f->forward();
                f->backward();
            }
            const double pair = maxOverRanks((now() - t0) / 3);
            r                 = std::clamp(int(2.0 / (3 * std::max(pair, 1e-6))), 5, 50);
        }
        std::vector<std::vector<double>> total(3), comm(3), fftT(3);
        for (auto& f : ffts)
        {
            f->resetStats();
        }
        for (int rep = 0; rep < r; ++rep)
        {
            for (int k = 0; k < 3; ++k)
            {
                const int    a = (k + rep) % 3;
                PencilFft3d& f = *ffts[a];
                fill(f);
                const double c0 = f.stats().commSeconds, f0 = f.stats().fftSeconds;
                MPI_Barrier(MPI_COMM_WORLD);
                const double t0 = now();
                f.forward();
                f.backward();
                const double t = now() - t0;
                total[a].push_back(maxOverRanks(t));
                comm[a].push_back(maxOverRanks(f.stats().commSeconds - c0));
                fftT[a].push_back(maxOverRanks(f.stats().fftSeconds - f0));
            }
        }
        for (int a = 0; a < 3; ++a)
        {
            const FftCommStats& s        = ffts[a]->stats();
            const long          msgs     = sumOverRanks(s.messages);
            const long          bytes    = sumOverRanks(s.bytes);
            const long          nTransf  = std::max(1L, s.transforms);
            if (rank == 0)
            {
                std::printf("fft3d %d %d %d %d %s %.3f %.3f %.3f %.3f %.1f %.0f %d\n", size, pg[0], pg[1], g,
                            transposeAlgorithmName(algs[a]), 1e3 * median(total[a]),
                            1e3 * *std::min_element(total[a].begin(), total[a].end()), 1e3 * median(comm[a]),
                            1e3 * median(fftT[a]), double(msgs) / nTransf, double(bytes) / nTransf, r);
                std::fflush(stdout);
            }
        }
        ffts.clear();
        if (size == 1)
        {
            // reference: the serial FFTW 3D transform (putmd::Fft3d)
            Fft3d               serial(g, g, g);
            std::vector<double> ts;
            for (int rep = 0; rep < r + warmup; ++rep)
            {
                for (long k = 0; k < long(g) * g * g; ++k)
                {
                    serial.realData()[k] = real(std::sin(0.37 * double(k)));
                }
                const double t0 = now();
                serial.forward();
                serial.backward();
                if (rep >= warmup)
                {
                    ts.push_back(now() - t0);
                }
            }
            std::printf("serial 1 1 1 %d fftw3d %.3f %.3f 0 0 0 0 %d\n", g, 1e3 * median(ts),
                        1e3 * *std::min_element(ts.begin(), ts.end()), r);
        }
        if (doAuto)
        {
            const auto best = PencilFft3d::chooseFastest(MPI_COMM_WORLD, n, pg, 3);
            if (rank == 0)
            {
                std::printf("auto %d %d %d %d %s\n", size, pg[0], pg[1], g, transposeAlgorithmName(best));
                std::fflush(stdout);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
