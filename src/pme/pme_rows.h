/* pme/pme_rows.h — the spread and gather over a list of atoms, shared by
 * the one-rank Pme and the distributed PME. Order 4 comes in two copies
 * chosen when the program starts: one for CPUs with AVX2 and FMA, where the row
 * updates are fused multiply-adds, and one for any x86-64 (SSE). The rows
 * of 4 z points are 4-wide vectors (GCC's vector extensions, so one body
 * serves both copies); rows that wrap in z take the plain loops of
 * pme_kernels.h, unless the grid's rows carry a halo past their end
 * (GridRows::zReach; the one-rank Pme's grid, Fft3d's zHalo: its spread and
 * gather never wrap). Fused multiply-adds round once where the SSE copy rounds
 * twice: the two copies differ in the last bits, and on one CPU every run
 * takes the same copy (the grid stays independent of the thread count and
 * of how atoms are shared among ranks' threads).
 *
 * Measured on an Intel Xeon (rnase-amber-cubic, 1 rank x 2 threads): PME
 * mesh 0.95 -> 0.90 s per 500 steps. With the halo (Emerald Rapids Xeon,
 * water-spce-12k, 2 threads, AVX2, per 2,000 steps): spread 0.53 -> 0.47 s,
 * gather 0.45 -> 0.39 s (the scalar wrapped rows had been a fifth of the
 * spread's samples). Tried and not kept: the gather's force conversion in
 * vectors (bitwise the same, no faster: its samples were the loads'
 * latency), and the gather in the spread's block order (the threads' x
 * planes; 5-15% slower: the atoms' own data scattered).
 */
#pragma once

#include <array>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"

namespace putmd::pme_detail
{

/* Per-atom spline data (order weights and derivatives per atom and
 * dimension, the first grid index per atom and dimension) and grid
 * addressing (rows through wx, wy; z through wz where a row wraps; see
 * pme_kernels.h). */
struct SplineAtoms
{
    int           order;
    const real*   theta[3];
    const real*   dtheta[3];
    const int*    index[3];
    const double* q;
};

struct GridRows
{
    std::array<int, 3> K; // the grid as addressed (a rank's extended block: its extent)
    const int*         wx;
    const int*         wy;
    const int*         wz;
    size_t             zStride; // points from one z row to the next (K[2] unless the rows have a halo)
    int                zReach;  // a row's points idx[2] .. idx[2]+3 are contiguous while idx[2] + 4 <= zReach
};

/* Whether the AVX2/FMA copy may run (on a CPU that has both; true at
 * start). PUTMD_SIMD=sse4 turns it off with the nonbonded kernel's
 * instruction sets (clusterKernelFromEnvironment); tests compare the two
 * copies. fusedRowsActive: whether the FMA copy runs now. */
void allowFusedRows(bool allowed);
bool fusedRowsActive();
/* Which copy runs, for the log. */
const char* rowsDescription();

/* Adds the charges of atoms list[begin, end) to the grid. rows = false, or
 * an order other than 4: the plain loops (the reference twin). */
void spreadAtoms(real* grid, const GridRows& g, const SplineAtoms& a, const int* list, int begin, int end, bool rows);

/* How gatherAtoms stores an atom's force F = -q dE/dx: subtracted from
 * (Accumulate: f -= q dE/dx, the one-rank PME adds to the other forces;
 * uncharged atoms untouched) or written to (Assign: f = -q dE/dx, 0 for
 * an uncharged atom, the distributed PME's own array, which needs no
 * clearing first). */
enum class GatherStore { Accumulate, Assign };

/* The forces on atoms [begin, end) from the grid (see GatherStore for the
 * uncharged ones); K is the whole grid (the derivative's scale), inv the
 * box's inverse. */
void gatherAtoms(const real* grid, const GridRows& g, const SplineAtoms& a, int begin, int end,
                 const std::array<int, 3>& K, const Matrix3& inv, Vec3<real>* f, GatherStore store, bool rows);

} // namespace putmd::pme_detail
