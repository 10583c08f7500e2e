/* The double build's SIMD pair batch (pair_batch_simd.cpp) against its
 * plain twin, bit for bit, on every instruction set Highway compiled and
 * this machine runs, for each electrostatics and LJ modifier; and the
 * pair-list kernel's forces with each instruction set the same bits. */
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "nonbonded/cluster_kernel.h"
#include "nonbonded/ewald_table.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/pair_batch.h"
#include "nonbonded/pair_list.h"
#include "run/system_inputs.h"

namespace putmd
{
namespace
{

SystemInputs loadPeptide()
{
    const std::string data = PUTMD_TEST_DATA;
    InputPaths        paths;
    paths.topology    = data + "/systems/peptide-amber-triclinic/topol.top";
    paths.coordinates = data + "/systems/peptide-amber-triclinic/conf.gro";
    paths.mdp         = data + "/systems/peptide-amber-triclinic/ref/ref.mdp";
    return loadSystem(paths);
}

bool sameBits(double a, double b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Flavour
{
    const char*         name;
    CoulombType         coulomb;
    InteractionModifier vdw;
    double              rvdw;
};
const Flavour kFlavours[] = {
    { "PME, potential-shift", CoulombType::Pme, InteractionModifier::PotentialShift, 1.0 },
    { "PME, force-switch", CoulombType::Pme, InteractionModifier::ForceSwitch, 1.0 },
    { "PME, no modifier, rvdw 0.9", CoulombType::Pme, InteractionModifier::None, 0.9 },
    { "reaction-field, potential-shift", CoulombType::ReactionField, InteractionModifier::PotentialShift, 1.0 },
    { "plain cut-off, potential-shift, rvdw 0.9", CoulombType::Cutoff, InteractionModifier::PotentialShift, 0.9 },
};

TEST(PairBatchSimd, GivesThePlainLoopsBitsOnEveryInstructionSet)
{
    SystemInputs in = loadPeptide();
    const int    n  = in.topology.numAtoms;
    std::mt19937 rng(7);
    for (const Flavour& fl : kFlavours)
    {
        in.mdp.coulombType = fl.coulomb;
        in.mdp.vdwModifier = fl.vdw;
        in.mdp.rvdw        = fl.rvdw;
        in.mdp.rvdwSwitch  = 0.8;
        in.mdp.epsilonRf   = 0;
        const InteractionConst ic = makeInteractionConst(in.mdp);
        const EwaldTable       table(ic.ewaldCoeff > 0 ? ic.ewaldCoeff : 3.0, ic.rmax);
        PairParameters         par;
        par.set(in.topology, ic.epsfac);
        PairBatchSetup setup(ic, &table, par);
        // a batch of 45 pairs (not a multiple of any register width): random
        // partners, distances over the whole range (past rvdw and rcoulomb too)
        const int i = 3, m = 45;
        setup.qi    = par.scaledCharge[i];
        PairBatch plain;
        std::uniform_int_distribution<int>     atom(0, n - 1);
        std::uniform_real_distribution<double> r(0.08, ic.rmax);
        for (int k = 0; k < m; k++)
        {
            const int j      = atom(rng);
            plain.j[k]       = j;
            plain.ljIndex[k] = int64_t(par.ljType[i]) * par.numTypes + par.ljType[j];
            plain.qj[k]      = k % 7 == 0 ? 0.0 : par.scaledCharge[j]; // some uncharged
            const double rk  = r(rng);
            plain.r2[k]      = rk * rk;
            plain.dx[k] = plain.dy[k] = plain.dz[k] = 0; // (not read by the pass)
            plain.fscal[k]   = setup.forceSwitch ? 1e3 * r(rng) : 0; // the switched LJ
            plain.vlj[k]     = setup.forceSwitch ? -r(rng) : 0;
        }
        plain.pad(m);
        const PairBatch input = plain;
        pairBatchReference(setup, m, plain);
        int sets = 0;
        for (long long target : clusterKernelTargets())
        {
            restrictClusterKernelTarget(target);
            PairBatch simd = input;
            pairBatchSimd(setup, m, simd);
            int differing = 0;
            for (int k = 0; k < m; k++)
            {
                differing += !sameBits(simd.fscal[k], plain.fscal[k]) || !sameBits(simd.vlj[k], plain.vlj[k])
                             || !sameBits(simd.vcoul[k], plain.vcoul[k]);
            }
            EXPECT_EQ(differing, 0) << fl.name << ", " << clusterKernelTarget() << ": pairs whose bits differ";
            sets++;
        }
        restrictClusterKernelTarget(0);
        EXPECT_GE(sets, 1);
        // the batch is not all zeros: the test compares something
        int nonzero = 0;
        for (int k = 0; k < m; k++)
        {
            nonzero += plain.fscal[k] != 0 && plain.vcoul[k] != 0;
        }
        EXPECT_GT(nonzero, m / 3) << fl.name;
    }
}

TEST(PairBatchSimd, PairListForcesAreTheSameOnEveryInstructionSet)
{
    SystemInputs            in = loadPeptide();
    std::vector<Vec3<real>> x;
    for (const auto& p : in.coordinates.x)
    {
        x.push_back(Vec3<real>(p));
    }
    const InteractionConst ic = makeInteractionConst(in.mdp);
    std::vector<Vec3<real>> first;
    double                  firstCoul = 0;
    for (long long target : clusterKernelTargets())
    {
        restrictClusterKernelTarget(target);
        PairList list;
        list.build(in.topology, in.coordinates.box, x, ic.rmax + 0.1);
        std::vector<Vec3<real>> f(x.size());
        EnergyTerms             e;
        Matrix3                 virial;
        list.compute(in.topology, ic, in.coordinates.box, x, f, e, &virial);
        if (first.empty())
        {
            first     = f;
            firstCoul = e[EnergyTerm::CoulombSR];
            EXPECT_NE(firstCoul, 0.0);
            continue;
        }
        EXPECT_TRUE(sameBits(e[EnergyTerm::CoulombSR], firstCoul)) << clusterKernelTarget();
        int differing = 0;
        for (size_t a = 0; a < x.size(); a++)
        {
            for (int d = 0; d < 3; d++)
            {
                differing += !sameBits(f[a][d], first[a][d]);
            }
        }
        EXPECT_EQ(differing, 0) << clusterKernelTarget() << ": force components whose bits differ";
    }
    restrictClusterKernelTarget(0);
}

} // namespace
} // namespace putmd
