/* timing/stage_timer.h — wall-clock accounting of the named stages of a
 * step, in the manner of GROMACS's "real cycle and time accounting".
 *
 * Each stage of the MD step is an enum value; a scoped Timed object adds the
 * time between its construction and destruction to its stage. Nested
 * stages are allowed (the force stage contains nonbonded, listed and PME
 * rows, which are shown indented and are not added again to the total).
 * The cost is two steady_clock reads per stage and step. The table goes at
 * the end of the log. Multi-rank statistics, cycles and the communication
 * table come with the parallel code.
 */
#pragma once

#include <array>
#include <chrono>
#include <string>

namespace putmd
{

enum class Stage
{
    DomainDecomp, // migration, halo set-up, local topology (search steps)
    Force,
    Search, // inside Force

    Nonbonded,
    Listed,
    PmeMesh,
    PmeRedistX, // inside PME mesh: atoms to the PME rank owning their grid cells
    PmeSpread,
    PmeBorder,  // grid border summation and fill between PME ranks
    PmeFft,     // 3D-FFT, forward and back, including its communication
    PmeFftComm, // inside 3D-FFT: the transposes
    PmeSolve,
    PmeGather,
    PmeRedistF, // forces back to where the atoms came from
    PmeSendX,   // PP rank: coordinates and charges to its PME rank
    PmeWaitF,   // PP rank: waiting for the PME rank's forces
    HaloCoordinates, // inside Force: waiting for / moving halo coordinates
    HaloForces,      // inside Force: returning halo forces
    TrajectoryOutput,
    Coupling,
    Update,
    Constraints,
    EnergyOutput,
    Checkpoint, // writing NAME.cpt
    Count
};

const char* stageName(Stage s);
bool        isSubStage(Stage s); // part of another stage's time

class StageTimers
{
public:
    void add(Stage s, double seconds)
    {
        seconds_[static_cast<int>(s)] += seconds;
        calls_[static_cast<int>(s)]++;
    }
    /* Replaces a stage's totals (e.g. with another rank's). */
    void set(Stage s, double seconds, long calls)
    {
        seconds_[static_cast<int>(s)] = seconds;
        calls_[static_cast<int>(s)]   = calls;
    }
    double seconds(Stage s) const { return seconds_[static_cast<int>(s)]; }
    long   calls(Stage s) const { return calls_[static_cast<int>(s)]; }

    /* The table: stage, calls, seconds, percent of total; "Rest" is the
     * total minus the top-level stages. */
    std::string table(double totalSeconds) const;

private:
    std::array<double, static_cast<int>(Stage::Count)> seconds_{};
    std::array<long, static_cast<int>(Stage::Count)>   calls_{};
};

/* Adds its lifetime to a stage (no-op when timers is null). */
class Timed
{
public:
    Timed(StageTimers* timers, Stage s) : timers_(timers), stage_(s), start_(std::chrono::steady_clock::now()) {}
    ~Timed()
    {
        if (timers_)
        {
            timers_->add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
        }
    }
    Timed(const Timed&)            = delete;
    Timed& operator=(const Timed&) = delete;

private:
    StageTimers*                          timers_;
    Stage                                 stage_;
    std::chrono::steady_clock::time_point start_;
};

} // namespace putmd
