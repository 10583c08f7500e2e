#include "fft/fft3d.h"

#include <stdexcept>

#include "fft/fftw_precision.h"

namespace putmd
{

struct Fft3d::Plans
{
    PUTMD_FFTW(plan) forward  = nullptr;
    PUTMD_FFTW(plan) backward = nullptr;
};

Fft3d::Fft3d(int nx, int ny, int nz) : nx_(nx), ny_(ny), nz_(nz), plans_(std::make_unique<Plans>())
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
    plans_->forward  = PUTMD_FFTW(plan_dft_r2c_3d)(nx_, ny_, nz_, real_, c, FFTW_ESTIMATE);
    plans_->backward = PUTMD_FFTW(plan_dft_c2r_3d)(nx_, ny_, nz_, c, real_, FFTW_ESTIMATE);
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
