#include "pme/pme_rows.h"

#include <atomic>
#include <cstddef>
#include <cstring>

#include "pme/pme_kernels.h"

namespace putmd::pme_detail
{

namespace
{

constexpr int c_spreadPrefetch = 8; // atoms ahead (a slab's atoms are scattered over the atom order)

#if PUTMD_PME_SSE
// 4 floats: a row of 4 z points, in an SSE register (or the low half of an
// AVX one); operators are element-wise
typedef float V4 __attribute__((vector_size(16)));

[[gnu::always_inline]] inline V4 load4(const float* p)
{
    V4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

[[gnu::always_inline]] inline void store4(float* p, V4 v)
{
    std::memcpy(p, &v, sizeof v);
}

[[gnu::always_inline]] inline V4 splat(float x)
{
    return V4{ x, x, x, x };
}

/* (v0 + v2) + (v1 + v3): the order of the SSE horizontal sum it replaces. */
[[gnu::always_inline]] inline float sum4(V4 v)
{
    return (v[0] + v[2]) + (v[1] + v[3]);
}

/* One atom's charge onto 16 rows: a row update is a multiply and an add
 * (one instruction where the copy has FMA). */
[[gnu::always_inline]] inline void spreadRows(float* grid, const GridRows& g, const int* idx, float qi,
                                              const float* tx, const float* ty, const float* tz)
{
    const V4 vtz = load4(tz);
    V4       tyz[4];
    size_t   yo[4];
#pragma GCC unroll 4
    for (int b = 0; b < 4; b++)
    {
        tyz[b] = splat(ty[b]) * vtz;
        yo[b]  = size_t(g.wy[idx[1] + b]) * g.zStride;
    }
    const size_t plane = size_t(g.K[1]) * g.zStride;
#pragma GCC unroll 4
    for (int a = 0; a < 4; a++)
    {
        const V4     qa   = splat(qi * tx[a]);
        float* const xrow = grid + size_t(g.wx[idx[0] + a]) * plane + idx[2];
#pragma GCC unroll 4
        for (int b = 0; b < 4; b++)
        {
            float* r = xrow + yo[b];
            store4(r, load4(r) + qa * tyz[b]);
        }
    }
}

/* dE/du / q of one atom from 16 rows: per a, sx = sum_b ty_b row and
 * sy = sum_b dty_b row (over z); f0 = tz . sum_a dtx_a sx, f1 = tz . sum_a
 * tx_a sy, f2 = dtz . sum_a tx_a sx. */
[[gnu::always_inline]] inline void gatherRows(const float* grid, const GridRows& g, const int* idx,
                                              const float* tx, const float* ty, const float* tz, const float* dtx,
                                              const float* dty, const float* dtz, float fu[3])
{
    V4     vty[4], vdty[4];
    size_t yo[4];
#pragma GCC unroll 4
    for (int b = 0; b < 4; b++)
    {
        vty[b]  = splat(ty[b]);
        vdty[b] = splat(dty[b]);
        yo[b]   = size_t(g.wy[idx[1] + b]) * g.zStride;
    }
    const size_t plane = size_t(g.K[1]) * g.zStride;
    V4           f0 = splat(0), f1 = splat(0), f2 = splat(0);
#pragma GCC unroll 4
    for (int a = 0; a < 4; a++)
    {
        const float* const xrow = grid + size_t(g.wx[idx[0] + a]) * plane + idx[2];
        V4                 sx = splat(0), sy = splat(0);
#pragma GCC unroll 4
        for (int b = 0; b < 4; b++)
        {
            const V4 gv = load4(xrow + yo[b]);
            sx          = sx + vty[b] * gv;
            sy          = sy + vdty[b] * gv;
        }
        f0 = f0 + splat(dtx[a]) * sx;
        f1 = f1 + splat(tx[a]) * sy;
        f2 = f2 + splat(tx[a]) * sx;
    }
    fu[0] = sum4(f0 * load4(tz));
    fu[1] = sum4(f1 * load4(tz));
    fu[2] = sum4(f2 * load4(dtz));
}

#endif

/* The bodies, inlined into each copy below. kRows: the vector rows where a
 * row does not wrap (order 4, float builds); otherwise the plain loops. P:
 * the order, 0 for the run-time s.order. */
template<bool kRows, int P>
[[gnu::always_inline]] inline void spreadBody(real* grid, const GridRows& g, const SplineAtoms& s, const int* list,
                                              int begin, int end)
{
    const int p = P > 0 ? P : s.order;
    for (int k = begin; k < end; k++)
    {
        if (k + c_spreadPrefetch < end)
        {
            const int ahead = list[k + c_spreadPrefetch];
            for (int d = 0; d < 3; d++)
            {
                __builtin_prefetch(&s.theta[d][size_t(ahead) * p]);
                __builtin_prefetch(&s.index[d][ahead]);
            }
            __builtin_prefetch(&s.q[ahead]);
        }
        const int   i      = list[k];
        const int   idx[3] = { s.index[0][i], s.index[1][i], s.index[2][i] };
        const real* tx     = &s.theta[0][size_t(i) * p];
        const real* ty     = &s.theta[1][size_t(i) * p];
        const real* tz     = &s.theta[2][size_t(i) * p];
#if PUTMD_PME_SSE
        if constexpr (kRows && P == 4)
        {
            if (idx[2] + 4 <= g.zReach)
            {
                spreadRows(grid, g, idx, real(s.q[i]), tx, ty, tz);
                continue;
            }
        }
#endif
        spreadAtom<P>(grid, g.K, g.zStride, g.wx, g.wy, g.wz, idx, real(s.q[i]), tx, ty, tz, p);
    }
}

template<bool kRows, int P>
[[gnu::always_inline]] inline void gatherBody(const real* grid, const GridRows& g, const SplineAtoms& s, int begin,
                                              int end, const std::array<int, 3>& K, const Matrix3& inv,
                                              Vec3<real>* f, GatherStore store)
{
    const int p = P > 0 ? P : s.order;
    // the box's factors in locals: through the references each force
    // store made the compiler load and convert them again (a fifth of the
    // function's time); the same operations in the same order
    const double Kd[3] = { double(K[0]), double(K[1]), double(K[2]) };
    double       m[3][3];
    for (int e = 0; e < 3; e++)
    {
        for (int d = 0; d < 3; d++)
        {
            m[e][d] = inv(e, d);
        }
    }
    for (int i = begin; i < end; i++)
    {
        if (s.q[i] == 0)
        {
            if (store == GatherStore::Assign)
            {
                f[i] = Vec3<real>();
            }
            continue;
        }
        const size_t o      = size_t(i) * p;
        const int    idx[3] = { s.index[0][i], s.index[1][i], s.index[2][i] };
        real         fu[3]; // dE/du_d / q
        bool         done = false;
#if PUTMD_PME_SSE
        if constexpr (kRows && P == 4)
        {
            if (idx[2] + 4 <= g.zReach)
            {
                gatherRows(grid, g, idx, &s.theta[0][o], &s.theta[1][o], &s.theta[2][o], &s.dtheta[0][o],
                           &s.dtheta[1][o], &s.dtheta[2][o], fu);
                done = true;
            }
        }
#endif
        if (!done)
        {
            gatherAtom<P>(grid, g.K, g.zStride, g.wx, g.wy, g.wz, idx, &s.theta[0][o], &s.theta[1][o], &s.theta[2][o],
                          &s.dtheta[0][o], &s.dtheta[1][o], &s.dtheta[2][o], p, fu);
        }
        const double a[3] = { double(fu[0]) * Kd[0], double(fu[1]) * Kd[1], double(fu[2]) * Kd[2] };
        const double qi   = s.q[i];
        // each component in a register of its own: through an array of
        // three, the three 4-byte stores were read back as an 8- and a
        // 4-byte load, which the store buffer cannot forward (a stall of
        // the whole store's trip to the cache: 18% of the gather's samples);
        // the same operations in the same order
        double de0 = 0, de1 = 0, de2 = 0;
        for (int d = 0; d < 3; d++)
        {
            de0 += a[d] * m[0][d];
            de1 += a[d] * m[1][d];
            de2 += a[d] * m[2][d];
        }
        const bool acc = store == GatherStore::Accumulate;
        const real o0  = acc ? f[i][0] - real(qi * de0) : real(-qi * de0);
        const real o1  = acc ? f[i][1] - real(qi * de1) : real(-qi * de1);
        const real o2  = acc ? f[i][2] - real(qi * de2) : real(-qi * de2);
        f[i]          = Vec3<real>(o0, o1, o2);
    }
}

// the plain twin (order 4, and any order) and the SSE copy (any x86-64)
void spreadPlain(real* grid, const GridRows& g, const SplineAtoms& s, const int* list, int begin, int end)
{
    if (s.order == 4)
    {
        spreadBody<false, 4>(grid, g, s, list, begin, end);
    }
    else
    {
        spreadBody<false, 0>(grid, g, s, list, begin, end);
    }
}

void spreadSse(real* grid, const GridRows& g, const SplineAtoms& s, const int* list, int begin, int end)
{
    spreadBody<true, 4>(grid, g, s, list, begin, end);
}

void gatherPlain(const real* grid, const GridRows& g, const SplineAtoms& s, int begin, int end,
                 const std::array<int, 3>& K, const Matrix3& inv, Vec3<real>* f, GatherStore store)
{
    if (s.order == 4)
    {
        gatherBody<false, 4>(grid, g, s, begin, end, K, inv, f, store);
    }
    else
    {
        gatherBody<false, 0>(grid, g, s, begin, end, K, inv, f, store);
    }
}

void gatherSse(const real* grid, const GridRows& g, const SplineAtoms& s, int begin, int end,
               const std::array<int, 3>& K, const Matrix3& inv, Vec3<real>* f, GatherStore store)
{
    gatherBody<true, 4>(grid, g, s, begin, end, K, inv, f, store);
}

#if PUTMD_PME_SSE && defined(__x86_64__) && defined(__GNUC__)
#define PUTMD_PME_FMA 1
// the same bodies compiled for AVX2 with FMA (this file is compiled with
// -ffp-contract=fast, so a multiply followed by an add becomes one fused
// instruction where the copy has it)
__attribute__((target("avx2,fma"))) void spreadFma(real* grid, const GridRows& g, const SplineAtoms& s,
                                                   const int* list, int begin, int end)
{
    spreadBody<true, 4>(grid, g, s, list, begin, end);
}

__attribute__((target("avx2,fma"))) void gatherFma(const real* grid, const GridRows& g, const SplineAtoms& s,
                                                   int begin, int end, const std::array<int, 3>& K, const Matrix3& inv,
                                                   Vec3<real>* f, GatherStore store)
{
    gatherBody<true, 4>(grid, g, s, begin, end, K, inv, f, store);
}

bool cpuHasFma()
{
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
}
#else
#define PUTMD_PME_FMA 0
bool cpuHasFma()
{
    return false;
}
#endif

std::atomic<bool> fusedAllowed{ true };

} // namespace

void allowFusedRows(bool allowed)
{
    fusedAllowed = allowed;
}

bool fusedRowsActive()
{
    return PUTMD_PME_FMA && fusedAllowed && cpuHasFma();
}

const char* rowsDescription()
{
    if (!PUTMD_PME_SSE)
    {
        return "plain loops (this build's precision)";
    }
    return fusedRowsActive() ? "4-wide rows with FMA (AVX2 copy)" : "4-wide SSE rows (PUTMD_SIMD=sse4 or no FMA)";
}

void spreadAtoms(real* grid, const GridRows& g, const SplineAtoms& a, const int* list, int begin, int end, bool rows)
{
    if (!rows || a.order != 4)
    {
        spreadPlain(grid, g, a, list, begin, end);
        return;
    }
#if PUTMD_PME_FMA
    if (fusedRowsActive())
    {
        spreadFma(grid, g, a, list, begin, end);
        return;
    }
#endif
    spreadSse(grid, g, a, list, begin, end);
}

void gatherAtoms(const real* grid, const GridRows& g, const SplineAtoms& a, int begin, int end,
                 const std::array<int, 3>& K, const Matrix3& inv, Vec3<real>* f, GatherStore store, bool rows)
{
    if (!rows || a.order != 4)
    {
        gatherPlain(grid, g, a, begin, end, K, inv, f, store);
        return;
    }
#if PUTMD_PME_FMA
    if (fusedRowsActive())
    {
        gatherFma(grid, g, a, begin, end, K, inv, f, store);
        return;
    }
#endif
    gatherSse(grid, g, a, begin, end, K, inv, f, store);
}

} // namespace putmd::pme_detail
