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
    auto* c           = reinterpret_cast<FftwComplex*>(complex_);
    plans_->forward   = PUTMD_FFTW(plan_dft_r2c_3d)(nx, ny, nz, real_, c, FFTW_ESTIMATE);
    plans_->backward  = PUTMD_FFTW(plan_dft_c2r_3d)(nx, ny, nz, c, real_, FFTW_ESTIMATE);
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
