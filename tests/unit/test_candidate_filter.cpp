/* The pair searches' candidate filter (nonbonded/candidate_filter.h):
 * the SIMD twin keeps the same atoms in the same order as the plain loop on
 * every instruction set Highway compiled and this machine runs, on rows of
 * every length around the register widths, with candidates on both sides
 * of the index, zone and distance tests (and some exactly at rlist). */
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "nonbonded/candidate_filter.h"
#include "nonbonded/cluster_kernel.h"

namespace putmd
{
namespace
{

TEST(CandidateFilter, SimdKeepsTheAtomsOfThePlainLoopOnEveryInstructionSet)
{
    std::mt19937                           rng(2026);
    std::uniform_real_distribution<double> pos(0.0, 2.0);
    const int                              n = 203;
    std::vector<real>                      x(n + c_candidateSlack), y(n + c_candidateSlack), z(n + c_candidateSlack);
    std::vector<CandidateIndex>            atom(n + c_candidateSlack), zone(n + c_candidateSlack);
    std::vector<CandidateIndex> ids(400); // distinct indices, half below i
    for (int k = 0; k < 400; k++)
    {
        ids[k] = k;
    }
    std::shuffle(ids.begin(), ids.end(), rng);
    for (int k = 0; k < n; k++)
    {
        x[k] = real(pos(rng)), y[k] = real(pos(rng)), z[k] = real(pos(rng));
        atom[k] = ids[k];
        zone[k] = CandidateIndex(rng() % 8);
    }
    for (int k = n; k < n + c_candidateSlack; k++)
    {
        // past the rows: entries that would be kept if a lane past a row's
        // end were taken
        x[k] = y[k] = z[k] = real(1.0);
        atom[k] = 1000 + k, zone[k] = 0;
    }
    const CandidateRow row{ x.data(), y.data(), z.data(), atom.data(), zone.data() };
    CandidateQuery     q{ real(1.0), real(1.0), real(1.0), 200, 0, real(0.8 * 0.8) };
    // a candidate exactly at the cut-off (not kept: r^2 < rlist^2)
    x[7] = q.xi + real(0.8), y[7] = q.yi, z[7] = q.zi, zone[7] = 0;
    int checked = 0, keptSome = 0, droppedSome = 0;
    for (CandidateIndex qz : { 0, 1, 6 })
    {
        q.zone = qz;
        for (int begin : { 0, 1, 5, 16, n - 40, n - 23 })
        {
            for (int len = 0; len <= 40 && begin + len <= n; len++)
            {
                std::vector<CandidateIndex> plain(len + c_candidateSlack, -1);
                const int mPlain = filterCandidatesReference(row, q, begin, begin + len, plain.data());
                keptSome += mPlain > 0;
                droppedSome += mPlain < len;
                for (long long target : clusterKernelTargets())
                {
                    restrictClusterKernelTarget(target);
                    std::vector<CandidateIndex> simd(len + c_candidateSlack, -1);
                    const int m = filterCandidatesSimd(row, q, begin, begin + len, simd.data());
                    ASSERT_EQ(m, mPlain) << "target " << clusterKernelTarget() << ", row [" << begin << ", "
                                         << begin + len << "), zone " << qz;
                    for (int c = 0; c < m; c++)
                    {
                        ASSERT_EQ(simd[c], plain[c]) << "target " << clusterKernelTarget() << ", entry " << c;
                    }
                    checked++;
                }
                restrictClusterKernelTarget(0);
            }
        }
    }
    // the rows had kept and dropped candidates: the comparison compared something
    EXPECT_GT(keptSome, 100);
    EXPECT_GT(droppedSome, 100);
    EXPECT_GT(checked, 400);
    // the plain loop itself: every kept atom passes all three tests
    std::vector<CandidateIndex> out(n + c_candidateSlack);
    q.zone      = 1;
    const int m = filterCandidatesReference(row, q, 0, n, out.data());
    for (int c = 0; c < m; c++)
    {
        const auto   k  = out[c];
        const double dx = q.xi - x[k], dy = q.yi - y[k], dz = q.zi - z[k];
        EXPECT_TRUE(c == 0 || out[c - 1] < k) << "in order";
        EXPECT_GT(atom[k], q.i);
        EXPECT_EQ(zone[k] & q.zone, 0);
        EXPECT_LT(dx * dx + dy * dy + dz * dz, 0.8 * 0.8 * (1 + 1e-6));
    }
}

} // namespace
} // namespace putmd
