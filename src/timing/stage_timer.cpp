#include "timing/stage_timer.h"

#include "core/error.h"

namespace putmd
{

const char* stageName(Stage s)
{
    switch (s)
    {
        case Stage::DomainDecomp: return "Domain decomp.";
        case Stage::LoadBalancing: return "Load balancing";
        case Stage::HaloCoordinates: return "Comm. coord.";
        case Stage::HaloForces: return "Comm. force";
        case Stage::HaloCoordinatesWait: return "Wait comm. coord.";
        case Stage::HaloForcesWait: return "Wait comm. force";
        case Stage::Search: return "Pair search";
        case Stage::Force: return "Force";
        case Stage::Nonbonded: return "Nonbonded";
        case Stage::Listed: return "Listed";
        case Stage::PmeMesh: return "PME mesh";
        case Stage::PmeRedistX: return "PME redist. X";
        case Stage::PmeSpread: return "PME spread";
        case Stage::PmeBorder: return "PME grid comm.";
        case Stage::PmeFft: return "PME 3D-FFT";
        case Stage::PmeFftComm: return "PME 3D-FFT comm.";
        case Stage::PmeSolve: return "PME solve";
        case Stage::PmeGather: return "PME gather";
        case Stage::PmeRedistF: return "PME redist. F";
        case Stage::PmeSendX: return "PP->PME send X";
        case Stage::PmeWaitF: return "Wait PME F";
        case Stage::TrajectoryOutput: return "Write traj.";
        case Stage::Coupling: return "T-coupling";
        case Stage::Update: return "Update";
        case Stage::Constraints: return "Constraints";
        case Stage::EnergyOutput: return "Energies";
        case Stage::Checkpoint: return "Write checkpoint";
        case Stage::EnergyReduction: return "Energy reduction";
        case Stage::Count: break;
    }
    return "?";
}

bool isSubStage(Stage s)
{
    if (s >= Stage::PmeRedistX && s <= Stage::PmeWaitF)
    {
        return true;
    }
    return s == Stage::Search || s == Stage::Nonbonded || s == Stage::Listed || s == Stage::PmeMesh
           || s == Stage::HaloCoordinates || s == Stage::HaloForces || s == Stage::HaloCoordinatesWait
           || s == Stage::HaloForcesWait;
}

Stage parentStage(Stage s)
{
    if (s >= Stage::PmeRedistX && s <= Stage::PmeRedistF)
    {
        return s == Stage::PmeFftComm ? Stage::PmeFft : Stage::PmeMesh;
    }
    return isSubStage(s) ? Stage::Force : s;
}

bool isWorkStage(Stage s)
{
    return s == Stage::Search || s == Stage::Nonbonded || s == Stage::Listed || s == Stage::PmeMesh
           || s == Stage::Update || s == Stage::Constraints || s == Stage::Coupling;
}

bool stageTimingEnabled()
{
    static const bool enabled =
            !environmentChoice("PUTMD_TIMING", "full", "every stage timed", "minimal", "only the total");
    return enabled;
}

std::vector<double> StageTimers::serialize() const
{
    std::vector<double> out(kSerialSize);
    for (int i = 0; i < kStages; i++)
    {
        out[i]               = seconds_[i];
        out[kStages + i]     = cycles_[i];
        out[2 * kStages + i] = double(calls_[i]);
    }
    return out;
}

StageTimers StageTimers::deserialize(std::span<const double> data)
{
    StageTimers t;
    for (int i = 0; i < kStages && 3 * kStages <= static_cast<int>(data.size()); i++)
    {
        t.seconds_[i] = data[i];
        t.cycles_[i]  = data[kStages + i];
        t.calls_[i]   = static_cast<long>(data[2 * kStages + i]);
    }
    return t;
}

} // namespace putmd
