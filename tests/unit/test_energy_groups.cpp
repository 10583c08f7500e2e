/* energygrps (run/energy_groups.h): the group-pair terms of a peptide in
 * water, split into Protein, SOL and "rest" (its two Na+): the names in the
 * order `gmx energy` lists them for these groups (GROMACS 2022's listing of
 * the same mdp), and the terms of each kind summing to the totals of the
 * single point. The values themselves are checked against gmx_d by the
 * reference tests (variant amber-tric-energygrps). */
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "run/energy_groups.h"
#include "run/single_point.h"
#include "run/system_inputs.h"

namespace putmd
{
namespace
{

SystemInputs peptide()
{
    InputPaths paths;
    const std::string sys = std::string(PUTMD_TEST_DATA) + "/systems/peptide-amber-triclinic";
    paths.topology        = sys + "/topol.top";
    paths.coordinates     = sys + "/conf.gro";
    paths.mdp             = std::string(PUTMD_TEST_DATA) + "/variants/amber-tric-energygrps/ref.mdp";
    return loadSystem(paths);
}

TEST(EnergyGroups, TermOrderIsGromacs)
{
    const SystemInputs in = peptide();
    const EnergyGroups g  = makeEnergyGroups(in.topology, in.mdp.energyGrps, in.mdp.where("energygrps"));
    ASSERT_EQ(g.names, (std::vector<std::string>{ "Protein", "SOL", "rest" }));
    const std::vector<std::string> gmx = {
        "Coul-SR:Protein-Protein", "LJ-SR:Protein-Protein", "Coul-14:Protein-Protein", "LJ-14:Protein-Protein",
        "Coul-SR:Protein-SOL",     "LJ-SR:Protein-SOL",     "Coul-14:Protein-SOL",     "LJ-14:Protein-SOL",
        "Coul-SR:Protein-rest",    "LJ-SR:Protein-rest",    "Coul-14:Protein-rest",    "LJ-14:Protein-rest",
        "Coul-SR:SOL-SOL",         "LJ-SR:SOL-SOL",         "Coul-14:SOL-SOL",         "LJ-14:SOL-SOL",
        "Coul-SR:SOL-rest",        "LJ-SR:SOL-rest",        "Coul-14:SOL-rest",        "LJ-14:SOL-rest",
        "Coul-SR:rest-rest",       "LJ-SR:rest-rest",       "Coul-14:rest-rest",       "LJ-14:rest-rest",
    };
    EXPECT_EQ(g.termNames(), gmx);
}

TEST(EnergyGroups, TermsSumToTheTotals)
{
    const SystemInputs in = peptide();
    const auto r = computeSinglePoint(in.topology, in.mdp, in.coordinates.box, in.coordinates.x);
    ASSERT_FALSE(r.groupTermNames.empty());
    const std::pair<const char*, EnergyTerm> kinds[] = { { "Coul-SR:", EnergyTerm::CoulombSR }, { "LJ-SR:", EnergyTerm::LJSR },
                                                         { "Coul-14:", EnergyTerm::Coulomb14 }, { "LJ-14:", EnergyTerm::LJ14 } };
    for (const auto& [prefix, term] : kinds)
    {
        double sum = 0;
        for (size_t k = 0; k < r.groupTermNames.size(); k++)
        {
            if (r.groupTermNames[k].rfind(prefix, 0) == 0)
            {
                sum += r.groupTerms[k];
            }
        }
        EXPECT_NEAR(sum, r.energies[term], 1e-9 * std::abs(r.energies[term])) << prefix;
    }
}

TEST(EnergyGroups, OverlappingGroupsAreAnError)
{
    SystemInputs in = peptide();
    try
    {
        makeEnergyGroups(in.topology, { "Protein", "System" }, in.mdp.where("energygrps"));
        FAIL() << "no error for overlapping groups";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("must not overlap"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("ref.mdp"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace putmd
