/* The pair-list kernel (dynamics) against its reference twin, the cell-grid
 * kernel of `putmd energy`, with one and several threads; and the Ewald
 * table against the library functions. */
#include <gtest/gtest.h>

#include <cmath>

#include "nonbonded/ewald_table.h"
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
            double worst = 0, largest = 0;
            for (size_t i = 0; i < x.size(); i++)
            {
                worst   = std::max(worst, double(norm(f[i] - fRef[i])));
                largest = std::max(largest, double(norm(fRef[i])));
            }
            // the list kernel tabulates erfc (cubic Hermite, 1/2000 nm): its
            // forces differ from the library's by ~1e-9 of the force scale
            EXPECT_LT(worst, 1e-8 * largest) << system << " " << threads << " threads: largest force difference";
            EXPECT_GT(std::abs(virial(0, 0)), 0.0);
        }
    }
}

TEST(EwaldTable, MatchesErfcAndItsDerivative)
{
    const double     beta = 3.12341;
    const EwaldTable t(beta, 1.2);
    double           worstG = 0, worstD = 0;
    for (double r = 0.0; r <= 1.2; r += 0.000137)
    {
        real g, dg;
        t.evaluate(real(r), &g, &dg);
        worstG = std::max(worstG, std::abs(g - std::erfc(beta * r)));
        worstD = std::max(worstD, std::abs(dg + 2 * beta / std::sqrt(M_PI) * std::exp(-beta * beta * r * r)));
    }
    EXPECT_LT(worstG, PUTMD_DOUBLE ? 1e-12 : 1e-6);
    EXPECT_LT(worstD, PUTMD_DOUBLE ? 1e-8 : 1e-5); // derivative scale 2 beta/sqrt(pi) = 3.5
}

} // namespace
} // namespace putmd
