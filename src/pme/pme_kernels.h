/* pme/pme_kernels.h — the per-atom PME kernels shared by the one-rank Pme
 * (pme.h) and the distributed PME (pme_distributed.h): B-spline weights
 * (order 4 as one vectorised loop over atoms, other orders by the
 * recursion), and the spread and gather of one atom by plain loops (any
 * order; the reference twin of the 4-wide rows of pme_rows.h, which order
 * 4 uses in the mixed build).
 *
 * Grid addressing: a grid of K[0] x K[1] x K[2] points (z fastest); an
 * atom's first spline point is idx[d], and the rows it touches are wx[idx[0]
 * + a], wy[idx[1] + b] (tables that wrap a periodic grid, or the identity
 * on a rank's extended block) and z points idx[2] + c, through wz where a
 * row wraps. Rows are zStride points apart (K[2], or more where the grid's
 * rows carry a halo: Fft3d's rowStride()); these plain loops wrap within
 * the K[2] points whatever the halo.
 */
#pragma once

#include <array>
#include <cstddef>
// 4-wide float rows (pme_rows.cpp) where the build is mixed precision
#if defined(__SSE2__) && !PUTMD_DOUBLE
#define PUTMD_PME_SSE 1
#else
#define PUTMD_PME_SSE 0
#endif

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "pme/bspline.h"

namespace putmd::pme_detail
{

/* Grid cells and order-4 weights of atoms [begin, end): theta/dtheta[d]
 * hold 4 per atom, index[d] the first grid point (wrapped into [0, K)).
 * The cell is pmeCellOrder4's. */
void splinesOrder4(const Vec3<real>* x, int begin, int end, const Matrix3& inv, const std::array<int, 3>& K,
                   real* const theta[3], real* const dtheta[3], int* const index[3]);

/* pmeCellOrder4 of atoms [0, n) along d into out, as one vectorised loop
 * (a copy per instruction set, as splinesOrder4's). */
void cellsOrder4(const Vec3<real>* x, int n, const Matrix3& inv, int d, int Kd, int* out);

/* The order-4 cell arithmetic, shared by splinesOrder4, cellsOrder4 and
 * pmeCellOrder4 (the build's precision; their files compile without FMA
 * contraction, see CMakeLists.txt): u = K times the fractional coordinate
 * (a, b, c: column d of the inverse box) wrapped into [0, 1) by
 * truncation (std::floor kept the loops scalar; |sfrac| is a few box
 * lengths at most), and the cell of u. */
inline real pmeScaledFraction(real x, real y, real z, real a, real b, real c, real Kr)
{
    real      sfrac = x * a + y * b + z * c;
    const int whole = static_cast<int>(sfrac);
    sfrac -= real(whole) - (real(whole) > sfrac ? real(1) : real(0));
    return sfrac * Kr;
}
inline int pmeCellOfScaled(real u, int Kd)
{
    const int iu = static_cast<int>(u);
    return iu >= Kd ? Kd - 1 : iu;
}

/* The grid cell splinesOrder4 puts an atom in along d, by the same
 * arithmetic, so a rank that sends atoms to the owner of their cell and
 * the owner that computes the splines agree on every atom. */
inline int pmeCellOrder4(const Vec3<real>& x, const Matrix3& inv, int d, int Kd)
{
    return pmeCellOfScaled(
            pmeScaledFraction(x.x, x.y, x.z, real(inv(0, d)), real(inv(1, d)), real(inv(2, d)), real(Kd)), Kd);
}

/* B-spline weights of any order by the recursion (in double), stored in
 * the build's precision; order 4 has its own vectorised loop below. */
inline void splinesOf(double w, real* theta, real* dtheta, int order)
{
    double th[16], dth[16];
    fillBspline(order, w, th, dth);
    for (int j = 0; j < order; j++)
    {
        theta[j]  = real(th[j]);
        dtheta[j] = real(dth[j]);
    }
}


/* One atom's charge onto the grid; P = 0: the run-time order p. Rows that
 * do not wrap in z take the contiguous (vectorised) loop. */
template<int P>
inline void spreadAtom(real* grid, const std::array<int, 3>& K, size_t zStride, const int* wx, const int* wy,
                       const int* wz, const int* idx, real qi, const real* tx, const real* ty, const real* tz, int p)
{
    const int  n      = P > 0 ? P : p;
    const int  iz     = idx[2];
    const bool inside = iz + n <= K[2];
    for (int a = 0; a < n; a++)
    {
        const int  gx = wx[idx[0] + a];
        const real qa = qi * tx[a];
        for (int b = 0; b < n; b++)
        {
            const int  gy  = wy[idx[1] + b];
            const real qab = qa * ty[b];
            real*      row = grid + (size_t(gx) * K[1] + gy) * zStride;
            if (inside)
            {
                real* r = row + iz;
                for (int c = 0; c < n; c++)
                {
                    r[c] += qab * tz[c];
                }
            }
            else
            {
                for (int c = 0; c < n; c++)
                {
                    row[wz[iz + c]] += qab * tz[c];
                }
            }
        }
    }
}

/* dE/du_d / q of one atom from the grid (u: grid coordinates). */
template<int P>
inline void gatherAtom(const real* grid, const std::array<int, 3>& K, size_t zStride, const int* wx, const int* wy,
                       const int* wz, const int* idx, const real* tx, const real* ty, const real* tz, const real* dtx,
                       const real* dty, const real* dtz, int p, real fu[3])
{
    const int  n      = P > 0 ? P : p;
    const int  iz     = idx[2];
    const bool inside = iz + n <= K[2];
    real       f0 = 0, f1 = 0, f2 = 0;
    for (int a = 0; a < n; a++)
    {
        const int gx = wx[idx[0] + a];
        real      sx = 0, sy = 0, sdz = 0; // sums over b and c for this a
        for (int b = 0; b < n; b++)
        {
            const int   gy  = wy[idx[1] + b];
            const real* row = grid + (size_t(gx) * K[1] + gy) * zStride;
            real        gz = 0, gdz = 0; // sum_c theta_z g, sum_c dtheta_z g
            if (inside)
            {
                const real* r = row + iz;
                for (int c = 0; c < n; c++)
                {
                    gz += tz[c] * r[c];
                    gdz += dtz[c] * r[c];
                }
            }
            else
            {
                for (int c = 0; c < n; c++)
                {
                    const real g = row[wz[iz + c]];
                    gz += tz[c] * g;
                    gdz += dtz[c] * g;
                }
            }
            sx += ty[b] * gz;
            sy += dty[b] * gz;
            sdz += ty[b] * gdz;
        }
        f0 += dtx[a] * sx;
        f1 += tx[a] * sy;
        f2 += tx[a] * sdz;
    }
    fu[0] = f0;
    fu[1] = f1;
    fu[2] = f2;
}

} // namespace putmd::pme_detail
