/* fft/pencil_fft.cpp — the pencil FFT: layouts, FFTW plans, transforms.
 *
 * Rank (i, j) of the Px x Py grid holds, in each stage (global coordinates,
 * X_i = part i of nx over Px by blockStart(), nzc = nz/2+1):
 *   real      R: x in X_i, y in Y_j,   z all        order x, y, z   (realData)
 *   z-pencils A: x in X_i, y in Y_j,   kz all       order x, y, kz
 *   y-pencils B: x in X_i, y all,      kz in KZ_j   order x, kz, y
 *   x-pencils C: x all,    ky in KY_i, kz in KZ_j   order ky, kz, kx (complexData)
 * with KZ_j = part j of nzc over Py and KY_i = part i of ny over Px. A <-> B
 * is a transpose inside the row (the Py ranks with the same i), B <-> C
 * inside the column (the Px ranks with the same j). Every stage keeps its
 * FFT axis contiguous, so each 1D pass is one FFTW "many" plan with unit
 * stride: r2c / c2r along z (R <-> A), c2c along y (B, in place), c2c along
 * x (C, in place). Plans (FFTW_ESTIMATE, or FFTW_MEASURE when asked) and
 * buffers are made once.
 *
 * Slabs (Py = 1): A already holds all of y, so R -> A is one 2D r2c per x
 * plane, A <-> C the column transpose, and there is no B. R may sit inside
 * a halo (realHalo): its rows are then not evenly spaced, and the z passes
 * take FFTW's guru interface (pencils) or embedded planes (slabs).
 */
#include "fft/pencil_fft.h"

#include "core/clock.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>

#include "fft/aligned_plans.h"
#include "fft/fftw_precision.h"
#include "fft/transpose.h"

namespace putmd
{

using FftBox = fft::Box;
using fft::Complex;
using fft::Layout;
using fft::TransposePlan;

namespace
{

double now()
{
    return clockSeconds();
}

template<typename T>
T* allocate(long n)
{
    auto* p = static_cast<T*>(PUTMD_FFTW(malloc)(sizeof(T) * std::size_t(std::max(1L, n))));
    if (p == nullptr)
    {
        throw std::runtime_error("out of memory allocating a pencil FFT buffer");
    }
    return p;
}

/* Slab planes per 2D transform call of convolve() on threads: FFTW
 * transforms several planes at once faster than one (one plane per call
 * made the 2-rank water PME's transforms 5-8% slower), and a fixed chunk
 * keeps every plane's plan the same whatever the number of threads. */
constexpr int c_planeChunk = 4;

FftwComplex* fftwPtr(Complex* p)
{
    return reinterpret_cast<FftwComplex*>(p);
}

/* Part i of n over p as (start, size). */
std::pair<int, int> part(int n, int p, int i)
{
    const int s = blockStart(n, p, i);
    return {s, blockStart(n, p, i + 1) - s};
}

} // namespace

const char* transposeAlgorithmName(TransposeAlgorithm a)
{
    switch (a)
    {
        case TransposeAlgorithm::Alltoallv: return "alltoallv";
        case TransposeAlgorithm::Pairwise: return "pairwise";
        case TransposeAlgorithm::Rma: return "rma";
        case TransposeAlgorithm::Shm: return "shm";
    }
    return "?";
}

std::optional<TransposeAlgorithm> parseTransposeAlgorithm(std::string_view s)
{
    for (auto a : {TransposeAlgorithm::Alltoallv, TransposeAlgorithm::Pairwise, TransposeAlgorithm::Rma,
                   TransposeAlgorithm::Shm})
    {
        if (s == transposeAlgorithmName(a))
        {
            return a;
        }
    }
    return std::nullopt;
}

struct PencilFft3d::Impl
{
    MPI_Comm           rowComm = MPI_COMM_NULL, colComm = MPI_COMM_NULL; // owned (parallel mode)
    std::array<int, 3> n{};
    int                nzc = 0;
    int                px = 1, py = 1, ci = 0, cj = 0; // process grid, this rank's coordinates
    bool               slab = false; // py == 1: 2D r2c per x plane, then the column transpose only
    TransposeAlgorithm alg = TransposeAlgorithm::Alltoallv;
    FftCommStats       stats;

    FftBox    realBox;       // R (order x, y, z)
    Layout la, lb, lc;    // A, B, C of this rank
    std::array<int, 2> halo{};    // real planes / rows before the block (x, y)
    long               rsize = 0; // of rbuf: (lx + hx) * (ly + hy) * nz
    real*    rbuf  = nullptr; // the real block with its halo
    real*    rdata = nullptr; // its point (x0, y0, 0)
    Complex* adata = nullptr;
    Complex* bdata = nullptr;
    Complex* cdata = nullptr;

    PUTMD_FFTW(plan) r2c = nullptr, c2r = nullptr, yFwd = nullptr, yBwd = nullptr, xFwd = nullptr, xBwd = nullptr;
    // convolve() on threads: the x transforms of one ky row (its kz
    // lines), per alignment class of the rows
    AlignedPlans xRowFwd, xRowBwd;
    bool         rowPlans = false;
    unsigned     planFlags = 0;
    std::vector<double> threadFft, threadSolve; // convolve()'s per-thread times
    bool         threadedPlans = false; // made (makeThreadedPlans)
    // and of a chunk of a slab's x planes (their 2D transforms): [0] full
    // chunks, [1] the last chunk
    AlignedPlans r2cChunk[2], c2rChunk[2];
    // pencils: one x plane's z rows (real <-> complex) and y lines
    AlignedPlans zPlaneR2c, zPlaneC2r, yPlaneFwd, yPlaneBwd;

    TransposePlan                   rowFwd, rowBwd, colFwd, colBwd;
    std::unique_ptr<fft::SharedStageArrays> shared; // shm: A, B, C live here
    std::unique_ptr<fft::Transport> row, col;

    /* The layouts of rank (i, j). */
    Layout layoutA(int i, int j) const
    {
        auto [x0, lx] = part(n[0], px, i);
        auto [y0, ly] = part(n[1], py, j);
        return Layout{FftBox{{x0, y0, 0}, {lx, ly, nzc}}, {0, 1, 2}};
    }
    Layout layoutB(int i, int j) const
    {
        auto [x0, lx] = part(n[0], px, i);
        auto [z0, lz] = part(nzc, py, j);
        return Layout{FftBox{{x0, 0, z0}, {lx, n[1], lz}}, {0, 2, 1}};
    }
    Layout layoutC(int i, int j) const
    {
        auto [y0, ly] = part(n[1], px, i);
        auto [z0, lz] = part(nzc, py, j);
        return Layout{FftBox{{0, y0, z0}, {n[0], ly, lz}}, {1, 2, 0}};
    }


    /* The plans of convolve() on threads (slab chunks, pencil planes, ky
     * rows), made at its first call with threads: a run on one thread per
     * rank never makes them, so its FFTW planner sees exactly the plans it
     * saw before they existed (extra plans made here in the constructor
     * changed the plans FFTW chose for later instances, and with them the
     * bits of a 4-rank run continued from checkpoints). FFTW_MEASURE
     * planning overwrites the arrays: the real block (the caller's input)
     * is kept aside meanwhile; the complex stages are scratch here. */
    void makeThreadedPlans()
    {
        if (threadedPlans)
        {
            return;
        }
        threadedPlans = true;
        // measuring plans transforms on the stage arrays
        settle(adata);
        settle(bdata);
        settle(cdata);
        const unsigned    flags = planFlags;
        std::vector<real> keep(rbuf, rbuf + std::max(1L, rsize));
        const int         ry        = realBox.size[1] + halo[1];
        const long        rowStride = n[2], planeStride = long(ry) * n[2];
        bool              ok        = true;
        if (slab && realBox.size[0] > 0)
        {
            // the 2D transforms of a chunk of c_planeChunk planes (the
            // last chunk: what is left)
            int        yz[2]    = { n[1], n[2] };
            int        embed[2] = { ry, n[2] }; // the real planes inside their halo
            const int  howX     = realBox.size[0];
            const long cplane   = long(n[1]) * nzc;
            const int  chunks   = (howX + c_planeChunk - 1) / c_planeChunk;
            for (int last = 0; last < 2; last++)
            {
                // full chunks [0, chunks - 1), then the last one alone
                const int first = last ? chunks - 1 : 0, count = last ? 1 : chunks - 1;
                const int how   = last ? howX - (chunks - 1) * c_planeChunk : c_planeChunk;
                auto      in    = [&](int c) { return rdata + long(first + c) * c_planeChunk * planeStride; };
                auto      out   = [&](int c) { return fftwPtr(adata + long(first + c) * c_planeChunk * cplane); };
                ok = ok && r2cChunk[last].plan(count, in, out, [&](real* i, FftwComplex* o) {
                    return PUTMD_FFTW(plan_many_dft_r2c)(2, yz, how, i, embed, 1, int(planeStride), o, nullptr, 1,
                                                         int(cplane), flags);
                });
                ok = ok && c2rChunk[last].plan(count, out, in, [&](FftwComplex* i, real* o) {
                    return PUTMD_FFTW(plan_many_dft_c2r)(2, yz, how, i, nullptr, 1, int(cplane), o, embed, 1,
                                                         int(planeStride), flags);
                });
            }
        }
        if (!slab && realBox.size[0] * realBox.size[1] > 0)
        {
            // one x plane's z rows
            const int         ly = realBox.size[1];
            PUTMD_FFTW(iodim) zReal{ n[2], 1, 1 };
            PUTMD_FFTW(iodim) rowR2c{ ly, int(rowStride), nzc }, rowC2r{ ly, nzc, int(rowStride) };
            auto realOf = [&](int i) { return rdata + i * planeStride; };
            auto cplxOf = [&](int i) { return fftwPtr(adata + long(i) * ly * nzc); };
            ok = ok && zPlaneR2c.plan(realBox.size[0], realOf, cplxOf, [&](real* in, FftwComplex* out) {
                return PUTMD_FFTW(plan_guru_dft_r2c)(1, &zReal, 1, &rowR2c, in, out, flags);
            });
            ok = ok && zPlaneC2r.plan(realBox.size[0], cplxOf, realOf, [&](FftwComplex* in, real* out) {
                return PUTMD_FFTW(plan_guru_dft_c2r)(1, &zReal, 1, &rowC2r, in, out, flags);
            });
        }
        if (!slab && lb.box.size[0] * lb.box.size[2] > 0)
        {
            // one x plane's y lines
            int       ny      = n[1];
            const int lz      = lb.box.size[2];
            auto      planeOf = [&](int i) { return fftwPtr(bdata + long(i) * lz * ny); };
            auto      make    = [&](int dir) {
                return [&, dir](FftwComplex* in, FftwComplex* out) {
                    return PUTMD_FFTW(plan_many_dft)(1, &ny, lz, in, nullptr, 1, ny, out, nullptr, 1, ny, dir, flags);
                };
            };
            ok = ok && yPlaneFwd.plan(lb.box.size[0], planeOf, planeOf, make(FFTW_FORWARD));
            ok = ok && yPlaneBwd.plan(lb.box.size[0], planeOf, planeOf, make(FFTW_BACKWARD));
        }
        if (lc.box.size[1] > 0 && lc.box.size[2] > 0)
        {
            // one ky row's x lines
            int          nx  = n[0];
            const int    lz  = lc.box.size[2];
            const size_t row = size_t(lz) * n[0];
            auto rowOf = [&](int a) { return fftwPtr(cdata + a * row); };
            auto make  = [&](int dir) {
                return [&, dir](FftwComplex* in, FftwComplex* out) {
                    return PUTMD_FFTW(plan_many_dft)(1, &nx, lz, in, nullptr, 1, nx, out, nullptr, 1, nx, dir, flags);
                };
            };
            rowPlans = xRowFwd.plan(lc.box.size[1], rowOf, rowOf, make(FFTW_FORWARD))
                       && xRowBwd.plan(lc.box.size[1], rowOf, rowOf, make(FFTW_BACKWARD));
            ok = ok && rowPlans;
        }
        if (!ok)
        {
            throw std::runtime_error("pencil FFT: FFTW could not make a plan");
        }
        std::copy(keep.begin(), keep.end(), rbuf);
    }

    void transpose(fft::Transport& t, TransposePlan& plan, const Complex* src, Complex* dst)
    {
        const double t0 = now();
        settle(dst); // the other transport's readers (the same one's ready flags cover its own)
        t.execute(plan, src, dst, stats);
        stats.commSeconds += now() - t0;
    }
    /* Before a local write into a stage array: no peer may still read it
     * (shm transposes, fft/transpose.h). */
    void settle(const Complex* array)
    {
        for (auto* t : {row.get(), col.get()})
        {
            if (t != nullptr)
            {
                t->settle(array);
            }
        }
    }
    void run(PUTMD_FFTW(plan) p)
    {
        if (p != nullptr)
        {
            const double t0 = now();
            PUTMD_FFTW(execute)(p);
            stats.fftSeconds += now() - t0;
        }
    }

    ~Impl()
    {
        for (auto* p : {&r2c, &c2r, &yFwd, &yBwd, &xFwd, &xBwd})
        {
            if (*p != nullptr)
            {
                PUTMD_FFTW(destroy_plan)(*p);
            }
        }
        // The transports (rma windows) go before the communicators they use.
        row.reset();
        col.reset();
        const bool sharedArrays = shared != nullptr;
        int finalized = 1;
        if (rowComm != MPI_COMM_NULL || colComm != MPI_COMM_NULL)
        {
            MPI_Finalized(&finalized);
        }
        if (!finalized)
        {
            MPI_Comm_free(&rowComm);
            MPI_Comm_free(&colComm);
        }
        PUTMD_FFTW(free)(rbuf);
        if (!sharedArrays)
        {
            PUTMD_FFTW(free)(adata);
            PUTMD_FFTW(free)(bdata);
            PUTMD_FFTW(free)(cdata);
        }
        shared.reset(); // its window lives on the caller's communicator
    }
};

PencilFft3d::PencilFft3d(MPI_Comm comm, std::array<int, 3> n, std::array<int, 2> procGrid, TransposeAlgorithm alg,
                         FftPlanning planning, std::array<int, 2> realHalo) :
    impl_(std::make_unique<Impl>())
{
    Impl&          m     = *impl_;
    const unsigned flags = planning == FftPlanning::Measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    for (int d = 0; d < 3; ++d)
    {
        if (n[d] < 1)
        {
            throw std::invalid_argument("pencil FFT: grid sizes must be positive");
        }
    }
    int size = 1, rank = 0;
    if (comm != MPI_COMM_NULL)
    {
        MPI_Comm_size(comm, &size);
        MPI_Comm_rank(comm, &rank);
    }
    if (procGrid[0] < 1 || procGrid[1] < 1 || procGrid[0] * procGrid[1] != size)
    {
        throw std::invalid_argument("pencil FFT: process grid " + std::to_string(procGrid[0]) + "x"
                                    + std::to_string(procGrid[1]) + " does not match " + std::to_string(size)
                                    + " rank(s)");
    }
    m.n   = n;
    m.nzc = n[2] / 2 + 1;
    m.planFlags = flags;
    m.px  = procGrid[0];
    m.py  = procGrid[1];
    m.ci  = rank / m.py;
    m.cj  = rank % m.py;
    m.alg = alg;

    if (comm != MPI_COMM_NULL)
    {
        MPI_Comm_split(comm, m.ci, m.cj, &m.rowComm); // rank in row = j
        MPI_Comm_split(comm, m.cj, m.ci, &m.colComm); // rank in column = i
    }

    {
        auto [x0, lx] = part(n[0], m.px, m.ci);
        auto [y0, ly] = part(n[1], m.py, m.cj);
        m.realBox     = FftBox{{x0, y0, 0}, {lx, ly, n[2]}};
    }
    m.slab = m.py == 1;
    m.la   = m.layoutA(m.ci, m.cj);
    // slabs have no y-pencil stage (B): no buffer for it
    m.lb = m.slab ? Layout{FftBox{{0, 0, 0}, {0, 0, 0}}, {0, 2, 1}} : m.layoutB(m.ci, m.cj);
    m.lc = m.layoutC(m.ci, m.cj);

    if (realHalo[0] < 0 || realHalo[1] < 0)
    {
        throw std::invalid_argument("pencil FFT: the real halo must not be negative");
    }
    m.halo = realHalo;
    // row and plane strides of the real block inside its halo
    const int  ry = m.realBox.size[1] + m.halo[1];
    const long rowStride = n[2], planeStride = long(ry) * n[2];
    m.rsize = long(m.realBox.size[0] + m.halo[0]) * planeStride;
    m.rbuf  = allocate<real>(m.rsize);
    m.rdata = m.rbuf + m.halo[0] * planeStride + m.halo[1] * rowStride;
    if (alg == TransposeAlgorithm::Shm && comm != MPI_COMM_NULL)
    {
        if (!fft::allOnOneMachine(comm))
        {
            throw std::invalid_argument("pencil FFT: the shm transposes need every rank of the FFT on one machine "
                                        "(shared memory; the SMPI build simulates none); use pairwise or rma");
        }
        m.shared = std::make_unique<fft::SharedStageArrays>(
                comm, std::array<long, 3>{ m.la.box.volume(), m.lb.box.volume(), m.lc.box.volume() });
        m.adata = m.shared->mine(0);
        m.bdata = m.shared->mine(1);
        m.cdata = m.shared->mine(2);
    }
    else
    {
        m.adata = allocate<Complex>(m.la.box.volume());
        m.bdata = allocate<Complex>(m.lb.box.volume());
        m.cdata = allocate<Complex>(m.lc.box.volume());
    }
    std::fill_n(m.rbuf, std::max(1L, m.rsize), real(0));
    std::fill_n(m.adata, std::max(1L, m.la.box.volume()), Complex(0));
    std::fill_n(m.bdata, std::max(1L, m.lb.box.volume()), Complex(0));
    std::fill_n(m.cdata, std::max(1L, m.lc.box.volume()), Complex(0));

    // Slabs: one 2D r2c / c2r per local x plane (y and z together, FFTW's
    // own cache blocking), stored x, y, kz (layout A with all of y).
    if (m.slab && m.realBox.size[0] > 0)
    {
        int       yz[2]    = { n[1], n[2] };
        int       embed[2] = { ry, n[2] }; // the real planes inside their halo
        const int howX     = m.realBox.size[0];
        m.r2c = PUTMD_FFTW(plan_many_dft_r2c)(2, yz, howX, m.rdata, embed, 1, int(planeStride), fftwPtr(m.adata),
                                              nullptr, 1, n[1] * m.nzc, flags);
        m.c2r = PUTMD_FFTW(plan_many_dft_c2r)(2, yz, howX, fftwPtr(m.adata), nullptr, 1, n[1] * m.nzc, m.rdata,
                                              embed, 1, int(planeStride), flags);
        if (m.r2c == nullptr || m.c2r == nullptr)
        {
            throw std::runtime_error("pencil FFT: FFTW could not make a plan");
        }
    }
    // Pencils: 1D FFTs along the contiguous axis of each stage; none where
    // the local block is empty.
    if (!m.slab)
    {
        const int howZ = m.realBox.size[0] * m.realBox.size[1];
        if (howZ > 0)
        {
            // z rows of the real block (x and y strides of the halo'd
            // buffer) to and from the contiguous z-pencils
            const int         lx = m.realBox.size[0], ly = m.realBox.size[1];
            PUTMD_FFTW(iodim) zReal{ n[2], 1, 1 };
            PUTMD_FFTW(iodim) rowsR2c[2] = { { lx, int(planeStride), ly * m.nzc }, { ly, int(rowStride), m.nzc } };
            PUTMD_FFTW(iodim) rowsC2r[2] = { { lx, ly * m.nzc, int(planeStride) }, { ly, m.nzc, int(rowStride) } };
            m.r2c = PUTMD_FFTW(plan_guru_dft_r2c)(1, &zReal, 2, rowsR2c, m.rdata, fftwPtr(m.adata), flags);
            m.c2r = PUTMD_FFTW(plan_guru_dft_c2r)(1, &zReal, 2, rowsC2r, fftwPtr(m.adata), m.rdata, flags);
        }
        const int howY = m.lb.box.size[0] * m.lb.box.size[2];
        if (howY > 0)
        {
            int  ny = n[1];
            auto* b = fftwPtr(m.bdata);
            m.yFwd  = PUTMD_FFTW(plan_many_dft)(1, &ny, howY, b, nullptr, 1, ny, b, nullptr, 1, ny, FFTW_FORWARD,
                                               flags);
            m.yBwd  = PUTMD_FFTW(plan_many_dft)(1, &ny, howY, b, nullptr, 1, ny, b, nullptr, 1, ny, FFTW_BACKWARD,
                                               flags);
        }
        if ((howZ > 0 && (m.r2c == nullptr || m.c2r == nullptr)) || (howY > 0 && (m.yFwd == nullptr || m.yBwd == nullptr)))
        {
            throw std::runtime_error("pencil FFT: FFTW could not make a plan");
        }
    }
    {
        const int howX = m.lc.box.size[1] * m.lc.box.size[2];
        if (howX > 0)
        {
            int  nx = n[0];
            auto* c = fftwPtr(m.cdata);
            m.xFwd  = PUTMD_FFTW(plan_many_dft)(1, &nx, howX, c, nullptr, 1, nx, c, nullptr, 1, nx, FFTW_FORWARD,
                                               flags);
            m.xBwd  = PUTMD_FFTW(plan_many_dft)(1, &nx, howX, c, nullptr, 1, nx, c, nullptr, 1, nx, FFTW_BACKWARD,
                                               flags);
        }
        if (howX > 0 && (m.xFwd == nullptr || m.xBwd == nullptr))
        {
            throw std::runtime_error("pencil FFT: FFTW could not make a plan");
        }
    }
    if (planning == FftPlanning::Measure)
    {
        // measuring ran transforms on the buffers
        std::fill_n(m.rbuf, std::max(1L, m.rsize), real(0));
        std::fill_n(m.adata, std::max(1L, m.la.box.volume()), Complex(0));
        std::fill_n(m.bdata, std::max(1L, m.lb.box.volume()), Complex(0));
        std::fill_n(m.cdata, std::max(1L, m.lc.box.volume()), Complex(0));
    }

    // Transposes: row (peer k = (i, k)) and column (peer k = (k, j)).
    // Slabs have no row transpose (every rank makes the same choice, so
    // the transports' collective set-up stays matched).
    const int i = m.ci, j = m.cj;
    if (!m.slab)
    {
        m.rowFwd = fft::makeTransposePlan(m.py, j, [&](int k) { return m.layoutA(i, k); },
                                          [&](int k) { return m.layoutB(i, k); });
        m.rowBwd = fft::makeTransposePlan(m.py, j, [&](int k) { return m.layoutB(i, k); },
                                          [&](int k) { return m.layoutA(i, k); });
    }
    // the column transpose starts from y-pencils, or from the slab itself
    auto beforeColumn = [&](int k) { return m.slab ? m.layoutA(k, j) : m.layoutB(k, j); };
    m.colFwd = fft::makeTransposePlan(m.px, i, beforeColumn, [&](int k) { return m.layoutC(k, j); });
    m.colBwd = fft::makeTransposePlan(m.px, i, [&](int k) { return m.layoutC(k, j); }, beforeColumn);
    std::vector<int> rowRanks(m.py), colRanks(m.px);
    for (int k = 0; k < m.py; ++k)
    {
        rowRanks[k] = i * m.py + k;
    }
    for (int k = 0; k < m.px; ++k)
    {
        colRanks[k] = k * m.py + j;
    }
    if (!m.slab)
    {
        m.row = fft::makeTransport(alg, m.rowComm, comm, {&m.rowFwd, &m.rowBwd}, rowRanks, "row", m.shared.get(), 0);
    }
    m.col = fft::makeTransport(alg, m.colComm, comm, {&m.colFwd, &m.colBwd}, colRanks, "column", m.shared.get(), 1);
}

PencilFft3d::~PencilFft3d() = default;

std::array<int, 3> PencilFft3d::realStart() const
{
    return impl_->realBox.start;
}

std::array<int, 3> PencilFft3d::realSize() const
{
    return impl_->realBox.size;
}

real* PencilFft3d::realData()
{
    return impl_->rdata;
}

real* PencilFft3d::realBuffer()
{
    return impl_->rbuf;
}

std::array<int, 3> PencilFft3d::complexStart() const
{
    return impl_->lc.box.start;
}

std::array<int, 3> PencilFft3d::complexSize() const
{
    return impl_->lc.box.size;
}

std::array<int, 3> PencilFft3d::complexOrder() const
{
    return impl_->lc.order;
}

std::complex<real>* PencilFft3d::complexData()
{
    impl_->settle(impl_->cdata); // the caller may write it
    return impl_->cdata;
}

void PencilFft3d::forward()
{
    Impl& m = *impl_;
    m.settle(m.adata);
    m.run(m.r2c);
    if (!m.slab)
    {
        m.transpose(*m.row, m.rowFwd, m.adata, m.bdata);
        m.settle(m.bdata);
        m.run(m.yFwd);
    }
    m.transpose(*m.col, m.colFwd, m.slab ? m.adata : m.bdata, m.cdata);
    m.settle(m.cdata);
    m.run(m.xFwd);
    ++m.stats.transforms;
}

void PencilFft3d::backward()
{
    Impl& m = *impl_;
    m.settle(m.cdata);
    m.run(m.xBwd);
    m.transpose(*m.col, m.colBwd, m.cdata, m.slab ? m.adata : m.bdata);
    if (!m.slab)
    {
        m.settle(m.bdata);
        m.run(m.yBwd);
        m.transpose(*m.row, m.rowBwd, m.bdata, m.adata);
    }
    m.settle(m.adata); // c2r overwrites its input
    m.run(m.c2r);
    ++m.stats.transforms;
}

void PencilFft3d::convolve(int threads, const RowSolver& solveRow, double* solveSeconds)
{
    Impl&        m   = *impl_;
    const int    ly  = m.lc.box.size[1];
    const size_t row = size_t(m.lc.box.size[2]) * m.n[0];
    // slabs: the planes' 2D transforms in fixed chunks of planes, shared
    // by the threads (the same plans for any thread count above one)
    const int    lx     = m.slab ? m.realBox.size[0] : 0;
    const int    chunks = (lx + c_planeChunk - 1) / c_planeChunk;
    const long   plane  = long(m.realBox.size[1] + m.halo[1]) * m.n[2];
    const long   cplane = long(m.n[1]) * m.nzc;
    const int    most   = std::max({ ly, chunks, m.slab ? 0 : m.realBox.size[0], m.slab ? 0 : m.lb.box.size[0] });
    const int    nt     = std::max(1, std::min(threads, most));
    // per-thread times, kept in the object (no allocation in the step)
    std::vector<double>& fftTime   = m.threadFft;
    std::vector<double>& solveTime = m.threadSolve;
    fftTime.assign(nt, 0.0);
    solveTime.assign(nt, 0.0);
    // count items over the threads in equal shares (thread 0's time is
    // the pass's)
    auto shared = [&](int count, auto&& item) {
#pragma omp parallel num_threads(nt)
        {
            const int    t  = omp_get_thread_num();
            const double t0 = now();
            for (int i = count * t / nt; i < count * (t + 1) / nt; i++)
            {
                item(i);
            }
            fftTime[t] += now() - t0;
        }
    };
    auto planes = [&](bool toComplex) {
        shared(chunks, [&](int c) {
            real*        r    = m.rdata + long(c) * c_planeChunk * plane;
            FftwComplex* z    = fftwPtr(m.adata + long(c) * c_planeChunk * cplane);
            const int    last = c == chunks - 1 ? 1 : 0;
            if (toComplex)
            {
                PUTMD_FFTW(execute_dft_r2c)(m.r2cChunk[last].find(r, z), r, z);
            }
            else
            {
                PUTMD_FFTW(execute_dft_c2r)(m.c2rChunk[last].find(z, r), z, r);
            }
        });
    };
    // pencils: the z rows and the y lines plane by plane
    const long zPlane = long(m.realBox.size[1]) * m.nzc, yPlane = long(m.lb.box.size[2]) * m.n[1];
    auto zRows = [&](bool toComplex) {
        shared(m.slab || zPlane == 0 ? 0 : m.realBox.size[0], [&](int i) {
            real*        r = m.rdata + i * plane;
            FftwComplex* z = fftwPtr(m.adata + i * zPlane);
            if (toComplex)
            {
                PUTMD_FFTW(execute_dft_r2c)(m.zPlaneR2c.find(r, z), r, z);
            }
            else
            {
                PUTMD_FFTW(execute_dft_c2r)(m.zPlaneC2r.find(z, r), z, r);
            }
        });
    };
    auto yLines = [&](bool forwardDir) {
        shared(m.slab || yPlane == 0 ? 0 : m.lb.box.size[0], [&](int i) {
            FftwComplex* b = fftwPtr(m.bdata + i * yPlane);
            PUTMD_FFTW(execute_dft)((forwardDir ? m.yPlaneFwd : m.yPlaneBwd).find(b, b), b, b);
        });
    };
    if (nt == 1)
    {
        // one thread: the whole-block plans of forward() and backward()
        // (FFTW transforms many planes or lines at once faster: chunks
        // and rows on one thread made the 2-rank water PME's transforms
        // 3-8% slower), the rows solved in order between them
        forward();
        double t0 = now();
        for (int a = 0; a < (row > 0 ? ly : 0); a++)
        {
            solveRow(a, m.cdata + a * row);
        }
        if (solveSeconds)
        {
            *solveSeconds = now() - t0;
        }
        backward();
        return;
    }
    m.makeThreadedPlans();
    m.settle(m.adata);
    if (m.slab)
    {
        planes(true);
    }
    else
    {
        zRows(true);
        m.transpose(*m.row, m.rowFwd, m.adata, m.bdata);
        m.settle(m.bdata);
        yLines(true);
    }
    m.transpose(*m.col, m.colFwd, m.slab ? m.adata : m.bdata, m.cdata);
    m.settle(m.cdata);
    if (m.rowPlans)
    {
#pragma omp parallel num_threads(nt)
        {
            const int t = omp_get_thread_num();
            for (int a = ly * t / nt; a < ly * (t + 1) / nt; a++)
            {
                FftwComplex* p  = fftwPtr(m.cdata + a * row);
                const double t0 = now();
                PUTMD_FFTW(execute_dft)(m.xRowFwd.find(p, p), p, p);
                const double t1 = now();
                solveRow(a, m.cdata + a * row);
                const double t2 = now();
                PUTMD_FFTW(execute_dft)(m.xRowBwd.find(p, p), p, p);
                fftTime[t] += (t1 - t0) + (now() - t2);
                solveTime[t] += t2 - t1;
            }
        }
    }
    m.transpose(*m.col, m.colBwd, m.cdata, m.slab ? m.adata : m.bdata);
    if (m.slab)
    {
        m.settle(m.adata);
        planes(false);
    }
    else
    {
        m.settle(m.bdata);
        yLines(false);
        m.transpose(*m.row, m.rowBwd, m.bdata, m.adata);
        m.settle(m.adata);
        zRows(false);
    }
    // the calling thread's share stands for the threaded passes (the
    // others ran beside it)
    m.stats.fftSeconds += fftTime[0];
    if (solveSeconds)
    {
        *solveSeconds = solveTime[0];
    }
    m.stats.transforms += 2;
}

const FftCommStats& PencilFft3d::stats() const
{
    return impl_->stats;
}

void PencilFft3d::resetStats()
{
    impl_->stats = FftCommStats{};
}

TransposeAlgorithm PencilFft3d::algorithm() const
{
    return impl_->alg;
}

TransposeAlgorithm PencilFft3d::chooseFastest(MPI_Comm comm, std::array<int, 3> n, std::array<int, 2> procGrid,
                                              int repeats)
{
    int size = 1;
    if (comm != MPI_COMM_NULL)
    {
        MPI_Comm_size(comm, &size);
    }
    if (size == 1)
    {
        return TransposeAlgorithm::Alltoallv; // no communication: all three are the same local copy
    }
    // 0: the default, 9 pairs (3 under SMPI, whose simulated times do not
    // scatter and whose simulation of each pair costs real time)
    repeats = repeats > 0 ? repeats : (PUTMD_SMPI ? 3 : 9);
    // The collective-free algorithms side by side (a normal MD step makes
    // no collective call: alltoallv is there when asked for by name); the
    // repetitions interleave them (in a rotating order) so that drift of a
    // shared machine hits all alike. What is timed is the transposes
    // alone (their time in stats().commSeconds): the transforms are the
    // same for all, and only add scatter (a pair of 42^3 transforms took
    // 0.4 ms with 45-140 us of transposes on 2 ranks). The time of a pair
    // is the slowest rank's (so every rank sees the same numbers and makes
    // the same choice); the score is the median.
    std::vector<TransposeAlgorithm> algs = {TransposeAlgorithm::Pairwise, TransposeAlgorithm::Rma};
    if (fft::allOnOneMachine(comm))
    {
        algs.push_back(TransposeAlgorithm::Shm);
    }
    const int kAlgs = static_cast<int>(algs.size());
    std::vector<std::unique_ptr<PencilFft3d>> ffts;
    for (auto alg : algs)
    {
        ffts.push_back(std::make_unique<PencilFft3d>(comm, n, procGrid, alg));
    }
    auto fill = [](PencilFft3d& f) {
        const long nreal = long(f.realSize()[0]) * f.realSize()[1] * f.realSize()[2];
        for (long k = 0; k < nreal; ++k)
        {
            f.realData()[k] = real(std::sin(0.37 * double(k)));
        }
    };
    for (auto& f : ffts) // warm-up (first touch of buffers and windows)
    {
        fill(*f);
        f->forward();
        f->backward();
    }
    std::vector<std::vector<double>> times(kAlgs);
    for (int r = 0; r < repeats; ++r)
    {
        for (int k = 0; k < kAlgs; ++k)
        {
            const int a = (k + r) % kAlgs;
            fill(*ffts[a]);
            MPI_Barrier(comm);
            const double c0 = ffts[a]->stats().commSeconds;
            ffts[a]->forward();
            ffts[a]->backward();
            double t = ffts[a]->stats().commSeconds - c0, slowest = 0;
            MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
            times[a].push_back(slowest);
        }
    }
    int    best     = 0;
    double bestTime = 0;
    for (int a = 0; a < kAlgs; ++a)
    {
        auto& v = times[a];
        std::sort(v.begin(), v.end());
        const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
        if (a == 0 || med < bestTime)
        {
            best     = a;
            bestTime = med;
        }
    }
    return algs[best];
}

std::array<int, 2> choosePencilGrid(int p, std::array<int, 3> n)
{
    if (p < 1)
    {
        throw std::invalid_argument("choosePencilGrid: the number of ranks must be positive");
    }
    const int    nzc   = n[2] / 2 + 1;
    const double total = double(n[0]) * n[1] * n[2];
    auto         ceilDiv = [](int a, int b) { return double((a + b - 1) / b); };
    std::array<int, 2> best{p, 1};
    double             bestCost = 0;
    bool               first    = true;
    for (int px = 1; px <= p; ++px)
    {
        if (p % px != 0)
        {
            continue;
        }
        const int py = p / px;
        // Largest local block of each stage relative to a perfect split
        // (the complex stages in units of their own total).
        const double zPencil = ceilDiv(n[0], px) * ceilDiv(n[1], py) * n[2] / (total / p);
        const double yPencil = ceilDiv(n[0], px) * ceilDiv(nzc, py) * n[1] / (double(n[0]) * nzc * n[1] / p);
        const double xPencil = ceilDiv(n[1], px) * ceilDiv(nzc, py) * n[0] / (double(n[0]) * nzc * n[1] / p);
        const double load    = std::max({zPencil, yPencil, xPencil});
        const double cost    = load + 0.1 * std::abs(std::log(double(px) / py)) + (px < py ? 0.01 : 0.0);
        if (first || cost < bestCost - 1e-12)
        {
            best     = {px, py};
            bestCost = cost;
            first    = false;
        }
    }
    return best;
}

} // namespace putmd
