/* The mixed build's fast paths against their plain twins: SETTLE's float
 * blocks against its double plain twin, PME's SSE rows
 * (order 4) against the generic spread and gather loops, their AVX2/FMA
 * copy against the SSE one, the excluded-pair
 * Ewald corrections from the kernels' series against erf and exp,
 * measured FFTW plans against estimated ones, and the transposes' block
 * copy (SSE 2 x 2 and AVX2 4 x 4 tiles of complex floats) against copying
 * one element at a time. Compiled against the mixed
 * library (the paths exist only there). */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "fft/fft3d.h"
#include "fft/transpose.h"
#include "listed/listed.h"
#include "listed/listed_simd.h"
#include "nonbonded/cluster_kernel.h"
#include "nonbonded/ewald_correction.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/exclusion_triplets_simd.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/series_simd.h"
#include "pme/pme.h"
#include "pme/pme_rows.h"
#include "nonbonded/cluster_nonbonded.h"
#include "nonbonded/verlet_buffer.h"
#include "run/md_setup.h"
#include "run/system_inputs.h"
#include "update/settle.h"
#include "../unit/settle_twins.h"
#include "../unit/test_helpers.h"

namespace putmd
{
namespace
{

using RVec = Vec3<real>;

double largestNorm(const std::vector<RVec>& f)
{
    double m = 0;
    for (const RVec& v : f)
    {
        m = std::max(m, double(norm(v)));
    }
    return m;
}

double largestDifference(const std::vector<RVec>& a, const std::vector<RVec>& b)
{
    double m = 0;
    for (size_t i = 0; i < a.size(); i++)
    {
        m = std::max(m, double(norm(a[i] - b[i])));
    }
    return m;
}

PmeParameters pmeFor(const test::TestSystem& s)
{
    const InteractionConst ic = makeInteractionConst(s.in.mdp);
    return pmeParametersFor(s.in.coordinates.box, s.in.mdp, ic.ewaldCoeff, ic.epsfac);
}

double runPme(const test::TestSystem& s, bool sse, int threads, std::vector<RVec>& f, Matrix3& virial)
{
    Pme pme(pmeFor(s));
    pme.setSseRows(sse);
    pme.setNumThreads(threads);
    f.assign(s.x.size(), RVec());
    return pme.compute(s.in.coordinates.box, s.x, s.in.topology.charge, f, &virial);
}

TEST(PmeSseRows, MatchThePlainLoops)
{
    // rnase: 33,617 atoms on a 60^3 grid, rows that wrap in z included
    const test::TestSystem s = test::loadTestSystem("rnase-amber-cubic");
    ASSERT_EQ(pmeFor(s).order, 4);
    std::vector<RVec> plain, fast;
    Matrix3           vPlain, vFast;
    const double      ePlain = runPme(s, false, 1, plain, vPlain);
    const double      eFast  = runPme(s, true, 1, fast, vFast);
    const double      fmax   = largestNorm(plain);
    ASSERT_GT(fmax, 0);
    // the same sums in another order (float): rounding only
    EXPECT_NEAR(eFast, ePlain, 1e-6 * std::abs(ePlain));
    EXPECT_LT(largestDifference(fast, plain), 1e-5 * fmax);
    for (int a = 0; a < 3; a++)
    {
        EXPECT_NEAR(vFast(a, a), vPlain(a, a), 1e-6 * std::abs(ePlain));
    }
}

/* The rows' AVX2/FMA copy (pme_rows.h) against the SSE copy: the same sums
 * with one rounding per multiply-add instead of two, so close but not the
 * same bits (which shows the two copies ran). */
TEST(PmeRows, FusedCopyMatchesTheSseCopy)
{
    pme_detail::allowFusedRows(true);
    if (!pme_detail::fusedRowsActive())
    {
        GTEST_SKIP() << "this CPU has no AVX2 with FMA: only the SSE copy runs";
    }
    const test::TestSystem s = test::loadTestSystem("rnase-amber-cubic");
    std::vector<RVec>      fused, sse;
    Matrix3                vFused, vSse;
    const double           eFused = runPme(s, true, 2, fused, vFused);
    pme_detail::allowFusedRows(false);
    EXPECT_FALSE(pme_detail::fusedRowsActive());
    const double eSse = runPme(s, true, 2, sse, vSse);
    pme_detail::allowFusedRows(true);
    const double fmax = largestNorm(sse);
    ASSERT_GT(fmax, 0);
    EXPECT_NEAR(eFused, eSse, 1e-6 * std::abs(eSse));
    EXPECT_LT(largestDifference(fused, sse), 1e-5 * fmax);
    EXPECT_GT(largestDifference(fused, sse), 0);
    for (int a = 0; a < 3; a++)
    {
        EXPECT_NEAR(vFused(a, a), vSse(a, a), 1e-6 * std::abs(eSse));
    }
}

TEST(PmeSlabSpread, SameGridForEveryThreadCount)
{
    // the slab spread puts the contributions on each point in the same
    // order for every thread count, the transforms run the same lines and
    // the solve sums per ky: the whole result is bitwise the same
    const test::TestSystem s = test::loadTestSystem("water-spce-12k");
    std::vector<RVec>      f1, f2, f3;
    Matrix3                v1, v2, v3;
    const double           e1 = runPme(s, true, 1, f1, v1);
    const double           e2 = runPme(s, true, 2, f2, v2);
    const double           e3 = runPme(s, true, 3, f3, v3);
    ASSERT_GT(largestNorm(f1), 0);
    EXPECT_EQ(e2, e1);
    EXPECT_EQ(e3, e1);
    EXPECT_EQ(largestDifference(f2, f1), 0);
    EXPECT_EQ(largestDifference(f3, f1), 0);
}

/* Steps that report no energies: the solve multiplies by the stored
 * factors without summing the energy; the forces are those of a step with
 * the energy, bit for bit, and the energy comes back as 0. */
TEST(PmeEnergySteps, ForcesWithoutTheEnergyAreTheSame)
{
    const test::TestSystem s = test::loadTestSystem("water-spce-3k");
    Pme                    pme(pmeFor(s));
    pme.setNumThreads(2);
    const Box&        box = s.in.coordinates.box;
    std::vector<RVec> first(s.x.size()), withEnergy(s.x.size()), without(s.x.size());
    // the first call stores the influence factors for this box (a full solve)
    const double e0 = pme.compute(box, s.x, s.in.topology.charge, first, nullptr, true);
    const double e1 = pme.compute(box, s.x, s.in.topology.charge, withEnergy, nullptr, true);
    const double e2 = pme.compute(box, s.x, s.in.topology.charge, without, nullptr, false);
    ASSERT_GT(largestNorm(withEnergy), 0);
    EXPECT_NE(e1, 0);
    EXPECT_NEAR(e1, e0, 1e-6 * std::abs(e0));
    EXPECT_EQ(e2, 0);
    EXPECT_EQ(largestDifference(without, withEnergy), 0);
    // with a virial the energy is always summed
    Matrix3      vir;
    const double e3 = pme.compute(box, s.x, s.in.topology.charge, without, &vir, false);
    EXPECT_NEAR(e3, e0, 1e-6 * std::abs(e0));
}

/* SETTLE's vectorised blocks compute in float in this build (16 lanes);
 * the plain twin, one water at a time, in double. Perturbed waters of a
 * rectangular box (the blocks' own minimum image) and of a triclinic one
 * (the box's minimum image per vector) come out rigid and where the twin
 * puts them, within float roundings: positions within 2e-6 nm (the
 * coordinates' float spacing at 4 nm is 4.8e-7; measured 3e-7),
 * velocities within 2e-7 nm over dt (measured 3.3e-8 nm), the virial
 * within 1e-4 of its diagonal; as rigid as the twin's (float positions). */
TEST(Settle, FloatBlocksMatchTheDoublePlainTwin)
{
    for (const char* name : { "water-spce-3k", "peptide-amber-triclinic" })
    {
        const test::TestSystem s   = test::loadTestSystem(name);
        const Topology&        top = s.in.topology;
        ASSERT_GT(top.settles.size(), 100u) << name;
        std::vector<real> invMass(top.numAtoms);
        for (int a = 0; a < top.numAtoms; a++)
        {
            invMass[a] = top.mass[a] > 0 ? real(1 / top.mass[a]) : real(0);
        }
        const constraint_detail::AtomNames names(top);
        constraint_detail::SettleSet       set(top.settles, invMass, top.numAtoms, names);
        const Pbc                          pbc(s.in.coordinates.box);
        std::mt19937                       rng(11);
        std::uniform_real_distribution<double> u(-0.01, 0.01);
        std::vector<RVec>                  xp = s.x;
        for (RVec& p : xp)
        {
            p += RVec(real(u(rng)), real(u(rng)), real(u(rng)));
        }
        const double              dt    = 0.002;
        const test::SettleOutcome plain = test::settleOnce(set, false, s.x, xp, dt, pbc, names);
        const test::SettleOutcome fast  = test::settleOnce(set, true, s.x, xp, dt, pbc, names);
        const std::vector<RVec>&  xPlain = plain.x, &vPlain = plain.v, &xFast = fast.x, &vFast = fast.v;
        const Matrix3&            virPlain = plain.virial, &virFast = fast.virial;
        ASSERT_GT(set.maxRelativeDeviation(xp, pbc), 1e-2) << name;
        EXPECT_LT(set.maxRelativeDeviation(xFast, pbc), 2e-5) << name;
        double worstX = 0, worstV = 0;
        for (size_t i = 0; i < xp.size(); i++)
        {
            worstX = std::max(worstX, double(norm(xFast[i] - xPlain[i])));
            worstV = std::max(worstV, double(norm(vFast[i] - vPlain[i])));
        }
        EXPECT_LT(worstX, 2e-6) << name;
        EXPECT_LT(worstV, 2e-7 / dt) << name;
        double scale = 0;
        for (int r = 0; r < 3; r++)
        {
            scale = std::max(scale, std::abs(virPlain(r, r)));
        }
        ASSERT_GT(scale, 0) << name;
        for (int r = 0; r < 3; r++)
        {
            for (int c = 0; c < 3; c++)
            {
                EXPECT_NEAR(virFast(r, c), virPlain(r, c), 1e-4 * scale) << name << " " << r << c;
            }
        }
    }
}

TEST(ExclusionCorrections, SeriesMatchesErfAndExp)
{
    for (const char* name : { "rnase-amber-cubic", "water-spce-3k" })
    {
        const test::TestSystem s   = test::loadTestSystem(name);
        const InteractionConst ic  = makeInteractionConst(s.in.mdp);
        ASSERT_EQ(ic.coulombType, CoulombType::Pme);
        const Pbc              pbc(s.in.coordinates.box);
        const EwaldCorrection  series = EwaldCorrection::fit(ic.ewaldCoeff, ic.rcoulomb);
        std::vector<RVec>      fExact(s.x.size()), fSeries(s.x.size()), fThreads(s.x.size());
        Matrix3                vExact, vSeries, vThreads;
        const double eExact  = exclusionCorrections(s.in.topology, ic, pbc, s.x, fExact, &vExact, -1, 1, nullptr);
        const double eSeries = exclusionCorrections(s.in.topology, ic, pbc, s.x, fSeries, &vSeries, -1, 1, &series);
        const double eThreads = exclusionCorrections(s.in.topology, ic, pbc, s.x, fThreads, &vThreads, -1, 3, &series);
        const double fmax     = largestNorm(fExact);
        ASSERT_GT(fmax, 0) << name;
        // the series is within 5e-7 of the largest value of each function
        // (ewald_correction.h); summed over ~1e4-1e5 pairs in double
        EXPECT_NEAR(eSeries, eExact, 2e-6 * std::abs(eExact)) << name;
        EXPECT_LT(largestDifference(fSeries, fExact), 2e-5 * fmax) << name;
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                EXPECT_NEAR(vSeries(a, b), vExact(a, b), 1e-4 * std::abs(vExact(a, a)) + 1e-3) << name;
            }
        }
        EXPECT_NEAR(eThreads, eSeries, 1e-9 * std::abs(eSeries)) << name;
        EXPECT_LT(largestDifference(fThreads, fSeries), 1e-6 * fmax) << name;
        // the pair list made once (and the rectangular minimum image in
        // float) instead of the walk over the exclusion lists: the same
        const ExcludedPairList list = ExcludedPairList::make(s.in.topology, ic.epsfac);
        EXPECT_GT(list.i.size() + 3 * list.tripletFirst.size(), s.in.topology.settles.size());
        for (int threads : { 1, 3 })
        {
            std::vector<RVec> fList(s.x.size());
            Matrix3           vList;
            const double      eList = exclusionCorrections(s.in.topology, ic, pbc, s.x, fList, &vList, -1, threads, &series,
                                                           &list);
            EXPECT_NEAR(eList, eSeries, 1e-9 * std::abs(eSeries)) << name << " " << threads;
            EXPECT_LT(largestDifference(fList, fSeries), 1e-6 * fmax) << name << " " << threads;
            EXPECT_NEAR(vList(0, 0), vSeries(0, 0), 1e-6 * std::abs(vSeries(0, 0)) + 1e-6) << name;
            // without energies (steps that need none): the same forces and
            // virial, bit for bit, and only the self terms as the energy
            std::vector<RVec> fNoE(s.x.size());
            Matrix3           vNoE;
            const double      eNoE = exclusionCorrections(s.in.topology, ic, pbc, s.x, fNoE, &vNoE, -1, threads, &series,
                                                          &list, false);
            EXPECT_EQ(largestDifference(fNoE, fList), 0) << name << " " << threads;
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    EXPECT_EQ(vNoE(a, b), vList(a, b)) << name << " " << threads;
                }
            }
            const double self = -ic.epsfac * ic.ewaldCoeff / std::sqrt(M_PI) * list.chargeSquares;
            EXPECT_NEAR(eNoE, self, 1e-12 * std::abs(self)) << name << " " << threads;
            EXPECT_GT(std::abs(eList - self), 1e-3 * std::abs(self)) << "the pairs' energy is not negligible";
        }
    }
}

/* Three-atom molecules (rigid waters) computed together, over SIMD
 * registers, on steps without energies and virial
 * (exclusion_triplets_simd.h): the list finds every water and keeps every
 * other pair, and the forces are the batch's, bit for bit, on every
 * instruction set and thread count. */
TEST(ExclusionCorrections, WaterMoleculesTogetherGiveTheBatchsForces)
{
    for (const char* name : { "rnase-amber-cubic", "water-spce-3k" })
    {
        const test::TestSystem s  = test::loadTestSystem(name);
        const Topology&        top = s.in.topology;
        const InteractionConst ic = makeInteractionConst(s.in.mdp);
        const Pbc              pbc(s.in.coordinates.box);
        const EwaldCorrection  series = EwaldCorrection::fit(ic.ewaldCoeff, ic.rcoulomb);
        const ExcludedPairList list   = ExcludedPairList::make(top, ic.epsfac);
        // every SETTLE water is a molecule of three; no pair is lost
        EXPECT_EQ(list.tripletFirst.size(), top.settles.size()) << name;
        size_t charged = 0;
        for (int i = 0; i < top.numAtoms; i++)
        {
            for (int e = top.exclusionStart[i]; e < top.exclusionStart[i + 1]; e++)
            {
                const int j = top.exclusions[e];
                charged += j > i && top.charge[i] * top.charge[j] != 0;
            }
        }
        EXPECT_EQ(list.i.size() + 3 * list.tripletFirst.size(), charged) << name;
        // the molecules' atoms are in no other pair
        std::vector<char> inMolecule(top.numAtoms, 0);
        for (const int a : list.tripletFirst)
        {
            inMolecule[a] = inMolecule[a + 1] = inMolecule[a + 2] = 1;
        }
        for (size_t k = 0; k < list.i.size(); k++)
        {
            ASSERT_FALSE(inMolecule[list.i[k]] || inMolecule[list.j[k]]) << name << " pair " << k;
        }
        for (int threads : { 1, 2, 3 })
        {
            for (long long target : clusterKernelTargets())
            {
                restrictClusterKernelTarget(target);
                const std::string isa = clusterKernelTarget();
                std::vector<RVec> fBatch(s.x.size()), fTogether(s.x.size());
                Matrix3           vBatch;
                // with a virial: the batch for every pair
                exclusionCorrections(top, ic, pbc, s.x, fBatch, &vBatch, -1, threads, &series, &list, false);
                // forces only: the molecules together
                exclusionCorrections(top, ic, pbc, s.x, fTogether, nullptr, -1, threads, &series, &list, false);
                ASSERT_GT(largestNorm(fBatch), 0) << name;
                EXPECT_EQ(largestDifference(fTogether, fBatch), 0) << name << ", " << threads << " threads, " << isa;
            }
            restrictClusterKernelTarget(0);
        }
    }
}

/* The molecules' SIMD loop against its plain twin, on molecules placed at
 * random in a small box (pairs across its faces and beyond a short
 * cut-off, a gap between molecules, counts around the register widths):
 * the same bits where the instruction set has fused multiply-adds, within
 * float roundings elsewhere. */
TEST(TripletCorrectionsSimd, MatchesThePlainTwinOnEveryInstructionSet)
{
    const InteractionConst ic     = makeInteractionConst(test::loadTestSystem("water-spce-3k").in.mdp);
    const EwaldCorrection  series = EwaldCorrection::fit(ic.ewaldCoeff, ic.rcoulomb);
    std::mt19937           rng(7);
    std::uniform_real_distribution<float> u(0.0f, 2.0f), q(-1.0f, 1.0f);
    const int          numMolecules = 37;
    std::vector<int>   first(numMolecules);
    std::vector<float> x(3 * (4 * numMolecules)), qq(3 * numMolecules), f0(x.size());
    for (int m = 0; m < numMolecules; m++)
    {
        first[m] = 3 * m + (m > 20 ? 3 : 0); // a gap of one atom's worth
    }
    for (float& v : x)
    {
        v = u(rng);
    }
    for (float& v : qq)
    {
        v = 100 * q(rng);
    }
    for (float& v : f0)
    {
        v = q(rng);
    }
    TripletCorrectionInput in;
    in.x = x.data(), in.first = first.data(), in.qq = qq.data();
    for (int c = 0; c < 3; c++)
    {
        in.len[c] = 2.0f, in.inv[c] = 0.5f;
    }
    in.scale   = float(2 / series.smax);
    in.coef    = series.force.data();
    in.numCoef = int(series.force.size());
    // pairs on both sides of the cut-off below
    int beyond = 0, within = 0;
    for (int m = 0; m < numMolecules; m++)
    {
        for (const auto& [a, b] : { std::pair{ 0, 1 }, std::pair{ 0, 2 }, std::pair{ 1, 2 } })
        {
            double r2 = 0;
            for (int c = 0; c < 3; c++)
            {
                double dc = x[3 * (first[m] + a) + c] - x[3 * (first[m] + b) + c];
                dc -= 2.0 * std::round(dc / 2.0);
                r2 += dc * dc;
            }
            (r2 < 0.6 ? within : beyond)++;
        }
    }
    EXPECT_GT(beyond, 10);
    EXPECT_GT(within, 10);
    int checked = 0;
    for (const bool inclusive : { false, true })
    {
        in.rc2          = 0.6f; // some pairs beyond it (r^2 up to 3)
        in.rc2Inclusive = inclusive;
        for (int n : { 0, 1, 3, 4, 7, 8, 9, 16, 17, 37 })
        {
            in.begin = numMolecules - n, in.end = numMolecules;
            std::vector<float> plain = f0;
            in.f                     = plain.data();
            tripletCorrectionsReference(in);
            for (long long target : clusterKernelTargets())
            {
                restrictClusterKernelTarget(target);
                const std::string isa = clusterKernelTarget();
                std::vector<float> simd = f0;
                in.f                    = simd.data();
                tripletCorrectionsSimd(in);
                const bool fused = isa == "AVX2" || isa == "AVX3" || isa == "AVX3_ZEN4" || isa == "AVX3_DL";
                for (size_t k = 0; k < f0.size(); k++)
                {
                    const float tol = fused ? 0.0f : 1e-5f * (std::abs(plain[k]) + 1);
                    ASSERT_LE(std::abs(simd[k] - plain[k]), tol) << isa << ", " << n << " molecules, float " << k;
                }
                checked++;
            }
            restrictClusterKernelTarget(0);
        }
    }
    EXPECT_GT(checked, 10);
}

/* The listed forces' SIMD loops (listed_simd.h: bonds, angles, periodic
 * dihedrals, 1-4 pairs) against the plain loops of
 * listed.cpp, their twin, on every instruction set: the same bits for
 * every force and energy term, on proteins of four force fields (Amber's
 * several terms per dihedral and periodic impropers, CHARMM, OPLS-AA,
 * GROMOS), with every atom wrapped into the box after a shift by half of
 * it (bonded atoms across its faces). Each SIMD loop is also called alone
 * against a list of its type alone, so that a loop the dispatch never
 * reached would fail here. */
TEST(ListedSimd, MatchesThePlainLoopsBitForBitOnEveryInstructionSet)
{
    int checked = 0, withEach = 0;
    for (const char* name : { "rnase-amber-cubic", "peptide-charmm27-cubic", "peptide-oplsaa-cubic",
                              "peptide-gromos-cubic" })
    {
        test::TestSystem s   = test::loadTestSystem(name);
        const Box&       box = s.in.coordinates.box;
        ASSERT_FALSE(box.isTriclinic()) << name;
        for (auto& p : s.x)
        {
            for (int c = 0; c < 3; c++)
            {
                const real len = real(box.vectors()(c, c));
                p[c] += real(0.5) * len;
                p[c] -= len * std::floor(p[c] / len);
            }
        }
        const Pbc                 pbc(box);
        const ListedInteractions& l = s.in.topology.listed;
        ListedSimdBox             sb;
        for (int c = 0; c < 3; c++)
        {
            sb.len[c] = float(box.vectors()(c, c)), sb.inv[c] = float(box.inverse()(c, c));
        }
        ListedSettings            settings;
        settings.epsfac = 138.935458;
        auto run = [&](const ListedInteractions& list, bool simd, std::vector<RVec>& f, EnergyTerms& e) {
            allowListedSimd(simd);
            f.assign(s.x.size(), RVec());
            e = EnergyTerms();
            computeListed(list, settings, s.x, pbc, f, e, nullptr);
            allowListedSimd(true);
        };
        auto expectSame = [&](const std::vector<RVec>& a, const std::vector<RVec>& b, const EnergyTerms& ea,
                              const EnergyTerms& eb, const std::string& what) {
            int    differ  = 0;
            double largest = 0;
            for (size_t i = 0; i < a.size(); i++)
            {
                differ += a[i].x != b[i].x || a[i].y != b[i].y || a[i].z != b[i].z;
                largest = std::max(largest, double(norm(a[i])));
            }
            EXPECT_EQ(differ, 0) << what;
            EXPECT_GT(largest, 0) << what;
            for (int k = 0; k < numEnergyTerms; k++)
            {
                EXPECT_EQ(ea.present[k], eb.present[k]) << what << ", term " << k;
                EXPECT_EQ(ea.value[k], eb.value[k]) << what << ", term " << k;
            }
        };
        // each type alone through its SIMD function
        ListedInteractions dihedralsOnly, anglesOnly, pairsOnly, bondsOnly;
        bondsOnly.bonds                 = l.bonds;
        dihedralsOnly.properDihedrals   = l.properDihedrals;
        dihedralsOnly.periodicImpropers = l.periodicImpropers;
        anglesOnly.angles               = l.angles;
        pairsOnly.pairs                 = l.pairs;
        std::vector<RVec> plain, simd;
        EnergyTerms       ePlain, eSimd;
        withEach += !l.bonds.empty() && !l.angles.empty() && !l.properDihedrals.empty() && !l.pairs.empty();
        for (long long target : clusterKernelTargets())
        {
            restrictClusterKernelTarget(target);
            const std::string where = std::string(name) + " on " + clusterKernelTarget();
            run(l, false, plain, ePlain);
            run(l, true, simd, eSimd);
            expectSame(simd, plain, eSimd, ePlain, where + ", all listed");
            // one type through its SIMD function against the plain loops on
            // a list of that type alone; simdCall(x, f, e) adds forces and terms
            auto alone = [&](const ListedInteractions& only, const char* what, auto&& simdCall) {
                run(only, false, plain, ePlain);
                simd.assign(s.x.size(), RVec());
                eSimd = EnergyTerms();
                simdCall(&s.x.data()->x, &simd.data()->x, eSimd);
                expectSame(simd, plain, eSimd, ePlain, where + ", " + what + " alone");
            };
            if (!l.properDihedrals.empty())
            {
                ASSERT_TRUE(periodicDihedralsFitSimd(l.properDihedrals.data(), int(l.properDihedrals.size())));
                alone(dihedralsOnly, "dihedrals", [&](const float* xs, float* fs, EnergyTerms& e) {
                    e.add(EnergyTerm::ProperDih, periodicDihedralsSimd(l.properDihedrals.data(),
                                                                       int(l.properDihedrals.size()), xs, fs, sb));
                    const double ei = periodicDihedralsSimd(l.periodicImpropers.data(),
                                                            int(l.periodicImpropers.size()), xs, fs, sb);
                    if (!l.periodicImpropers.empty())
                    {
                        e.add(EnergyTerm::PerImpDih, ei);
                    }
                });
            }
            if (!l.angles.empty())
            {
                alone(anglesOnly, "angles", [&](const float* xs, float* fs, EnergyTerms& e) {
                    e.add(EnergyTerm::Angle, harmonicAnglesSimd(l.angles.data(), int(l.angles.size()), xs, fs, sb));
                });
            }
            if (!l.bonds.empty())
            {
                alone(bondsOnly, "bonds", [&](const float* xs, float* fs, EnergyTerms& e) {
                    e.add(EnergyTerm::Bond, harmonicBondsSimd(l.bonds.data(), int(l.bonds.size()), xs, fs, sb));
                });
            }
            if (!l.pairs.empty())
            {
                alone(pairsOnly, "pairs", [&](const float* xs, float* fs, EnergyTerms& e) {
                    double vlj = 0, vc = 0;
                    pairs14Simd(l.pairs.data(), int(l.pairs.size()), settings.epsfac, xs, fs, sb, &vlj, &vc);
                    e.add(EnergyTerm::LJ14, vlj);
                    e.add(EnergyTerm::Coulomb14, vc);
                });
            }
            checked++;
        }
        restrictClusterKernelTarget(0);
    }
    EXPECT_GE(checked, 4);
    EXPECT_GE(withEach, 1); // a system with every type the SIMD loops take
}

/* The series evaluation over SIMD registers (series_simd.h) against its
 * plain twin on every instruction set, at lengths around the register
 * widths (the zero-padded last points): the same bits where the set has
 * fused multiply-adds (AVX2, AVX-512), within a few float roundings on
 * SSE4 (a multiply and an add). */
TEST(SeriesSimd, MatchesThePlainHornerRuleOnEveryInstructionSet)
{
    const InteractionConst ic     = makeInteractionConst(test::loadTestSystem("water-spce-3k").in.mdp);
    const EwaldCorrection  series = EwaldCorrection::fit(ic.ewaldCoeff, ic.rcoulomb);
    ASSERT_GE(series.force.size(), 8u);
    std::vector<float> t(100);
    for (size_t k = 0; k < t.size(); k++)
    {
        t[k] = -1.0f + 2.0f * float(k) / float(t.size() - 1); // [-1, 1], both ends
    }
    int checked = 0;
    for (int n : { 0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100 })
    {
        std::vector<float> plain(n + 1, -7.0f);
        evaluateSeriesReference(series.force.data(), int(series.force.size()), t.data(), n, plain.data());
        for (long long target : clusterKernelTargets())
        {
            restrictClusterKernelTarget(target);
            const std::string name = clusterKernelTarget();
            std::vector<float> simd(n + 1, -7.0f);
            evaluateSeriesSimd(series.force.data(), int(series.force.size()), t.data(), n, simd.data());
            EXPECT_EQ(simd[n], -7.0f) << name << ": wrote past n = " << n;
            for (int k = 0; k < n; k++)
            {
                const float tol = (name == "AVX2" || name == "AVX3" || name == "AVX3_ZEN4" || name == "AVX3_DL")
                                          ? 0.0f
                                          : 1e-6f * std::abs(plain[k]) + 1e-9f;
                ASSERT_LE(std::abs(simd[k] - plain[k]), tol) << name << ", n " << n << ", point " << k;
            }
            checked++;
        }
        restrictClusterKernelTarget(0);
    }
    EXPECT_GT(checked, 15);
    // and the plain rule is the fitted function (ewald_correction.h)
    for (int k = 0; k <= 10; k++)
    {
        const float s  = float(series.smax * k / 10);
        const float tk = float(2 / series.smax) * s - 1; // as evaluateForce maps s
        float       v  = 0;
        evaluateSeriesReference(series.force.data(), int(series.force.size()), &tk, 1, &v);
        EXPECT_EQ(v, series.evaluateForce(s)) << k;
    }
}

/* Two transforms' spectra of the same data agree to float roundings:
 * within 1e-5 of the largest point (which must be well above zero). */
void expectSpectraAgree(Fft3d& ref, Fft3d& other, const int n[3])
{
    const size_t nc    = size_t(n[0]) * n[1] * ref.complexNz();
    double       worst = 0, largest = 0;
    for (size_t k = 0; k < nc; k++)
    {
        worst   = std::max(worst, double(std::abs(ref.complexData()[k] - other.complexData()[k])));
        largest = std::max(largest, double(std::abs(ref.complexData()[k])));
    }
    EXPECT_GT(largest, 1);
    EXPECT_LT(worst, 1e-5 * largest);
}

TEST(Fft3dPlanning, MeasuredPlansGiveTheEstimatedTransform)
{
    const int n[3] = { 24, 20, 18 };
    Fft3d     est(n[0], n[1], n[2], FftPlanning::Estimate);
    Fft3d     mea(n[0], n[1], n[2], FftPlanning::Measure);
    EXPECT_EQ(mea.planning(), FftPlanning::Measure);
    const size_t np = size_t(n[0]) * n[1] * n[2];
    for (size_t i = 0; i < np; i++)
    {
        est.realData()[i] = mea.realData()[i] = real(std::sin(0.37 * i) + 0.1 * (i % 7));
    }
    est.forward();
    mea.forward();
    expectSpectraAgree(est, mea, n);
}

/* Rows with a halo (PME's grid): a value put past a row's end counts as
 * the row's first points (forward), and the backward transform copies the
 * first points out to the halo; the transforms themselves are those of
 * the grid without a halo. convolve() and forward()/backward() alike. */
TEST(Fft3dHalo, HaloPointsWrapOntoTheRowsStartAndAreFilledBack)
{
    const int n[3] = { 12, 10, 14 };
    const int halo = 3;
    for (bool lines : { false, true })
    {
        Fft3d plain(n[0], n[1], n[2], FftPlanning::Estimate);
        Fft3d haloed(n[0], n[1], n[2], FftPlanning::Estimate, halo);
        ASSERT_EQ(haloed.rowStride(), 20); // 14 + 3, rounded up to 4
        ASSERT_EQ(plain.rowStride(), n[2]);
        for (int r = 0; r < n[0] * n[1]; r++)
        {
            for (int z = 0; z < n[2]; z++)
            {
                const real v = real(std::sin(0.37 * (r * n[2] + z)) + 0.1 * (z % 5));
                plain.realData()[size_t(r) * n[2] + z] = v;
                // the first halo points' share of the value past the row's end
                real* row = haloed.realData() + size_t(r) * haloed.rowStride();
                if (z < halo)
                {
                    row[z]        = real(0.25) * v;
                    row[n[2] + z] = v - real(0.25) * v;
                }
                else
                {
                    row[z] = v;
                }
            }
        }
        if (lines)
        {
            // the round trip with nothing between (the result: the grid
            // times the number of points)
            const auto nothing = [](int, int, std::complex<real>*) {};
            plain.convolve(1, nothing);
            haloed.convolve(2, nothing);
        }
        else
        {
            plain.forward();
            haloed.forward();
            expectSpectraAgree(plain, haloed, n);
            plain.backward();
            haloed.backward();
        }
        double worst = 0, largest = 0;
        for (int r = 0; r < n[0] * n[1]; r++)
        {
            const real* row = haloed.realData() + size_t(r) * haloed.rowStride();
            for (int z = 0; z < n[2]; z++)
            {
                const double p = plain.realData()[size_t(r) * n[2] + z];
                worst          = std::max(worst, std::abs(p - row[z]));
                largest        = std::max(largest, std::abs(p));
            }
            for (int z = 0; z < halo; z++)
            {
                EXPECT_EQ(row[n[2] + z], row[z]) << "row " << r << " halo point " << z << (lines ? " (convolve)" : "");
            }
        }
        EXPECT_GT(largest, 1);
        EXPECT_LT(worst, 1e-5 * largest) << (lines ? "convolve" : "forward/backward");
    }
    EXPECT_THROW(Fft3d(8, 8, 8, FftPlanning::Estimate, 9), std::invalid_argument);
}

TEST(Fft3dPlanning, MeasuredPlansAreRecordedAndReusedBitwise)
{
    const int n[3] = { 20, 18, 16 };
    auto      transform = [&]() {
        Fft3d f(n[0], n[1], n[2], FftPlanning::Measure);
        f.setNumThreads(1);
        for (int i = 0; i < n[0] * n[1] * n[2]; i++)
        {
            f.realData()[i] = real(std::cos(0.21 * i));
        }
        f.forward();
        return std::vector<std::complex<real>>(f.complexData(), f.complexData() + n[0] * n[1] * f.complexNz());
    };
    const auto        first  = transform();
    const std::string record = chosenFftPlans();
    EXPECT_NE(record.find("20 18 16 1 "), std::string::npos) << record.substr(0, 200);
    // the same size again in this process: the recorded plans, bitwise
    EXPECT_EQ(transform(), first);
    // a record read back (as from a checkpoint) is taken; garbage is not
    EXPECT_TRUE(useFftPlans(record));
    EXPECT_EQ(chosenFftPlans(), record);
    EXPECT_EQ(transform(), first);
    EXPECT_FALSE(useFftPlans("20 18 16 1 999999\n(short)"));
    EXPECT_FALSE(useFftPlans("not a record"));
    EXPECT_TRUE(useFftPlans(""));
}

TEST(Fft3dPlanning, EnvironmentChoosesAndBadValuesAreNamed)
{
    ::unsetenv("PUTMD_FFTW_PLAN");
    EXPECT_EQ(fftPlanningFromEnvironment(), FftPlanning::Measure);
    ::setenv("PUTMD_FFTW_PLAN", "estimate", 1);
    EXPECT_EQ(fftPlanningFromEnvironment(), FftPlanning::Estimate);
    ::setenv("PUTMD_FFTW_PLAN", "patient", 1);
    try
    {
        fftPlanningFromEnvironment();
        ADD_FAILURE() << "no error for PUTMD_FFTW_PLAN=patient";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("'patient'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("estimate"), std::string::npos) << e.what();
    }
    ::unsetenv("PUTMD_FFTW_PLAN");
}

TEST(TransposeCopy, MatchesTheElementCopyForEveryPairOfLayouts)
{
    // every storage order of source and destination (6 x 6), boxes whose
    // sides are not multiples of 4 and span several 32-point tiles, a
    // sub-box with offsets in both arrays: every point copied once to its
    // place, nothing else touched
    const std::array<std::array<int, 3>, 6> orders = {
        { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } }
    };
    fft::Layout src, dst;
    src.box = { { 1, 2, 0 }, { 7, 38, 37 } };
    dst.box = { { 0, 1, 1 }, { 9, 41, 36 } };
    const fft::Box box = { { 2, 3, 1 }, { 5, 35, 34 } };
    std::vector<std::complex<real>> a(src.box.volume());
    for (size_t i = 0; i < a.size(); i++)
    {
        a[i] = { real(i), -real(i) - real(0.5) };
    }
    for (auto so : orders)
    {
        for (auto dord : orders)
        {
            src.order = so;
            dst.order = dord;
            const auto ss = src.strides(), ds = dst.strides();
            std::vector<std::complex<real>> b(dst.box.volume(), { real(-1), real(-1) });
            fft::copyBox(a.data(), src, b.data(), dst, box);
            long wrong = 0, touched = 0;
            std::vector<char> inside(b.size(), 0);
            for (int x = box.start[0]; x < box.start[0] + box.size[0]; x++)
            {
                for (int y = box.start[1]; y < box.start[1] + box.size[1]; y++)
                {
                    for (int z = box.start[2]; z < box.start[2] + box.size[2]; z++)
                    {
                        const long si = (x - src.box.start[0]) * ss[0] + (y - src.box.start[1]) * ss[1]
                                        + (z - src.box.start[2]) * ss[2];
                        const long di = (x - dst.box.start[0]) * ds[0] + (y - dst.box.start[1]) * ds[1]
                                        + (z - dst.box.start[2]) * ds[2];
                        wrong += b[di] != a[si];
                        inside[di] = 1;
                    }
                }
            }
            for (size_t i = 0; i < b.size(); i++)
            {
                touched += !inside[i] && b[i] != std::complex<real>(real(-1), real(-1));
            }
            EXPECT_EQ(wrong, 0) << "orders " << so[0] << so[1] << so[2] << " -> " << dord[0] << dord[1] << dord[2];
            EXPECT_EQ(touched, 0) << "orders " << so[0] << so[1] << so[2] << " -> " << dord[0] << dord[1] << dord[2];
        }
    }
}


// choosePruning stops trying longer prune intervals once the inner radius's
// own term reaches the best cost found (the radius grows with the
// interval); its choice must be the one trying every interval gives
TEST(DynamicPruning, TheSearchStopsEarlyAndChoosesWhatTryingEveryIntervalChooses)
{
    for (const std::string name : { "rnase-amber-cubic", "water-spce-12k" })
    {
        SCOPED_TRACE(name);
        const std::string dir = std::string(PUTMD_TEST_DATA) + "/systems/" + name;
        InputPaths        paths;
        paths.topology    = dir + "/topol.top";
        paths.coordinates = dir + "/conf.gro";
        paths.mdp         = dir + "/md.mdp";
        const SystemInputs in = loadSystem(paths);
        std::vector<RVec>  v(in.coordinates.v.begin(), in.coordinates.v.end());
        v.resize(in.coordinates.x.size());
        MdSettings s = prepareMd(in.topology, in.mdp, topologyConstraintDof(in.topology), in.coordinates.box, v);
        choosePruning(s, in.topology, in.mdp, in.coordinates.box);
        ASSERT_GT(s.nstlist, 2);
        auto              cube = [](double r) { return (r + 0.3) * (r + 0.3) * (r + 0.3); };
        const PairListSetup innerSetup{ clusterKernelPruneRows(), 4 };
        double            bestCost  = cube(s.rlist);
        int               bestN     = 0;
        double            bestInner = 0;
        for (int n = 2; n < s.nstlist; n++)
        {
            const double inner = estimateRlist(in.topology, in.mdp, in.coordinates.box, n, s.bufferTemperature, innerSetup);
            const double cost  = cube(inner) + 0.4 * cube(s.rlist) / n;
            if (inner < s.rlist && cost < bestCost)
            {
                bestCost  = cost;
                bestN     = n;
                bestInner = inner;
            }
        }
        EXPECT_GT(bestN, 0) << "these systems prune";
        EXPECT_EQ(s.nstlistPrune, bestN);
        EXPECT_EQ(s.rlistInner, bestInner);
    }
}

} // namespace
} // namespace putmd
