/* Listed forces on several threads (ThreadedListed) against one thread:
 * the same energies and forces to rounding, and exactly the same twice. */
#include <gtest/gtest.h>

#include <cmath>

#include "listed/listed.h"
#include "run/system_inputs.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

TEST(ListedThreads, SameAsOneThread)
{
    const test::TestSystem   s  = test::loadTestSystem("peptide-amber-triclinic");
    const SystemInputs&      in = s.in;
    const std::vector<RVec>& x  = s.x;
    ListedSettings settings;
    settings.epsfac = 138.935458;
    const Pbc pbc(in.coordinates.box);
    std::vector<RVec> f1(x.size()), f3(x.size()), f3again(x.size());
    EnergyTerms       e1, e3, e3again;
    Matrix3           v1, v3, v3again;
    computeListed(in.topology.listed, settings, x, pbc, f1, e1, &v1);
    ThreadedListed threaded;
    threaded.compute(in.topology.listed, settings, x, pbc, f3, e3, &v3, 3);
    threaded.compute(in.topology.listed, settings, x, pbc, f3again, e3again, &v3again, 3);
    ASSERT_FALSE(in.topology.listed.properDihedrals.empty());
    for (int k = 0; k < numEnergyTerms; k++)
    {
        EXPECT_EQ(e3.present[k], e1.present[k]) << k;
        EXPECT_NEAR(e3.value[k], e1.value[k], 1e-9 * (std::abs(e1.value[k]) + 1)) << k;
        EXPECT_EQ(e3.value[k], e3again.value[k]) << k;
    }
    double worst = 0, largest = 0;
    for (size_t i = 0; i < x.size(); i++)
    {
        worst   = std::max(worst, double(norm(f3[i] - f1[i])));
        largest = std::max(largest, double(norm(f1[i])));
        EXPECT_EQ(norm(f3[i] - f3again[i]), 0) << i;
    }
    EXPECT_GT(largest, 0);
    EXPECT_LT(worst, 1e-9 * largest);
    EXPECT_NEAR(v3(0, 0), v1(0, 0), 1e-9 * (std::abs(v1(0, 0)) + 1));
}

} // namespace
} // namespace putmd
