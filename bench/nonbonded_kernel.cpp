/* bench/nonbonded_kernel.cpp — the cluster-pair kernel alone, on one core.
 *
 *   nonbonded_kernel_bench SYSTEM_DIR [REPEATS]
 *
 * Reads SYSTEM_DIR/{conf.gro,topol.top,md.mdp|ref/ref.mdp}, builds the
 * cluster list with rlist = max cut-off + 0.1 nm, and times the SIMD kernel
 * (forces only, and forces + energies) and the plain reference kernel, one
 * thread, median of REPEATS calls. Prints per kernel: the time per call,
 * pair interactions per second (atom pairs inside the cut-off), cluster
 * pairs per second, cycles per cluster pair and the floating-point rate as a
 * fraction of the core's peak: the flops of one lane counted from the kernel
 * source (75 forces only, 115 with energies, PME + geometric LJ, 16 fewer
 * on AVX2 and AVX-512, whose force series is in pieces; an FMA is
 * two; see docs/performance.md) times 16 lanes per cluster pair, against
 * the core's peak rate times the clock; the peak is measured (independent
 * FMAs at the widest vector width: 64 flops/cycle on AMD Zen 5, which runs
 * two 512-bit FMAs per cycle; 32 on Zen 4) unless
 * PUTMD_BENCH_FLOPS_PER_CYCLE gives it. The clock is measured with a chain
 * of dependent integer additions (one per cycle), as a virtual machine has
 * no cycle counters. Before the timings, statistics of the list: the atom
 * pairs inside the cut-off, the entries with all 16 mask bits set (no
 * excluded, self or padding pair), and the
 * 8-lane registers a list pruned at the cut-off needs with the AVX2
 * kernel's row halves (two i-atoms x four j-atoms) and with 8-atom
 * j-clusters (GROMACS's 4x8 layout: one i-atom x two stacked clusters of a
 * column; each i-row counted apart, which GROMACS's kernel does not
 * skip), counted from the same list.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nonbonded/cluster_grid.h"
#include "nonbonded/cluster_kernel.h"
#include "nonbonded/cluster_nonbonded.h"
#include "nonbonded/interaction_const.h"
#include "run/system_inputs.h"

using namespace putmd;

namespace
{

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* The core clock (GHz): 400 million dependent register-to-register
 * additions take 400 million cycles; median of 5. Not additions of an
 * immediate: Intel's Golden Cove cores fold chains of those (this gave
 * 18 GHz on a 2.6 GHz Xeon). */
double measuredClockGHz()
{
    std::vector<double> g;
    for (int r = 0; r < 5; r++)
    {
        long       v  = 0, one = 1;
        const long n  = 400000000;
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; i += 8)
        {
            asm volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(v)
                         : "r"(one));
        }
        g.push_back(n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e-9);
    }
    return median(g);
}

/* The core's peak single-precision rate (flops per cycle), measured: 12
 * independent chains of fused multiply-adds at the widest vector width the
 * CPU has (AVX-512, AVX2 or SSE with separate multiply and add), so that
 * the figure is this CPU's (Zen 4 runs 512-bit FMAs at half rate, Zen 5 at
 * full: 32 or 64). Median of 5; an FMA is two flops per lane. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
// twelve named accumulators (an array may live in memory), kept in
// registers by the empty asm, one multiply-add each per round
#define PUTMD_FMA_ROUND(FMA)                                                                                     \
    a0 = FMA(a0, b, c), a1 = FMA(a1, b, c), a2 = FMA(a2, b, c), a3 = FMA(a3, b, c), a4 = FMA(a4, b, c),        \
    a5 = FMA(a5, b, c), a6 = FMA(a6, b, c), a7 = FMA(a7, b, c), a8 = FMA(a8, b, c), a9 = FMA(a9, b, c),        \
    a10 = FMA(a10, b, c), a11 = FMA(a11, b, c);                                                                 \
    asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8), \
                 "+v"(a9), "+v"(a10), "+v"(a11))

__attribute__((target("avx512f"))) double fmasPerNs512()
{
    const __m512 b = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b, a8 = b, a9 = b, a10 = b, a11 = b;
    const long n  = 20000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < n; k++)
    {
        PUTMD_FMA_ROUND(_mm512_fmadd_ps);
    }
    return 16.0 * 12 * n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e-9;
}

__attribute__((target("avx2,fma"))) double fmasPerNs256()
{
    const __m256 b = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b, a8 = b, a9 = b, a10 = b, a11 = b;
    const long n  = 20000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < n; k++)
    {
        PUTMD_FMA_ROUND(_mm256_fmadd_ps);
    }
    return 8.0 * 12 * n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e-9;
}
#undef PUTMD_FMA_ROUND
#endif

double measuredPeakFlopsPerCycle(double ghz)
{
#if defined(__x86_64__) && defined(__GNUC__)
    double (*rate)() = nullptr;
    if (__builtin_cpu_supports("avx512f"))
    {
        rate = fmasPerNs512;
    }
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    {
        rate = fmasPerNs256;
    }
    if (rate)
    {
        std::vector<double> r;
        for (int k = 0; k < 5; k++)
        {
            r.push_back(rate());
        }
        return 2 * median(r) / ghz;
    }
#endif
    (void)ghz;
    return 0; // unknown: the caller falls back to the stated default
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2)
    {
        std::fprintf(stderr, "usage: %s SYSTEM_DIR [REPEATS]\n", argv[0]);
        return 2;
    }
    const std::string dir     = argv[1];
    const int         repeats = argc > 2 ? std::atoi(argv[2]) : 20;
    InputPaths        paths;
    paths.topology    = dir + "/topol.top";
    paths.coordinates = dir + "/conf.gro";
    paths.mdp         = std::ifstream(dir + "/md.mdp").good() ? dir + "/md.mdp" : dir + "/ref/ref.mdp";
    const SystemInputs in = loadSystem(paths);
    std::vector<Vec3<real>> x;
    for (const auto& p : in.coordinates.x)
    {
        x.push_back(Vec3<real>(p));
    }
    const InteractionConst ic  = makeInteractionConst(in.mdp);
    const Box&             box = in.coordinates.box;
    const double           rlist = ic.rmax + 0.1;

    // pairs inside the cut-off, counted once with the plain kernel's rule
    ClusterNonbonded nb;
    nb.setKernel(ClusterKernelKind::Simd);
    nb.build(in.topology, box, x, rlist);
    std::vector<Vec3<real>> f(x.size());
    EnergyTerms             e;
    nb.compute(in.topology, ic, box, x, f, e, nullptr); // warm up, set up
    const double ghz = measuredClockGHz();
    const double measuredPeak  = measuredPeakFlopsPerCycle(ghz);
    const double flopsPerCycle = std::getenv("PUTMD_BENCH_FLOPS_PER_CYCLE")
                                         ? std::atof(std::getenv("PUTMD_BENCH_FLOPS_PER_CYCLE"))
                                         : (measuredPeak > 0 ? measuredPeak : 32.0);
    std::printf("measured clock %.2f GHz; peak %.1f flops/cycle (%s; PUTMD_BENCH_FLOPS_PER_CYCLE sets it)\n", ghz,
                flopsPerCycle,
                std::getenv("PUTMD_BENCH_FLOPS_PER_CYCLE") ? "given"
                : measuredPeak > 0                          ? "measured: independent FMAs at the widest vector width"
                                                            : "assumed");

    std::printf("system %s: %zu atoms, rlist %.3f nm, %zu cluster pairs, %zu atom pairs in the list\n", dir.c_str(),
                x.size(), rlist, nb.numClusterPairs(), nb.numPairs());
    std::printf("SIMD target: %s\n", clusterKernelTarget().c_str());
    // count the pairs inside the cut-off with the reference kernel's cut-off test
    size_t inside = 0, fullMask = 0, entries = 0;
    {
        ClusterGrid     g;
        ClusterPairList l;
        // the atoms with Lennard-Jones first in their cluster, as the
        // kernels' grid has them: the same clusters, and the same halves of
        // each for the count below
        std::vector<uint8_t> typeLJ, leading(x.size());
        lennardJonesTypes(in.topology, typeLJ);
        for (size_t a = 0; a < x.size(); a++)
        {
            leading[a] = typeLJ[in.topology.ljType[a]];
        }
        g.build(box, x, true, -1, leading.data());
        l.search(g, box, rlist, in.topology, true);
        const double rc2 = ic.rmax * ic.rmax;
        std::vector<float> xs(g.numSlots()), ys(g.numSlots()), zs(g.numSlots());
        for (int s = 0; s < g.numSlots(); s++)
        {
            const int a = g.atomOfSlot()[s];
            if (a < 0)
            {
                continue;
            }
            const auto& w = g.wrapOfSlot()[s];
            for (int d = 0; d < 3; d++)
            {
                const double v = x[a][d] - (w[0] * box.vectors()(0, d) + w[1] * box.vectors()(1, d) + w[2] * box.vectors()(2, d));
                (d == 0 ? xs : d == 1 ? ys : zs)[s] = float(v);
            }
        }
        for (const ClusterPairI& ie : l.iEntries())
        {
            const Vec3<float> t = shiftVector(box, ie.shift);
            for (int p = ie.jBegin; p < ie.jEnd; p++)
            {
                const ClusterPairJ& je = l.jEntries()[p];
                entries++;
                fullMask += (je.mask & 0xFFFFu) == 0xFFFFu;
                for (int b = 0; b < 16; b++)
                {
                    if (!(je.mask >> b & 1))
                    {
                        continue;
                    }
                    const int si = ie.ci * 4 + b / 4, sj = je.cj * 4 + b % 4;
                    const double dx = xs[si] + t.x - xs[sj], dy = ys[si] + t.y - ys[sj], dz = zs[si] + t.z - zs[sj];
                    inside += dx * dx + dy * dy + dz * dz < rc2;
                }
            }
        }
        // 8-lane registers on the list pruned at the cut-off: the AVX2
        // kernel's row halves (two i-atoms x a 4-atom j-cluster) with a pair
        // in range, against one i-atom x an 8-atom j-cluster (GROMACS's 4x8:
        // two clusters of a column stacked) with a pair in range
        std::vector<int> groupOf(g.numClusters());
        for (size_t c = 0; c + 1 < g.columnStart().size(); c++)
        {
            for (int k = g.columnStart()[c]; k < g.columnStart()[c + 1]; k++)
            {
                groupOf[k] = g.columnStart()[c] + (k - g.columnStart()[c]) / 2 * 2;
            }
        }
        size_t halves = 0, rows8 = 0;
        for (const ClusterPairI& ie : l.iEntries())
        {
            const Vec3<float> t = shiftVector(box, ie.shift);
            std::vector<std::pair<int, int>> groupRows; // (group, row bits)
            for (int p = ie.jBegin; p < ie.jEnd; p++)
            {
                const int cj   = l.jEntries()[p].cj;
                int       rows = 0;
                for (int a = 0; a < 4; a++)
                {
                    const int si = ie.ci * 4 + a;
                    if (g.atomOfSlot()[si] < 0)
                    {
                        continue;
                    }
                    for (int b = 0; b < 4; b++)
                    {
                        const int sj = cj * 4 + b;
                        if (g.atomOfSlot()[sj] < 0)
                        {
                            continue;
                        }
                        const double dx = xs[si] + t.x - xs[sj], dy = ys[si] + t.y - ys[sj], dz = zs[si] + t.z - zs[sj];
                        if (dx * dx + dy * dy + dz * dz < rc2)
                        {
                            rows |= 1 << a;
                        }
                    }
                }
                halves += ((rows & 3) != 0) + ((rows & 12) != 0);
                auto it = std::find_if(groupRows.begin(), groupRows.end(),
                                       [&](const std::pair<int, int>& q) { return q.first == groupOf[cj]; });
                if (it == groupRows.end())
                {
                    groupRows.emplace_back(groupOf[cj], rows);
                }
                else
                {
                    it->second |= rows;
                }
            }
            for (const auto& q : groupRows)
            {
                rows8 += __builtin_popcount(q.second);
            }
        }
        std::printf("8-lane registers with a pair inside the cut-off: 4x4 row halves %zu, 4x8 rows %zu (%.3f)\n",
                    halves, rows8, double(rows8) / double(halves));
    }
    std::printf("atom pairs inside the cut-off: %zu (%.1f%% of the %zu lanes computed)\n", inside,
                100.0 * inside / (16.0 * nb.numClusterPairs()), 16 * nb.numClusterPairs());
    // what a loop without the interaction mask could take (GROMACS runs one
    // over the entries without excluded pairs; docs/performance.md)
    std::printf("cluster pairs without an excluded or self pair (all 16 mask bits set): %zu of %zu (%.1f%%)\n",
                fullMask, entries, entries ? 100.0 * double(fullMask) / double(entries) : 0.0);

    struct Case
    {
        const char*       name;
        ClusterKernelKind kind;
        bool              energies;
    };
    for (const Case& c : { Case{ "SIMD, forces", ClusterKernelKind::Simd, false },
                           Case{ "SIMD, forces + energies", ClusterKernelKind::Simd, true },
                           Case{ "plain reference", ClusterKernelKind::Reference, true } })
    {
        nb.setKernel(c.kind);
        nb.setEnergiesOnlyWithVirial(!c.energies);
        std::vector<double> t;
        const int           n = c.kind == ClusterKernelKind::Reference ? std::max(3, repeats / 10) : repeats;
        for (int r = 0; r < n; r++)
        {
            std::fill(f.begin(), f.end(), Vec3<real>());
            const auto t0 = std::chrono::steady_clock::now();
            nb.compute(in.topology, ic, box, x, f, e, nullptr);
            t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        const double s = median(t);
        std::printf("%-26s %8.3f ms/call  %7.3f G pair interactions/s/core  %7.1f M cluster pairs/s  %.2f ns/pair",
                    c.name, 1e3 * s, inside / s * 1e-9, nb.numClusterPairs() / s * 1e-6, s / inside * 1e9);
        if (c.kind == ClusterKernelKind::Simd)
        {
            // 8 and 16 lanes (AVX2, AVX-512) evaluate the force in pieces:
            // 19 flops for the series' 35 (ewald_correction.h)
            const bool   pieces = clusterKernelTarget().rfind("AVX", 0) == 0;
            const double flopsPerClusterPair = 16.0 * ((c.energies ? 115 : 75) - (pieces ? 16 : 0));
            const double cycles              = s * ghz * 1e9 / nb.numClusterPairs();
            std::printf("  %.1f cycles/cluster pair, %.0f%% of peak", cycles,
                        100 * flopsPerClusterPair / cycles / flopsPerCycle);
        }
        std::printf("\n");
    }
    // dynamic pruning: the inner radius MD chooses (the cut-off itself for
    // 12k water and rnase at 300 K, pruned every 10-11 steps; here every 4
    // calls), time per call including the prune
    const double rInner = std::getenv("PUTMD_BENCH_RLIST_INNER") ? std::atof(std::getenv("PUTMD_BENCH_RLIST_INNER"))
                                                                 : ic.rmax;
    nb.setKernel(ClusterKernelKind::Simd);
    nb.setEnergiesOnlyWithVirial(true);
    nb.setPruning(rInner, 4);
    nb.build(in.topology, box, x, rlist);
    std::vector<double> t;
    for (int r = 0; r < std::max(3, repeats / 4); r++)
    {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < 4; k++)
        {
            nb.compute(in.topology, ic, box, x, f, e, nullptr);
        }
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 4);
    }
    std::printf("SIMD, forces, pruned to %.3f nm every 4 calls: %.3f ms/call, %zu of %zu cluster pairs computed (%.1f%% of "
                "lanes inside the cut-off)\n",
                rInner, 1e3 * median(t), nb.numComputedClusterPairs(), nb.numClusterPairs(),
                100.0 * inside / (16.0 * nb.numComputedClusterPairs()));
    // the kernel alone on that pruned list (no prune between the calls):
    // cycles per kept cluster pair, and the row halves it holds (the AVX2
    // kernel computes only those with a pair in range)
    nb.setPruning(rInner, 1 << 30);
    // PUTMD_BENCH_THREADS: the kernel's threads in this measurement (1)
    nb.setNumThreads(std::getenv("PUTMD_BENCH_THREADS") ? std::atoi(std::getenv("PUTMD_BENCH_THREADS")) : 1);
    nb.build(in.topology, box, x, rlist);
    nb.compute(in.topology, ic, box, x, f, e, nullptr);
    t.clear();
    for (int r = 0; r < repeats; r++)
    {
        const auto t0 = std::chrono::steady_clock::now();
        nb.compute(in.topology, ic, box, x, f, e, nullptr);
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("SIMD, forces, the pruned list alone: %.3f ms/call, %.1f cycles/cluster pair kept; %zu row halves "
                "with a pair in range (%.1f%% of 2 per pair)\n",
                1e3 * median(t), median(t) * ghz * 1e9 / nb.numComputedClusterPairs(), nb.numComputedRowHalves(),
                50.0 * nb.numComputedRowHalves() / nb.numComputedClusterPairs());
    // the prune itself, on the coordinates of the last call (minimum and
    // median of REPEATS prunes: the minimum is what the machine's noise
    // only ever raises)
    t.clear();
    for (int r = 0; r < repeats; r++)
    {
        const auto t0 = std::chrono::steady_clock::now();
        nb.prune();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double pruneMin = *std::min_element(t.begin(), t.end());
    std::printf("SIMD, the prune alone: %.3f ms (median %.3f), %.1f cycles/outer cluster pair\n", 1e3 * pruneMin,
                1e3 * median(t), pruneMin * ghz * 1e9 / nb.numClusterPairs());
    return 0;
}
