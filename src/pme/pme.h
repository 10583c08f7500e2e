/* pme/pme.h — smooth particle-mesh Ewald, reciprocal part, on one rank.
 *
 * Essmann et al. (1995): charges are spread on a K1 x K2 x K3 grid with
 * cardinal B-splines of order p in fractional coordinates; the grid is
 * transformed (real-to-complex), multiplied by the influence function
 *   exp(-pi^2 m^2 / beta^2) / (pi V m^2) / (|b1|^2 |b2|^2 |b3|^2)^-1
 * (with the Euler exponential-spline moduli |b|^2), transformed back, and
 * forces are gathered with the B-spline derivatives. The energy is
 * 1/2 sum_m over the half spectrum with the r2c weights. Triclinic boxes enter
 * through the reciprocal vectors. The Ewald self energy and excluded-pair
 * corrections are not here: as in GROMACS's Verlet scheme they belong to
 * Coulomb (SR). A non-neutral system gets the uniform-background term
 * -pi Q^2 / (2 V beta^2) in Coul. recip.
 */
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "fft/fft3d.h"

namespace putmd
{
namespace pme_detail
{
struct SplineAtoms;
struct GridRows;
} // namespace pme_detail

struct PmeParameters
{
    std::array<int, 3> gridSize{};
    int                order      = 4;
    double             ewaldCoeff = 0;
    double             epsfac     = 0; // ONE_4PI_EPS0 / epsilon-r
    FftPlanning        fftPlanning = FftPlanning::Estimate; // MD runs: fftPlanningFromEnvironment()
};

class Pme
{
public:
    explicit Pme(const PmeParameters& params);
    ~Pme();

    /* Adds reciprocal-space forces to f and returns the energy (kJ/mol);
     * adds the reciprocal virial to *virial when it is not null. energy =
     * false without a virial: the energy is not summed (0 is returned; the
     * forces are the same), for the steps that report none. */
    double compute(const Box& box, const std::vector<Vec3<real>>& x, const std::vector<double>& charges,
                   std::vector<Vec3<real>>& f, Matrix3* virial = nullptr, bool energy = true);

    const PmeParameters& parameters() const { return params_; }

    /* Threads for spread and gather: the spread takes blocks of x and y
     * planes in four phases (blocks of one phase never share a grid point)
     * straight onto the grid, so the grid is the same for every thread
     * count; the transforms and the solve share planes and ky rows
     * (Fft3d::convolve, the same lines whatever the count); gather splits
     * the atoms in equal shares and needs no reduction. Forces, energy and
     * virial are bitwise the same for every thread count. */
    void setNumThreads(int n);
    /* Makes the whole-grid FFT and its line plans now (a run on one rank
     * calls it at set-up: made lazily at the first compute, the measured
     * planning fell into the first step and its timings). */
    void prepareFft() { fft().prepareLines(); }
    /* Order 4 uses 4-wide SSE rows for spread and gather where the CPU has
     * them; false selects the plain loops (the reference twin, for tests). */
    void setSseRows(bool on) { sseRows_ = on; }
    /* How the FFT is planned (fft3d.h). */
    void setFftPlanning(FftPlanning planning)
    {
        params_.fftPlanning = planning;
        if (fft_)
        {
            fft_->setPlanning(planning);
        }
    }

private:
    struct Splines; // per-atom B-spline weights and derivatives
    static pme_detail::SplineAtoms splineAtoms(const Splines& s, const std::vector<double>& q);
    pme_detail::GridRows           gridRows();
    void   spread(const Box& box, const std::vector<Vec3<real>>& x, const std::vector<double>& q, Splines& s);
    double transformAndSolve(const Box& box, Matrix3* virial, bool energy);
    void   gather(const Box& box, const std::vector<double>& q, const Splines& s, std::vector<Vec3<real>>& f);

    PmeParameters                     params_;
    std::array<std::vector<double>, 3> bsplineModuli_;
    /* The whole grid, made at the first compute: a decomposed run keeps
     * this object for its parameters and never transforms here (at 1,024
     * simulated ranks of an 84^3 grid the idle grids were 5 GB). */
    Fft3d&                            fft();
    std::unique_ptr<Fft3d>            fft_;
    int                               numThreads_ = 1;
    // kept between steps: no allocation in the step
    std::unique_ptr<Splines>          splines_;
    std::array<std::vector<int>, 3>   wrap_; // wrap_[d][i] = i mod K_d for i < K_d + order
    std::vector<int>                  blockCount_; // per thread and block: atoms, then write offsets
    std::vector<int>                  blockStart_; // first entry of each block in blockAtoms_
    std::vector<int>                  blockAtoms_; // charged atoms by block, in index order within one
    std::vector<int>                  atomBlock_;  // per atom its block, -1 for no charge
    std::vector<int>                  blockOfPlane_; // per first plane: x (block row), then y
    std::vector<int>                  phaseBlocks_, phaseStart_; // the blocks of each of the four phases
    int                               phaseAtoms_[4] = {};        // and their atoms
    bool                              sseRows_ = true; // order 4: the SSE rows (false: the plain loops)
    std::vector<real>                 influence_; // per spectrum point, for influenceBox_
    Box                               influenceBox_;
    std::vector<double>               rowEnergies_; // per ky, summed in ky order
    std::vector<Matrix3>              rowVirials_;
    std::vector<double>               netChargeParts_; // per spread thread: its atoms' charge
};

struct MdpOptions;
struct PmeGridChoice;
/* The parameters of the run's PME: grid (as GROMACS chooses it), order,
 * Ewald coefficient and Coulomb prefactor. */
PmeParameters pmeParametersFor(const Box& box, const MdpOptions& mdp, double ewaldCoeff, double epsfac);

/* |sum_k M_p(k+1) exp(2 pi i m k / K)|^2 for m = 0..K-1 (zeros, which occur
 * for odd orders, are replaced by the mean of their neighbours). */
std::vector<double> bsplineModuli(int gridSize, int order);

} // namespace putmd
