/* pme/bspline.h — the cardinal B-spline weights PME spreads and gathers with,
 * shared by the one-rank reference (pme.cpp) and the distributed PME.
 *
 * Also the reciprocal-space solve over a block of the half spectrum, so the
 * serial grid (one block: everything) and a rank's pencil of a distributed
 * grid run the same arithmetic.
 */
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"

namespace putmd
{

struct PmeParameters;

/* The grid cell (0..K-1) of position x along reciprocal direction d, and the
 * offset w in [0,1) within it: u = frac(x . inv(:,d)) * K. */
inline int pmeGridCell(const Vec3<real>& x, const Matrix3& inv, int d, int K, double* w)
{
    double sfrac = x.x * inv(0, d) + x.y * inv(1, d) + x.z * inv(2, d);
    sfrac -= std::floor(sfrac);
    const double u  = sfrac * K;
    int          iu = static_cast<int>(u);
    if (iu >= K) // rounding at the upper edge
    {
        iu = K - 1;
    }
    *w = u - iu;
    return iu;
}

/* B-spline weights of order p at fractional offset w in [0,1): theta[j] is
 * the weight of grid point floor(u) - p + 1 + j; dtheta its derivative. */
inline void fillBspline(int order, double w, double* theta, double* dtheta)
{
    double data[16];
    data[order - 1] = 0;
    data[1]         = w;
    data[0]         = 1 - w;
    for (int k = 3; k <= order - 1; k++)
    {
        const double div = 1.0 / (k - 1);
        data[k - 1]      = div * w * data[k - 2];
        for (int j = 1; j <= k - 2; j++)
        {
            data[k - j - 1] = div * ((w + j) * data[k - j - 2] + (k - j - w) * data[k - j - 1]);
        }
        data[0] = div * (1 - w) * data[0];
    }
    dtheta[0] = -data[0];
    for (int j = 1; j < order; j++)
    {
        dtheta[j] = data[j - 1] - data[j];
    }
    const double div = 1.0 / (order - 1);
    data[order - 1]  = div * w * data[order - 2];
    for (int j = 1; j <= order - 2; j++)
    {
        data[order - j - 1] = div * ((w + j) * data[order - j - 2] + (order - j - w) * data[order - j - 1]);
    }
    data[0] = div * (1 - w) * data[0];
    for (int j = 0; j < order; j++)
    {
        theta[j] = data[j];
    }
}


/* A block of the half spectrum: index ranges start[d] .. start[d]+size[d]
 * in (kx, ky, kz), stored with dims order[0] slowest .. order[2] fastest. */
struct SpectrumBlock
{
    std::array<int, 3> start{}, size{}, order{ 0, 1, 2 };
};

/* Multiplies the block by the influence function, returns its energy and
 * adds its virial (when not null), on the calling thread. The m = 0 term
 * is zeroed. With influence, the factor of every point is stored there
 * (block order), so that steps with the same box can reuse it without an
 * exp per point. The PME transforms call it per ky row (Fft3d::convolve,
 * PencilFft3d::convolve), which is where the threads are. */
double solvePmeBlockSerial(const PmeParameters& params, const std::array<std::vector<double>, 3>& moduli,
                           const Box& box, std::complex<real>* data, const SpectrumBlock& block, Matrix3* virial,
                           real* influence = nullptr);

/* Energies of parts (threads, ky rows) summed in order, and (virial not
 * null) their virials added to *virial in the same order: the same bits
 * however the parts were computed. */
double sumInOrder(const std::vector<double>& energies, const std::vector<Matrix3>& virials, Matrix3* virial);

/* The same block multiplied by factors a solvePmeBlockSerial call stored for the
 * same box (no exp per point); returns the energy (serial), or 0 without
 * summing it when energy is false (the steps that report no energies: the
 * products alone, one vectorised loop). */
double applyInfluenceBlock(const PmeParameters& params, std::complex<real>* data, const SpectrumBlock& block,
                           const real* influence, bool energy = true);

} // namespace putmd
