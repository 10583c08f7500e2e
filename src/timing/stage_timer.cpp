#include "timing/stage_timer.h"

#include <fmt/format.h>

namespace putmd
{

const char* stageName(Stage s)
{
    switch (s)
    {
        case Stage::DomainDecomp: return "Domain decomp.";
        case Stage::HaloCoordinates: return "Comm. coord.";
        case Stage::HaloForces: return "Comm. force";
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
           || s == Stage::HaloCoordinates || s == Stage::HaloForces;
}

std::string StageTimers::table(double total) const
{
    std::string out = "     R E A L   T I M E   A C C O U N T I N G\n\n";
    out += fmt::format(" {:<20}{:>12}{:>14}{:>10}\n", "Stage", "Calls", "Wall t (s)", "%");
    out += " " + std::string(55, '-') + "\n";
    double accounted = 0;
    for (int i = 0; i < static_cast<int>(Stage::Count); i++)
    {
        const Stage s = static_cast<Stage>(i);
        if (calls_[i] == 0)
        {
            continue;
        }
        if (!isSubStage(s))
        {
            accounted += seconds_[i];
        }
        const std::string name = isSubStage(s) ? std::string("  ") + stageName(s) : stageName(s);
        out += fmt::format(" {:<20}{:>12}{:>14.3f}{:>10.1f}\n", name, calls_[i], seconds_[i],
                           total > 0 ? 100 * seconds_[i] / total : 0.0);
    }
    out += fmt::format(" {:<20}{:>12}{:>14.3f}{:>10.1f}\n", "Rest", "", total - accounted,
                       total > 0 ? 100 * (total - accounted) / total : 0.0);
    out += " " + std::string(55, '-') + "\n";
    out += fmt::format(" {:<20}{:>12}{:>14.3f}{:>10.1f}\n", "Total", "", total, 100.0);
    return out;
}

} // namespace putmd
