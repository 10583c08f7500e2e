#include "run/single_point.h"

#include "listed/listed.h"
#include "nonbonded/dispersion_correction.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/reference_kernel.h"
#include "pme/grid_size.h"
#include "pme/pme.h"

namespace putmd
{

SinglePointResult computeSinglePoint(const Topology& top, const MdpOptions& mdp, const Box& box,
                                     const std::vector<DVec>& xd)
{
    SinglePointResult result;
    std::vector<Vec3<real>> x(xd.size());
    for (size_t i = 0; i < xd.size(); i++)
    {
        x[i] = Vec3<real>(xd[i]);
    }
    result.forces.assign(x.size(), Vec3<real>());
    const InteractionConst ic = makeInteractionConst(mdp);

    computeNonbondedReference(top, ic, box, x, result.forces, result.energies);

    ListedSettings listedSettings;
    listedSettings.epsfac = ic.epsfac;
    computeListed(top.listed, listedSettings, x, Pbc(box), result.forces, result.energies);

    if (mdp.coulombType == CoulombType::Pme)
    {
        const PmeGridChoice grid = choosePmeGrid(box, mdp.fourierSpacing, mdp.fourierN, mdp.pmeOrder);
        for (int d = 0; d < 3; d++)
        {
            if (grid.n[d] < 2 * (mdp.pmeOrder - 1))
            {
                throw InputError(mdp.where("fourier-nx"), "PME grid dimension " + std::to_string(grid.n[d])
                                                                  + " is smaller than 2*(pme-order - 1) = "
                                                                  + std::to_string(2 * (mdp.pmeOrder - 1)));
            }
        }
        PmeParameters params;
        params.gridSize   = grid.n;
        params.order      = mdp.pmeOrder;
        params.ewaldCoeff = ic.ewaldCoeff;
        params.epsfac     = ic.epsfac;
        Pme pme(params);
        result.energies.add(EnergyTerm::CoulRecip, pme.compute(box, x, top.charge, result.forces));
        result.pmeGrid    = grid.n;
        result.ewaldCoeff = ic.ewaldCoeff;
    }
    if (mdp.dispCorr != DispCorr::No)
    {
        const auto dc = makeDispersionCorrection(top, ic, mdp.dispCorr);
        result.energies.add(EnergyTerm::DispCorr, dc.energy(top.numAtoms, box.volume()));
        result.dispCorrPressure = dc.pressure(top.numAtoms, box.volume());
    }
    result.energies.sumPotential();
    return result;
}

} // namespace putmd
