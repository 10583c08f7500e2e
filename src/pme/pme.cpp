#include "pme/pme.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "io/mdp.h"
#include "pme/bspline.h"
#include "pme/grid_size.h"
#include "pme/pme_kernels.h"
#include "pme/pme_rows.h"

namespace putmd
{

PmeParameters pmeParametersFor(const Box& box, const MdpOptions& mdp, double ewaldCoeff, double epsfac)
{
    PmeParameters p;
    p.gridSize   = choosePmeGrid(box, mdp).n;
    p.order      = mdp.pmeOrder;
    p.ewaldCoeff = ewaldCoeff;
    p.epsfac     = epsfac;
    return p;
}

std::vector<double> bsplineModuli(int n, int order)
{
    std::vector<double> values(n, 0.0);
    double              theta[16], dtheta[16];
    fillBspline(order, 0.0, theta, dtheta);
    // at w = 0, theta[j] = M_p(p - 1 - j): the values M_p(1..p-1)
    for (int k = 0; k < order - 1 && k < n; k++)
    {
        values[k] = theta[order - 2 - k]; // M_p(k + 1)
    }
    std::vector<double> mod(n);
    for (int m = 0; m < n; m++)
    {
        double sc = 0, ss = 0;
        for (int k = 0; k < n; k++)
        {
            const double arg = 2 * units::pi * m * k / n;
            sc += values[k] * std::cos(arg);
            ss += values[k] * std::sin(arg);
        }
        mod[m] = sc * sc + ss * ss;
    }
    for (int m = 0; m < n; m++)
    {
        if (mod[m] < 1e-7)
        {
            mod[m] = 0.5 * (mod[(m - 1 + n) % n] + mod[(m + 1) % n]);
        }
    }
    return mod;
}

struct Pme::Splines
{
    int                 order;
    std::vector<int>    index[3]; // first grid index (wrapped) per atom and dim
    std::vector<real>   theta[3], dtheta[3]; // the build's precision
};

namespace pme_detail
{

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// one copy per instruction set, chosen when the program starts (GCC's
// function multi-versioning)
#define PUTMD_PME_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PUTMD_PME_CLONES
#endif

/* Grid cells and order-4 weights of atoms [begin, end), one dimension per
 * pass: the arithmetic of pmeGridCell and the cubic B-spline in closed
 * form as one vectorised loop over the atoms (it was 40% of the spread one
 * atom at a time), in the build's precision throughout (as GROMACS's mixed
 * precision); products with 1/6 rather than divisions. */
namespace
{
PUTMD_PME_CLONES void splinesOrder4Clones(const Vec3<real>* x, int begin, int end, const Matrix3& inv,
                                    const std::array<int, 3>& K, real* const theta[3], real* const dtheta[3],
                                    int* const index[3])
{
    constexpr real sixth = real(1) / 6;
    for (int d = 0; d < 3; d++)
    {
        const real   a = real(inv(0, d)), b = real(inv(1, d)), c = real(inv(2, d));
        const int    Kd = K[d];
        const real   Kr = real(Kd);
        real* const  th = theta[d];
        real* const  dth = dtheta[d];
        int* const   idx = index[d];
        // the coordinates as a flat array (Vec3 is three packed reals)
        const real* const xyz = &x[0].x;
#pragma omp simd
        for (int i = begin; i < end; i++)
        {
            const real u  = pmeScaledFraction(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], a, b, c, Kr);
            const int  iu = pmeCellOfScaled(u, Kd);
            const real w = u - real(iu), om = 1 - w, w2 = w * w, w3 = w2 * w;
            th[4 * i]      = om * om * om * sixth;
            th[4 * i + 1]  = (3 * w3 - 6 * w2 + 4) * sixth;
            th[4 * i + 2]  = (-3 * w3 + 3 * w2 + 3 * w + 1) * sixth;
            th[4 * i + 3]  = w3 * sixth;
            dth[4 * i]     = -om * om * real(0.5);
            dth[4 * i + 1] = (3 * w2 - 4 * w) * real(0.5);
            dth[4 * i + 2] = (-3 * w2 + 2 * w + 1) * real(0.5);
            dth[4 * i + 3] = w2 * real(0.5);
            const int first = iu - 3;
            idx[i]          = first < 0 ? first + Kd : first;
        }
    }
}
PUTMD_PME_CLONES void cellsOrder4Clones(const Vec3<real>* x, int n, const Matrix3& inv, int d, int Kd, int* out)
{
    const real        a = real(inv(0, d)), b = real(inv(1, d)), c = real(inv(2, d));
    const real        Kr  = real(Kd);
    const real* const xyz = &x[0].x;
#pragma omp simd
    for (int i = 0; i < n; i++)
    {
        out[i] = pmeCellOfScaled(pmeScaledFraction(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], a, b, c, Kr), Kd);
    }
}
} // namespace

void cellsOrder4(const Vec3<real>* x, int n, const Matrix3& inv, int d, int Kd, int* out)
{
    if (n > 0) // (a rank may hold no atoms: x may then be null)
    {
        cellsOrder4Clones(x, n, inv, d, Kd, out);
    }
}

void splinesOrder4(const Vec3<real>* x, int begin, int end, const Matrix3& inv, const std::array<int, 3>& K,
                   real* const theta[3], real* const dtheta[3], int* const index[3])
{
    splinesOrder4Clones(x, begin, end, inv, K, theta, dtheta, index);
}

} // namespace pme_detail

using namespace pme_detail;

Pme::Pme(const PmeParameters& params) : params_(params), splines_(std::make_unique<Splines>())
{
    for (int d = 0; d < 3; d++)
    {
        bsplineModuli_[d] = bsplineModuli(params.gridSize[d], params.order);
        wrap_[d].resize(params.gridSize[d] + params.order);
        for (int i = 0; i < params.gridSize[d] + params.order; i++)
        {
            wrap_[d][i] = i % params.gridSize[d];
        }
    }
}

Fft3d& Pme::fft()
{
    if (!fft_)
    {
        // rows with a halo of order - 1 points: no atom's rows wrap in z
        // (a grid is at least 2 (order - 1) points: grid_size.cpp; the
        // halo never longer than the row)
        fft_ = std::make_unique<Fft3d>(params_.gridSize[0], params_.gridSize[1], params_.gridSize[2],
                                       params_.fftPlanning, std::min(params_.order - 1, params_.gridSize[2]));
    }
    return *fft_;
}

Pme::~Pme() = default;

void Pme::setNumThreads(int n)
{
    numThreads_ = n > 0 ? n : 1;
}

/* The spread, threaded without a grid per thread: the atoms are put in
 * blocks of x and y planes by the first planes their splines touch (slabs
 * of at least p - 1 planes in each dimension, an even number of them). An
 * atom of slab s reaches at most p - 1 planes into slab s + 1, so blocks
 * whose x slabs have the same parity and whose y slabs have the same
 * parity never touch each other's points: four phases (x even / y even,
 * x even / y odd, ...), the blocks of a phase spread in parallel straight
 * onto the FFT grid. Each point then receives its contributions in the same
 * order (phase, then atom order within the one block of that phase that
 * reaches it) whatever the thread count: the grid is bitwise independent
 * of -nt. Slabs in x alone (two phases) left 7 slabs per phase on a 42^3
 * grid for two threads: one did 4, the other 3 (the spreading's wall time
 * on 2 threads 169 us against 249 on one); a phase now has 49 blocks. */
/* The grid as spread and gather address it: the periodic wrap tables and
 * the FFT grid's rows, with their halo past nz (no row wraps within it). */
GridRows Pme::gridRows()
{
    const auto K = params_.gridSize;
    return { K, wrap_[0].data(), wrap_[1].data(), wrap_[2].data(), size_t(fft().rowStride()), K[2] + fft().zHalo() };
}

SplineAtoms Pme::splineAtoms(const Splines& s, const std::vector<double>& q)
{
    return { s.order,
             { s.theta[0].data(), s.theta[1].data(), s.theta[2].data() },
             { s.dtheta[0].data(), s.dtheta[1].data(), s.dtheta[2].data() },
             { s.index[0].data(), s.index[1].data(), s.index[2].data() },
             q.data() };
}

void Pme::spread(const Box& box, const std::vector<Vec3<real>>& x, const std::vector<double>& q, Splines& s)
{
    const int  p = params_.order;
    const auto K = params_.gridSize;
    const int  natoms = static_cast<int>(x.size());
    s.order = p;
    for (int d = 0; d < 3; d++)
    {
        s.index[d].resize(natoms);
        s.theta[d].resize(size_t(natoms) * p);
        s.dtheta[d].resize(size_t(natoms) * p);
    }
    const size_t   ngrid = size_t(K[0]) * K[1] * fft().rowStride();
    const int      nt    = std::max(1, std::min(numThreads_, natoms));
    const Matrix3& inv   = box.inverse();
    real* const    grid  = fft().realData();
    // slabs per dimension: as many as fit at p - 1 planes each, an even
    // number, the same for every thread count; one slab when the grid is
    // too thin for two
    auto slabsOf = [&](int k) { return k / (p - 1) >= 2 ? 2 * (k / (2 * (p - 1))) : 1; };
    const int slabsX = slabsOf(K[0]), slabsY = slabsOf(K[1]);
    const int numBlocks = slabsX * slabsY;
    blockCount_.assign(size_t(nt) * numBlocks, 0);
    netChargeParts_.assign(nt, 0.0);
    blockAtoms_.resize(natoms);
    blockStart_.assign(numBlocks + 1, 0);
    std::vector<int>& atomBlock = atomBlock_;
    atomBlock.resize(natoms);
    // the slab of each first plane, floor(index * slabs / K), as a table
    // (a 64-bit division per atom was two thirds of this function's own time)
    blockOfPlane_.resize(K[0] + K[1]);
    for (int ip = 0; ip < K[0]; ip++)
    {
        blockOfPlane_[ip] = int(long(ip) * slabsX / K[0]) * slabsY;
    }
    for (int ip = 0; ip < K[1]; ip++)
    {
        blockOfPlane_[K[0] + ip] = int(long(ip) * slabsY / K[1]);
    }
    const int* const blockOfX = blockOfPlane_.data();
    const int* const blockOfY = blockOfPlane_.data() + K[0];
    // the blocks of each phase, in block order
    phaseBlocks_.clear();
    phaseStart_.assign(5, 0);
    for (int phase = 0; phase < 4; phase++)
    {
        phaseStart_[phase] = static_cast<int>(phaseBlocks_.size());
        for (int sx = phase / 2; sx < slabsX; sx += 2)
        {
            for (int sy = phase % 2; sy < slabsY; sy += 2)
            {
                phaseBlocks_.push_back(sx * slabsY + sy);
            }
        }
    }
    phaseStart_[4] = static_cast<int>(phaseBlocks_.size());
#pragma omp parallel num_threads(nt)
    {
        const int t     = nt > 1 ? omp_get_thread_num() : 0;
        const int begin = static_cast<int>(long(natoms) * t / nt), end = static_cast<int>(long(natoms) * (t + 1) / nt);
        std::fill(grid + ngrid * t / nt, grid + ngrid * (t + 1) / nt, real(0));
        int* count = &blockCount_[size_t(t) * numBlocks];
        if (p == 4)
        {
            real* const theta[3]  = { s.theta[0].data(), s.theta[1].data(), s.theta[2].data() };
            real* const dtheta[3] = { s.dtheta[0].data(), s.dtheta[1].data(), s.dtheta[2].data() };
            int* const  index[3]  = { s.index[0].data(), s.index[1].data(), s.index[2].data() };
            splinesOrder4(x.data(), begin, end, inv, K, theta, dtheta, index);
        }
        double qpart = 0;
        for (int i = begin; i < end; i++)
        {
            qpart += q[i];
            for (int d = 0; d < 3 && p != 4; d++)
            {
                double    w  = 0;
                const int iu = pmeGridCell(x[i], inv, d, K[d], &w);
                splinesOf(w, &s.theta[d][size_t(i) * p], &s.dtheta[d][size_t(i) * p], p);
                const int first = iu - p + 1;
                s.index[d][i]   = first < 0 ? first + K[d] : first;
            }
            const int block = q[i] == 0 ? -1 : blockOfX[s.index[0][i]] + blockOfY[s.index[1][i]];
            atomBlock[i]    = block;
            if (block >= 0)
            {
                count[block]++;
            }
        }
        netChargeParts_[t] = qpart;
#pragma omp barrier
#pragma omp single
        {
            // block-major, thread-minor offsets: atoms in index order per block
            int offset = 0;
            for (int b = 0; b < numBlocks; b++)
            {
                blockStart_[b] = offset;
                for (int u = 0; u < nt; u++)
                {
                    const int c                            = blockCount_[size_t(u) * numBlocks + b];
                    blockCount_[size_t(u) * numBlocks + b] = offset;
                    offset += c;
                }
            }
            blockStart_[numBlocks] = offset;
            for (int phase = 0; phase < 4; phase++)
            {
                phaseAtoms_[phase] = 0;
                for (int k = phaseStart_[phase]; k < phaseStart_[phase + 1]; k++)
                {
                    phaseAtoms_[phase] += blockStart_[phaseBlocks_[k] + 1] - blockStart_[phaseBlocks_[k]];
                }
            }
        }
        for (int i = begin; i < end; i++)
        {
            if (atomBlock[i] >= 0)
            {
                blockAtoms_[count[atomBlock[i]]++] = i;
            }
        }
#pragma omp barrier
        const SplineAtoms atoms = splineAtoms(s, q);
        const GridRows    rows  = gridRows();
        for (int phase = 0; phase < 4; phase++)
        {
            // each thread a run of the phase's blocks (x slab major) with
            // an equal share of its atoms: threads far apart in memory (two
            // threads on neighbouring y blocks, taken one by one, spent
            // twice the time per atom: each one's writes and prefetches
            // pulled lines from the other)
            const int k0 = phaseStart_[phase], k1 = phaseStart_[phase + 1];
            const int  total = phaseAtoms_[phase];
            const long from = long(total) * t / nt, to = long(total) * (t + 1) / nt;
            int        done = 0;
            for (int k = k0; k < k1; k++)
            {
                const int b = phaseBlocks_[k];
                const int n = blockStart_[b + 1] - blockStart_[b];
                // the block goes to the thread whose share holds its first atom
                if (done >= from && done < to)
                {
                    spreadAtoms(grid, rows, atoms, blockAtoms_.data(), blockStart_[b], blockStart_[b + 1], sseRows_);
                }
                done += n;
            }
#pragma omp barrier
        }
    }
}

namespace
{

void addTo(Matrix3& to, const Matrix3& from)
{
    for (int p = 0; p < 3; p++)
    {
        for (int q = 0; q < 3; q++)
        {
            to(p, q) += from(p, q);
        }
    }
}

} // namespace

double sumInOrder(const std::vector<double>& energies, const std::vector<Matrix3>& virials, Matrix3* virial)
{
    double energy = 0;
    for (size_t i = 0; i < energies.size(); i++)
    {
        energy += energies[i];
        if (virial)
        {
            addTo(*virial, virials[i]);
        }
    }
    return energy;
}

double solvePmeBlockSerial(const PmeParameters& params, const std::array<std::vector<double>, 3>& moduli,
                           const Box& box, std::complex<real>* data, const SpectrumBlock& block, Matrix3* virial,
                           real* influence)
{
    const auto     K    = params.gridSize;
    const Matrix3& inv  = box.inverse();
    const double   beta = params.ewaldCoeff;
    const double   fac  = units::pi * units::pi / (beta * beta);
    const double   pref = params.epsfac / (units::pi * box.volume());
    const auto&    o    = block.order;
    double         energy = 0;
    Matrix3        vir;
    int            k[3];
    size_t         index = 0;
    for (int a = 0; a < block.size[o[0]]; a++)
    {
        k[o[0]] = block.start[o[0]] + a;
        for (int b = 0; b < block.size[o[1]]; b++)
        {
            k[o[1]] = block.start[o[1]] + b;
            for (int c = 0; c < block.size[o[2]]; c++, index++)
            {
                k[o[2]]      = block.start[o[2]] + c;
                const int kx = k[0], ky = k[1], kz = k[2];
                auto&     v  = data[index];
                if (kx == 0 && ky == 0 && kz == 0)
                {
                    v = 0;
                    if (influence)
                    {
                        influence[index] = 0;
                    }
                    continue;
                }
                const int mx = kx < (K[0] + 1) / 2 ? kx : kx - K[0]; // as GROMACS maps the Nyquist plane
                const int mY = ky < (K[1] + 1) / 2 ? ky : ky - K[1];
                const int mz = kz; // kz <= K[2]/2 always in the half spectrum
                DVec      m;
                for (int e = 0; e < 3; e++)
                {
                    m[e] = mx * inv(e, 0) + mY * inv(e, 1) + mz * inv(e, 2);
                }
                const double m2     = norm2(m);
                const double denom  = m2 * moduli[0][kx] * moduli[1][ky] * moduli[2][kz];
                const double eterm  = pref * std::exp(-fac * m2) / denom;
                const double weight = (kz == 0 || (K[2] % 2 == 0 && kz == K[2] / 2)) ? 1.0 : 2.0;
                const double re = v.real(), im = v.imag();
                const double em = 0.5 * weight * eterm * (re * re + im * im); // this m's energy
                energy += em;
                v *= real(eterm);
                if (influence)
                {
                    influence[index] = real(eterm);
                }
                if (virial)
                {
                    // -0.5 E_m (delta_ab - 2 (1 + pi^2 m^2 / beta^2) m_a m_b / m^2)
                    const double vfac = 2 * (1 + fac * m2) / m2;
                    for (int p = 0; p < 3; p++)
                    {
                        for (int q = 0; q < 3; q++)
                        {
                            vir(p, q) -= 0.5 * em * ((p == q ? 1.0 : 0.0) - vfac * m[p] * m[q]);
                        }
                    }
                }
            }
        }
    }
    if (virial)
    {
        addTo(*virial, vir);
    }
    return energy;
}

double applyInfluenceBlock(const PmeParameters& params, std::complex<real>* data, const SpectrumBlock& block,
                           const real* influence, bool energy)
{
    if (!energy)
    {
        // the same products as below, point by point (complex times real)
        const size_t n = size_t(block.size[0]) * block.size[1] * block.size[2];
        real* const  d = reinterpret_cast<real*>(data);
        for (size_t i = 0; i < n; i++)
        {
            d[2 * i] *= influence[i];
            d[2 * i + 1] *= influence[i];
        }
        return 0;
    }
    const int  K2 = params.gridSize[2];
    const auto& o = block.order;
    double     e  = 0;
    size_t     i  = 0;
    int        k[3];
    for (int a = 0; a < block.size[o[0]]; a++)
    {
        k[o[0]] = block.start[o[0]] + a;
        for (int b = 0; b < block.size[o[1]]; b++)
        {
            k[o[1]] = block.start[o[1]] + b;
            for (int c = 0; c < block.size[o[2]]; c++, i++)
            {
                k[o[2]]             = block.start[o[2]] + c;
                const int    kz     = k[2];
                const double weight = (kz == 0 || (K2 % 2 == 0 && kz == K2 / 2)) ? 0.5 : 1.0; // 0.5 x the r2c weight
                const auto   v      = data[i];
                e += weight * influence[i] * (double(v.real()) * v.real() + double(v.imag()) * v.imag());
                data[i] = v * influence[i];
            }
        }
    }
    return e;
}

/* The transforms and the solve in one pass (Fft3d::convolve): each ky's
 * points are solved in the transform's buffer between its x transforms.
 * The influence factors are stored ky by ky (ky slowest) for the steps
 * with the box of the last full solve and no virial. Energies and virials
 * per ky, summed in ky order: the same bits for every thread count. */
double Pme::transformAndSolve(const Box& box, Matrix3* virial, bool energy)
{
    Fft3d&       grid = fft();
    const int    nx = params_.gridSize[0], ny = params_.gridSize[1], nzc = grid.complexNz();
    const size_t n  = size_t(nx) * ny * nzc;
    bool sameBox = influence_.size() == n;
    for (int a = 0; a < 3 && sameBox; a++)
    {
        for (int b = 0; b < 3; b++)
        {
            sameBox = sameBox && box.vectors()(a, b) == influenceBox_.vectors()(a, b);
        }
    }
    const bool full = virial != nullptr || !sameBox;
    if (full)
    {
        influence_.resize(n);
        influenceBox_ = box;
    }
    rowEnergies_.assign(ny, 0.0);
    rowVirials_.assign(virial ? ny : 0, Matrix3());
    grid.convolve(numThreads_, [&](int, int ky, std::complex<real>* points) {
        SpectrumBlock row;
        row.start         = { 0, ky, 0 };
        row.size          = { nx, 1, nzc };
        real* factors     = influence_.data() + size_t(ky) * nx * nzc;
        rowEnergies_[ky]  = full ? solvePmeBlockSerial(params_, bsplineModuli_, box, points, row,
                                                       virial ? &rowVirials_[ky] : nullptr, factors)
                                 : applyInfluenceBlock(params_, points, row, factors, energy);
    });
    return sumInOrder(rowEnergies_, rowVirials_, virial);
}

void Pme::gather(const Box& box, const std::vector<double>& q, const Splines& s, std::vector<Vec3<real>>& f)
{
    const auto     K    = params_.gridSize;
    const real*    grid = fft().realData();
    const Matrix3& inv  = box.inverse();
    const int      natoms = static_cast<int>(q.size());
    const int      nt     = std::max(1, std::min(numThreads_, natoms));
    const SplineAtoms atoms = splineAtoms(s, q);
    const GridRows    rows  = gridRows();
#pragma omp parallel num_threads(nt)
    {
        const int t = nt > 1 ? omp_get_thread_num() : 0;
        gatherAtoms(grid, rows, atoms, int(long(natoms) * t / nt), int(long(natoms) * (t + 1) / nt), K, inv, f.data(),
                    GatherStore::Accumulate, sseRows_);
    }
}

double Pme::compute(const Box& box, const std::vector<Vec3<real>>& x, const std::vector<double>& charges,
                    std::vector<Vec3<real>>& f, Matrix3* virial, bool energy)
{
    Splines& splines = *splines_;
    spread(box, x, charges, splines);
    const bool   sumEnergy  = energy || virial != nullptr;
    const double meshEnergy = transformAndSolve(box, virial, sumEnergy);
    gather(box, charges, splines, f);
    // the net charge, summed by the spread's threads (a serial pass over
    // every atom per step before)
    double qsum = 0;
    for (double part : netChargeParts_)
    {
        qsum += part;
    }
    const double netChargeTerm = -params_.epsfac * units::pi * qsum * qsum
                                 / (2 * box.volume() * params_.ewaldCoeff * params_.ewaldCoeff);
    if (virial)
    {
        // the term scales as 1/V: an isotropic -0.5 E_q on the diagonal
        for (int d = 0; d < 3; d++)
        {
            (*virial)(d, d) -= 0.5 * netChargeTerm;
        }
    }
    return sumEnergy ? meshEnergy + netChargeTerm : 0.0;
}

} // namespace putmd
