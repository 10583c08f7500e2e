/* fft/fft3d.h — serial real-to-complex 3D FFT on one rank (FFTW).
 *
 * The real grid is nx*ny*nz, z fastest; the complex grid is
 * nx*ny*(nz/2+1). Both transforms are unnormalised, as FFTW's are. Plans are
 * made once (FFTW_ESTIMATE, so results do not depend on timing) and reused;
 * the data arrays belong to the object. The distributed pencil FFT will sit
 * behind the same interface.
 */
#pragma once

#include <complex>
#include <memory>
#include <vector>

#include "core/real.h"

namespace putmd
{

class Fft3d
{
public:
    Fft3d(int nx, int ny, int nz);
    ~Fft3d();
    Fft3d(const Fft3d&)            = delete;
    Fft3d& operator=(const Fft3d&) = delete;

    real*               realData() { return real_; }
    std::complex<real>* complexData() { return complex_; }
    int                 complexNz() const { return nz_ / 2 + 1; }

    void forward();  // real -> complex
    void backward(); // complex -> real (unnormalised)

    /* FFTW's threads for both transforms (plans made again). */
    void setNumThreads(int n);

private:
    void makePlans(int threads);
    int                 threads_ = 0;
    int                 nx_, ny_, nz_;
    real*               real_    = nullptr;
    std::complex<real>* complex_ = nullptr;
    struct Plans;
    std::unique_ptr<Plans> plans_;
};

} // namespace putmd
