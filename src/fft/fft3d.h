/* fft/fft3d.h — serial real-to-complex 3D FFT on one rank (FFTW).
 *
 * The real grid is nx*ny*nz, z fastest; the complex grid is
 * nx*ny*(nz/2+1). Both transforms are unnormalised, as FFTW's are. Plans are
 * made once and reused; the data arrays belong to the object.
 *
 * Planning: FftPlanning::Estimate (FFTW_ESTIMATE) picks the algorithm from
 * the sizes alone, so results never depend on timing; Measure
 * (FFTW_MEASURE) times candidates when the plan is made (0.05-0.3 s for the
 * grids of the shipped systems) and on 2 cores ran the transform pair of a
 * 60^3 grid 2.5 times as fast (1.05 -> 0.41 ms, 2 threads). A measured plan
 * can differ between processes, so two runs may then differ in the last
 * bits. The measured planning is done three times and the fastest pair of
 * plans kept (fft3d.cpp). Plans are made when the thread count is set, or
 * at the first transform. MD runs
 * measure unless PUTMD_FFTW_PLAN=estimate (fftPlanningFromEnvironment).
 */
#pragma once

#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "core/real.h"

namespace putmd
{

enum class FftPlanning { Estimate, Measure };

/* PUTMD_FFTW_PLAN: unset or "measure" -> Measure, "estimate" -> Estimate;
 * anything else is an InputError naming the valid values. */
FftPlanning fftPlanningFromEnvironment();

/* The measured plans this process chose (by grid size and threads) as one
 * string, for the checkpoint; and the same given back to a continued run
 * before it plans, so that it transforms exactly as the run it continues
 * (false when the string is not such a record: the run then measures). */
std::string chosenFftPlans();
bool        useFftPlans(const std::string& record);

class Fft3d
{
public:
    Fft3d(int nx, int ny, int nz, FftPlanning planning = FftPlanning::Estimate);
    ~Fft3d();
    Fft3d(const Fft3d&)            = delete;
    Fft3d& operator=(const Fft3d&) = delete;

    real*               realData() { return real_; }
    std::complex<real>* complexData() { return complex_; }
    int                 complexNz() const { return nz_ / 2 + 1; }

    void forward();  // real -> complex; leaves the real array undefined (FFTW_DESTROY_INPUT)
    void backward(); // complex -> real (unnormalised)

    /* FFTW's threads for both transforms (plans made again now; the data
     * arrays are kept). */
    void setNumThreads(int n);
    int  numThreads() const { return threads_; }
    FftPlanning planning() const { return planning_; }
    /* Planning for the next plans (those made already are dropped). */
    void setPlanning(FftPlanning planning);

private:
    void makePlans(int threads);
    void destroyPlans();
    int                 threads_        = 1;
    int                 plannedThreads_ = 0;
    FftPlanning         planning_;
    int                 nx_, ny_, nz_;
    real*               real_    = nullptr;
    std::complex<real>* complex_ = nullptr;
    struct Plans;
    std::unique_ptr<Plans> plans_;
};

} // namespace putmd
