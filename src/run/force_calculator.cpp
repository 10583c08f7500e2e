#include "run/force_calculator.h"
#include "listed/position_restraints.h"
#include "update/virtual_sites.h"

#include "comm/communicator.h"
#include "domdec/domdec.h"
#include "listed/listed.h"
#include "nonbonded/exclusion_corrections.h"
#include "pme/grid_size.h"
#include "pme/pme.h"
#include "pme/pme_distributed.h"
#include "pme/pme_ranks.h"

namespace putmd
{

namespace
{

/* The pair lists of a decomposed rank after a repartition: the cluster
 * lists search the local atoms themselves, split by zones (home atoms'
 * pairs, computed while the halo travels, then those with a halo atom);
 * the double build's atom-pair lists take the decomposition's atom pairs. */
template<typename List>
void searchLocalPairs(DomainDecomposition& dd, const Topology& lt, const Box& box, double rlist, List& home, List& other)
{
    if constexpr (std::is_same_v<List, ClusterNonbonded>)
    {
        const auto& xs = dd.searchCoordinates();
        home.buildLocal(lt, box, xs, rlist, dd.zones(), dd.numHome(), true);
        other.buildLocal(lt, box, xs, rlist, dd.zones(), dd.numHome(), false);
    }
    else
    {
        const LocalPairs& h = dd.localPairs();
        const LocalPairs& o = dd.nonlocalPairs();
        home.setPairs(h.start, h.j, rlist);
        other.setPairs(o.start, o.j, rlist);
    }
}

} // namespace

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

void ForceCalculator::setFftPlanning(FftPlanning planning)
{
    if (pme_)
    {
        pme_->setFftPlanning(planning);
    }
}

void ForceCalculator::prepareFft()
{
    if (pme_ && !dd_)
    {
        pme_->prepareFft();
    }
}

void ForceCalculator::setNumThreads(int n)
{
    numThreads_ = std::max(1, n);
    pairList_.setNumThreads(n);
    nonlocalPairList_.setNumThreads(n);
    if (pme_)
    {
        pme_->setNumThreads(n);
    }
    if (distributedPme_)
    {
        distributedPme_->setNumThreads(n);
    }
}

void ForceCalculator::addDispersionCorrection(const Box& box, Matrix3* virial, ForceOutput& out) const
{
    if (dispCorrMode_ == DispCorr::No)
    {
        return;
    }
    out.energies.add(EnergyTerm::DispCorr, dispCorr_.energy(top_.numAtoms, box.volume()));
    if (virial)
    {
        const double v = dispCorr_.virialDiagonal(top_.numAtoms, box.volume());
        for (int d = 0; d < 3; d++)
        {
            (*virial)(d, d) += v;
        }
    }
}

void ForceCalculator::setDomainDecomposition(DomainDecomposition* dd, comm::Communicator* comm, const ParallelPme& pme)
{
    dd_   = dd;
    comm_ = comm;
    pairList_.setExclusionCorrections(false);
    nonlocalPairList_.setExclusionCorrections(false);
    if (pme_)
    {
        pmeClient_ = pme.client;
        if (!pmeClient_)
        {
            PmeParameters params = pme_->parameters();
            params.fftPlanning   = pme.fftPlanning;
            distributedPme_      = std::make_unique<DistributedPme>(params, *comm,
                                                               choosePencilGrid(comm->size(), pmeGrid_), pme.transpose,
                                                               top_.totalCharge());
            distributedPme_->setNumThreads(numThreads_);
        }
    }
}

int ForceCalculator::pmeRedistTargets() const
{
    return distributedPme_ ? distributedPme_->numRedistTargets() : -1;
}

std::array<int, 2> ForceCalculator::pmeProcessGrid() const
{
    return distributedPme_ ? distributedPme_->procGrid() : std::array<int, 2>{ 0, 0 };
}

void ForceCalculator::computeDecomposed(const std::vector<Vec3<real>>& x, const Box& box, bool needVirial, ForceOutput& out)
{
    const Topology& lt = dd_->localTopology();
    const int       nh = dd_->numHome(), nl = dd_->numLocal();
    if (dd_->partitionCount() != partitionSeen_)
    {
        Timed t(timers_, Stage::Search);
        searchLocalPairs(*dd_, lt, box, rlist_, pairList_, nonlocalPairList_);
        homeCharges_.assign(lt.charge.begin(), lt.charge.begin() + nh);
        localExcluded_ = ExcludedPairList::make(lt, ic_.epsfac, nh); // self terms of home atoms only
        if (std::is_same_v<real, float> && ic_.coulombType == CoulombType::Pme && !localSeries_)
        {
            localSeries_ = EwaldCorrection::fit(ic_.ewaldCoeff, ic_.rcoulomb);
        }
        partitionSeen_ = dd_->partitionCount();
        if (pmeClient_)
        {
            pmeClient_->checkCapacity(nh);
        }
        if (distributedPme_)
        {
            // links only to the grid owners near the home atoms
            distributedPme_->planRedistribution(nh, std::span(x.data(), size_t(nh)), &box);
        }
    }
    out.f.assign(nl, Vec3<real>());
    out.energies = EnergyTerms();
    out.virial   = Matrix3();
    Matrix3* vir = needVirial ? &out.virial : nullptr;
    xLocal_.resize(nl);
    std::copy(x.begin(), x.begin() + nh, xLocal_.begin());
    if (pmeClient_)
    {
        Timed t(timers_, Stage::PmeSendX);
        pmeClient_->send(box, std::span(x.data(), nh), homeCharges_, needVirial);
    }
    if (distributedPme_)
    {
        // the atoms travel to their grid owners while the short-range work
        // runs (a second call of the PME mesh row and its redistribution)
        Timed mesh(timers_, Stage::PmeMesh);
        Timed t(timers_, Stage::PmeRedistX);
        distributedPme_->startRedistribution(box, std::span(x.data(), nh), homeCharges_);
    }
    {
        Timed t(timers_, Stage::HaloCoordinates);
        dd_->haloCoordinatesStart(xLocal_);
    }
    {
        Timed t(timers_, Stage::Nonbonded);
        pairList_.compute(lt, ic_, box, xLocal_, out.f, out.energies, vir);
    }
    {
        Timed t(timers_, Stage::HaloCoordinatesWait);
        dd_->haloCoordinatesFinish(xLocal_);
    }
    {
        Timed t(timers_, Stage::Nonbonded);
        nonlocalPairList_.compute(lt, ic_, box, xLocal_, out.f, out.energies, vir);
        // the local excluded pairs as a list made at the repartition; the
        // mixed build computes them from the kernels' Ewald series
        const EwaldCorrection* series = localSeries_ ? &*localSeries_ : nullptr;
        // the pairs' energy (series path) only where energies are reported
        const bool   energies = !energiesOnlyWithVirial_ || needVirial;
        const double vexcl    = exclusionCorrections(lt, ic_, Pbc(box), xLocal_, out.f, vir, -1, numThreads_, series,
                                                     &localExcluded_, energies);
        if (energies)
        {
            out.energies.add(EnergyTerm::CoulombSR, vexcl);
        }
    }
    {
        Timed          t(timers_, Stage::Listed);
        ListedSettings listed;
        listed.epsfac = ic_.epsfac;
        computeListed(lt.listed, listed, xLocal_, Pbc(box), out.f, out.energies, vir);
        computePositionRestraints(lt.positionRestraints, lt.positionRestraintSettings, xLocal_, box, out.f,
                                  out.energies, vir);
    }
    // The halo forces go home before the mesh (the design's step: return
    // halo forces, then add PME's): the force halo is the first point
    // where the ranks meet after their short-range work, so the ranks'
    // difference in that work (imbalance, and a step's jitter) is waited
    // for in its wait row, and the mesh starts with the ranks together.
    dd_->haloForces(out.f, timers_);
    if (distributedPme_)
    {
        Timed t(timers_, Stage::PmeMesh);
        out.energies.add(EnergyTerm::CoulRecip, distributedPme_->compute(box, std::span(x.data(), nh), homeCharges_,
                                                                         std::span(out.f.data(), nh), vir, timers_));
    }
    if (pmeClient_)
    {
        Timed t(timers_, Stage::PmeWaitF);
        out.energies.add(EnergyTerm::CoulRecip, pmeClient_->receive(std::span(out.f.data(), nh), vir));
    }
    // sites built across update groups (after the halo sum; they may be
    // built from the sites below, never the reverse)
    dd_->spreadSplitSiteForces(out.f, xLocal_, box, vir, timers_);
    // a site and its atoms are one update group: all home
    spreadVirtualSiteForces(lt.virtualSites, xLocal_, out.f, box, vir);
    out.f.resize(nh);
    if (comm_->rank() == 0) // a whole-system term: once
    {
        addDispersionCorrection(box, vir, out);
    }
    out.energies.sumPotential();
}

void ForceCalculator::compute(const std::vector<Vec3<real>>& x, const Box& box, bool search, bool needVirial, ForceOutput& out)
{
    if (dd_)
    {
        computeDecomposed(x, box, needVirial, out);
        return;
    }
    // cleared by the threads (a serial clear of every force was a step's
    // serial remainder)
    out.f.resize(x.size());
    const long n = static_cast<long>(x.size());
#pragma omp parallel for num_threads(numThreads_) schedule(static) if (n > 4096)
    for (long i = 0; i < n; i++)
    {
        out.f[i] = Vec3<real>();
    }
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
        threadedListed_.compute(top_.listed, listed, x, Pbc(box), out.f, out.energies, vir, numThreads_);
        computePositionRestraints(top_.positionRestraints, top_.positionRestraintSettings, x, box, out.f, out.energies,
                                  vir);
    }
    if (pme_)
    {
        Timed t(timers_, Stage::PmeMesh);
        // the mesh energy only where energies are reported
        const bool energies = !energiesOnlyWithVirial_ || needVirial;
        out.energies.add(EnergyTerm::CoulRecip, pme_->compute(box, x, top_.charge, out.f, vir, energies));
    }
    spreadVirtualSiteForces(top_.virtualSites, x, out.f, box, vir);
    addDispersionCorrection(box, vir, out);
    out.energies.sumPotential();
}

} // namespace putmd
