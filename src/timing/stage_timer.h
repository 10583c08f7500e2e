/* timing/stage_timer.h — wall-clock accounting of the named stages of a
 * step, in the manner of GROMACS's "real cycle and time accounting".
 *
 * Each stage of the MD step is an enum value; a scoped Timed object adds the
 * time (steady_clock) and cycles (the time-stamp counter on x86-64, 0
 * elsewhere) between its construction and destruction to its stage. Sub-
 * stages (isSubStage: the force stage's nonbonded, listed and PME rows) are
 * shown indented and are not added again to the total. A top-level stage
 * opened inside another top-level stage (e.g. the energy reduction inside
 * the energy output, or repartitioning inside the force stage) is taken out
 * of the outer one, so the top-level rows never count a second twice.
 * The cost is two clock and two counter reads per stage and step.
 *
 * PUTMD_TIMING=minimal in the environment turns every Timed into a no-op
 * (only the run's total wall time is measured), to measure what the
 * accounting itself costs. The multi-rank report is timing/perf_report.h.
 */
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#endif

#include "core/clock.h"

namespace putmd
{

enum class Stage
{
    DomainDecomp, // migration, halo set-up, local topology (search steps)
    LoadBalancing, // dynamic load balancing: the loads' reduction and the new boundaries (search steps)
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
    HaloCoordinates,     // inside Force: packing and sending halo coordinates, unpacking
    HaloCoordinatesWait, // inside Force: waiting for halo coordinates to arrive
    HaloForces,          // inside Force: packing and sending halo forces, adding them up
    HaloForcesWait,      // inside Force: waiting for halo forces to arrive
    TrajectoryOutput,
    Coupling,
    Update,
    Constraints,
    EnergyOutput,
    Checkpoint,      // writing NAME.cpt
    EnergyReduction, // summing energies, kinetic energy and virial over ranks
    Count
};

const char* stageName(Stage s);
bool        isSubStage(Stage s); // part of another stage's time
/* The stage a sub-stage's time is part of (itself for a top-level stage). */
Stage parentStage(Stage s);
/* Stages that are computation (not communication or waiting): their spread
 * over ranks is the load imbalance. */
bool isWorkStage(Stage s);

/* The CPU's cycle counter (0 where there is none). Also 0 in the SMPI build:
 * there the stages are timed on the simulated clock, and the counter would
 * count the simulation's own cycles (for 1,024 simulated ranks a thousand
 * times the cycles of the simulated stages), so the log's G-Cycles column
 * is 0 there. */
inline uint64_t cycleCounter()
{
#if (defined(__x86_64__) || defined(_M_X64)) && !PUTMD_SMPI
    return __rdtsc();
#else
    return 0;
#endif
}

/* False when PUTMD_TIMING=minimal (read once; another value than full or
 * minimal throws InputError). */
bool stageTimingEnabled();

class StageTimers
{
public:
    static constexpr int kStages = static_cast<int>(Stage::Count);

    void add(Stage s, double seconds, double cycles = 0)
    {
        seconds_[static_cast<int>(s)] += seconds;
        cycles_[static_cast<int>(s)] += cycles;
        calls_[static_cast<int>(s)]++;
    }
    /* Takes time out of a stage without counting a call (a nested
     * top-level stage's time). */
    void remove(Stage s, double seconds, double cycles)
    {
        seconds_[static_cast<int>(s)] -= seconds;
        cycles_[static_cast<int>(s)] -= cycles;
    }
    /* Replaces a stage's totals (e.g. with another rank's). */
    void set(Stage s, double seconds, long calls, double cycles = 0)
    {
        seconds_[static_cast<int>(s)] = seconds;
        calls_[static_cast<int>(s)]   = calls;
        cycles_[static_cast<int>(s)]  = cycles;
    }
    double seconds(Stage s) const { return seconds_[static_cast<int>(s)]; }
    double cycles(Stage s) const { return cycles_[static_cast<int>(s)]; }
    long   calls(Stage s) const { return calls_[static_cast<int>(s)]; }

    /* kSerialSize doubles (seconds, cycles, calls of every stage) for
     * sending to another rank, and back. */
    static constexpr int kSerialSize = 3 * kStages;
    std::vector<double> serialize() const;
    static StageTimers  deserialize(std::span<const double> data);

    /* The open top-level stages (Timed keeps this up to date). */
    std::vector<Stage>& openStages() { return open_; }

private:
    std::array<double, kStages> seconds_{};
    std::array<double, kStages> cycles_{};
    std::array<long, kStages>   calls_{};
    std::vector<Stage>          open_;
};

/* A sub-stage timed over several intervals (start/stop pairs) and counted
 * as one call when it goes out of scope, e.g. the waits of all halo pulses
 * of a step. Only for sub-stages (they are not taken out of a parent). */
class StageClock
{
public:
    StageClock(StageTimers* timers, Stage s) : timers_(stageTimingEnabled() ? timers : nullptr), stage_(s) {}
    ~StageClock()
    {
        if (timers_)
        {
            timers_->add(stage_, seconds_, cycles_);
        }
    }
    void start()
    {
        if (timers_)
        {
            t0_ = clockNow();
            c0_ = cycleCounter();
        }
    }
    void stop()
    {
        if (timers_)
        {
            seconds_ += std::chrono::duration<double>(clockNow() - t0_).count();
            cycles_ += double(cycleCounter() - c0_);
        }
    }
    StageClock(const StageClock&)            = delete;
    StageClock& operator=(const StageClock&) = delete;

private:
    StageTimers*                          timers_;
    Stage                                 stage_;
    std::chrono::steady_clock::time_point t0_{};
    uint64_t                              c0_      = 0;
    double                                seconds_ = 0, cycles_ = 0;
};

/* Adds its lifetime to a stage (no-op when timers is null or timing is
 * minimal). A top-level stage nested in another top-level stage is
 * subtracted from the outer one. */
class Timed
{
public:
    Timed(StageTimers* timers, Stage s) : timers_(stageTimingEnabled() ? timers : nullptr), stage_(s)
    {
        if (timers_)
        {
            start_  = clockNow();
            cycles_ = cycleCounter();
            if (!isSubStage(s))
            {
                timers_->openStages().push_back(s);
            }
        }
    }
    ~Timed()
    {
        if (!timers_)
        {
            return;
        }
        const double   dt = std::chrono::duration<double>(clockNow() - start_).count();
        const double   dc = double(cycleCounter() - cycles_);
        timers_->add(stage_, dt, dc);
        if (!isSubStage(stage_))
        {
            auto& open = timers_->openStages();
            open.pop_back();
            if (!open.empty())
            {
                timers_->remove(open.back(), dt, dc);
            }
        }
    }
    Timed(const Timed&)            = delete;
    Timed& operator=(const Timed&) = delete;

private:
    StageTimers*                          timers_;
    Stage                                 stage_;
    std::chrono::steady_clock::time_point start_{};
    uint64_t                              cycles_ = 0;
};

} // namespace putmd
