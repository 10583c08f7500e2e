#include "fft/fft3d.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <stdexcept>
#include <vector>
#include <string>

#include "core/error.h"

#include "fft/fftw_precision.h"

namespace putmd
{

struct Fft3d::Plans
{
    PUTMD_FFTW(plan) forward  = nullptr;
    PUTMD_FFTW(plan) backward = nullptr;
};

FftPlanning fftPlanningFromEnvironment()
{
    const char* v = std::getenv("PUTMD_FFTW_PLAN");
    if (v == nullptr || std::string(v).empty() || std::string(v) == "measure")
    {
        return FftPlanning::Measure;
    }
    if (std::string(v) == "estimate")
    {
        return FftPlanning::Estimate;
    }
    throw InputError("environment variable PUTMD_FFTW_PLAN is '" + std::string(v)
                     + "'; valid values: measure (time FFTW's candidates once, the default) or estimate "
                       "(choose from the sizes alone: the same plan in every process)");
}

Fft3d::Fft3d(int nx, int ny, int nz, FftPlanning planning) :
    planning_(planning), nx_(nx), ny_(ny), nz_(nz), plans_(std::make_unique<Plans>())
{
    const size_t nreal    = size_t(nx) * ny * nz;
    const size_t ncomplex = size_t(nx) * ny * (nz / 2 + 1);
    real_    = static_cast<real*>(PUTMD_FFTW(malloc)(sizeof(real) * nreal));
    complex_ = static_cast<std::complex<real>*>(PUTMD_FFTW(malloc)(sizeof(FftwComplex) * ncomplex));
    if (!real_ || !complex_)
    {
        throw std::runtime_error("out of memory allocating a " + std::to_string(nx) + "x" + std::to_string(ny) + "x"
                                 + std::to_string(nz) + " FFT grid");
    }
    threads_ = 1; // planned at the first transform
}

namespace
{

using PlanKey = std::tuple<int, int, int, int>; // nx, ny, nz, threads

std::mutex& chosenMutex()
{
    static std::mutex m;
    return m;
}

std::map<PlanKey, std::string>& chosenPlans()
{
    static std::map<PlanKey, std::string> plans;
    return plans;
}

double secondsOf(PUTMD_FFTW(plan) forward, PUTMD_FFTW(plan) backward, int repeats)
{
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; r++)
    {
        PUTMD_FFTW(execute)(forward);
        PUTMD_FFTW(execute)(backward);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

/* Plans are made when the thread count is set (MD set-up) or else at the
 * first transform, so that a run plans once with its final thread count. With
 * Measure, FFTW's choice varies with the machine's noise while it times
 * the candidates (on 2 shared cores one plan of 42^3 in three was 1.4 times
 * slower), so it plans three times from fresh wisdom, times each pair of
 * plans on the data arrays, and keeps the fastest; the winner's wisdom is
 * kept for the process, so that the same size and thread count is planned
 * the same way again (reproducible runs within a process). The arrays are
 * saved and restored around the planning (measuring overwrites them). */
void Fft3d::makePlans(int threads)
{
    static const bool threadsReady = PUTMD_FFTW(init_threads)() != 0; // once per process
    // the plans chosen in this process, as FFTW wisdom, by size and
    // threads: a second transform of the same size (a second run in the
    // same process, or a run continued from a checkpoint) gets the same
    // plans, so the same results
    const std::lock_guard<std::mutex> lock(chosenMutex());
    auto&                             chosen = chosenPlans();
    const auto        key = std::make_tuple(nx_, ny_, nz_, threads);
    const auto        known = chosen.find(key);
    destroyPlans();
    const size_t                    nreal = size_t(nx_) * ny_ * nz_;
    const size_t                    ncomplex = size_t(nx_) * ny_ * (nz_ / 2 + 1);
    std::vector<real>               saved(real_, real_ + nreal);
    std::vector<std::complex<real>> savedComplex(complex_, complex_ + ncomplex);
    PUTMD_FFTW(plan_with_nthreads)(threadsReady ? threads : 1);
    auto*     c        = reinterpret_cast<FftwComplex*>(complex_);
    const int attempts = planning_ == FftPlanning::Measure && known == chosen.end() ? 3 : 1;
    if (planning_ == FftPlanning::Measure && known != chosen.end())
    {
        PUTMD_FFTW(forget_wisdom)();
        PUTMD_FFTW(import_wisdom_from_string)(known->second.c_str());
    }
    double    best     = 0;
    for (int attempt = 0; attempt < attempts; attempt++)
    {
        if (attempt > 0)
        {
            PUTMD_FFTW(forget_wisdom)();
        }
        const unsigned flags = planning_ == FftPlanning::Measure ? FFTW_MEASURE : FFTW_ESTIMATE;
        // the forward transform may use the real array as scratch (every
        // caller fills it again before the next forward: PME spreads into
        // a cleared grid); preserving it made FFTW copy the data through a
        // buffer (fftwf_cpy2d: 2.4% of a one-thread rnase run)
        auto*          f     = PUTMD_FFTW(plan_dft_r2c_3d)(nx_, ny_, nz_, real_, c, flags | FFTW_DESTROY_INPUT);
        auto*          b     = PUTMD_FFTW(plan_dft_c2r_3d)(nx_, ny_, nz_, c, real_, flags);
        if (!f || !b)
        {
            throw std::runtime_error("FFTW could not plan a " + std::to_string(nx_) + "x" + std::to_string(ny_) + "x"
                                     + std::to_string(nz_) + " real-to-complex transform");
        }
        double seconds = 0;
        if (attempts > 1)
        {
            std::fill(real_, real_ + nreal, real(0));
            seconds = secondsOf(f, b, 5);
        }
        if (!plans_->forward || seconds < best)
        {
            destroyPlans();
            plans_->forward  = f;
            plans_->backward = b;
            best             = seconds;
            if (attempts > 1)
            {
                char* w = PUTMD_FFTW(export_wisdom_to_string)();
                chosen[key] = w ? std::string(w) : std::string();
                std::free(w);
            }
        }
        else
        {
            PUTMD_FFTW(destroy_plan)(f);
            PUTMD_FFTW(destroy_plan)(b);
        }
    }
    PUTMD_FFTW(plan_with_nthreads)(1); // other plans (the pencil FFT) stay serial
    std::copy(saved.begin(), saved.end(), real_);
    std::copy(savedComplex.begin(), savedComplex.end(), complex_);
    plannedThreads_ = threads;
}

std::string chosenFftPlans()
{
    // per plan: "nx ny nz threads length\n" and the wisdom's bytes
    const std::lock_guard<std::mutex> lock(chosenMutex());
    std::string                       record;
    for (const auto& [key, wisdom] : chosenPlans())
    {
        const auto [nx, ny, nz, threads] = key;
        record += std::to_string(nx) + " " + std::to_string(ny) + " " + std::to_string(nz) + " "
                  + std::to_string(threads) + " " + std::to_string(wisdom.size()) + "\n" + wisdom;
    }
    return record;
}

bool useFftPlans(const std::string& record)
{
    std::map<PlanKey, std::string> plans;
    size_t                         pos = 0;
    while (pos < record.size())
    {
        const size_t eol = record.find('\n', pos);
        if (eol == std::string::npos)
        {
            return false;
        }
        std::istringstream head(record.substr(pos, eol - pos));
        int                nx = 0, ny = 0, nz = 0, threads = 0;
        size_t             length = 0;
        if (!(head >> nx >> ny >> nz >> threads >> length) || length > record.size() - eol - 1)
        {
            return false;
        }
        plans[{ nx, ny, nz, threads }] = record.substr(eol + 1, length);
        pos                            = eol + 1 + length;
    }
    const std::lock_guard<std::mutex> lock(chosenMutex());
    for (auto& [key, wisdom] : plans)
    {
        chosenPlans()[key] = std::move(wisdom);
    }
    return true;
}

void Fft3d::setPlanning(FftPlanning planning)
{
    if (planning != planning_)
    {
        planning_ = planning;
        destroyPlans();
        plannedThreads_ = 0;
    }
}

void Fft3d::destroyPlans()
{
    if (plans_->forward)
    {
        PUTMD_FFTW(destroy_plan)(plans_->forward);
        PUTMD_FFTW(destroy_plan)(plans_->backward);
        plans_->forward = plans_->backward = nullptr;
    }
}

void Fft3d::setNumThreads(int n)
{
    if (n > 0)
    {
        threads_ = n;
        if (plannedThreads_ != threads_)
        {
            makePlans(threads_); // now, at set-up, not in the first step
        }
    }
}

Fft3d::~Fft3d()
{
    destroyPlans();
    PUTMD_FFTW(free)(real_);
    PUTMD_FFTW(free)(complex_);
}

void Fft3d::forward()
{
    if (!plans_->forward || plannedThreads_ != threads_)
    {
        makePlans(threads_);
    }
    PUTMD_FFTW(execute)(plans_->forward);
}

void Fft3d::backward()
{
    if (!plans_->forward || plannedThreads_ != threads_)
    {
        makePlans(threads_);
    }
    PUTMD_FFTW(execute)(plans_->backward);
}

} // namespace putmd
