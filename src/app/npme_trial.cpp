#include "app/npme_trial.h"

#include <stdlib.h> // mkdtemp

#include <filesystem>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "comm/communicator.h"
#include "core/error.h"
#include "io/checkpoint.h"

namespace putmd
{

namespace
{

constexpr int kTrialSteps = 40; // timed steps per candidate, after the warm-up (kWarmUpSteps)

/* A private scratch directory for a trial's outputs, removed with
 * everything in it when the trial ends, also by an exception. */
class ScratchDir
{
public:
    ScratchDir()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "putmd-npme-trial-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr)
        {
            throw InputError("putmd run: --npme auto: cannot create a scratch directory for the layout trials in "
                             + std::filesystem::temp_directory_path().string()
                             + " (set TMPDIR to a writable directory, or give --npme a count or estimate)");
        }
        path_ = pattern;
    }
    ~ScratchDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir&)            = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

/* One candidate: the real MD from step 0 on a fresh set-up with npme
 * ranks, the warm-up and then kTrialSteps timed steps; seconds per timed
 * step, the slowest PP rank's (the ranks move in step). */
double timeLayout(const SystemInputs& in, const ParallelRequest& base, const RunOptions& run, int npme)
{
    ParallelRequest request = base;
    request.npme            = std::to_string(npme);
    request.npmeWhy         = "layout trial";
    ParallelSetup setup     = setUpParallelRun(in, request);
    double        mine      = -1;
    {
        ScratchDir dir;
        if (setup.isPmeRank())
        {
            runPmeRankOf(in, setup, run.numThreads);
        }
        else
        {
            RunOptions t        = run;
            t.deffnm            = dir.path() + "/trial";
            t.nstepsOverride    = -2;
            t.checkpointMinutes = -1;
            t.continueFrom.clear();
            t.append   = false;
            t.perfJson.clear();
            t.maxHours     = -1;
            t.trialSteps   = kTrialSteps;
            t.comm         = &setup.pp();
            t.world        = setup.world.get();
            t.pme          = setup.layout;
            t.transpose    = setup.transpose;
            t.pmeChoice    = setup.description;
            const MdFinalState f = runMd(in, t);
            if (f.timedSteps > 0)
            {
                mine = f.timedSeconds / double(f.timedSteps);
            }
        }
    }
    const long ns = setup.world->maxLong(comm::Phase::Setup, mine >= 0 ? static_cast<long>(mine * 1e9) : -1);
    if (ns < 0)
    {
        throw InputError(fmt::format("putmd run: --npme auto: the layout trial with npme {} timed no steps; give "
                                     "--npme a count (0 to {}) or estimate",
                                     npme, comm::Communicator::worldSize() / 2));
    }
    return double(ns) * 1e-9;
}

} // namespace

bool isNpmeMode(const std::string& value)
{
    return value == "auto" || value == "measure" || value == "estimate";
}

NpmeDecision decideNpme(const SystemInputs& in, const ParallelRequest& request, const RunOptions& run,
                        const std::string& mode)
{
    NpmeDecision d;
    const int    n = comm::Communicator::worldSize();
    if (mode == "estimate" || n < 2 || in.mdp.coulombType != CoulombType::Pme)
    {
        return d; // setUpParallelRun's estimate
    }
    const NpmeChoice est = estimateNpme(in, request, n);
    if (!run.continueFrom.empty())
    {
        // the layout of the run continued, when it ran on as many ranks
        // (then the continuation is bitwise, as with the count given)
        const Checkpoint c = readCheckpoint(run.continueFrom);
        if (c.pmeRanks >= 0 && c.ranks + c.pmeRanks == n && npmeUsable(in, request, n, c.pmeRanks))
        {
            d.npme = std::to_string(c.pmeRanks);
            d.why  = fmt::format("automatic: the layout of the run {} continues ({} PP and {} PME ranks)",
                                 run.continueFrom, c.ranks, c.pmeRanks);
            return d;
        }
    }
    if (est.bestSeparate == 0)
    {
        return d; // only npme 0 can run: nothing to measure
    }
    const long trialSteps = 2L * (kWarmUpSteps + kTrialSteps); // at most, both candidates
    const long nsteps     = run.nstepsOverride > -2 ? run.nstepsOverride : in.mdp.nsteps;
    if (mode == "auto" && nsteps >= 0 && nsteps < kStepsPerTrialStep * trialSteps)
    {
        d.npme = std::to_string(est.npme);
        d.why  = fmt::format("automatic: {}; not measured: the run's {} steps are fewer than {} times the trials' "
                              "{} (--npme measure times the layouts anyway)",
                              est.reason, nsteps, kStepsPerTrialStep, trialSteps);
        return d;
    }
    const std::vector<int> candidates{ 0, est.bestSeparate };
    std::vector<double>    seconds;
    for (int k : candidates)
    {
        seconds.push_back(timeLayout(in, request, run, k));
    }
    const int best = seconds[1] < seconds[0] ? 1 : 0;
    d.npme         = std::to_string(candidates[best]);
    d.why          = fmt::format("automatic, measured at start-up: {} steps of MD (after a warm-up) with npme 0 took "
                                 "{:.3f} ms per step, with npme {} {:.3f} ms (the estimate chose npme {}: {})",
                                 kTrialSteps, seconds[0] * 1e3, candidates[1], seconds[1] * 1e3, est.npme,
                                 est.reason);
    return d;
}

} // namespace putmd
