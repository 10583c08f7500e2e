/* run/md_runner.cpp — the MD run: set-up, outputs, update, energies and the
 * leap-frog and velocity-Verlet loops as named stages (see md_run.h for the
 * other files of MdRun; coupling is md_coupling.cpp). */
#include "run/md_runner.h"

#include "core/clock.h"
#include "run/md_run.h"
#include "update/virtual_sites.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "comm/communicator.h"
#include "comm/smpi_record.h"
#include "io/checkpoint.h"
#include "nonbonded/cluster_nonbonded.h"
#include "pme/pme_rows.h"
#include "core/units.h"
#include "run/force_calculator.h"
#include "run/md_output.h"
#include "run/groups.h"
#include "run/md_setup.h"
#include "run/stop_request.h"
#include "update/constraints.h"
#include "update/coupling.h"
#include "update/kinetic.h"

namespace putmd
{

namespace md_detail
{

namespace
{

/* Puts every atom in the unit cell (search steps, as GROMACS does). */
void putAtomsInBox(std::vector<RVec>& x, const Box& box)
{
    for (auto& xi : x)
    {
        DVec s = box.toFractional(DVec(xi));
        for (int d = 0; d < 3; d++)
        {
            s[d] -= std::floor(s[d]);
        }
        xi = RVec(box.fromFractional(s));
    }
}

} // namespace

MdRun::MdRun(const SystemInputs& in, const RunOptions& options) :
    in_(in), mdp_(in.mdp), top_(in.topology), options_(options),
    nsteps_(options.nstepsOverride > -2 ? options.nstepsOverride : in.mdp.nsteps)
{
    // first: the stages that use OpenMP's count (update, kinetic energy,
    // SETTLE, PME solve) must see -nt from the set-up on (generated
    // velocities are scaled with the kinetic energy), or a run would depend
    // on what the process ran before
    omp_set_num_threads(std::max(1, options_.numThreads));
    mass_ = top_.mass;
    invMass_.resize(mass_.size());
    for (size_t i = 0; i < mass_.size(); i++)
    {
        invMass_[i] = mass_[i] > 0 ? real(1 / mass_[i]) : real(0); // virtual sites: massless, placed
        totalMass_ += mass_[i];
    }
    constraintSettings_ = ConstraintSettings{ mdp_.constraintAlgorithm, mdp_.lincsOrder, mdp_.lincsIter, mdp_.shakeTol };
    constraints_        = std::make_unique<Constraints>(top_, constraintSettings_, invMass_);
    box_         = in.coordinates.box;
    for (const auto& p : in.coordinates.x)
    {
        x_.push_back(RVec(p));
    }
    // degrees of freedom (for generated velocities) before the buffer,
    // which needs the velocities
    const double dof = 3.0 * top_.numAtoms - constraints_->numConstraints() - (mdp_.commMode == CommMode::Linear ? 3 : 0);
    const bool   restarting = !options_.continueFrom.empty();
    if (restarting)
    {
        continueFromCheckpoint(); // x, v, box and the coupling state from the checkpoint
    }
    else if (mdp_.genVel && !mdp_.continuation)
    {
        v_ = generateVelocities(mass_, mdp_.genTemp, agreedSeed(options_.comm, resolveSeed(mdp_.genSeed)), dof);
    }
    else if (!in.coordinates.v.empty())
    {
        for (const auto& p : in.coordinates.v)
        {
            v_.push_back(RVec(p));
        }
    }
    else
    {
        v_.assign(x_.size(), RVec());
    }
    settings_        = prepareMd(top_, mdp_, constraints_->numConstraints(), box_, v_);
    settings_.ldSeed = agreedSeed(options_.comm, settings_.ldSeed);
    if (options_.trialSteps > 0)
    {
        nsteps_ = warmUpSteps() + options_.trialSteps; // trials start at step 0
    }
    if (restarting)
    {
        // the choices of the run being continued, so it goes on as it would have
        settings_.rlist   = restart_->rlist;
        settings_.nstlist = restart_->nstlist;
        settings_.ldSeed  = restart_->ldSeed;
        settings_.notes.push_back(fmt::format("continuing from {} at step {} (rlist {:.4f} nm, nstlist {}, seed {})",
                                              options_.continueFrom, restart_->step, restart_->rlist, restart_->nstlist,
                                              restart_->ldSeed));
    }
    // a checkpoint of this precision that records the run's pruning, and
    // whether it was sized for this kernel's pruned groups
    const bool pruningRecorded   = restarting && restart_->nstlistPrune >= 0 && restart_->precisionBytes == sizeof(real);
    const bool samePruningKernel = pruningRecorded && restart_->pruneRows == clusterKernelPruneRows();
    if (samePruningKernel)
    {
        // the run's own pruning (the box may have changed since its start)
        settings_.nstlistPrune = restart_->nstlistPrune;
        settings_.rlistInner   = restart_->rlistInner;
        if (settings_.nstlistPrune > 0)
        {
            settings_.notes.push_back(fmt::format("dynamic pruning as the run continued: inner list rlist {:.4f} nm, "
                                                  "pruned every {} steps",
                                                  settings_.rlistInner, settings_.nstlistPrune));
        }
    }
    else
    {
        // chosen for the run's list (a continuation's: the checkpoint's
        // rlist and nstlist; an older checkpoint or the other precision's
        // does not record it, and one of a kernel that prunes in other
        // groups (AVX2's 2 i-rows against 4) sized its radius for those)
        choosePruning(settings_, top_, mdp_, box_);
        if (pruningRecorded && restart_->nstlistPrune > 0)
        {
            settings_.notes.push_back(fmt::format("dynamic pruning chosen afresh: the checkpoint's (every {} steps at "
                                                  "{:.4f} nm) was sized for a kernel pruning {} i-rows together, "
                                                  "this one prunes {}",
                                                  restart_->nstlistPrune, restart_->rlistInner, restart_->pruneRows,
                                                  clusterKernelPruneRows()));
        }
    }
    if (!restarting && !mdp_.continuation && !constraints_->empty())
    {
        // start on the constraint surface; leap-frog's v(-dt/2) such that
        // x(-dt) = x - dt v is on it too (as GROMACS: the positions a step
        // back are constrained with x as reference and the velocities take
        // the correction); md-vv's v(0) tangent to it
        try
        {
            std::vector<RVec> xc = x_;
            constraints_->apply(x_, xc, nullptr, mdp_.dt, box_, nullptr);
            x_ = xc;
            if (mdp_.integrator == Integrator::MdVv)
            {
                constraints_->projectVelocities(x_, v_, box_);
            }
            else
            {
                std::vector<RVec> back(x_.size());
                for (size_t i = 0; i < x_.size(); i++)
                {
                    v_[i]   = -v_[i];
                    back[i] = x_[i] + v_[i] * real(mdp_.dt);
                }
                constraints_->apply(x_, back, &v_, mdp_.dt, box_, nullptr);
                for (auto& vi : v_)
                {
                    vi = -vi;
                }
            }
        }
        catch (const ConstraintError& e)
        {
            throw SimulationError(fmt::format("step {} (t = {} ps), constraining the start and the half step "
                                              "before it (continuation = no): {}",
                                              0, mdp_.tinit, e.what()));
        }
    }
    if (!restarting && !mdp_.continuation)
    {
        // placed at the start, as mdrun does (with continuation = yes the
        // input's positions are used until the first update, as there)
        constructVirtualSites(top_.virtualSites, x_, box_);
    }
    freeze_   = settings_.freeze;
    comGroup_ = settings_.comGroupOfAtom;
    for (size_t i = 0; i < freeze_.size(); i++)
    {
        if (freeze_[i] == 7)
        {
            invMass_[i] = 0; // constraints leave wholly frozen atoms where they are
        }
    }
    if (!freeze_.empty())
    {
        constraints_ = std::make_unique<Constraints>(top_, constraintSettings_, invMass_);
    }
    zeroFrozenVelocities();
    if (!restarting && mdp_.genVel && !mdp_.continuation)
    {
        // after the projection onto the constraints, exactly gen-temp over the
        // remaining degrees of freedom
        const double t = temperatureOf(trace(kineticEnergyTensor(v_, mass_)), settings_.totalDof);
        if (t > 0)
        {
            const real scale = real(std::sqrt(mdp_.genTemp / t));
            for (auto& vi : v_)
            {
                vi *= scale;
            }
        }
    }
    // (the PME grid from the starting box, as in the run a checkpoint continues)
    forces_ = std::make_unique<ForceCalculator>(top_, mdp_, in.coordinates.box, settings_.rlist);
    forces_->setEnergiesOnlyWithVirial(true); // energies and virial on the same steps (computeE)
    forces_->setPruning(settings_.rlistInner, settings_.nstlistPrune);
    noseHoover_.assign(settings_.groups.size(), NoseHooverState());
    if (restarting)
    {
        if (restart_->noseHooverXi.size() == noseHoover_.size())
        {
            for (size_t g = 0; g < noseHoover_.size(); g++)
            {
                noseHoover_[g].xi = restart_->noseHooverXi[g];
            }
        }
        else if (!restart_->noseHooverXi.empty())
        {
            throw InputError(SourceLocation{ options_.continueFrom, 0 },
                             fmt::format("the checkpoint has {} Nose-Hoover groups, the mdp {}: tc-grps must not change "
                                         "in a continuation",
                                         restart_->noseHooverXi.size(), noseHoover_.size()));
        }
        thermostatIntegral_ = restart_->thermostatIntegral;
        barostatIntegral_   = restart_->barostatIntegral;
        pr_.boxVelocity     = restart_->boxVelocity;
        pr_.boxRel          = restart_->boxRel;
        averageNames_       = restart_->averageNames;
        averageSums_        = restart_->averageSums;
        averageCount_       = restart_->averageCount;
        startStep_          = restart_->step;
        skipFirstOutputs_   = restart_->stepOutputsWritten;
    }
    if (mdp_.pcoupl == PCoupl::ParrinelloRahman)
    {
        bool kept = false; // a checkpoint of a Parrinello-Rahman run keeps the starting shape
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                kept = kept || pr_.boxRel(r, k) != 0;
        if (!kept)
        {
            pr_.boxRel = ParrinelloRahman::shapeOf(box_, mdp_.pcouplType);
        }
    }
    checkpointPath_ = options_.deffnm + ".cpt";
    forces_->setTimers(&timers_);
    // PME's FFT: measured plans on one rank (the default layout; several
    // ranks would each measure their own), estimated otherwise; a
    // continuation takes the plans the checkpointed run measured
    const bool oneRank = !options_.comm || options_.comm->size() == 1;
    fftPlanning_       = oneRank ? fftPlanningFromEnvironment() : FftPlanning::Estimate;
    if (restarting && fftPlanning_ == FftPlanning::Measure && !restart_->fftPlans.empty()
        && !useFftPlans(restart_->fftPlans))
    {
        settings_.notes.push_back("the checkpoint's FFT plans are not readable: measured again (the continuation "
                                  "equals the run it continues to rounding, not bitwise)");
    }
    forces_->setFftPlanning(fftPlanning_);
    forces_->setNumThreads(options_.numThreads);
    tcGroup_ = settings_.groups.groupOfAtom;
    comm_    = options_.comm;
    if (comm_ && (comm_->size() > 1 || options_.useDd || options_.pme.npme > 0))
    {
        if (mdp_.integrator != Integrator::Md && mdp_.integrator != Integrator::MdVv)
        {
            throw InputError(mdp_.where("integrator"), "domain decomposition runs integrator md or md-vv");
        }
        // every rank prepared the same full state; each keeps its domain
        if (restart_ && restart_->ddGroupRadius > 0)
        {
            options_.dd.groupRadius = restart_->ddGroupRadius;
        }
        dd_ = std::make_unique<DomainDecomposition>(*comm_, top_, x_, box_, settings_.rlist, options_.dd);
        restoreDlb();
        std::vector<RVec> xHome, vHome;
        dd_->distribute(x_, v_, box_, xHome, vHome);
        x_.swap(xHome);
        v_.swap(vHome);
        refreshHomeAtoms();
        ForceCalculator::ParallelPme ppme;
        ppme.transpose   = options_.transpose;
        ppme.fftPlanning = fftPlanningFromEnvironment(); // each rank measures its pencil FFT's plans
        if (options_.pme.npme > 0 && mdp_.coulombType == CoulombType::Pme)
        {
            pmeClient_ = std::make_unique<PmeClient>(*options_.world, *comm_, options_.pme, dd_->numHome());
            ppme.client = pmeClient_.get();
        }
        forces_->setDomainDecomposition(dd_.get(), comm_, ppme);
        root_ = comm_->rank() == 0;
    }
    forces_->prepareFft();
    if (restarting && mdp_.integrator == Integrator::MdVv)
    {
        // the last drift's constraint virial, summed over the writer's
        // ranks: on the first rank, -0.0 on the others (it adds nothing,
        // not even a sign), so the first step's reduction gives its bits
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                constraintVirial_(a, b) = root_ ? restart_->constraintVirial(a, b) : -0.0;
    }
    energyGroups_ = makeEnergyGroups(top_, mdp_.energyGrps, mdp_.where("energygrps"));
    openOutputs();
}

/* Stage search: every nstlist steps (and at the first step of a
 * continuation, which may fall between searches: there without moving
 * atoms into the box) check displacements, repartition or put atoms in the
 * box. Returns whether this is a search step. */
bool MdRun::searchStage(long step)
{
    const bool regular = every(step, settings_.nstlist);
    if (!regular && step != startStep_)
    {
        return false;
    }
    checkDisplacements(step);
    if (dd_)
    {
        // a continuation's first step repeats the balance of the checkpointed
        // step only where that step was a regular search
        if (regular)
        {
            balanceStage(step);
        }
        repartition();
        openDlbWindow(step);
    }
    else if (regular)
    {
        putAtomsInBox(x_, box_);
    }
    xAtSearch_ = x_;
    return true;
}

void MdRun::openOutputs()
{
    const std::string& n = options_.deffnm;
    // a continuation appends to the outputs of the run, each cut back to what
    // the checkpoint recorded after checking it is the same file
    std::vector<std::string> continued;
    if (root_ && restart_ && options_.append)
    {
        for (const auto& f : restart_->files)
        {
            if (fileTailChecksum(f.name, f.size) != f.tailChecksum)
            {
                throw InputError(SourceLocation{ f.name, 0 },
                                 fmt::format("this output file does not match the checkpoint {} (its first {} bytes "
                                             "differ from what the run wrote); restore it, or continue with -noappend "
                                             "to start new output files",
                                             options_.continueFrom, f.size));
            }
            std::filesystem::resize_file(f.name, f.size);
            continued.push_back(f.name);
        }
    }
    auto appending = [&](const std::string& path) {
        return std::find(continued.begin(), continued.end(), path) != continued.end();
    };
    appendEnergyFile_ = appending(n + ".csv");
    appendEdrFile_    = appending(n + ".edr");
    log_ = std::make_unique<MdLog>(root_ ? n + ".log" : std::string(), appending(n + ".log"));
    if (!root_)
    {
        return;
    }
    if (mdp_.nstxoutCompressed > 0)
    {
        if (!mdp_.compressedXGrps.empty())
        {
            std::vector<bool> in(top_.numAtoms, false);
            for (const auto& g : mdp_.compressedXGrps)
            {
                const auto members = atomsOfGroup(top_, g, mdp_.where("compressed-x-grps"));
                for (int i = 0; i < top_.numAtoms; i++)
                {
                    in[i] = in[i] || members[i];
                }
            }
            for (int i = 0; i < top_.numAtoms; i++)
            {
                if (in[i])
                {
                    xtcAtoms_.push_back(i);
                }
            }
        }
        const int count = xtcAtoms_.empty() ? top_.numAtoms : static_cast<int>(xtcAtoms_.size());
        xtc_            = std::make_unique<XtcWriter>(n + ".xtc", count, mdp_.compressedXPrecision, appending(n + ".xtc"));
    }
    if (mdp_.nstxout > 0 || mdp_.nstvout > 0 || mdp_.nstfout > 0)
    {
        trr_ = std::make_unique<TrrWriter>(n + ".trr", top_.numAtoms, appending(n + ".trr"));
    }
}

void MdRun::writeHeader()
{
    std::time_t now = std::time(nullptr);
    char        date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    log_->line(fmt::format("putmd {} ({} precision), started {}", PUTMD_VERSION, precisionName(), date));
    log_->line("command: " + options_.commandLine);
    log_->line(fmt::format("system: {} ({} atoms), integrator {}, dt {} ps, nsteps {}", top_.systemName, top_.numAtoms,
                           enumName(mdp_.integrator), mdp_.dt, nsteps_));
    if (!options_.layoutChoice.empty())
    {
        log_->line("layout: " + options_.layoutChoice);
    }
    log_->line(fmt::format("threads: {} per rank ({}) for the nonbonded kernel, pair search, PME, listed forces, "
                           "SETTLE and update; LINCS and SHAKE on one",
                           options_.numThreads, options_.threadChoice.empty() ? "-nt" : options_.threadChoice));
    log_->line("nonbonded kernel: " + forces_->kernelName() + " (PUTMD_SIMD=auto|reference|sse4|avx2|avx512)");
    if (mdp_.coulombType == CoulombType::Pme)
    {
        if (dd_)
        {
            log_->line(fftPlanningFromEnvironment() == FftPlanning::Measure
                               ? "PME FFT plans: measured by each rank at set-up (PUTMD_FFTW_PLAN=measure|estimate; "
                                 "estimate gives the same bits in every run)"
                               : "PME FFT plans: estimated from the sizes (PUTMD_FFTW_PLAN=measure|estimate)");
        }
        else
        {
            log_->line(fftPlanning_ == FftPlanning::Measure
                               ? "PME FFT plans: measured, fastest of three, kept in the checkpoint (PUTMD_FFTW_PLAN=measure|estimate)"
                               : "PME FFT plans: estimated from the sizes (PUTMD_FFTW_PLAN=measure|estimate)");
        }
        log_->line(std::string("PME spread and gather (order 4): ") + pme_detail::rowsDescription());
    }
    log_->line(fmt::format("cut-offs: rcoulomb {} nm ({}), rvdw {} nm ({}), DispCorr {}", mdp_.rcoulomb,
                           enumName(mdp_.coulombType), mdp_.rvdw, enumName(mdp_.vdwModifier), enumName(mdp_.dispCorr)));
    const auto g = forces_->pmeGrid();
    if (g[0] > 0)
    {
        log_->line(fmt::format("PME: grid {} x {} x {}, order {}, Ewald coefficient {:.6f} nm^-1", g[0], g[1], g[2],
                               mdp_.pmeOrder, forces_->interactionConst().ewaldCoeff));
    }
    for (const auto& note : settings_.notes)
    {
        log_->line("chosen: " + note);
    }
    log_->line(fmt::format("degrees of freedom: {:.0f} ({} constraints, centre-of-mass mode {}{})", settings_.totalDof,
                           constraints_->numConstraints(), mdp_.commMode == CommMode::Linear ? "Linear" : "None",
                           settings_.comGroupOfAtom.empty() ? std::string()
                                                            : ", removed per group: " + fmt::format("{}", fmt::join(mdp_.commGrps, " "))));
    if (mdp_.tcoupl != TCoupl::No)
    {
        log_->line(fmt::format("temperature coupling every {} steps, ld-seed {}", settings_.nsttcouple, settings_.ldSeed));
    }
    if (mdp_.pcoupl != PCoupl::No)
    {
        log_->line(fmt::format("pressure coupling every {} steps", settings_.nstpcouple));
    }
    for (const auto& w : in_.warnings)
    {
        log_->line("warning: " + w);
    }
    log_->line("");
}

void MdRun::writeTrajectory(long step, const ForceOutput& forces)
{
    const double t = mdp_.tinit + step * mdp_.dt;
    if (dd_)
    {
        // the frame in global order on the first rank (a collective, on output steps only)
        const bool wc = every(step, mdp_.nstxoutCompressed);
        const bool wx = every(step, mdp_.nstxout), wv = every(step, mdp_.nstvout), wf = every(step, mdp_.nstfout);
        if (!(wc || wx || wv || wf))
        {
            return;
        }
        const std::vector<RVec> x = (wc || wx) ? dd_->gatherHome(x_) : std::vector<RVec>();
        const std::vector<RVec> v = wv ? dd_->gatherHome(v_) : std::vector<RVec>();
        const std::vector<RVec> f = wf ? dd_->gatherHome(forces.f) : std::vector<RVec>();
        if (!root_)
        {
            return;
        }
        if (xtc_ && wc)
        {
            if (xtcAtoms_.empty())
            {
                xtc_->write(step, t, box_, x);
            }
            else
            {
                xtcBuffer_.resize(xtcAtoms_.size());
                for (size_t k = 0; k < xtcAtoms_.size(); k++)
                {
                    xtcBuffer_[k] = x[xtcAtoms_[k]];
                }
                xtc_->write(step, t, box_, xtcBuffer_);
            }
        }
        if (trr_ && (wx || wv || wf))
        {
            trr_->write(step, t, 0, box_, wx ? &x : nullptr, wv ? &v : nullptr, wf ? &f : nullptr);
        }
        return;
    }
    if (xtc_ && every(step, mdp_.nstxoutCompressed))
    {
        if (xtcAtoms_.empty())
        {
            xtc_->write(step, t, box_, x_);
        }
        else
        {
            xtcBuffer_.resize(xtcAtoms_.size());
            for (size_t k = 0; k < xtcAtoms_.size(); k++)
            {
                xtcBuffer_[k] = x_[xtcAtoms_[k]];
            }
            xtc_->write(step, t, box_, xtcBuffer_);
        }
    }
    const bool wx = every(step, mdp_.nstxout), wv = every(step, mdp_.nstvout), wf = every(step, mdp_.nstfout);
    if (trr_ && (wx || wv || wf))
    {
        trr_->write(step, t, 0, box_, wx ? &x_ : nullptr, wv ? &v_ : nullptr, wf ? &forces.f : nullptr);
    }
}


void MdRun::leapFrogUpdate(const std::vector<double>& lambda, const ForceOutput& forces, bool computeE)
{
    std::optional<Timed> updateTimer(std::in_place, &timers_, Stage::Update);
    const real           dt = real(mdp_.dt);
    const bool nh = mdp_.tcoupl == TCoupl::NoseHoover;
    const double prDtc = settings_.nstpcouple * mdp_.dt;
    xprime_.resize(x_.size());
    const long n = static_cast<long>(x_.size());
    // atoms are independent: OpenMP's threads (-nt), the same result for any count
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
    {
        const int  g = tcGroup_[i];
        const real l = real(lambda[g]);
        RVec       pr; // Parrinello-Rahman: -dtc M v on the steps that apply it
        if (prApply_)
        {
            for (int d = 0; d < 3; d++)
            {
                pr[d] = real(-prDtc * (prM_(d, 0) * v_[i][0] + prM_(d, 1) * v_[i][1] + prM_(d, 2) * v_[i][2]));
            }
        }
        if (nh)
        {
            // -xi v with v at the midpoint of the half steps, solved for v'
            const real h = real(0.5 * noseHoover_[g].xi * mdp_.dt);
            v_[i]        = (v_[i] * (1 - h) + forces.f[i] * (invMass_[i] * dt) + pr) * (1 / (1 + h));
        }
        else
        {
            v_[i] = v_[i] * l + forces.f[i] * (invMass_[i] * dt) + pr;
        }
        if (!freeze_.empty() && freeze_[i])
        {
            for (int d = 0; d < 3; d++)
            {
                if (freeze_[i] & (1 << d))
                {
                    v_[i][d] = 0; // frozen: neither moves nor gains speed
                }
            }
        }
        xprime_[i] = x_[i] + v_[i] * dt;
    }
    updateTimer.reset();
    Timed constraintTimer(&timers_, Stage::Constraints);
    // the constraint virial only on steps that report energies or the
    // pressure (computeE): nothing else reads it in leap-frog
    constraintVirial_ = Matrix3();
    constraints_->apply(x_, xprime_, &v_, mdp_.dt, box_, computeE ? &constraintVirial_ : nullptr);
}

/* A requested stop ends the run at this step: the first signal (or -maxh)
 * at a pair-search step, a second at any step. */
bool MdRun::stopHere(long step, const Progress& progress)
{
    const bool searchStep = every(step, settings_.nstlist);
    int        requests   = stopRequestCount();
    if (dd_)
    {
        // the ranks agree, at search steps only (a collective there)
        if (!searchStep)
        {
            return false;
        }
        const bool overTime = options_.maxHours > 0 && progress.elapsedSeconds() >= 0.99 * 3600 * options_.maxHours;
        requests            = static_cast<int>(comm_->maxLong(comm::Phase::Setup, requests));
        if (comm_->maxLong(comm::Phase::Setup, overTime ? 1 : 0) > 0 && requests == 0)
        {
            stopReason_ = fmt::format("-maxh {}: stopped at 99% of the wall-time limit", options_.maxHours);
            return true;
        }
        if (requests > 0)
        {
            stopReason_ = "received " + stopRequestReason() + ": stopped at the next pair-search step";
            return true;
        }
        return false;
    }
    if (requests >= 2 || (requests == 1 && searchStep))
    {
        stopReason_ = "received " + stopRequestReason() + (requests >= 2 ? " twice: stopped at the next step"
                                                                         : ": stopped at the next pair-search step");
        return true;
    }
    if (options_.maxHours > 0 && searchStep && progress.elapsedSeconds() >= 0.99 * 3600 * options_.maxHours)
    {
        stopReason_ = fmt::format("-maxh {}: stopped at 99% of the wall-time limit", options_.maxHours);
        return true;
    }
    return false;
}

void MdRun::runLeapFrog()
{
    ForceOutput         forces;
    std::vector<double> lambda;
    Progress            progress(nsteps_, mdp_.dt);
    progress.setQuiet(!root_ || options_.trialSteps > 0);
    const bool          needPressure = mdp_.pcoupl != PCoupl::No;
    for (long step = startStep_; step <= nsteps_; step++)
    {
        smpi_record::markStep();
        const long collectives0 = collectiveCount(), growths0 = growthCount();
        const bool last     = step == nsteps_ || (step > startStep_ && stopHere(step, progress));
        checkpointStage(step, last, progress);
        steadyClock(step, last);
        if (last)
        {
            stepsDone_ = step;
        }
        const bool output   = every(step, mdp_.nstenergy) || every(step, mdp_.nstlog) || last;
        const bool computeE = output || every(step, settings_.nstcalcenergy)
                              || (needPressure && every(step, settings_.nstpcouple));
        // stage: search
        const bool search = searchStage(step);
        // stage: forces
        {
            Timed t(&timers_, Stage::Force);
            forces_->compute(x_, box_, search, computeE, forces);
        }
        checkForces(step, forces);
        // stage: trajectory output
        if (!outputsSkipped(step))
        {
            Timed t(&timers_, Stage::TrajectoryOutput);
            writeTrajectory(step, forces);
        }
        // stage: temperature coupling, with the kinetic energy of the old half step
        // (the kinetic energy tensor is only read on energy steps)
        const Matrix3 kineticOld = computeE ? kineticEnergyTensor(v_, mass_) : Matrix3();
        {
            Timed t(&timers_, Stage::Coupling);
            thermostatIntegral_ += couplingLambdas(step, lambda);
        }
        const Matrix3 kineticOldScaled = computeE ? scaledKinetic(kineticOld, lambda) : Matrix3();
        // stage: update and constraints (on the last step only for the
        // kinetic energy: the final state keeps v(t - dt/2), as GROMACS's)
        const std::vector<RVec> vBeforeLastUpdate = last ? v_ : std::vector<RVec>();
        std::vector<double> groupKineticOld, groupKineticNew;
        if (mdp_.tcoupl == TCoupl::NoseHoover)
        {
            groupKinetic(&groupKineticOld);
        }
        parrinelloRahmanStart(step);
        try
        {
            leapFrogUpdate(lambda, forces, computeE);
        }
        catch (const ConstraintError& e)
        {
            throw SimulationError(fmt::format("step {} (t = {} ps): {}; {}", step, mdp_.tinit + step * mdp_.dt, e.what(),
                                              writeLastGoodFrame(step)));
        }
        if (mdp_.tcoupl == TCoupl::NoseHoover)
        {
            // the friction's power 2 xi K over the constrained motion, with K
            // the average of the half steps: kept for the conserved energy
            groupKinetic(&groupKineticNew);
            for (int g = 0; g < settings_.groups.size(); g++)
            {
                thermostatIntegral_ += noseHoover_[g].xi * mdp_.dt * (groupKineticOld[g] + groupKineticNew[g]);
            }
        }
        // stage: centre-of-mass motion
        if (mdp_.commMode == CommMode::Linear && every(step, mdp_.nstcomm))
        {
            removeComMotion();
            zeroFrozenVelocities();
        }
        // stage: energies (kinetic energy as the average of the half steps)
        const Matrix3 kinetic = computeE ? averageOf(kineticOldScaled, kineticEnergyTensor(v_, mass_)) : Matrix3();
        Matrix3       pressure, virial, kineticTotal;
        double        temperature = 0;
        {
            Timed t(&timers_, Stage::EnergyOutput);
            outputEnergies(step, last, forces, kinetic, constraintVirial_, computeE, &pressure, &temperature, &virial,
                           &kineticTotal);
        }
        // stage: pressure coupling (needs this step's pressure tensor)
        if (mdp_.pcoupl == PCoupl::ParrinelloRahman)
        {
            if (!last)
            {
                parrinelloRahmanFinish(step, computeE, pressure);
            }
        }
        // (C-rescale and Berendsen: in the energy stage above)
        countNormalStep(step, search, computeE, last, collectives0, growths0);
        if (!last)
        {
            constructVirtualSites(virtualSites(), xprime_, box_);
            if (dd_)
            {
                dd_->constructSplitSites(xprime_, box_); // sites built across update groups
            }
            x_.swap(xprime_);
        }
        else
        {
            v_ = vBeforeLastUpdate;
            progress.update(step);
            break;
        }
        progress.update(step);
    }
    progress.update(stepsDone_, true);
    progress.finish();
    finishRun(progress);
}

/* Velocity Verlet: velocities at full steps; a half kick, a drift with
 * constraints, new forces, the second half kick and a velocity projection. */
void MdRun::runVelocityVerlet()
{
    ForceOutput         forces;
    std::vector<double> lambda;
    Progress            progress(nsteps_, mdp_.dt);
    progress.setQuiet(!root_ || options_.trialSteps > 0);
    const real          halfDt = real(0.5 * mdp_.dt);
    for (long step = startStep_; step <= nsteps_; step++)
    {
        smpi_record::markStep();
        const long collectives0 = collectiveCount(), growths0 = growthCount();
        const bool last     = step == nsteps_ || (step > startStep_ && stopHere(step, progress));
        checkpointStage(step, last, progress);
        steadyClock(step, last);
        if (last)
        {
            stepsDone_ = step;
        }
        const bool output   = every(step, mdp_.nstenergy) || every(step, mdp_.nstlog) || last;
        const bool computeE = output || every(step, settings_.nstcalcenergy);
        const bool search   = searchStage(step);
        {
            Timed t(&timers_, Stage::Force);
            forces_->compute(x_, box_, search, computeE, forces);
        }
        checkForces(step, forces);
        if (step > 0)
        {
            // second half kick: v(t) from v(t - dt/2)
            for (size_t i = 0; i < v_.size(); i++)
            {
                v_[i] += forces.f[i] * (invMass_[i] * halfDt);
            }
            constraints_->projectVelocities(x_, v_, box_);
        }
        if (mdp_.commMode == CommMode::Linear && every(step, mdp_.nstcomm))
        {
            removeComMotion();
        }
        // full-step temperature coupling scales v(t)
        {
            Timed t(&timers_, Stage::Coupling);
            thermostatIntegral_ += couplingLambdas(step, lambda);
        }
        for (size_t i = 0; i < v_.size(); i++)
        {
            v_[i] *= real(lambda[tcGroup_[i]]);
        }
        if (!outputsSkipped(step))
        {
            Timed t(&timers_, Stage::TrajectoryOutput);
            writeTrajectory(step, forces);
        }
        {
            Timed t(&timers_, Stage::EnergyOutput);
            outputEnergies(step, last, forces, kineticEnergyTensor(v_, mass_), constraintVirial_, computeE, nullptr, nullptr);
        }
        countNormalStep(step, search, computeE, last, collectives0, growths0);
        if (last)
        {
            break;
        }
        // first half kick and drift, constrained
        xprime_.resize(x_.size());
        for (size_t i = 0; i < v_.size(); i++)
        {
            v_[i] += forces.f[i] * (invMass_[i] * halfDt);
            xprime_[i] = x_[i] + v_[i] * real(mdp_.dt);
        }
        constraintVirial_ = Matrix3();
        try
        {
            constraints_->apply(x_, xprime_, &v_, mdp_.dt, box_, &constraintVirial_);
        }
        catch (const ConstraintError& e)
        {
            throw SimulationError(fmt::format("step {} (t = {} ps): {}; {}", step, mdp_.tinit + step * mdp_.dt, e.what(),
                                              writeLastGoodFrame(step)));
        }
        // the drift constrains the displacement of half a kick: the constraint
        // force, and so its virial, is twice what m dx/dt^2 gives (as GROMACS)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                constraintVirial_(a, b) *= 2;
        constructVirtualSites(virtualSites(), xprime_, box_);
        if (dd_)
        {
            dd_->constructSplitSites(xprime_, box_); // sites built across update groups
        }
        x_.swap(xprime_);
        progress.update(step);
    }
    progress.update(stepsDone_, true);
    progress.finish();
    finishRun(progress);
}

void MdRun::run()
{
    writeHeader();
    if (mdp_.integrator == Integrator::MdVv)
    {
        runVelocityVerlet();
    }
    else
    {
        runLeapFrog();
    }
}

} // namespace md_detail

MdFinalState runMd(const SystemInputs& inputs, const RunOptions& options)
{
    md_detail::MdRun run(inputs, options);
    run.run();
    return run.finalState();
}

} // namespace putmd
