#include "run/single_point.h"
#include "run/energy_groups.h"

#include <algorithm>
#include <cmath>

#include "listed/listed.h"
#include "listed/position_restraints.h"
#include "update/virtual_sites.h"
#include "nonbonded/dispersion_correction.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/reference_kernel.h"
#include "pme/grid_size.h"
#include "pme/pme.h"

namespace putmd
{

namespace
{
/* Line of atom i in a .gro file (title and count come first). */
SourceLocation groLine(const std::string& file, int i)
{
    return SourceLocation{ file, file.empty() ? 0 : i + 3 };
}
} // namespace

SinglePointResult computeSinglePoint(const Topology& top, const MdpOptions& mdp, const Box& box,
                                     const std::vector<DVec>& xd, const std::string& coordinatesFile)
{
    SinglePointResult result;
    std::vector<Vec3<real>> x(xd.size());
    for (size_t i = 0; i < xd.size(); i++)
    {
        x[i] = Vec3<real>(xd[i]);
    }
    result.forces.assign(x.size(), Vec3<real>());
    const InteractionConst ic = makeInteractionConst(mdp);

    try
    {
        computeNonbondedReference(top, ic, box, x, result.forces, result.energies);
    }
    catch (const AtomOverlapError& e)
    {
        throw InputError(groLine(coordinatesFile, std::max(e.atomI, e.atomJ)), e.what());
    }

    ListedSettings listedSettings;
    listedSettings.epsfac = ic.epsfac;
    computeListed(top.listed, listedSettings, x, Pbc(box), result.forces, result.energies);
    computePositionRestraints(top.positionRestraints, top.positionRestraintSettings, x, box, result.forces,
                              result.energies, nullptr);

    if (mdp.coulombType == CoulombType::Pme)
    {
        Pme pme(pmeParametersFor(box, mdp, ic.ewaldCoeff, ic.epsfac));
        result.energies.add(EnergyTerm::CoulRecip, pme.compute(box, x, top.charge, result.forces));
        result.pmeGrid    = pme.parameters().gridSize;
        result.ewaldCoeff = ic.ewaldCoeff;
    }
    if (mdp.dispCorr != DispCorr::No)
    {
        const auto dc = makeDispersionCorrection(top, ic, mdp.dispCorr);
        result.energies.add(EnergyTerm::DispCorr, dc.energy(top.numAtoms, box.volume()));
        result.dispCorrPressure = dc.pressure(top.numAtoms, box.volume());
    }
    // virtual sites where the coordinates put them (as gmx mdrun -rerun),
    // their forces on their atoms
    spreadVirtualSiteForces(top.virtualSites, x, result.forces, box, nullptr);
    result.energies.sumPotential();
    const EnergyGroups groups = makeEnergyGroups(top, mdp.energyGrps, mdp.where("energygrps"));
    if (groups.active())
    {
        result.groupTermNames = groups.termNames();
        result.groupTerms     = computeEnergyGroupTerms(groups, top, ic, box, x);
    }
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (result.energies.present[t] && !std::isfinite(result.energies.value[t]))
        {
            throw InputError(SourceLocation{ coordinatesFile, 0 },
                             std::string("the energy term '") + energyTermName(static_cast<EnergyTerm>(t))
                                     + "' is not finite: atoms overlap or coordinates are invalid");
        }
    }
    for (size_t i = 0; i < result.forces.size(); i++)
    {
        const auto& f = result.forces[i];
        if (!std::isfinite(f.x) || !std::isfinite(f.y) || !std::isfinite(f.z))
        {
            throw InputError(groLine(coordinatesFile, static_cast<int>(i)),
                             "the force on " + top.describeAtom(static_cast<int>(i))
                                     + " is not finite: atoms overlap or coordinates are invalid");
        }
    }
    return result;
}

} // namespace putmd
