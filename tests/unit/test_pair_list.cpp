/* The pair-list kernel (dynamics) against its reference twin, the cell-grid
 * kernel of `putmd energy`, with one and several threads. */
#include <gtest/gtest.h>

#include "nonbonded/interaction_const.h"
#include "nonbonded/pair_list.h"
#include "nonbonded/reference_kernel.h"
#include "run/system_inputs.h"

namespace putmd
{
namespace
{

TEST(PairList, MatchesTheReferenceKernelWithOneAndSeveralThreads)
{
    const std::string data = PUTMD_TEST_DATA;
    for (const char* system : { "water-spce-3k", "peptide-amber-triclinic" })
    {
        InputPaths paths;
        paths.topology    = data + "/systems/" + system + "/topol.top";
        paths.coordinates = data + "/systems/" + system + "/conf.gro";
        paths.mdp         = data + "/systems/" + system + "/ref/ref.mdp";
        const SystemInputs in = loadSystem(paths);
        std::vector<Vec3<real>> x;
        for (const auto& p : in.coordinates.x)
        {
            x.push_back(Vec3<real>(p));
        }
        const InteractionConst  ic = makeInteractionConst(in.mdp);
        std::vector<Vec3<real>> fRef(x.size());
        EnergyTerms             eRef;
        computeNonbondedReference(in.topology, ic, in.coordinates.box, x, fRef, eRef);
        for (int threads : { 1, 3 })
        {
            PairList list;
            list.setNumThreads(threads);
            list.build(in.topology, in.coordinates.box, x, ic.rmax + 0.1);
            std::vector<Vec3<real>> f(x.size());
            EnergyTerms             e;
            Matrix3                 virial;
            list.compute(in.topology, ic, in.coordinates.box, x, f, e, &virial);
            EXPECT_NEAR(e[EnergyTerm::LJSR], eRef[EnergyTerm::LJSR], 1e-9 * std::abs(eRef[EnergyTerm::LJSR])) << system;
            EXPECT_NEAR(e[EnergyTerm::CoulombSR], eRef[EnergyTerm::CoulombSR], 1e-9 * std::abs(eRef[EnergyTerm::CoulombSR]))
                    << system << " " << threads << " threads";
            double worst = 0;
            for (size_t i = 0; i < x.size(); i++)
            {
                worst = std::max(worst, double(norm(f[i] - fRef[i])));
            }
            EXPECT_LT(worst, 1e-8) << system << " " << threads << " threads: largest force difference";
            EXPECT_GT(std::abs(virial(0, 0)), 0.0);
        }
    }
}

} // namespace
} // namespace putmd
