/* run/md_checkpoint.cpp — writing NAME.cpt and continuing from one (see md_run.h). */
#include "run/md_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "nonbonded/cluster_nonbonded.h"
#include "update/kinetic.h"

namespace putmd::md_detail
{

void MdRun::continueFromCheckpoint()
{
    const std::string& path = options_.continueFrom;
    if (mdp_.integrator != Integrator::Md && mdp_.integrator != Integrator::MdVv)
    {
        throw InputError(mdp_.where("integrator"),
                         "continuing from a checkpoint (-cpi) needs a dynamics integrator (md or md-vv)");
    }
    Checkpoint c = readCheckpoint(path);
    if (c.numAtoms != uint64_t(top_.numAtoms))
    {
        throw InputError(SourceLocation{ path, 0 },
                         fmt::format("the checkpoint is of a system of {} atoms ('{}'), the topology has {} atoms ('{}'): "
                                     "it belongs to another system",
                                     c.numAtoms, c.systemName, top_.numAtoms, top_.systemName));
    }
    if (c.topologyFingerprint != topologyFingerprint(top_))
    {
        throw InputError(SourceLocation{ path, 0 },
                         fmt::format("the checkpoint's system ('{}', {} atoms) differs from this topology in masses, "
                                     "charges, atom types or names: it belongs to another system, or the topology "
                                     "changed since it was written",
                                     c.systemName, c.numAtoms));
    }
    box_ = Box(c.box);
    x_.resize(c.numAtoms);
    v_.assign(c.numAtoms, RVec());
    for (size_t i = 0; i < c.numAtoms; i++)
    {
        x_[i] = RVec(c.x[i]);
        if (!c.v.empty())
        {
            v_[i] = RVec(c.v[i]);
        }
    }
    restart_ = std::move(c);
}

std::vector<std::string> MdRun::outputFiles() const
{
    std::vector<std::string> files{ options_.deffnm + ".log" };
    if (energyFile_)
    {
        files.push_back(options_.deffnm + ".csv");
        files.push_back(options_.deffnm + ".edr");
    }
    if (xtc_)
    {
        files.push_back(options_.deffnm + ".xtc");
    }
    if (trr_)
    {
        files.push_back(options_.deffnm + ".trr");
    }
    return files;
}

/* At a search step: is a checkpoint due (the ranks agree)? */
bool MdRun::checkpointDue(long step, const Progress& progress)
{
    if (options_.checkpointMinutes < 0 || step == startStep_
        || (mdp_.integrator != Integrator::Md && mdp_.integrator != Integrator::MdVv))
    {
        return false;
    }
    bool due = options_.checkpointMinutes == 0
               || progress.elapsedSeconds() - lastCheckpointSeconds_ >= 60 * options_.checkpointMinutes;
    if (dd_ && options_.checkpointMinutes > 0)
    {
        due = comm_->maxLong(comm::Phase::Setup, due ? 1 : 0) > 0;
    }
    return due;
}

/* x, v: the whole system at the start of `step` (on rank 0). */
void MdRun::writeCheckpointFile(long step, bool outputsWritten, const StepStart& state)
{
    const std::vector<RVec>&             x  = state.x;
    const std::vector<RVec>&             v  = state.v;
    const std::vector<NoseHooverState>& nh = state.noseHoover;
    if (!root_)
    {
        return;
    }
    Timed      t(&timers_, Stage::Checkpoint);
    Checkpoint c;
    c.precisionBytes      = sizeof(real);
    c.version             = PUTMD_VERSION;
    c.step                = step;
    c.time                = mdp_.tinit + step * mdp_.dt;
    c.numAtoms            = uint64_t(top_.numAtoms);
    c.topologyFingerprint = topologyFingerprint(top_);
    c.systemName          = top_.systemName;
    c.box                 = box_.vectors();
    c.x.reserve(x.size());
    c.v.reserve(v.size());
    for (size_t i = 0; i < x.size(); i++)
    {
        c.x.push_back(DVec(x[i]));
        c.v.push_back(DVec(v[i]));
    }
    c.thermostatIntegral = state.thermostat;
    c.barostatIntegral   = state.barostat;
    c.rlist              = settings_.rlist;
    c.nstlist            = settings_.nstlist;
    c.nstlistPrune       = settings_.nstlistPrune;
    c.rlistInner         = settings_.rlistInner;
    c.pruneRows          = clusterKernelPruneRows();
    c.ldSeed             = settings_.ldSeed;
    for (const auto& g : nh)
    {
        c.noseHooverXi.push_back(g.xi);
    }
    c.averageNames       = averageNames_;
    c.averageSums        = averageSums_;
    c.averageCount       = averageCount_;
    c.stepOutputsWritten = outputsWritten;
    c.ranks              = comm_ ? comm_->size() : 1;
    c.pmeRanks           = comm_ ? options_.pme.npme : 0;
    c.backend            = comm_ ? comm::backendName(comm_->backend()) : "none";
    c.fftPlans           = fftPlanning_ == FftPlanning::Measure ? chosenFftPlans() : std::string();
    c.boxVelocity        = pr_.boxVelocity; // (a step's barostat changes it only at the step's end)
    c.boxRel             = pr_.boxRel;
    c.constraintVirial   = state.constraintVirial;
    c.ddGroupRadius = dd_ ? dd_->groupRadius() : -1;
    c.dlbActive = state.dlbActive;
    c.dlbBounds = state.dlbBounds;
    c.dlbLoads  = state.dlbLoads;
    c.dlbOffForGood       = state.dlbSwitch.offForGood;
    c.dlbReferenceSeconds = state.dlbSwitch.referenceSeconds;
    c.dlbReferenceWindows = state.dlbSwitch.referenceWindows;
    c.dlbBalancedSteps    = state.dlbSwitch.balancedSteps;
    for (const auto& f : outputFiles())
    {
        CheckpointOutputFile out;
        out.name         = f;
        out.size         = std::filesystem::file_size(f);
        out.tailChecksum = fileTailChecksum(f, out.size);
        c.files.push_back(out);
    }
    writeCheckpoint(checkpointPath_, c);
}

/* Stage checkpoint, at the start of a step: a due checkpoint is written now;
 * on the last step the state is kept for the one written at the end, with
 * this step's outputs. */
void MdRun::checkpointStage(long step, bool last, const Progress& progress)
{
    if (!last && !(every(step, settings_.nstlist) && checkpointDue(step, progress)))
    {
        return;
    }
    StepStart state;
    state.x          = dd_ ? dd_->gatherHome(x_) : x_;
    state.v          = dd_ ? dd_->gatherHome(v_) : v_;
    state.thermostat = thermostatIntegral_;
    state.barostat   = barostatIntegral_;
    state.noseHoover = noseHoover_;
    if (mdp_.integrator == Integrator::MdVv)
    {
        // velocity Verlet reports this step's pressure with the virial of
        // the drift before it (leap-frog computes it within the step)
        state.constraintVirial = constraintVirial_;
        if (dd_)
        {
            std::vector<double> sum(9);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    sum[3 * a + b] = constraintVirial_(a, b);
            reduce(sum);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    state.constraintVirial(a, b) = sum[3 * a + b];
        }
    }
    if (dlbEnabled())
    {
        if (every(step, settings_.nstlist) && dlb_.marked && dlb_.pendingLoads.empty())
        {
            // this step's balance needs the window's loads: exchanged now,
            // saved, and used by the search below as by a continuation
            Timed t(&timers_, Stage::LoadBalancing);
            dlb_.pendingLoads = exchangeDlbLoads(step);
        }
        state.dlbActive = dlb_.active;
        state.dlbBounds = dd_->bounds();
        state.dlbLoads  = dlb_.pendingLoads;
        state.dlbSwitch = dlb_.sw.state();
    }
    if (last)
    {
        lastStepStart_ = std::move(state);
        return;
    }
    writeCheckpointFile(step, false, state);
    lastCheckpointSeconds_ = progress.elapsedSeconds();
}

} // namespace putmd::md_detail
