/* fft/fft3d.h — serial real-to-complex 3D FFT on one rank (FFTW).
 *
 * The real grid is nx*ny*nz, z fastest; the complex grid is
 * nx*ny*(nz/2+1). Both transforms are unnormalised, as FFTW's are. Plans are
 * made once and reused; the data arrays belong to the object.
 *
 * Rows with a halo (zHalo > 0): each z row of the real grid then has room
 * for zHalo points past nz (rows rowStride() = nz + zHalo, rounded up to 4,
 * reals apart). A forward transform first adds those points onto z = 0 ..
 * zHalo-1, a backward one copies z = 0 .. zHalo-1 out to them after: the
 * periodic wrap of a row is then the caller's plain contiguous row, so PME
 * spreads and gathers every atom's rows as vectors (without the halo the
 * ~7% of atoms whose 4 z points wrap took the scalar loops: a fifth of the
 * spread's time on a 42^3 grid). The additions happen per row after the
 * whole spread, in the same order whatever the thread count.
 *
 * Planning: FftPlanning::Estimate (FFTW_ESTIMATE) picks the algorithm from
 * the sizes alone, so results never depend on timing; Measure
 * (FFTW_MEASURE) times candidates when the plan is made (0.05-0.3 s for the
 * grids of the shipped systems) and on 2 cores ran the transform pair of a
 * 60^3 grid 2.5 times as fast (1.05 -> 0.41 ms, 2 threads). convolve()'s
 * line plans of grids up to 2^18 points (64^3) are planned with
 * FFTW_PATIENT instead (more candidates; 42^3: 0.30 -> 0.235 ms per
 * direction on one thread, the 2-thread convolve of water-spce-12k 20%
 * shorter, for 0.4 s more planning; 60^3: the 2-thread convolve of rnase
 * 14% shorter over 500 steps, for 2.5 s more planning; 96^3 and 128^3
 * gained nothing for 5-8 s). A measured plan
 * can differ between processes, so two runs may then differ in the last
 * bits. The measured planning is done three times and the fastest pair of
 * plans kept (fft3d.cpp). Plans are made when the thread count is set, or
 * at the first transform. MD runs
 * measure unless PUTMD_FFTW_PLAN=estimate (fftPlanningFromEnvironment).
 *
 * convolve() is the transform pair with a solve between, as PME on one
 * rank needs it, over the caller's OpenMP threads and FFTW's one-dimensional
 * transforms (serial plans of many lines each):
 *   1. per x plane: real-to-complex along z, then along y (threads share
 *      the planes);
 *   2. per ky: along x into a small per-thread buffer holding that ky's
 *      nx x (nz/2+1) points, the caller's solve on the buffer, back along x
 *      (threads share the ky values; the points stay in cache between the
 *      transforms and the solve: no separate pass over the spectrum);
 *   3. per x plane: back along y, complex-to-real along z.
 * Two barriers in one parallel region. FFTW's threaded 3D plans left the
 * second thread waiting for half of the transform (on 2 cores its
 * calling thread did 9.1% of a run's samples in FFTW, the other 3-4%), and
 * the solve was a pass of its own. Every line is transformed by the same
 * plan whatever the thread count, so the result does not depend on it.
 * The line plans are measured once (Measure) and kept in the record of
 * chosen plans under the thread count 0.
 */
#pragma once

#include <complex>
#include <functional>
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
    Fft3d(int nx, int ny, int nz, FftPlanning planning = FftPlanning::Estimate, int zHalo = 0);
    ~Fft3d();
    Fft3d(const Fft3d&)            = delete;
    Fft3d& operator=(const Fft3d&) = delete;

    /* The real grid: point (x, y, z) at (x ny + y) rowStride() + z. */
    real*               realData() { return real_; }
    int                 rowStride() const { return rowStride_; }
    int                 zHalo() const { return zHalo_; }
    std::complex<real>* complexData() { return complex_; }
    int                 complexNz() const { return nz_ / 2 + 1; }

    void forward();  // real -> complex; leaves the real array undefined (FFTW_DESTROY_INPUT)
    void backward(); // complex -> real (unnormalised)
    /* solveRows(thread, ky, points) for every ky once between the forward
     * and the backward transform: points holds that ky's spectrum, kx
     * slowest and kz fastest (nx x complexNz(), to be changed in place);
     * thread is 0 .. threads-1 (the OpenMP thread calling). The real array
     * is transformed forward and replaced by the backward result
     * (unnormalised). */
    using RowSolver = std::function<void(int thread, int ky, std::complex<real>* points)>;
    void convolve(int threads, const RowSolver& solveRows);
    /* The line plans of convolve() now (set-up), not at its first call. */
    void prepareLines();

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
    void makeLinePlans();
    int                 threads_        = 1;
    int                 plannedThreads_ = 0;
    FftPlanning         planning_;
    int                 nx_, ny_, nz_;
    int                 zHalo_, rowStride_;
    void                foldHalo(int x);   // plane x: halo points added onto z = 0 .. zHalo-1
    void                unfoldHalo(int x); // plane x: z = 0 .. zHalo-1 copied to the halo
    real*               real_    = nullptr;
    std::complex<real>* complex_ = nullptr;
    struct Plans;
    std::unique_ptr<Plans> plans_;
    struct LinePlans;
    std::unique_ptr<LinePlans> planLines(const std::string* wisdom);
    std::unique_ptr<LinePlans> lines_;
};

} // namespace putmd
