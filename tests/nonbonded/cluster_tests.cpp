/* The cluster-pair scheme (mixed-precision build): the plain cluster kernel
 * against the cell-grid reference kernel (so the cluster search finds every
 * pair and masks every exclusion), every SIMD kernel flavour on every
 * instruction set this CPU has against the plain kernel, the Ewald series,
 * combination-rule detection, threads, the virial, explicit pair lists (the
 * domain decomposition's) and the overlap error. */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nonbonded/cell_grid.h"
#include "nonbonded/cluster_grid.h"
#include "nonbonded/cluster_nonbonded.h"
#include "nonbonded/cluster_pair_list.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/pair_list.h"
#include "nonbonded/reference_kernel.h"
#include "run/system_inputs.h"
#include "../unit/test_helpers.h"

namespace putmd
{
namespace
{

using System = test::TestSystem;

System load(const std::string& name)
{
    return test::loadTestSystem(name);
}

struct Result
{
    std::vector<Vec3<real>> f;
    EnergyTerms             e;
    Matrix3                 virial;
};

Result run(ClusterNonbonded& nb, const System& s, const InteractionConst& ic, bool build = true)
{
    Result r;
    r.f.assign(s.x.size(), Vec3<real>());
    if (build)
    {
        nb.build(s.in.topology, s.in.coordinates.box, s.x, ic.rmax + 0.1);
    }
    nb.compute(s.in.topology, ic, s.in.coordinates.box, s.x, r.f, r.e, &r.virial);
    return r;
}

/* Largest force difference relative to the largest force. */
double forceDifference(const std::vector<Vec3<real>>& a, const std::vector<Vec3<real>>& b)
{
    double worst = 0, largest = 0;
    for (size_t i = 0; i < a.size(); i++)
    {
        worst   = std::max(worst, double(norm(a[i] - b[i])));
        largest = std::max(largest, double(norm(b[i])));
    }
    return worst / largest;
}

void expectClose(const Result& a, const Result& b, double forceTol, double energyTol, const std::string& what)
{
    EXPECT_LT(forceDifference(a.f, b.f), forceTol) << what;
    for (EnergyTerm t : { EnergyTerm::LJSR, EnergyTerm::CoulombSR })
    {
        EXPECT_NEAR(a.e[t], b.e[t], energyTol * (std::abs(b.e[t]) + 1)) << what << " " << int(t);
    }
}

/* water-slab-12k: half the box at a tenth of the density, so some grid
 * columns hold one cluster that spans the box in z and interacts with its
 * own periodic image (a pair of it was lost before the search kept one of
 * the two opposite image entries of a cluster with itself). */
TEST(ClusterNonbonded, PlainKernelMatchesTheCellGridReference)
{
    for (const char* name : { "water-spce-3k", "peptide-amber-triclinic", "water-slab-12k" })
    {
        const System           s  = load(name);
        const InteractionConst ic = makeInteractionConst(s.in.mdp);
        Result                 ref;
        ref.f.assign(s.x.size(), Vec3<real>());
        computeNonbondedReference(s.in.topology, ic, s.in.coordinates.box, s.x, ref.f, ref.e);
        ClusterNonbonded nb;
        nb.setKernel(ClusterKernelKind::Reference);
        const Result r = run(nb, s, ic);
        // single-precision coordinates and forces on both sides
        expectClose(r, ref, 2e-5, 2e-6, name);
        EXPECT_GT(nb.numClusterPairs(), 0u);
    }
}

TEST(ClusterKernelSimd, MatchesThePlainKernelForEveryFlavourAndInstructionSet)
{
    struct Flavour
    {
        const char*         name;
        CoulombType         coulomb;
        InteractionModifier vdw;
        double              rvdw;
    };
    const Flavour flavours[] = {
        { "PME, potential-shift", CoulombType::Pme, InteractionModifier::PotentialShift, 1.0 },
        { "PME, force-switch", CoulombType::Pme, InteractionModifier::ForceSwitch, 1.0 },
        { "PME, no modifier, rvdw 0.9", CoulombType::Pme, InteractionModifier::None, 0.9 },
        { "reaction-field, potential-shift", CoulombType::ReactionField, InteractionModifier::PotentialShift, 1.0 },
        { "reaction-field, force-switch, rvdw 0.9", CoulombType::ReactionField, InteractionModifier::ForceSwitch, 0.9 },
        { "plain cut-off, potential-shift", CoulombType::Cutoff, InteractionModifier::PotentialShift, 1.0 },
    };
    const std::vector<long long> targets = clusterKernelTargets();
    ASSERT_FALSE(targets.empty());
    for (const char* name : { "water-spce-3k", "peptide-amber-triclinic" })
    {
        System s = load(name);
        for (const Flavour& fl : flavours)
        {
            s.in.mdp.coulombType = fl.coulomb;
            s.in.mdp.vdwModifier = fl.vdw;
            s.in.mdp.rvdw        = fl.rvdw;
            s.in.mdp.rvdwSwitch  = 0.8;
            s.in.mdp.epsilonRf   = 0;
            const InteractionConst ic = makeInteractionConst(s.in.mdp);
            ClusterNonbonded       plain;
            plain.setKernel(ClusterKernelKind::Reference);
            const Result ref = run(plain, s, ic);
            for (bool matrix : { false, true })
            {
                for (long long target : targets)
                {
                    restrictClusterKernelTarget(target);
                    for (bool energies : { true, false })
                    {
                        ClusterNonbonded simd;
                        simd.setForceMatrixLj(matrix);
                        simd.setEnergiesOnlyWithVirial(true);
                        Result r;
                        r.f.assign(s.x.size(), Vec3<real>());
                        simd.build(s.in.topology, s.in.coordinates.box, s.x, ic.rmax + 0.1);
                        simd.compute(s.in.topology, ic, s.in.coordinates.box, s.x, r.f, r.e, energies ? &r.virial : nullptr);
                        const std::string what = std::string(name) + ", " + fl.name + ", " + clusterKernelTarget()
                                                 + (matrix ? ", C6/C12 matrix" : ", combination rule")
                                                 + (energies ? ", energies" : ", forces only");
                        EXPECT_LT(forceDifference(r.f, ref.f), 2e-5) << what;
                        if (energies)
                        {
                            for (EnergyTerm t : { EnergyTerm::LJSR, EnergyTerm::CoulombSR })
                            {
                                EXPECT_NEAR(r.e[t], ref.e[t], 2e-6 * (std::abs(ref.e[t]) + 1)) << what;
                            }
                            for (int a = 0; a < 3; a++)
                            {
                                EXPECT_NEAR(r.virial(a, a), ref.virial(a, a), 1e-4 * (std::abs(ref.virial(a, a)) + 10)) << what;
                            }
                        }
                        else
                        {
                            EXPECT_FALSE(r.e.present[static_cast<int>(EnergyTerm::LJSR)]) << what;
                        }
                    }
                }
                restrictClusterKernelTarget(0);
            }
        }
    }
}

TEST(ClusterNonbonded, CombinationRulesAreDetected)
{
    std::vector<float> a, b;
    EXPECT_EQ(detectCombinationRule(load("water-spce-3k").in.topology, &a, &b), ClusterLjComb::Geometric);
    EXPECT_EQ(detectCombinationRule(load("peptide-amber-triclinic").in.topology, &a, &b), ClusterLjComb::LorentzBerthelot);
    Topology top = load("peptide-amber-triclinic").in.topology;
    ASSERT_GT(top.numLjTypes, 1);
    top.c6[1] *= 1.01; // a pair parameter that follows no rule
    top.c6[top.numLjTypes] = top.c6[1];
    EXPECT_EQ(detectCombinationRule(top, &a, &b), ClusterLjComb::Matrix);
}

TEST(ClusterNonbonded, ThreadsGiveReproducibleResultsAndTheVirialOfThePairList)
{
    const System           s  = load("peptide-amber-triclinic");
    const InteractionConst ic = makeInteractionConst(s.in.mdp);
    PairList               atomList;
    atomList.build(s.in.topology, s.in.coordinates.box, s.x, ic.rmax + 0.1);
    Result pl;
    pl.f.assign(s.x.size(), Vec3<real>());
    atomList.compute(s.in.topology, ic, s.in.coordinates.box, s.x, pl.f, pl.e, &pl.virial);
    size_t clusterPairsOneThread = 0;
    for (int threads : { 1, 2, 3 })
    {
        ClusterNonbonded nb;
        nb.setNumThreads(threads);
        const Result a = run(nb, s, ic);
        const Result b = run(nb, s, ic);
        // the threaded search finds the same list
        if (threads == 1)
        {
            clusterPairsOneThread = nb.numClusterPairs();
        }
        EXPECT_EQ(nb.numClusterPairs(), clusterPairsOneThread) << threads << " threads";
        EXPECT_EQ(forceDifference(a.f, b.f), 0.0) << threads << " threads";
        EXPECT_EQ(a.e[EnergyTerm::CoulombSR], b.e[EnergyTerm::CoulombSR]);
        // two single-precision kernels (the pair list tabulates erfc)
        expectClose(a, pl, 5e-5, 2e-6, std::to_string(threads) + " threads against the atom-pair list");
        double scale = 0;
        for (int x = 0; x < 3; x++)
        {
            scale = std::max(scale, std::abs(pl.virial(x, x)));
        }
        for (int x = 0; x < 3; x++)
        {
            for (int y = 0; y < 3; y++)
            {
                // the cluster kernel's virial is sum x (x) F plus shift terms, in
                // float forces: within 1e-4 of the virial's scale
                EXPECT_NEAR(a.virial(x, y), pl.virial(x, y), 1e-4 * scale) << x << y;
            }
        }
    }
}

TEST(ClusterPairList, PartitionPutsUnflaggedJClustersFirstInOrder)
{
    const System s = load("water-spce-3k");
    ClusterGrid  grid;
    grid.build(s.in.coordinates.box, s.x, true);
    ClusterPairList list;
    list.search(grid, s.in.coordinates.box, 1.1, s.in.topology, true, 2);
    const std::vector<ClusterPairI> iBefore = list.iEntries();
    const std::vector<ClusterPairJ> jBefore = list.jEntries();
    std::vector<uint8_t>            flag(grid.numClusters());
    for (size_t c = 0; c < flag.size(); c++)
    {
        flag[c] = c % 3 == 1 ? 0 : 1;
    }
    list.partitionJ(flag, 3);
    ASSERT_EQ(list.iEntries().size(), iBefore.size());
    const auto& j     = list.jEntries();
    int         moved = 0;
    for (size_t ie = 0; ie < iBefore.size(); ie++)
    {
        // expected: the unflagged entries in their order, then the flagged
        std::vector<std::pair<int, uint32_t>> expect, got;
        for (int pass : { 0, 1 })
        {
            for (int k = iBefore[ie].jBegin; k < iBefore[ie].jEnd; k++)
            {
                if (flag[jBefore[k].cj] == pass)
                {
                    expect.push_back({ jBefore[k].cj, jBefore[k].mask });
                }
            }
        }
        for (int k = iBefore[ie].jBegin; k < iBefore[ie].jEnd; k++)
        {
            got.push_back({ j[k].cj, j[k].mask });
            moved += j[k].cj != jBefore[k].cj;
        }
        ASSERT_EQ(got, expect) << "i-entry " << ie;
    }
    EXPECT_GT(moved, 0);
}

/* The grid built by threads (a counting sort into columns, each column
 * sorted by z on some thread) is the grid of one thread, and its columns
 * hold their atoms by z, ties in index order; the pair list searched by
 * threads (twice: a search reuses the last one's storage) is the list of
 * one thread. */
TEST(ClusterGrid, ThreadsBuildTheSameGridAndSearchTheSameList)
{
    const System s   = load("water-spce-3k");
    const Box&   box = s.in.coordinates.box;
    std::vector<uint8_t> lead(s.x.size());
    for (size_t a = 0; a < lead.size(); a++)
    {
        lead[a] = a % 3 == 0;
    }
    for (const uint8_t* leading : { static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(lead.data()) })
    {
        ClusterGrid one, three;
        one.build(box, s.x, true, -1, leading, 1);
        three.build(box, s.x, true, -1, leading, 3);
        ASSERT_EQ(three.numClusters(), one.numClusters());
        EXPECT_EQ(three.atomOfSlot(), one.atomOfSlot());
        EXPECT_EQ(three.slotOfAtom(), one.slotOfAtom());
        EXPECT_EQ(three.wrapOfSlot(), one.wrapOfSlot());
        EXPECT_EQ(three.columnStart(), one.columnStart());
        for (int c = 0; c < one.numClusters(); c++)
        {
            for (int d = 0; d < 3; d++)
            {
                ASSERT_EQ(three.boxes()[c].lower[d], one.boxes()[c].lower[d]);
                ASSERT_EQ(three.boxes()[c].upper[d], one.boxes()[c].upper[d]);
            }
        }
        if (leading)
        {
            continue;
        }
        // without flags: each column's atoms by z, ties by index
        auto z = [&](int a) {
            DVec f = box.toFractional(DVec(s.x[a]));
            for (int d = 0; d < 3; d++)
            {
                f[d] -= std::floor(f[d]);
            }
            return Vec3<float>(box.fromFractional(f)).z;
        };
        const auto& start = three.columnStart();
        for (size_t col = 0; col + 1 < start.size(); col++)
        {
            int previous = -1;
            for (int slot = start[col] * c_clusterSize; slot < start[col + 1] * c_clusterSize; slot++)
            {
                const int a = three.atomOfSlot()[slot];
                if (a < 0)
                {
                    continue;
                }
                if (previous >= 0)
                {
                    ASSERT_TRUE(z(previous) < z(a) || (z(previous) == z(a) && previous < a)) << "column " << col;
                }
                previous = a;
            }
        }
    }
    // three searches each: the later ones split the i-clusters by the last
    // list's entries (the third on a grid of moved atoms, whose clusters
    // differ from the last list's); two threads with a spare room lent for
    // the second thread, as ClusterNonbonded lends its stale pruned list
    ClusterGrid grid, moved;
    grid.build(box, s.x, true, -1, nullptr, 1);
    std::vector<Vec3<real>> x2 = s.x;
    for (size_t a = 0; a < x2.size(); a++)
    {
        x2[a] += Vec3<real>(real(0.03 * std::sin(0.7 * a)), real(0.03 * std::cos(1.3 * a)), real(0.02 * std::sin(2.1 * a)));
    }
    moved.build(box, x2, true, -1, nullptr, 1);
    ClusterPairList           listOne, listTwo, listThree;
    std::vector<ClusterPairJ> spare;
    const ClusterPairJ*       lent = nullptr;
    for (int search = 0; search < 3; search++)
    {
        const ClusterGrid& g = search < 2 ? grid : moved;
        listOne.search(g, box, 1.1, s.in.topology, true, 1);
        listTwo.search(g, box, 1.1, s.in.topology, true, 2, nullptr, &spare);
        listThree.search(g, box, 1.1, s.in.topology, true, 3);
        // the second thread's room comes back to the caller; the same list
        // again fits in it (no new block)
        ASSERT_GT(spare.capacity(), 0u) << "search " << search;
        if (search == 1)
        {
            EXPECT_EQ(spare.data(), lent) << "the same room lent again";
        }
        lent = spare.data();
        for (const ClusterPairList* other : { &listTwo, &listThree })
        {
            ASSERT_EQ(other->iEntries().size(), listOne.iEntries().size()) << "search " << search;
            ASSERT_EQ(other->jEntries().size(), listOne.jEntries().size()) << "search " << search;
            for (size_t ie = 0; ie < listOne.iEntries().size(); ie++)
            {
                const ClusterPairI &a = listOne.iEntries()[ie], &b = other->iEntries()[ie];
                ASSERT_TRUE(a.ci == b.ci && a.shift == b.shift && a.jBegin == b.jBegin && a.jEnd == b.jEnd)
                        << "search " << search << " i-entry " << ie;
            }
            for (size_t k = 0; k < listOne.jEntries().size(); k++)
            {
                ASSERT_EQ(other->jEntries()[k].cj, listOne.jEntries()[k].cj) << "search " << search;
                ASSERT_EQ(other->jEntries()[k].mask, listOne.jEntries()[k].mask) << "search " << search;
            }
        }
    }
}

/* With the kernels' Lennard-Jones flags, a cluster keeps its atoms and box;
 * a full cluster's halves (slots 0-1, 2-3) are the pairing of its four
 * atoms with the fewest halves holding a flagged atom and, among those, the
 * most compact; a flagged atom comes first. */
TEST(ClusterGrid, FlaggedAtomsTakeFewestHalvesTheMostCompactOnesAndKeepTheirCluster)
{
    const System s = load("water-spce-3k");
    const Box&   box = s.in.coordinates.box;
    ClusterGrid  plain, led;
    plain.build(box, s.x, true);
    // the oxygens (every third atom), as the kernels' Lennard-Jones atoms
    std::vector<uint8_t> lead(s.x.size());
    for (size_t a = 0; a < lead.size(); a++)
    {
        lead[a] = a % 3 == 0;
    }
    led.build(box, s.x, true, -1, lead.data());
    ASSERT_EQ(led.numClusters(), plain.numClusters());
    // the grid's own wrapped coordinates (the same float operations)
    auto wrapped = [&](int a) {
        DVec f = box.toFractional(DVec(s.x[a]));
        for (int d = 0; d < 3; d++)
        {
            f[d] -= std::floor(f[d]);
        }
        return Vec3<float>(box.fromFractional(f));
    };
    auto spread = [&](int a, int b, int c, int d) {
        return norm2(wrapped(a) - wrapped(b)) + norm2(wrapped(c) - wrapped(d));
    };
    int fewerFlaggedHalves = 0, moreCompact = 0;
    for (int c = 0; c < plain.numClusters(); c++)
    {
        std::vector<int> before, after;
        for (int k = 0; k < c_clusterSize; k++)
        {
            const int p = plain.atomOfSlot()[c * c_clusterSize + k], a = led.atomOfSlot()[c * c_clusterSize + k];
            if (p >= 0)
            {
                before.push_back(p);
            }
            if (a >= 0)
            {
                after.push_back(a);
                ASSERT_EQ(led.slotOfAtom()[a], c * c_clusterSize + k);
            }
        }
        ASSERT_TRUE(std::is_permutation(before.begin(), before.end(), after.begin(), after.end())) << "cluster " << c;
        for (int d = 0; d < 3; d++)
        {
            ASSERT_EQ(led.boxes()[c].lower[d], plain.boxes()[c].lower[d]);
            ASSERT_EQ(led.boxes()[c].upper[d], plain.boxes()[c].upper[d]);
        }
        const bool anyFlagged = std::any_of(after.begin(), after.end(), [&](int a) { return lead[a] != 0; });
        if (anyFlagged)
        {
            EXPECT_TRUE(lead[after[0]]) << "cluster " << c << ": no flagged atom first";
        }
        if (after.size() < size_t(c_clusterSize))
        {
            // a column's last, partial cluster: flagged atoms first, z order kept
            std::vector<int> expect;
            for (int pass : { 1, 0 })
            {
                for (int a : before)
                {
                    if (lead[a] == pass)
                    {
                        expect.push_back(a);
                    }
                }
            }
            EXPECT_EQ(after, expect) << "cluster " << c;
            continue;
        }
        auto flaggedHalves = [&](int a, int b, int c2, int d) {
            return int(lead[a] || lead[b]) + int(lead[c2] || lead[d]);
        };
        const int*  q = after.data();
        const int   got = flaggedHalves(q[0], q[1], q[2], q[3]);
        const float gotSpread = spread(q[0], q[1], q[2], q[3]);
        const int   pairings[3][4] = { { 0, 1, 2, 3 }, { 0, 2, 1, 3 }, { 0, 3, 1, 2 } };
        for (const auto& h : pairings)
        {
            const int other = flaggedHalves(q[h[0]], q[h[1]], q[h[2]], q[h[3]]);
            EXPECT_LE(got, other) << "cluster " << c;
            if (other == got)
            {
                EXPECT_LE(gotSpread, spread(q[h[0]], q[h[1]], q[h[2]], q[h[3]])) << "cluster " << c;
            }
        }
        // what the z order's halves had
        const int* z = before.data();
        fewerFlaggedHalves += got < flaggedHalves(z[0], z[1], z[2], z[3]);
        moreCompact += got == flaggedHalves(z[0], z[1], z[2], z[3]) && gotSpread < spread(z[0], z[1], z[2], z[3]);
    }
    EXPECT_GT(fewerFlaggedHalves, 0) << "no cluster had its flagged atoms in more halves than needed";
    EXPECT_GT(moreCompact, 0) << "no cluster's halves were made more compact";
}

TEST(ClusterNonbonded, ExplicitPairListsGiveTheSameForcesAsThePairList)
{
    // the domain decomposition's lists: explicit images, no shifts. Here
    // the pairs of the 3k water box that need no shift.
    const System           s  = load("water-spce-3k");
    const InteractionConst ic = makeInteractionConst(s.in.mdp);
    const Topology&        top = s.in.topology;
    std::vector<std::vector<int>> perAtom(s.x.size());
    CellGrid(s.in.coordinates.box, s.x, ic.rmax + 0.1)
            .forEachPairWithShift([&](int i, int j, const Vec3<real>&, real, const std::array<int, 3>& k) {
                const bool excluded = std::binary_search(top.exclusions.begin() + top.exclusionStart[i],
                                                         top.exclusions.begin() + top.exclusionStart[i + 1], j);
                if (!excluded && k[0] == 0 && k[1] == 0 && k[2] == 0)
                {
                    perAtom[i].push_back(j);
                }
            });
    std::vector<int> start{ 0 }, js;
    for (const auto& l : perAtom)
    {
        js.insert(js.end(), l.begin(), l.end());
        start.push_back(static_cast<int>(js.size()));
    }
    ASSERT_GT(js.size(), 1000u);
    PairList atomList;
    atomList.setPairs(start, js, ic.rmax + 0.1);
    ClusterNonbonded nb;
    nb.setPairs(start, js, ic.rmax + 0.1);
    Result pl, r;
    pl.f.assign(s.x.size(), Vec3<real>());
    atomList.compute(top, ic, s.in.coordinates.box, s.x, pl.f, pl.e, &pl.virial);
    r = run(nb, s, ic, false);
    EXPECT_EQ(nb.numPairs(), js.size());
    expectClose(r, pl, 5e-5, 2e-6, "explicit pairs"); // two single-precision kernels
}

/* A pruned list keeps every pair in range, on every instruction set (the
 * AVX2 kernel computes each half of a cluster pair over its own range):
 * at the prune the forces are the unpruned ones up to the order of the
 * sums, and between prunes the list stays as it was. */
TEST(ClusterNonbonded, PruningDropsOnlyClusterPairsBeyondReachAndKeepsTheForces)
{
    for (const char* name : { "water-spce-3k", "peptide-amber-triclinic" })
    {
        const System           s  = load(name);
        const InteractionConst ic = makeInteractionConst(s.in.mdp);
        for (long long target : clusterKernelTargets())
        {
            restrictClusterKernelTarget(target);
            for (ClusterKernelKind kind : { ClusterKernelKind::Simd, ClusterKernelKind::Reference })
            {
                const std::string what = std::string(name) + ", "
                                         + (kind == ClusterKernelKind::Simd ? clusterKernelTarget() : "plain kernel");
                ClusterNonbonded full;
                full.setKernel(kind);
                const Result     ref = run(full, s, ic);
                ClusterNonbonded pruned;
                pruned.setKernel(kind);
                pruned.setPruning(ic.rmax + 0.02, 2);
                Result r = run(pruned, s, ic);
                // the dropped pairs contributed nothing: what differs is
                // the order of the sums (the kept j-entries are grouped)
                EXPECT_LT(forceDifference(r.f, ref.f), 1e-6) << what;
                for (EnergyTerm t : { EnergyTerm::LJSR, EnergyTerm::CoulombSR })
                {
                    EXPECT_NEAR(r.e[t], ref.e[t], 1e-6 * std::abs(ref.e[t])) << what;
                }
                EXPECT_LT(pruned.numComputedClusterPairs(), full.numComputedClusterPairs()) << what;
                EXPECT_GT(pruned.numComputedClusterPairs(), full.numComputedClusterPairs() / 3) << what;
                // the next compute (no prune: interval 2) and the one after (prune)
                for (int step = 0; step < 2; step++)
                {
                    Result again;
                    again.f.assign(s.x.size(), Vec3<real>());
                    pruned.compute(s.in.topology, ic, s.in.coordinates.box, s.x, again.f, again.e, &again.virial);
                    EXPECT_EQ(forceDifference(again.f, r.f), 0.0) << what << " step " << step;
                }
            }
        }
        restrictClusterKernelTarget(0);
    }
}

/* The same entries kept by the plain prune and the SIMD prune of every
 * instruction set; the AVX2 one groups them by row halves, and at these
 * radii a good part of the kept pairs have pairs in range in one half only
 * (what its kernel does not compute; 30% at the cut-off). */
TEST(ClusterNonbonded, SimdAndPlainPruningKeepTheSameClusterPairs)
{
    const System           s  = load("peptide-amber-triclinic");
    const InteractionConst ic = makeInteractionConst(s.in.mdp);
    for (double rInner : { 0.8, 1.0, 1.05 })
    {
        ClusterNonbonded plain;
        plain.setKernel(ClusterKernelKind::Reference);
        plain.setPruning(rInner, 1);
        run(plain, s, ic);
        EXPECT_EQ(plain.numComputedRowHalves(), 2 * plain.numComputedClusterPairs()) << rInner;
        for (long long target : clusterKernelTargets())
        {
            restrictClusterKernelTarget(target);
            ClusterNonbonded nb;
            nb.setPruning(rInner, 1);
            run(nb, s, ic);
            const std::string what = std::to_string(rInner) + " " + clusterKernelTarget();
            EXPECT_EQ(nb.numComputedClusterPairs(), plain.numComputedClusterPairs()) << what;
            if (clusterKernelPruneRows() == 2)
            {
                EXPECT_LT(nb.numComputedRowHalves(), 2 * nb.numComputedClusterPairs() * 95 / 100) << what;
                EXPECT_GT(nb.numComputedRowHalves(), nb.numComputedClusterPairs()) << what;
            }
            else
            {
                EXPECT_EQ(nb.numComputedRowHalves(), 2 * nb.numComputedClusterPairs()) << what;
            }
        }
        restrictClusterKernelTarget(0);
    }
}

TEST(ClusterNonbonded, OverlappingAtomsAreNamed)
{
    System s = load("water-spce-3k");
    s.x[11]  = s.x[5]; // oxygens of two waters
    const InteractionConst ic = makeInteractionConst(s.in.mdp);
    // every instruction set's kernel detects it (each its own way: the SIMD
    // kernels from the largest 1/r in the list), the plain one names them
    for (long long target : clusterKernelTargets())
    {
        restrictClusterKernelTarget(target);
        ClusterNonbonded nb;
        try
        {
            run(nb, s, ic);
            ADD_FAILURE() << "no error for two atoms at the same position with " << clusterKernelTarget();
        }
        catch (const AtomOverlapError& e)
        {
            EXPECT_EQ(e.atomI, 5);
            EXPECT_EQ(e.atomJ, 11);
            EXPECT_NE(std::string(e.what()).find("same position"), std::string::npos);
        }
    }
    restrictClusterKernelTarget(0);
}

TEST(EwaldCorrection, SeriesMatchesTheFunctionsInSinglePrecision)
{
    for (double rc : { 0.9, 1.0, 1.2 })
    {
        for (double rtol : { 1e-4, 1e-5, 1e-6 })
        {
            const double          beta = ewaldCoefficient(rc, rtol);
            const EwaldCorrection e    = EwaldCorrection::fit(beta, rc);
            EXPECT_LE(e.force.size(), 16u);
            double worstF = 0, worstV = 0;
            for (double r = 0; r <= rc; r += rc / 997)
            {
                const double s = r * r;
                worstF = std::max(worstF, std::abs(e.evaluateForce(float(s)) - EwaldCorrection::exactForce(beta, s)));
                worstV = std::max(worstV, std::abs(e.evaluateEnergy(float(s)) - EwaldCorrection::exactEnergy(beta, s)));
            }
            // relative to the largest values, 4 beta^3/(3 sqrt(pi)) and 2 beta/sqrt(pi)
            EXPECT_LT(worstF, 5e-7 * EwaldCorrection::exactForce(beta, 0)) << rc << " " << rtol;
            EXPECT_LT(worstV, 5e-7 * EwaldCorrection::exactEnergy(beta, 0)) << rc << " " << rtol;
            // and the exact functions themselves: erf(beta r)/r at r = rc
            EXPECT_NEAR(EwaldCorrection::exactEnergy(beta, rc * rc), std::erf(beta * rc) / rc, 1e-12);
        }
    }
}

TEST(EwaldCorrection, PiecesMatchTheForceInSinglePrecision)
{
    for (double rc : { 0.9, 1.0, 1.2 })
    {
        for (double rtol : { 1e-4, 1e-5 })
        {
            const double          beta = ewaldCoefficient(rc, rtol);
            const EwaldCorrection e    = EwaldCorrection::fit(beta, rc);
            for (const EwaldPieces* p : { &e.forceIn8, &e.forceIn16 })
            {
                // the usual beta rc (2.6 to 3.5) fits in both
                ASSERT_TRUE(p->usable) << rc << " " << rtol << " in " << p->pieces << ": " << p->maxError;
                double worst = 0;
                for (double r = 0; r <= rc; r += rc / 1999)
                {
                    const double s = r * r;
                    worst = std::max(worst, std::abs(p->evaluate(float(s)) - EwaldCorrection::exactForce(beta, s)));
                }
                EXPECT_LT(worst, 5e-7 * EwaldCorrection::exactForce(beta, 0)) << rc << " " << rtol << " in " << p->pieces;
                // beyond the cut-off (masked in the kernels): finite
                for (double s = rc * rc; s < 50; s *= 1.37)
                {
                    EXPECT_TRUE(std::isfinite(p->evaluate(float(s)))) << s;
                }
            }
        }
    }
    // too few coefficients miss the tolerance and are marked so
    const double beta = ewaldCoefficient(1.0, 1e-5);
    EXPECT_FALSE(EwaldPieces::fit(beta, 1.0, 8, 4).usable);
    EXPECT_TRUE(EwaldPieces::fit(beta, 1.0, 8, EwaldPieces::c_coefficientsIn8).usable);
    // the piece comes from the low bits: only powers of two
    EXPECT_THROW(EwaldPieces::fit(beta, 1.0, 12, 6), SimulationError);
}

} // namespace
} // namespace putmd
