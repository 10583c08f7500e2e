#include "fft/fft3d.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <stdexcept>
#include <vector>
#include <string>

#include <omp.h>

#include "core/error.h"

#include "fft/aligned_plans.h"
#include "fft/fftw_precision.h"

namespace putmd
{

struct Fft3d::Plans
{
    PUTMD_FFTW(plan) forward  = nullptr;
    PUTMD_FFTW(plan) backward = nullptr;
};

/* convolve()'s plans: z (real <-> complex, the ny rows of one x plane), y
 * (the nz/2+1 columns of one plane, in place), x forward (the nz/2+1
 * columns of one ky, read from the grid with stride ny (nz/2+1) into a
 * buffer) and x backward (buffer to buffer, contiguous; the rows are then
 * copied to the grid: FFTW's measured plans that write the strided columns
 * themselves ran 2.5 to 25 times slower in some processes than in others,
 * 60^3 and 42^3). Two buffers per thread. */
struct Fft3d::LinePlans
{
    AlignedPlans              zForward, zBackward, yForward, yBackward, xForward, xBackward;
    std::vector<FftwComplex*> buffers; // two per thread

    LinePlans() = default;
    LinePlans(const LinePlans&) = delete;
    LinePlans& operator=(const LinePlans&) = delete;
    ~LinePlans()
    {
        for (FftwComplex* b : buffers)
        {
            PUTMD_FFTW(free)(b);
        }
    }
};

FftPlanning fftPlanningFromEnvironment()
{
    return environmentChoice("PUTMD_FFTW_PLAN", "measure", "time FFTW's candidates once", "estimate",
                             "choose from the sizes alone: the same plan in every process")
                   ? FftPlanning::Estimate
                   : FftPlanning::Measure;
}

Fft3d::Fft3d(int nx, int ny, int nz, FftPlanning planning, int zHalo) :
    planning_(planning),
    nx_(nx),
    ny_(ny),
    nz_(nz),
    zHalo_(zHalo),
    rowStride_(zHalo > 0 ? (nz + zHalo + 3) / 4 * 4 : nz),
    plans_(std::make_unique<Plans>())
{
    if (zHalo < 0 || zHalo > nz)
    {
        throw std::invalid_argument("Fft3d: a z halo of " + std::to_string(zHalo) + " points on rows of "
                                    + std::to_string(nz) + " (valid: 0 to the row length)");
    }
    const size_t nreal    = size_t(nx) * ny * rowStride_;
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

constexpr size_t c_patientPoints = size_t(1) << 18; // line plans of grids up to this many points: FFTW_PATIENT

using PlanKey = std::tuple<int, int, int, int, int>; // nx, ny, nz, threads, row stride

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
    const auto        key = std::make_tuple(nx_, ny_, nz_, threads, rowStride_);
    const auto        known = chosen.find(key);
    destroyPlans();
    const size_t                    nreal = size_t(nx_) * ny_ * rowStride_;
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
        // (rows rowStride_ apart: without a halo the same problem as
        // FFTW's plan_dft_r2c_3d)
        const int      n[3]  = { nx_, ny_, nz_ };
        const int      rn[3] = { nx_, ny_, rowStride_ };
        const int      cn[3] = { nx_, ny_, nz_ / 2 + 1 };
        auto* f = PUTMD_FFTW(plan_many_dft_r2c)(3, n, 1, real_, rn, 1, 0, c, cn, 1, 0, flags | FFTW_DESTROY_INPUT);
        auto* b = PUTMD_FFTW(plan_many_dft_c2r)(3, n, 1, c, cn, 1, 0, real_, rn, 1, 0, flags);
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
    // per plan: "nx ny nz threads length[ rowstride]\n" and the wisdom's
    // bytes (the row stride where the rows have a halo)
    const std::lock_guard<std::mutex> lock(chosenMutex());
    std::string                       record;
    for (const auto& [key, wisdom] : chosenPlans())
    {
        const auto [nx, ny, nz, threads, stride] = key;
        record += std::to_string(nx) + " " + std::to_string(ny) + " " + std::to_string(nz) + " "
                  + std::to_string(threads) + " " + std::to_string(wisdom.size())
                  + (stride != nz ? " " + std::to_string(stride) : std::string()) + "\n" + wisdom;
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
        int stride = nz;
        if (!(head >> stride))
        {
            stride = nz; // no halo
        }
        plans[{ nx, ny, nz, threads, stride }] = record.substr(eol + 1, length);
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
        lines_.reset();
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
    lines_.reset();
    PUTMD_FFTW(free)(real_);
    PUTMD_FFTW(free)(complex_);
}

void Fft3d::foldHalo(int x)
{
    real* const plane = real_ + size_t(x) * ny_ * rowStride_;
    for (int y = 0; y < ny_; y++)
    {
        real* const row = plane + size_t(y) * rowStride_;
        for (int z = 0; z < zHalo_; z++)
        {
            row[z] += row[nz_ + z];
        }
    }
}

void Fft3d::unfoldHalo(int x)
{
    real* const plane = real_ + size_t(x) * ny_ * rowStride_;
    for (int y = 0; y < ny_; y++)
    {
        real* const row = plane + size_t(y) * rowStride_;
        std::memcpy(row + nz_, row, sizeof(real) * zHalo_);
    }
}

void Fft3d::forward()
{
    if (!plans_->forward || plannedThreads_ != threads_)
    {
        makePlans(threads_);
    }
    for (int x = 0; x < nx_ && zHalo_ > 0; x++)
    {
        foldHalo(x);
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
    for (int x = 0; x < nx_ && zHalo_ > 0; x++)
    {
        unfoldHalo(x);
    }
}


namespace
{

FftwComplex* lineBuffer(size_t points)
{
    auto* b = static_cast<FftwComplex*>(PUTMD_FFTW(malloc)(sizeof(FftwComplex) * points));
    if (!b)
    {
        throw std::runtime_error("out of memory allocating an FFT line buffer");
    }
    return b;
}

} // namespace

/* One set of line plans, from the given wisdom (measured plans: none, so
 * FFTW measures afresh) or estimated. */
std::unique_ptr<Fft3d::LinePlans> Fft3d::planLines(const std::string* wisdom)
{
    const int      nzc     = complexNz();
    const bool     measure = planning_ == FftPlanning::Measure;
    // small grids: FFTW_PATIENT (fft3d.h)
    const bool     patient = size_t(nx_) * ny_ * nz_ <= c_patientPoints;
    const unsigned flags   = measure ? (patient ? FFTW_PATIENT : FFTW_MEASURE) : FFTW_ESTIMATE;
    auto*          c       = reinterpret_cast<FftwComplex*>(complex_);
    const size_t   realPlane = size_t(ny_) * rowStride_, complexPlane = size_t(ny_) * nzc;
    const int      rs        = rowStride_;
    int            nz = nz_, ny = ny_, nx = nx_;
    auto           lines = std::make_unique<LinePlans>();
    lines->buffers.push_back(lineBuffer(size_t(nx_) * nzc));
    lines->buffers.push_back(lineBuffer(size_t(nx_) * nzc));
    FftwComplex*   a = lines->buffers[0];
    FftwComplex*   b = lines->buffers[1];
    const std::lock_guard<std::mutex> lock(chosenMutex()); // FFTW's planner is not thread-safe
    if (measure)
    {
        PUTMD_FFTW(forget_wisdom)();
        if (wisdom)
        {
            PUTMD_FFTW(import_wisdom_from_string)(wisdom->c_str());
        }
    }
    PUTMD_FFTW(plan_with_nthreads)(1);
    auto realOf  = [&](int x) { return real_ + x * realPlane; };
    auto planeOf = [&](int x) { return c + x * complexPlane; };
    auto rowOf   = [&](int y) { return c + size_t(y) * nzc; };
    auto bufA    = [&](int) { return a; };
    auto bufB    = [&](int) { return b; };
    // z: ny rows of nz reals <-> nzc complex per plane
    bool ok = lines->zForward.plan(nx_, realOf, planeOf, [&](real* in, FftwComplex* out) {
        return PUTMD_FFTW(plan_many_dft_r2c)(1, &nz, ny_, in, nullptr, 1, rs, out, nullptr, 1, nzc,
                                            flags | FFTW_DESTROY_INPUT);
    });
    ok = ok && lines->zBackward.plan(nx_, planeOf, realOf, [&](FftwComplex* in, real* out) {
        return PUTMD_FFTW(plan_many_dft_c2r)(1, &nz, ny_, in, nullptr, 1, nzc, out, nullptr, 1, rs, flags);
    });
    // y: nzc columns of ny points (stride nzc) per plane, in place
    for (int sign : { FFTW_FORWARD, FFTW_BACKWARD })
    {
        ok = ok && (sign == FFTW_FORWARD ? lines->yForward : lines->yBackward).plan(nx_, planeOf, planeOf,
                   [&](FftwComplex* in, FftwComplex* out) {
                       return PUTMD_FFTW(plan_many_dft)(1, &ny, nzc, in, nullptr, nzc, 1, out, nullptr, nzc, 1, sign,
                                                        flags);
                   });
    }
    // x: nzc columns of nx points of one ky, grid (stride ny nzc) -> a, and
    // back a -> b; both (kx, kz), kz fastest
    ok = ok && lines->xForward.plan(ny_, rowOf, bufA, [&](FftwComplex* in, FftwComplex* out) {
        return PUTMD_FFTW(plan_many_dft)(1, &nx, nzc, in, nullptr, ny_ * nzc, 1, out, nullptr, nzc, 1, FFTW_FORWARD,
                                         flags);
    });
    ok = ok && lines->xBackward.plan(1, bufA, bufB, [&](FftwComplex* in, FftwComplex* out) {
        return PUTMD_FFTW(plan_many_dft)(1, &nx, nzc, in, nullptr, nzc, 1, out, nullptr, nzc, 1, FFTW_BACKWARD, flags);
    });
    if (!ok)
    {
        throw std::runtime_error("FFTW could not plan the line transforms of a " + std::to_string(nx_) + "x"
                                 + std::to_string(ny_) + "x" + std::to_string(nz_) + " grid");
    }
    return lines;
}

/* With Measure, FFTW's choice of a line plan varies from process to
 * process with the machine's noise (one x plan of 42^3 in four took ten
 * times as long), so, as for the 3D plans, the set is planned three times
 * from fresh wisdom, convolve() timed with each, and the fastest kept: its
 * wisdom is recorded (process and checkpoint) and planned from again. The
 * arrays are saved and restored around the planning. */
void Fft3d::makeLinePlans()
{
    lines_.reset();
    const size_t nreal = size_t(nx_) * ny_ * rowStride_, ncomplex = size_t(nx_) * ny_ * complexNz();
    std::vector<real>               saved(real_, real_ + nreal);
    std::vector<std::complex<real>> savedComplex(complex_, complex_ + ncomplex);
    const PlanKey key = std::make_tuple(nx_, ny_, nz_, 0, rowStride_); // threads 0: the line plans
    std::string   known;
    bool          isKnown = false;
    {
        const std::lock_guard<std::mutex> lock(chosenMutex());
        const auto                        it = chosenPlans().find(key);
        isKnown                              = it != chosenPlans().end();
        known                                = isKnown ? it->second : std::string();
    }
    if (planning_ == FftPlanning::Measure && !isKnown)
    {
        double best = 0;
        for (int attempt = 0; attempt < 3; attempt++)
        {
            lines_ = planLines(nullptr);
            std::fill(real_, real_ + nreal, real(0));
            const auto start = std::chrono::steady_clock::now();
            for (int r = 0; r < 5; r++)
            {
                convolve(1, [](int, int, std::complex<real>*) {});
            }
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (attempt == 0 || seconds < best)
            {
                best = seconds;
                const std::lock_guard<std::mutex> lock(chosenMutex());
                char*                             w = PUTMD_FFTW(export_wisdom_to_string)();
                known                               = w ? std::string(w) : std::string();
                std::free(w);
            }
        }
        const std::lock_guard<std::mutex> lock(chosenMutex());
        chosenPlans()[key] = known;
        isKnown            = true;
    }
    lines_ = planLines(isKnown ? &known : nullptr);
    std::copy(saved.begin(), saved.end(), real_);
    std::copy(savedComplex.begin(), savedComplex.end(), complex_);
}

void Fft3d::prepareLines()
{
    if (!lines_)
    {
        makeLinePlans();
    }
}

void Fft3d::convolve(int threads, const RowSolver& solveRows)
{
    prepareLines();
    const int nt  = std::max(1, std::min({ threads, nx_, ny_ }));
    const int nzc = complexNz();
    while (static_cast<int>(lines_->buffers.size()) < 2 * nt)
    {
        lines_->buffers.push_back(lineBuffer(size_t(nx_) * nzc));
    }
    const size_t     realPlane    = size_t(ny_) * rowStride_;
    const size_t     complexPlane = size_t(ny_) * nzc;
    auto*            c            = reinterpret_cast<FftwComplex*>(complex_);
    const LinePlans& p            = *lines_;
#pragma omp parallel num_threads(nt)
    {
        const int t = nt > 1 ? omp_get_thread_num() : 0;
        for (int x = nx_ * t / nt; x < nx_ * (t + 1) / nt; x++)
        {
            real* const        r     = real_ + x * realPlane;
            FftwComplex* const plane = c + x * complexPlane;
            foldHalo(x);
            PUTMD_FFTW(execute_dft_r2c)(p.zForward.find(r, plane), r, plane);
            PUTMD_FFTW(execute_dft)(p.yForward.find(plane, plane), plane, plane);
        }
#pragma omp barrier
        FftwComplex* a = p.buffers[2 * t];
        FftwComplex* b = p.buffers[2 * t + 1];
        for (int y = ny_ * t / nt; y < ny_ * (t + 1) / nt; y++)
        {
            FftwComplex* const row = c + size_t(y) * nzc;
            PUTMD_FFTW(execute_dft)(p.xForward.find(row, a), row, a);
            solveRows(t, y, reinterpret_cast<std::complex<real>*>(a));
            PUTMD_FFTW(execute_dft)(p.xBackward.find(a, b), a, b);
            for (int x = 0; x < nx_; x++)
            {
                std::memcpy(c + x * complexPlane + size_t(y) * nzc, b + size_t(x) * nzc, sizeof(FftwComplex) * nzc);
            }
        }
#pragma omp barrier
        for (int x = nx_ * t / nt; x < nx_ * (t + 1) / nt; x++)
        {
            real* const        r     = real_ + x * realPlane;
            FftwComplex* const plane = c + x * complexPlane;
            PUTMD_FFTW(execute_dft)(p.yBackward.find(plane, plane), plane, plane);
            PUTMD_FFTW(execute_dft_c2r)(p.zBackward.find(plane, r), plane, r);
            unfoldHalo(x);
        }
    }
}

} // namespace putmd
