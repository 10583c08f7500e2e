#include "fft/fft3d.h"

#include <cstdlib>
#include <stdexcept>
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
    makePlans(1);
}

void Fft3d::makePlans(int threads)
{
    static const bool threadsReady = PUTMD_FFTW(init_threads)() != 0; // once per process
    if (plans_->forward)
    {
        PUTMD_FFTW(destroy_plan)(plans_->forward);
        PUTMD_FFTW(destroy_plan)(plans_->backward);
    }
    PUTMD_FFTW(plan_with_nthreads)(threadsReady ? threads : 1);
    auto* c          = reinterpret_cast<FftwComplex*>(complex_);
    const unsigned flags = planning_ == FftPlanning::Measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    plans_->forward      = PUTMD_FFTW(plan_dft_r2c_3d)(nx_, ny_, nz_, real_, c, flags);
    plans_->backward     = PUTMD_FFTW(plan_dft_c2r_3d)(nx_, ny_, nz_, c, real_, flags);
    if (!plans_->forward || !plans_->backward)
    {
        throw std::runtime_error("FFTW could not plan a " + std::to_string(nx_) + "x" + std::to_string(ny_) + "x"
                                 + std::to_string(nz_) + " real-to-complex transform");
    }
    PUTMD_FFTW(plan_with_nthreads)(1); // other plans (the pencil FFT) stay serial
    threads_ = threads;
}

void Fft3d::setNumThreads(int n)
{
    if (n > 0 && n != threads_)
    {
        makePlans(n);
    }
}

Fft3d::~Fft3d()
{
    PUTMD_FFTW(destroy_plan)(plans_->forward);
    PUTMD_FFTW(destroy_plan)(plans_->backward);
    PUTMD_FFTW(free)(real_);
    PUTMD_FFTW(free)(complex_);
}

void Fft3d::forward()
{
    PUTMD_FFTW(execute)(plans_->forward);
}

void Fft3d::backward()
{
    PUTMD_FFTW(execute)(plans_->backward);
}

} // namespace putmd
