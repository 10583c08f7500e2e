/* fft/pencil_fft.h — distributed real-to-complex 3D FFT on a 2D process grid.
 *
 * The nx*ny*nz real grid (z fastest) is cut into z-pencils over a Px x Py
 * process grid; the transform is local 1D FFTs (FFTW, plans made once with
 * FFTW_ESTIMATE) separated by two transposes inside process-grid rows and
 * columns:
 *
 *   real z-pencils --r2c(z)--> complex z-pencils   x: Px parts, y: Py parts, kz: all
 *     --row transpose (the Py ranks with the same i)-->
 *   y-pencils --c2c(y)-->                          x: Px parts, kz: Py parts, y: all
 *     --column transpose (the Px ranks with the same j)-->
 *   x-pencils --c2c(x)-->                          ky: Px parts, kz: Py parts, x: all
 *
 * A process grid of one row (Py = 1, e.g. 2 ranks: 2 x 1) is a slab
 * decomposition: each rank's z-pencils are whole y-z planes, so the first
 * two passes are one 2D r2c FFT per x plane (FFTW's own cache blocking, no
 * row transpose) and only the column transpose remains (rnase's 60^3 grid
 * on 2 ranks: transposes 0.151 -> 0.080 s per 500 steps).
 *
 * Backward runs the same steps in reverse. Every partition is the block
 * partition of blockStart(); parts may be empty (e.g. nz/2+1 = 3 over Py = 4).
 * The complex result (x-pencils) is stored ky slowest, then kz, then kx
 * (complexOrder() = {1, 2, 0}).
 *
 * The transposes only move bytes; three algorithms implement them behind one
 * interface (TransposeAlgorithm), and the result is bitwise the same whichever
 * is used:
 *   alltoallv — MPI_Alltoallv on the row / column communicator;
 *   pairwise  — an ordered schedule of p-1 rounds, one MPI_Sendrecv each;
 *   rma       — MPI-3 passive-target puts into windows allocated once, with
 *               per-origin ready flags (sequence numbers) and unpacking in
 *               arrival order (see transpose.cpp for the protocol);
 *   shm       — the stage arrays of all ranks in one shared-memory window
 *               (all ranks on one machine); each rank copies its peers'
 *               blocks straight from their arrays (no packing, no put),
 *               after a ready flag per rank and execution.
 * chooseFastest() measures those that make no collective call (pairwise,
 * rma, and shm where all ranks share a machine) at start-up and returns the
 * fastest: an MD step makes none.
 *
 * comm == MPI_COMM_NULL is the serial mode: one rank, no MPI call at all.
 * See docs/distributed-fft.md.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "comm/message_sizes.h"
#include "fft/fft3d.h"
#include "core/real.h"

namespace putmd
{

enum class TransposeAlgorithm
{
    Alltoallv,
    Pairwise,
    Rma,
    Shm
};

/* "alltoallv", "pairwise", "rma", "shm". */
const char* transposeAlgorithmName(TransposeAlgorithm a);
/* The inverse of transposeAlgorithmName(); nullopt for anything else. */
std::optional<TransposeAlgorithm> parseTransposeAlgorithm(std::string_view s);

/* Counters of one PencilFft3d since construction or resetStats().
 * messages / bytes: data blocks (non-empty) sent to other ranks, not to self;
 * the RMA algorithm's flag words are not counted. commSeconds: time in the
 * transposes (pack, communicate, unpack, waiting); fftSeconds: time in FFTW. */
struct FftCommStats
{
    long   transforms  = 0; // forward() and backward() count one each
    long   messages    = 0;
    long   bytes       = 0;
    long   collectives = 0; // the alltoallv transposes' MPI_Alltoallv calls
    comm::MessageSizes sizes; // histogram of those blocks' sizes
    double commSeconds = 0;
    double fftSeconds  = 0;
};

/* Block partition used everywhere: part i of n points over p parts starts at
 * i*n/p (integer division). */
inline int blockStart(int n, int p, int i)
{
    return int((long(i) * n) / p);
}

class PencilFft3d
{
public:
    /* Collective over comm. comm == MPI_COMM_NULL means serial (one rank, no
     * MPI calls at all — MPI may not even be initialised).
     * n = {nx, ny, nz} real grid, z fastest. procGrid = {Px, Py},
     * Px*Py == size of comm.
     * Real space: rank with coordinates (i, j) = (rank / Py, rank % Py) owns
     * x in [blockStart(nx,Px,i), blockStart(nx,Px,i+1)), y in
     * [blockStart(ny,Py,j), ...), all z; stored x-major, then y, then z
     * (z contiguous, row stride exactly nz; without a halo the plane
     * stride is ly nz). */
    /* planning: FFTW_ESTIMATE (the default: the same plans in every
     * process) or FFTW_MEASURE (faster transforms; each rank measures its
     * own plans at construction, so two runs may round differently). */
    /* realHalo = {hx, hy}: the real block is stored inside a buffer with hx
     * more x planes before it and hy more y rows before each plane's
     * (realBuffer(), (lx + hx) x (ly + hy) x nz), so that a caller can sum
     * and fill a halo around the block in place (the distributed PME's
     * spread and gather); the transforms read and write the block only. */
    PencilFft3d(MPI_Comm comm, std::array<int, 3> n, std::array<int, 2> procGrid, TransposeAlgorithm alg,
                FftPlanning planning = FftPlanning::Estimate, std::array<int, 2> realHalo = { 0, 0 });
    ~PencilFft3d();
    PencilFft3d(const PencilFft3d&)            = delete;
    PencilFft3d& operator=(const PencilFft3d&) = delete;

    std::array<int, 3> realStart() const; // [2] is 0
    std::array<int, 3> realSize() const;  // [2] is nz
    /* The block's first point; row stride nz, plane stride (ly + hy) nz. */
    real*              realData();
    /* The whole buffer, halo included (realData() when there is none). */
    real*              realBuffer();

    /* Complex space (half spectrum kz in 0..nz/2): the local block is kx in
     * [complexStart[0], +complexSize[0]), etc. Stored with complexOrder()
     * giving the dimensions from slowest to fastest: here always {1, 2, 0},
     * i.e. index ((ky-ky0)*sizeZ + (kz-kz0))*sizeX + (kx-kx0), with the full
     * kx range, ky split over Px (part i) and kz split over Py (part j). */
    std::array<int, 3>  complexStart() const;
    std::array<int, 3>  complexSize() const;
    std::array<int, 3>  complexOrder() const;
    std::complex<real>* complexData();

    /* real -> complex, unnormalised, same convention as FFTW r2c 3D.
     * realData() is left unchanged. */
    void forward();
    /* complex -> real, unnormalised (c2r); realData() then holds nx*ny*nz
     * times the input of forward(). complexData() is overwritten (as FFTW's
     * c2r overwrites its input). */
    void backward();
    /* forward() and backward() with the caller's solve between, one ky
     * of the spectrum at a time: after the last transpose, each ky's
     * x transforms (its complexSize()[2] x nx points, kz slowest, kx
     * fastest: complexData() + a complexSize()[2] complexSize()[0]),
     * solveRow(a, points) on them in place (a = ky - complexStart()[1]),
     * then their inverse x transforms, while the points are in cache: the
     * same result as forward(), a solve of the whole block and backward()
     * within rounding,
     * one pass over the spectrum fewer. threads > 1: the rows go to the
     * OpenMP threads in equal shares, and so do a slab's planes (their
     * 2D transforms in chunks of 4 planes) or a pencil's x planes (their
     * z rows, and their y lines after the row transpose): the same bits
     * for any thread count above one. One thread: forward(), the rows in order, backward()
     * (FFTW's whole-block plans are faster on one thread; the bits may
     * differ from the threaded ones in the last place). solveRow must
     * keep per-row results apart (the caller sums them in row order).
     * solveSeconds: the calling thread's time inside solveRow (timing
     * only). */
    using RowSolver = std::function<void(int row, std::complex<real>* points)>;
    void convolve(int threads, const RowSolver& solveRow, double* solveSeconds = nullptr);

    const FftCommStats& stats() const;
    void                resetStats();
    TransposeAlgorithm  algorithm() const;

    /* auto: build a plan per collective-free algorithm (pairwise, rma, and
     * shm when allOnOneMachine(comm)), time the transposes of a few
     * forward+backward pairs of each (max over ranks), return the fastest;
     * collective; results identical on every rank. The pairs are
     * interleaved after one warm-up pair each; the score is the median over
     * `repeats` pairs (0: 9, or 3 in the SMPI build). Serial mode or one
     * rank: Alltoallv at once (all three are then the same local copy). */
    static TransposeAlgorithm chooseFastest(MPI_Comm comm, std::array<int, 3> n, std::array<int, 2> procGrid,
                                            int repeats = 0);

private:
    struct Impl; // the plans, buffers and transposes (pencil_fft.cpp)
    std::unique_ptr<Impl> impl_;
};

/* A near-square 2D process grid for p ranks, preferring Px >= Py and
 * divisors of the grid sizes where possible: among the factorisations
 * Px*Py = p, the one with the smallest largest local block over the three
 * pencil layouts (relative to a perfect split), plus a small penalty for
 * being far from square and a smaller one for Px < Py. */
std::array<int, 2> choosePencilGrid(int p, std::array<int, 3> n);

} // namespace putmd
