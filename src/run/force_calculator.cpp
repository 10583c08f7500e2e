#include "run/force_calculator.h"

#include "listed/listed.h"
#include "pme/grid_size.h"
#include "pme/pme.h"

namespace putmd
{

ForceCalculator::ForceCalculator(const Topology& top, const MdpOptions& mdp, const Box& box, double rlist) :
    top_(top), dispCorrMode_(mdp.dispCorr), ic_(makeInteractionConst(mdp)), rlist_(rlist)
{
    dispCorr_ = makeDispersionCorrection(top, ic_, mdp.dispCorr);
    if (mdp.coulombType == CoulombType::Pme)
    {
        const PmeParameters p = pmeParametersFor(box, mdp, ic_.ewaldCoeff, ic_.epsfac);
        pme_                  = std::make_unique<Pme>(p);
        pmeGrid_              = p.gridSize;
    }
}

ForceCalculator::~ForceCalculator() = default;

void ForceCalculator::compute(const std::vector<Vec3<real>>& x, const Box& box, bool search, bool needVirial, ForceOutput& out)
{
    out.f.assign(x.size(), Vec3<real>());
    out.energies = EnergyTerms();
    out.virial   = Matrix3();
    Matrix3* vir = needVirial ? &out.virial : nullptr;
    if (search)
    {
        Timed t(timers_, Stage::Search);
        pairList_.build(top_, box, x, rlist_);
    }
    {
        Timed t(timers_, Stage::Nonbonded);
        pairList_.compute(top_, ic_, box, x, out.f, out.energies, vir);
    }
    {
        Timed          t(timers_, Stage::Listed);
        ListedSettings listed;
        listed.epsfac = ic_.epsfac;
        computeListed(top_.listed, listed, x, Pbc(box), out.f, out.energies, vir);
    }
    if (pme_)
    {
        Timed t(timers_, Stage::PmeMesh);
        out.energies.add(EnergyTerm::CoulRecip, pme_->compute(box, x, top_.charge, out.f, vir));
    }
    if (dispCorrMode_ != DispCorr::No)
    {
        out.energies.add(EnergyTerm::DispCorr, dispCorr_.energy(top_.numAtoms, box.volume()));
        if (vir)
        {
            const double v = dispCorr_.virialDiagonal(top_.numAtoms, box.volume());
            for (int d = 0; d < 3; d++)
            {
                out.virial(d, d) += v;
            }
        }
    }
    out.energies.sumPotential();
}

} // namespace putmd
