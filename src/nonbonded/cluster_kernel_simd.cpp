/* The SIMD cluster-pair kernel (Highway), compiled once per instruction set
 * and chosen at run time.
 *
 * Layout: a register of W lanes (4 SSE4, 8 AVX2, 16 AVX-512) holds W/4
 * i-atoms times the 4 j-atoms of a j-cluster, lane l = 4 (ii - first) + jj;
 * the j-cluster's coordinates are loaded once and repeated in every 128-bit
 * block (LoadDup128), the i-atoms' are prepared per i-entry as registers
 * with each atom repeated four times. 16/W registers cover a cluster pair;
 * on AVX-512 and AVX2 two j-entries are computed side by side (two or four
 * dependency chains), and the AVX2 copy leaves out the half of a pruned
 * pair without a pair in range. The interaction mask of the entry selects
 * lanes bit by bit.
 * Forces on the i-atoms accumulate in registers over the j-list; forces on
 * the j-atoms are added lane by lane to a per-thread scratch and folded
 * from W lanes to the atoms once, at the end of the call.
 * Ewald: 1/r^3 and 1/r from rsqrt with one Newton step, the erf part from
 * the polynomial of ewald_correction.h (Estrin), on AVX2 and AVX-512 the
 * force's in as many pieces as the register has lanes (each lane's
 * coefficients by a lane permutation); C6/C12 gathered from the type-pair
 * matrix or made from per-atom parameters.
 */
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nonbonded/cluster_kernel_simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <cstring>
#include <type_traits>

#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include "nonbonded/cluster_kernel.h"

// the unit loops of the kernel must become straight-line code (registers,
// not arrays on the stack); -O2 alone does not unroll them completely
#define PUTMD_UNROLL _Pragma("GCC unroll 16")

HWY_BEFORE_NAMESPACE();
namespace putmd
{
namespace HWY_NAMESPACE
{
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// one lane: the 4x4 layout needs four; the baseline of a build without SIMD
void ClusterKernelSimd(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    clusterKernelReference(k, in, out);
}

void ClusterPruneSimd(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out)
{
    clusterPruneReference(in, rlist2, out);
}
#else
template<class D>
HWY_INLINE auto foldToBlock(D d, hn::Vec<D> v)
{
    if constexpr (hn::MaxLanes(D()) <= 4)
    {
        return v;
    }
    else
    {
        const hn::Half<D> dh;
        return foldToBlock(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
    }
}

/* The polynomial with 16 coefficients c (zero-padded) at t by Estrin's
 * scheme: depth four multiply-adds instead of a chain of fifteen, which
 * matters because one cluster pair is a single register on AVX-512. */
template<class V>
HWY_INLINE V estrin16(const V* c, V t)
{
    const V t2 = hn::Mul(t, t), t4 = hn::Mul(t2, t2), t8 = hn::Mul(t4, t4);
    // written out: a loop over arrays of vectors is not always unrolled
    const V p0 = hn::MulAdd(c[1], t, c[0]), p1 = hn::MulAdd(c[3], t, c[2]);
    const V p2 = hn::MulAdd(c[5], t, c[4]), p3 = hn::MulAdd(c[7], t, c[6]);
    const V p4 = hn::MulAdd(c[9], t, c[8]), p5 = hn::MulAdd(c[11], t, c[10]);
    const V p6 = hn::MulAdd(c[13], t, c[12]), p7 = hn::MulAdd(c[15], t, c[14]);
    const V q0 = hn::MulAdd(p1, t2, p0), q1 = hn::MulAdd(p3, t2, p2);
    const V q2 = hn::MulAdd(p5, t2, p4), q3 = hn::MulAdd(p7, t2, p6);
    return hn::MulAdd(hn::MulAdd(q3, t4, q2), t8, hn::MulAdd(q1, t4, q0));
}

/* The same for at most 13 coefficients (degree 12, what the fit needs for
 * the usual beta rc ~ 3.1): 12 multiply-adds and 3 products instead of 15
 * and 3; the force-only kernel uses it when the series is that short. */
template<class V>
HWY_INLINE V estrin13(const V* c, V t)
{
    const V t2 = hn::Mul(t, t), t4 = hn::Mul(t2, t2), t8 = hn::Mul(t4, t4);
    const V p0 = hn::MulAdd(c[1], t, c[0]), p1 = hn::MulAdd(c[3], t, c[2]);
    const V p2 = hn::MulAdd(c[5], t, c[4]), p3 = hn::MulAdd(c[7], t, c[6]);
    const V p4 = hn::MulAdd(c[9], t, c[8]), p5 = hn::MulAdd(c[11], t, c[10]);
    const V q0 = hn::MulAdd(p1, t2, p0), q1 = hn::MulAdd(p3, t2, p2);
    const V q2 = hn::MulAdd(p5, t2, p4);
    return hn::MulAdd(hn::MulAdd(c[12], t4, q2), t8, hn::MulAdd(q1, t4, q0));
}

/* The four i-atoms' values of cluster ci, each repeated for the four
 * j-lanes (lane 4 ii + jj), plus an offset (the image shift). */
template<typename T>
HWY_INLINE void repeatForJ(const T* a, int ci, T offset, T* buf)
{
    for (int ii = 0; ii < 4; ii++)
    {
        for (int jj = 0; jj < 4; jj++)
        {
            buf[4 * ii + jj] = a[ci * 4 + ii] + offset;
        }
    }
}

/* Lane l of register r holds bit r W + l of a cluster pair's mask. */
template<class DI, int R>
HWY_INLINE void maskLaneBits(DI di, hn::Vec<DI> (&bits)[R])
{
    constexpr int W = 16 / R;
    for (int r = 0; r < R; r++)
    {
        bits[r] = hn::Shl(hn::Set(di, 1), hn::Iota(di, r * W));
    }
}

/* The force's fit in as many pieces as W lanes (8 or 16). */
template<int W>
HWY_INLINE const EwaldPieces& forcePieces(const EwaldCorrection& e)
{
    return W == 16 ? e.forceIn16 : e.forceIn8;
}

/* With 16 vector registers (AVX2, SSE4) a cluster pair's intermediates,
 * the Ewald coefficients, the i-atoms' values and their force accumulators
 * do not fit, and GCC's default order (no scheduling before register
 * allocation on x86) spills intermediates to the stack in every iteration.
 * Scheduling with register pressure in view first cuts the AVX2 kernel
 * from 68 to 61 cycles per cluster pair (AMD EPYC, water-spce-12k); on
 * AVX-512, with 32 registers, it costs (51 -> 56), so only the narrower
 * copies are compiled so. */
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
#pragma GCC push_options
#pragma GCC optimize("schedule-insns", "sched-pressure")
#endif
/* kShortSeries: the Ewald force series has at most 13 coefficients
 * (estrin13); otherwise 16 (estrin16). kPieces: the force from the fit in
 * as many pieces as the register has lanes (8 or 16; ewald_correction.h),
 * each lane's coefficients picked by a lane permutation. */
template<bool kEwald, bool kForceSwitch, bool kEnergies, ClusterLjComb kComb, bool kShortSeries, bool kPieces = false>
void kernel(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    const hn::ScalableTag<float>   d;
    const hn::RebindToSigned<decltype(d)> di;
    const hn::FixedTag<float, 4>   d4;
    using V                = hn::Vec<decltype(d)>;
    using VI               = hn::Vec<decltype(di)>;
    constexpr int W        = static_cast<int>(hn::MaxLanes(decltype(d)()));
    static_assert(W >= 4 && W <= 16, "the cluster kernel needs 4 to 16 float lanes");
    constexpr int R        = 16 / W; // registers per cluster pair

    const V rc2 = hn::Set(d, k.rcoulomb2), rv2 = hn::Set(d, k.rvdw2);
    const bool vdwShorter = k.rvdw2 < k.rcoulomb2;
    const V half = hn::Set(d, 0.5f), three = hn::Set(d, 3.0f);
    const V sixV = hn::Set(d, 6.0f), twelveV = hn::Set(d, 12.0f), twoV = hn::Set(d, 2.0f);
    // force-only potential-shift Lennard-Jones with a combination rule:
    // the i-atoms' parameters carry the force's constant factors
    constexpr bool kPrescaledLJ = !kEnergies && !kForceSwitch && kComb != ClusterLjComb::Matrix;
    /* The same kernels compute R = 2/r, which saves the Newton step's
     * multiplication by 1/2 (one floating-point operation of about 47 per
     * register on the two ports that do them), and carry the powers of two
     * in constants: the i-charges times 1/8 and the Ewald (or reaction-
     * field) term times 8, so that qq/8 (R^3 - 8 h) = qq (r^-3 - h); the
     * i-atoms' Lennard-Jones factors times 1/256 and 1/16384 (geometric:
     * C6 R^6 R^2 / 256 and C12 R^12 R^2 / 16384 are the r-powers) or
     * 1/256 and a constant 1/32 for 2 (s/r)^6 (Lorentz-Berthelot). Scaling
     * by a power of two is exact (for normal floats: a factor like
     * 12 B_i / 16384 would turn subnormal only for C12 below about 1e-34),
     * so every product and sum rounds as it did with 1/r: the forces are
     * the same, bit for bit (checked on water-spce-12k and rnase-amber-
     * cubic, AVX2, AVX-512 and SSE4). */
    constexpr bool kTwoOverR = kPrescaledLJ;
    // a pair in the list closer than 1e-6 nm: 1/r from rsqrt above 1e6 (by
    // more than rsqrt's error, so that the plain kernel that names the
    // atoms finds r^2 < 1e-12 too)
    const V overlapRinv = hn::Set(d, 1e6f * (1.0f + 1.0f / 1024));
    const V tScale = hn::Set(d, float(2 / k.ewald.smax)), one = hn::Set(d, 1.0f);
    const V shEwald = hn::Set(d, float(k.shEwald));
    const V twoKrf = hn::Set(d, float((kTwoOverR ? 16 : 2) * k.kRf)), kRf = hn::Set(d, float(k.kRf)), cRf = hn::Set(d, float(k.cRf));
    const V sh6 = hn::Set(d, float(k.shiftC6)), sh12 = hn::Set(d, float(k.shiftC12));
    const V rsw = hn::Set(d, float(k.rswitch));
    const V a6 = hn::Set(d, float(k.fs6[0])), b6 = hn::Set(d, float(k.fs6[1])), c6s = hn::Set(d, float(k.fs6[2]));
    const V a12 = hn::Set(d, float(k.fs12[0])), b12 = hn::Set(d, float(k.fs12[1])), c12s = hn::Set(d, float(k.fs12[2]));
    const V third = hn::Set(d, 1.0f / 3), quarter = hn::Set(d, 0.25f);
    static_assert(EwaldCorrection::c_maxCoefficients == 16, "estrin16 evaluates 16 coefficients");
    V fCoef[16], vCoef[16];
    for (int c = 0; c < 16; c++)
    {
        fCoef[c] = hn::Set(d, (kTwoOverR ? 8.0f : 1.0f) * (c < static_cast<int>(k.ewald.force.size()) ? k.ewald.force[c] : 0.0f));
        vCoef[c] = hn::Set(d, c < static_cast<int>(k.ewald.energy.size()) ? k.ewald.energy[c] : 0.0f);
    }
    // the pieces' coefficients: register i holds coefficient i of every piece
    constexpr int kPieceCoefficients = W == 16 ? EwaldPieces::c_coefficientsIn16 : EwaldPieces::c_coefficientsIn8;
    const EwaldPieces& pieces = forcePieces<W>(k.ewald);
    V pCoef[kPieceCoefficients];
    for (int c = 0; c < kPieceCoefficients; c++)
    {
        pCoef[c] = kPieces ? hn::Mul(hn::LoadU(d, pieces.coef.data() + c * W), hn::Set(d, kTwoOverR ? 8.0f : 1.0f))
                           : hn::Zero(d);
    }
    const V pScale = hn::Set(d, kPieces ? pieces.scale : 0.0f), pMagic = hn::Set(d, EwaldPieces::c_magic);
    const VI pLaneMask = hn::Set(di, W - 1);
    // locals, so that stores to the forces cannot be taken to change them
    const float* HWY_RESTRICT xA = in.x;
    const float* HWY_RESTRICT yA = in.y;
    const float* HWY_RESTRICT zA = in.z;
    const float* HWY_RESTRICT qA = in.q;
    const int32_t* HWY_RESTRICT typeA = in.type;
    const float* HWY_RESTRICT c6A = k.c6;
    const float* HWY_RESTRICT c12A = k.c12;
    const float* HWY_RESTRICT ljAA = in.ljA;
    const float* HWY_RESTRICT ljBA = in.ljB;
    float* HWY_RESTRICT fxA = out.fx;
    float* HWY_RESTRICT fyA = out.fy;
    float* HWY_RESTRICT fzA = out.fz;
    const ClusterPairJ* HWY_RESTRICT jList = in.jEntries;
    const uint8_t* HWY_RESTRICT ljOfCluster = in.clusterLJ;

    VI laneBit[R];
    maskLaneBits(di, laneBit);
    float* HWY_RESTRICT jWide = out.jScratch; // zeros on entry (see the fold at the end)

    HWY_ALIGN float   bufX[16], bufY[16], bufZ[16], bufQ[16];
    HWY_ALIGN int32_t bufT[16];
    HWY_ALIGN float   bufA[16], bufB[16];
    HWY_ALIGN float   outX[16], outY[16], outZ[16];
    bool overlap = false;

    for (int ie = in.iBegin; ie < in.iEnd; ie++)
    {
        const ClusterPairI& e  = in.iEntries[ie];
        const float*        sv = in.shift + 3 * e.shift;
        repeatForJ(in.x, e.ci, sv[0], bufX);
        repeatForJ(in.y, e.ci, sv[1], bufY);
        repeatForJ(in.z, e.ci, sv[2], bufZ);
        repeatForJ(in.q, e.ci, 0.0f, bufQ);
        repeatForJ(in.type, e.ci, 0, bufT);
        for (int l = 0; l < 16; l++)
        {
            bufT[l] *= k.numTypes; // the row of the type-pair matrix
        }
        if constexpr (kComb != ClusterLjComb::Matrix)
        {
            repeatForJ(in.ljA, e.ci, 0.0f, bufA);
            repeatForJ(in.ljB, e.ci, 0.0f, bufB);
        }
        V  xi[R], yi[R], zi[R], qi[R], fix[R], fiy[R], fiz[R], ai[R], bi[R];
        VI rowI[R];
        // register r's i-values (its W/4 i-atoms, each repeated four times)
        // and zeroed force accumulators
        auto loadRow = [&](int r) HWY_ATTR __attribute__((always_inline))
        {
            xi[r]   = hn::Load(d, bufX + r * W);
            yi[r]   = hn::Load(d, bufY + r * W);
            zi[r]   = hn::Load(d, bufZ + r * W);
            qi[r]   = hn::Load(d, bufQ + r * W);
            if constexpr (kTwoOverR)
            {
                qi[r] = hn::Mul(qi[r], hn::Set(d, 0.125f));
            }
            rowI[r] = hn::Load(di, bufT + r * W);
            if constexpr (kComb != ClusterLjComb::Matrix)
            {
                ai[r] = hn::Load(d, bufA + r * W);
                bi[r] = hn::Load(d, bufB + r * W);
                if constexpr (kPrescaledLJ)
                {
                    // the force's factors 6 and 12 folded into the i-side
                    // (geometric: 6 C6 = (6 A_i) A_j, 12 C12 = (12 B_i) B_j;
                    // Lorentz-Berthelot: 6 epsilon through e_i)
                    // (and the powers of two of R = 2/r: kTwoOverR)
                    ai[r] = kComb == ClusterLjComb::Geometric ? hn::Mul(ai[r], hn::Set(d, 6.0f / 256)) : ai[r];
                    bi[r] = hn::Mul(bi[r], hn::Set(d, kComb == ClusterLjComb::Geometric ? 12.0f / 16384 : 6.0f / 256));
                }
            }
            fix[r] = fiy[r] = fiz[r] = hn::Zero(d);
        };
        auto storeRow = [&](int r) HWY_ATTR __attribute__((always_inline))
        {
            hn::Store(fix[r], d, outX + r * W);
            hn::Store(fiy[r], d, outY + r * W);
            hn::Store(fiz[r], d, outZ + r * W);
        };
        V vcAcc = hn::Zero(d), vlAcc = hn::Zero(d);
        // bit h: i-rows 2h and 2h + 1 have an atom with Lennard-Jones
        const int iLJRows = ljOfCluster == nullptr ? 3 : ljOfCluster[e.ci];
        bool      iLJ     = iLJRows != 0; // for the j-entries computed next
        V rinvMax = hn::Zero(d); // the largest raw 1/r in the list (inf at r = 0)

        /* NJ j-entries at once: a cluster pair is one register on AVX-512,
         * and its chain of dependent operations (distance, rsqrt, series,
         * force, fold) is long; two independent chains side by side keep
         * the floating-point pipes busy (one chain alone left about half of
         * the cycles idle). Units u = j RU + r, written stage by stage:
         * all R registers of each j-entry (kRow < 0), or only register
         * kRow of each (the row halves of the AVX2 copy, below). */
        auto pairs = [&](auto njTag, auto rowTag, auto ljRowsTag, int p) HWY_ATTR __attribute__((always_inline))
        {
            constexpr int NJ   = decltype(njTag)::value;
            constexpr int kRow = decltype(rowTag)::value;
            // AVX2: the registers (bit r) whose i-rows have Lennard-Jones
            constexpr int kLJRows = decltype(ljRowsTag)::value;
            constexpr int RU   = kRow < 0 ? R : 1; // registers per j-entry
            constexpr int U    = NJ * RU;
            // unit u's j-entry and register
            auto jOf = [](int u) constexpr { return u / RU; };
            auto rOf = [](int u) constexpr { return kRow < 0 ? u % RU : kRow; };
            using M          = hn::Mask<decltype(d)>;
            int  sj[NJ];
            V    xj[NJ], yj[NJ], zj[NJ], qj[NJ], aj[NJ], bj[NJ];
            VI   tj[NJ], maskBits[NJ];
            bool doLJ = false;
            PUTMD_UNROLL
            for (int j = 0; j < NJ; j++)
            {
                const ClusterPairJ je = jList[p + j];
                sj[j] = je.cj * 4;
                xj[j] = hn::LoadDup128(d, xA + sj[j]);
                yj[j] = hn::LoadDup128(d, yA + sj[j]);
                zj[j] = hn::LoadDup128(d, zA + sj[j]);
                qj[j] = hn::LoadDup128(d, qA + sj[j]);
                if constexpr (kComb == ClusterLjComb::Matrix)
                {
                    tj[j] = hn::LoadDup128(di, typeA + sj[j]);
                }
                else
                {
                    aj[j] = hn::LoadDup128(d, ljAA + sj[j]);
                    bj[j] = hn::LoadDup128(d, ljBA + sj[j]);
                }
                if constexpr (W < 8)
                {
                    maskBits[j] = hn::Set(di, static_cast<int32_t>(je.mask)); // tested bit by bit below
                }
                // a pair without LJ computes it with zero parameters when
                // its partner has: the skip is only a saving
                doLJ = doLJ || (iLJ && (ljOfCluster == nullptr || ljOfCluster[je.cj] != 0));
            }
            V dx[U], dy[U], dz[U], r2[U], rinv[U], rinv2[U], qq[U], fscal[U];
            M m[U];
            PUTMD_UNROLL
            for (int u = 0; u < U; u++)
            {
                const int j = jOf(u), r = rOf(u);
                dx[u] = hn::Sub(xj[j], xi[r]);
                dy[u] = hn::Sub(yj[j], yi[r]);
                dz[u] = hn::Sub(zj[j], zi[r]);
            }
            PUTMD_UNROLL
            for (int u = 0; u < U; u++)
            {
                r2[u] = hn::MulAdd(dx[u], dx[u], hn::MulAdd(dy[u], dy[u], hn::Mul(dz[u], dz[u])));
            }
            PUTMD_UNROLL
            for (int u = 0; u < U; u++)
            {
                const int j = jOf(u), r = rOf(u);
                // the lanes of the pair's mask: straight from its bits where a
                // register holds whole bytes of it (8 or 16 lanes)
                hn::Mask<decltype(d)> inList;
                if constexpr (W >= 8)
                {
                    inList = hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&jList[p + j].mask) + r * W / 8);
                }
                else
                {
                    inList = hn::RebindMask(d, hn::TestBit(maskBits[j], laneBit[r]));
                }
                m[u] = hn::And(inList, hn::Lt(r2[u], rc2));
                // the estimate is masked, not the result: 0 stays 0 through
                // the Newton step, so every quantity built on 1/r is zero
                // outside the list and the cut-off; the charge product is
                // masked too, which zeroes the Ewald and reaction-field
                // terms that do not vanish with 1/r
                rinv[u]           = hn::IfThenElseZero(m[u], hn::ApproximateReciprocalSqrt(r2[u]));
                rinvMax           = hn::Max(rinvMax, rinv[u]);
                qq[u]             = hn::IfThenElseZero(m[u], hn::Mul(qi[r], qj[j]));
            }
            PUTMD_UNROLL
            for (int u = 0; u < U; u++)
            {
                // one Newton step: 1/r = y/2 (3 - r^2 y^2), or R = 2/r
                const V y = kTwoOverR ? rinv[u] : hn::Mul(rinv[u], half);
                rinv[u]  = hn::Mul(y, hn::NegMulAdd(hn::Mul(r2[u], rinv[u]), rinv[u], three));
                rinv2[u] = hn::Mul(rinv[u], rinv[u]);
            }
            if constexpr (kEwald)
            {
                V t[U];
                PUTMD_UNROLL
                for (int u = 0; u < U; u++)
                {
                    t[u] = hn::MulSub(r2[u], tScale, one);
                }
                PUTMD_UNROLL
                for (int u = 0; u < U; u++)
                {
                    V hF;
                    if constexpr (kPieces)
                    {
                        // piece round(x) from the low bits of x + M, and
                        // x - round(x) (ewald_correction.h)
                        const V    y   = hn::MulAdd(r2[u], pScale, pMagic);
                        const auto idx = hn::IndicesFromVec(d, hn::And(hn::BitCast(di, y), pLaneMask));
                        const V    x   = hn::MulAdd(r2[u], pScale, hn::Sub(pMagic, y));
                        V pc[kPieceCoefficients];
                        PUTMD_UNROLL
                        for (int c = 0; c < kPieceCoefficients; c++)
                        {
                            pc[c] = hn::TableLookupLanes(pCoef[c], idx);
                        }
                        // Estrin: depth 3 after x^2, x^4 (Horner's chain of
                        // six multiply-adds was the longest in the kernel)
                        const V x2 = hn::Mul(x, x), x4 = hn::Mul(x2, x2);
                        const V lo = hn::MulAdd(x2, hn::MulAdd(pc[3], x, pc[2]), hn::MulAdd(pc[1], x, pc[0]));
                        V       hi = hn::MulAdd(pc[5], x, pc[4]);
                        if constexpr (kPieceCoefficients == 7)
                        {
                            hi = hn::MulAdd(pc[6], x2, hi);
                        }
                        hF = hn::MulAdd(x4, hi, lo);
                    }
                    else
                    {
                        hF = kShortSeries ? estrin13(fCoef, t[u]) : estrin16(fCoef, t[u]);
                    }
                    fscal[u] = hn::Mul(qq[u], hn::MulSub(rinv[u], rinv2[u], hF));
                }
                if constexpr (kEnergies)
                {
                    PUTMD_UNROLL
                    for (int u = 0; u < U; u++)
                    {
                        const V hV = hn::Add(estrin16(vCoef, t[u]), shEwald);
                        vcAcc      = hn::MulAdd(qq[u], hn::Sub(rinv[u], hV), vcAcc);
                    }
                }
            }
            else
            {
                PUTMD_UNROLL
                for (int u = 0; u < U; u++)
                {
                    fscal[u] = hn::Mul(qq[u], hn::MulSub(rinv[u], rinv2[u], twoKrf));
                    if constexpr (kEnergies)
                    {
                        vcAcc = hn::MulAdd(qq[u], hn::Add(rinv[u], hn::MulSub(kRf, r2[u], cRf)), vcAcc);
                    }
                }
            }
            // Lennard-Jones (none when every cluster here or the i-cluster
            // has none: the lists put such j-clusters first, so this branch
            // goes the same way for long runs)
            if (doLJ)
            {
                PUTMD_UNROLL
                for (int u = 0; u < U; u++)
                {
                    const int j = jOf(u), r = rOf(u);
                    if (R == 2 && ((kLJRows >> r) & 1) == 0)
                    {
                        continue; // its i-atoms have no Lennard-Jones
                    }
                    M         mv     = m[u];
                    V         rinvV  = rinv[u], rinvV2 = rinv2[u];
                    if (vdwShorter)
                    {
                        mv     = hn::And(m[u], hn::Lt(r2[u], rv2));
                        rinvV  = hn::IfThenElseZero(mv, rinv[u]);
                        rinvV2 = hn::Mul(rinvV, rinvV);
                    }
                    if constexpr (kPrescaledLJ && kComb == ClusterLjComb::Geometric)
                    {
                        // F r = (12 C12 r^-6 - 6 C6) r^-6 r^-2
                        const V c6x6   = hn::Mul(ai[r], aj[j]);
                        const V c12x12 = hn::Mul(bi[r], bj[j]);
                        const V rinv6  = hn::Mul(hn::Mul(rinvV2, rinvV2), rinvV2);
                        fscal[u]       = hn::MulAdd(hn::Mul(hn::MulSub(c12x12, rinv6, c6x6), rinv6), rinvV2, fscal[u]);
                        continue;
                    }
                    else if constexpr (kPrescaledLJ && kComb == ClusterLjComb::LorentzBerthelot)
                    {
                        // F r = 6 epsilon (s/r)^6 (2 (s/r)^6 - 1) r^-2, with
                        // s = s_i + s_j and 6 epsilon = (6 e_i) e_j
                        const V sr   = hn::Mul(hn::Add(ai[r], aj[j]), rinvV);
                        const V sr2  = hn::Mul(sr, sr);
                        const V sr6  = hn::Mul(hn::Mul(sr2, sr2), sr2);
                        const V eps6 = hn::Mul(bi[r], bj[j]);
                        // (2 (s/r)^6 = (sR)^6 / 32 with R = 2/r)
                        fscal[u]     = hn::MulAdd(hn::Mul(hn::Mul(eps6, sr6), hn::MulSub(kTwoOverR ? hn::Set(d, 1.0f / 32) : twoV, sr6, one)), rinvV2, fscal[u]);
                        continue;
                    }
                    V c6, c12;
                    if constexpr (kComb == ClusterLjComb::Matrix)
                    {
                        const VI idx = hn::Add(rowI[r], tj[j]);
                        c6           = hn::GatherIndex(d, c6A, idx);
                        c12          = hn::GatherIndex(d, c12A, idx);
                    }
                    else if constexpr (kComb == ClusterLjComb::Geometric)
                    {
                        c6  = hn::Mul(ai[r], aj[j]);
                        c12 = hn::Mul(bi[r], bj[j]);
                    }
                    else
                    {
                        const V sig  = hn::Add(ai[r], aj[j]);
                        const V sig2 = hn::Mul(sig, sig);
                        const V sig6 = hn::Mul(hn::Mul(sig2, sig2), sig2);
                        c6           = hn::Mul(hn::Mul(bi[r], bj[j]), sig6);
                        c12          = hn::Mul(c6, sig6);
                    }
                    const V rinv6 = hn::Mul(hn::Mul(rinvV2, rinvV2), rinvV2);
                    if constexpr (kForceSwitch)
                    {
                        const V rr  = hn::Mul(r2[u], rinvV);
                        const V dr  = hn::Max(hn::Sub(rr, rsw), hn::Zero(d));
                        const V dr2 = hn::Mul(dr, dr);
                        const V f6  = hn::Mul(hn::MulAdd(hn::Mul(sixV, rinv6), rinvV, hn::Mul(dr2, hn::MulAdd(b6, dr, a6))), rinvV);
                        const V r12 = hn::Mul(rinv6, rinv6);
                        const V f12 = hn::Mul(hn::MulAdd(hn::Mul(twelveV, r12), rinvV, hn::Mul(dr2, hn::MulAdd(b12, dr, a12))), rinvV);
                        fscal[u]    = hn::Add(fscal[u], hn::MulSub(c12, f12, hn::Mul(c6, f6)));
                        if constexpr (kEnergies)
                        {
                            const V dr3 = hn::Mul(dr2, dr);
                            // v = r^-a - A/3 dr^3 - B/4 dr^4 - C (masked)
                            const V v6  = hn::Sub(rinv6, hn::IfThenElseZero(mv, hn::Add(hn::Mul(dr3, hn::MulAdd(hn::Mul(b6, quarter), dr, hn::Mul(a6, third))), c6s)));
                            const V v12 = hn::Sub(r12, hn::IfThenElseZero(mv, hn::Add(hn::Mul(dr3, hn::MulAdd(hn::Mul(b12, quarter), dr, hn::Mul(a12, third))), c12s)));
                            vlAcc       = hn::Add(vlAcc, hn::MulSub(c12, v12, hn::Mul(c6, v6)));
                        }
                    }
                    else
                    {
                        const V vr6  = hn::Mul(c6, rinv6);
                        const V vr12 = hn::Mul(hn::Mul(c12, rinv6), rinv6);
                        fscal[u]     = hn::MulAdd(hn::MulSub(twelveV, vr12, hn::Mul(sixV, vr6)), rinvV2, fscal[u]);
                        if constexpr (kEnergies)
                        {
                            const V s12 = hn::IfThenElseZero(mv, hn::Mul(c12, sh12));
                            const V s6  = hn::IfThenElseZero(mv, hn::Mul(c6, sh6));
                            vlAcc       = hn::Add(vlAcc, hn::Sub(hn::Sub(vr12, s12), hn::Sub(vr6, s6)));
                        }
                    }
                }
            }
            // forces: multiply-adds straight into the i-accumulators and
            // into the j-cluster's scratch (W lanes per component, folded
            // once per call at the end)
            PUTMD_UNROLL
            for (int u = 0; u < U; u++)
            {
                const int r = rOf(u);
                fix[r] = hn::NegMulAdd(fscal[u], dx[u], fix[r]);
                fiy[r] = hn::NegMulAdd(fscal[u], dy[u], fiy[r]);
                fiz[r] = hn::NegMulAdd(fscal[u], dz[u], fiz[r]);
            }
            PUTMD_UNROLL
            for (int j = 0; j < NJ; j++)
            {
                float* HWY_RESTRICT w = jWide + static_cast<size_t>(sj[j]) * (c_clusterJScratchFloats / 4);
                V wx = hn::Load(d, w), wy = hn::Load(d, w + W), wz = hn::Load(d, w + 2 * W);
                PUTMD_UNROLL
                for (int ru = 0; ru < RU; ru++)
                {
                    const int u = j * RU + ru;
                    wx = hn::NegMulAdd(fscal[u], dx[u], wx);
                    wy = hn::NegMulAdd(fscal[u], dy[u], wy);
                    wz = hn::NegMulAdd(fscal[u], dz[u], wz);
                }
                hn::Store(wx, d, w);
                hn::Store(wy, d, w + W);
                hn::Store(wz, d, w + 2 * W);
            }
        };
        using AllRows = std::integral_constant<int, -1>;
        using LJAll   = std::integral_constant<int, 3>;
        auto run = [&](auto rowTag, auto ljRowsTag, int begin, int end) HWY_ATTR __attribute__((always_inline))
        {
            // j-entries side by side: two on AVX-512 and AVX2, four for the
            // AVX2 halves computed one register each (SSE4: one)
            constexpr int NJ = R == 1 ? 2 : decltype(rowTag)::value >= 0 ? 4 : R == 2 ? 2 : 1;
            int           p  = begin;
            for (; p + NJ <= end; p += NJ)
            {
                pairs(std::integral_constant<int, NJ>(), rowTag, ljRowsTag, p);
            }
            for (; p < end; p++)
            {
                pairs(std::integral_constant<int, 1>(), rowTag, ljRowsTag, p);
            }
        };
        if constexpr (R == 2)
        {
            /* AVX2: a cluster pair is two registers, i-rows 0-1 and 2-3. A
             * pruned list orders each i-entry's j-entries as [rows 0-1 only
             * | both | rows 2-3 only] (ClusterPairI::jEnd0, jBegin1): the
             * middle part is computed whole, the outer ones one register
             * each, four j-entries side by side (about 30% of the pruned
             * entries have pairs in range in one half only). An unpruned
             * list is all middle part. */
            const int begin1 = e.begin1(), end0 = e.end0();
            loadRow(0);
            loadRow(1);
            // Lennard-Jones only in the register whose i-rows have it (the
            // grid's z order leaves two hydrogens of water in one half of a
            // cluster often): three copies of the whole-pair loop
            switch (iLJRows)
            {
                case 1: run(AllRows(), std::integral_constant<int, 1>(), begin1, end0); break;
                case 2: run(AllRows(), std::integral_constant<int, 2>(), begin1, end0); break;
                default: run(AllRows(), LJAll(), begin1, end0); break;
            }
            iLJ = (iLJRows & 1) != 0;
            run(std::integral_constant<int, 0>(), LJAll(), e.jBegin, begin1);
            iLJ = (iLJRows & 2) != 0;
            run(std::integral_constant<int, 1>(), LJAll(), end0, e.jEnd);
            storeRow(0);
            storeRow(1);
        }
        else
        {
            PUTMD_UNROLL
            for (int r = 0; r < R; r++)
            {
                loadRow(r);
            }
            run(AllRows(), LJAll(), e.jBegin, e.jEnd);
            // i-forces: each atom's four lanes summed
            PUTMD_UNROLL
            for (int r = 0; r < R; r++)
            {
                storeRow(r);
            }
        }
        for (int ii = 0; ii < 4; ii++)
        {
            const float sx = (outX[4 * ii] + outX[4 * ii + 1]) + (outX[4 * ii + 2] + outX[4 * ii + 3]);
            const float sy = (outY[4 * ii] + outY[4 * ii + 1]) + (outY[4 * ii + 2] + outY[4 * ii + 3]);
            const float sz = (outZ[4 * ii] + outZ[4 * ii + 1]) + (outZ[4 * ii + 2] + outZ[4 * ii + 3]);
            out.fx[e.ci * 4 + ii] += sx;
            out.fy[e.ci * 4 + ii] += sy;
            out.fz[e.ci * 4 + ii] += sz;
            out.fshift[e.shift][0] += sx;
            out.fshift[e.shift][1] += sy;
            out.fshift[e.shift][2] += sz;
        }
        if constexpr (kEnergies)
        {
            out.vcoul += hn::GetLane(hn::SumOfLanes(d, vcAcc));
            out.vlj += hn::GetLane(hn::SumOfLanes(d, vlAcc));
        }
        if (!hn::AllFalse(d, hn::Ge(rinvMax, overlapRinv)))
        {
            overlap = true;
        }
    }
    // the j-forces' lanes summed per atom (every cluster: clusters no
    // entry touched hold zeros)
    for (int c = 0; c < in.numClusters; c++)
    {
        // read and left zero for the next call (one pass, not a separate
        // clearing pass over the whole scratch)
        float* HWY_RESTRICT w = jWide + static_cast<size_t>(c) * c_clusterJScratchFloats;
        const V wx = hn::Load(d, w), wy = hn::Load(d, w + W), wz = hn::Load(d, w + 2 * W);
        hn::Store(hn::Zero(d), d, w);
        hn::Store(hn::Zero(d), d, w + W);
        hn::Store(hn::Zero(d), d, w + 2 * W);
        hn::Store(hn::Sub(hn::Load(d4, fxA + 4 * c), foldToBlock(d, wx)), d4, fxA + 4 * c);
        hn::Store(hn::Sub(hn::Load(d4, fyA + 4 * c), foldToBlock(d, wy)), d4, fyA + 4 * c);
        hn::Store(hn::Sub(hn::Load(d4, fzA + 4 * c), foldToBlock(d, wz)), d4, fzA + 4 * c);
    }
    if (overlap)
    {
        out.overlapSlot[0] = -2; // the driver reruns the plain kernel to name the atoms
    }
}

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
#pragma GCC pop_options
#endif

template<bool kEwald, bool kForceSwitch, bool kEnergies, bool kShortSeries = false, bool kPieces = false>
void withComb(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    switch (k.comb)
    {
        case ClusterLjComb::Matrix:
            kernel<kEwald, kForceSwitch, kEnergies, ClusterLjComb::Matrix, kShortSeries, kPieces>(k, in, out);
            break;
        case ClusterLjComb::Geometric:
            kernel<kEwald, kForceSwitch, kEnergies, ClusterLjComb::Geometric, kShortSeries, kPieces>(k, in, out);
            break;
        case ClusterLjComb::LorentzBerthelot:
            kernel<kEwald, kForceSwitch, kEnergies, ClusterLjComb::LorentzBerthelot, kShortSeries, kPieces>(k, in, out);
            break;
    }
}

template<bool kEwald, bool kForceSwitch>
void withEnergies(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    // 8 and 16 lanes: the force in pieces when their fit is within the
    // tolerance (the usual beta rc; otherwise the full series)
    constexpr size_t W = hn::MaxLanes(hn::ScalableTag<float>());
    if constexpr (kEwald && (W == 8 || W == 16))
    {
        if (forcePieces<static_cast<int>(W)>(k.ewald).usable)
        {
            k.energies ? withComb<true, kForceSwitch, true, false, true>(k, in, out)
                       : withComb<true, kForceSwitch, false, false, true>(k, in, out);
        }
        else
        {
            k.energies ? withComb<true, kForceSwitch, true>(k, in, out) : withComb<true, kForceSwitch, false>(k, in, out);
        }
        return;
    }
    // the force-only Ewald kernels (every step but energy steps) with the
    // shorter Estrin scheme when the series allows
    if (k.energies)
    {
        withComb<kEwald, kForceSwitch, true>(k, in, out);
    }
    else if (kEwald && k.ewald.force.size() <= 13)
    {
        withComb<kEwald, kForceSwitch, false, kEwald>(k, in, out);
    }
    else
    {
        withComb<kEwald, kForceSwitch, false>(k, in, out);
    }
}

void ClusterKernelSimd(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    const bool fsw = k.vdw == ClusterVdw::ForceSwitch;
    if (k.coulomb == ClusterCoulomb::Ewald)
    {
        fsw ? withEnergies<true, true>(k, in, out) : withEnergies<true, false>(k, in, out);
    }
    else
    {
        fsw ? withEnergies<false, true>(k, in, out) : withEnergies<false, false>(k, in, out);
    }
}

/* A prune's scratch for one i-entry's j-entries by group, indexed by the
 * entry's row halves with a pair in range: 1 rows 0-1 only, 3 both, 2 rows
 * 2-3 only (copied out in that order), 0 neither (dropped: written and
 * never read). The SIMD prune writes each entry to the group its halves
 * name at that group's count (no branch on an outcome that is
 * unpredictable near the radius); the counts are 21-bit fields of one
 * register (the dropped group's is its top bit: it writes to slots 0 and
 * 1 only). An entry is put as 8 bytes, one store instead of a 4- and
 * a 2-byte one; the two extra bytes land on the next slot, which only this
 * scratch has room for. One per thread, kept between prunes (it grows to
 * the longest i-entry once). */
class PruneGroups
{
public:
    /* Room for an i-entry of n j-entries in every group. */
    void reserve(int n)
    {
        if (groups_[0].size() < static_cast<size_t>(n) + 2)
        {
            for (auto& g : groups_)
            {
                g.resize(static_cast<size_t>(n) + 2);
            }
        }
    }
    ClusterPairJ* group(unsigned halves) { return groups_[halves].data(); }
    /* je into slot i of g (8 bytes; slot i + 1's first two are clobbered). */
    static void put(ClusterPairJ* g, int i, const ClusterPairJ& je)
    {
        const uint64_t v = static_cast<uint32_t>(je.cj) | static_cast<uint64_t>(je.mask) << 32;
        std::memcpy(reinterpret_cast<char*>(g) + 6 * static_cast<size_t>(i), &v, 8);
    }
    /* The kept groups' entries to dst, rows 0-1 only, both, rows 2-3 only. */
    void copyOut(ClusterPairJ* dst, int n0, int nb, int n1)
    {
        std::memcpy(static_cast<void*>(dst), groups_[1].data(), 6 * static_cast<size_t>(n0));
        std::memcpy(static_cast<void*>(dst + n0), groups_[3].data(), 6 * static_cast<size_t>(nb));
        std::memcpy(static_cast<void*>(dst + n0 + nb), groups_[2].data(), 6 * static_cast<size_t>(n1));
    }

private:
    std::vector<ClusterPairJ> groups_[4];
};

/* The prune keeps exactly the entries the plain prune keeps, so its
 * distances are the plain prune's float operations: GCC would otherwise
 * contract the products and sums into multiply-adds (it did, on AVX2 and
 * AVX-512), which round differently at the radius. Like the plain prune it
 * looks at every atom pair of an entry, its mask aside: an entry whose
 * pairs in range are all excluded (or padding) is kept, which costs the
 * kernel little (0.1% more entries on 12k water) and the prune the mask
 * test (18% of its time).
 *
 * Two passes per i-entry: the distances first, each entry's row halves in
 * range written as a byte, then the entries to their groups. In one pass
 * the group's store waited on the distances (its address is the group's
 * count): rnase on an Emerald Rapids core (AVX2, one thread), 7.6 ms a
 * prune in one pass, 6.4 in two. (Tried: the j-clusters' x, y, z packed
 * in one 64-byte line per cluster for the prune, 6.8 ms.) */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
void ClusterPruneSimd(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out)
{
    const hn::ScalableTag<float> d;
    using V       = hn::Vec<decltype(d)>;
    constexpr int W = static_cast<int>(hn::MaxLanes(decltype(d)()));
    constexpr int R = 16 / W;
    const V       rl2 = hn::Set(d, rlist2);
    HWY_ALIGN float bufX[16], bufY[16], bufZ[16];
    // the groups of rows only where the kernel computes them apart (AVX2);
    // elsewhere the kept entries in list order
    constexpr bool             kGroups = R == 2;
    ClusterPairJ* HWY_RESTRICT dst     = out.j;
    int                        nj      = 0;
    static thread_local PruneGroups groups;
    static thread_local std::vector<uint8_t> halvesOf; // per j-entry of an i-entry, pass 1 to pass 2
    // locals: the groups' 8-byte puts go through char pointers, which may
    // alias anything, so through in.x etc. every entry loaded the pointers
    // again
    const float* HWY_RESTRICT        xA = in.x;
    const float* HWY_RESTRICT        yA = in.y;
    const float* HWY_RESTRICT        zA = in.z;
    const ClusterPairJ* HWY_RESTRICT jIn = in.jEntries;
    for (int ie = in.iBegin; ie < in.iEnd; ie++)
    {
        const ClusterPairI& e  = in.iEntries[ie];
        const float*        sv = in.shift + 3 * e.shift;
        repeatForJ(in.x, e.ci, sv[0], bufX);
        repeatForJ(in.y, e.ci, sv[1], bufY);
        repeatForJ(in.z, e.ci, sv[2], bufZ);
        V xi[R], yi[R], zi[R];
        for (int r = 0; r < R; r++)
        {
            xi[r] = hn::Load(d, bufX + r * W);
            yi[r] = hn::Load(d, bufY + r * W);
            zi[r] = hn::Load(d, bufZ + r * W);
        }
        // locals: the byte and group stores may alias the entry
        const ClusterPairJ* HWY_RESTRICT jE  = jIn + e.jBegin;
        const int                        nje = e.jEnd - e.jBegin;
        if (halvesOf.size() < static_cast<size_t>(nje))
        {
            halvesOf.resize(static_cast<size_t>(nje));
        }
        uint8_t* HWY_RESTRICT hv = halvesOf.data();
        // pass 1: per entry, bit 0 rows 0-1 have a pair in range, bit 1 rows 2-3
        for (int p = 0; p < nje; p++)
        {
            const int sj = jE[p].cj * 4;
            const V  xj = hn::LoadDup128(d, xA + sj), yj = hn::LoadDup128(d, yA + sj), zj = hn::LoadDup128(d, zA + sj);
            unsigned halves = 0;
            PUTMD_UNROLL
            for (int r = 0; r < R; r++)
            {
                // the same float operations as the plain prune: no FMA
                const V dx = hn::Sub(xi[r], xj), dy = hn::Sub(yi[r], yj), dz = hn::Sub(zi[r], zj);
                const V r2 = hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz));
                // (W = 16: one register for both halves, which are not told apart)
                halves |= unsigned(!hn::AllFalse(d, hn::Lt(r2, rl2))) << (r * W / 8 % 2);
            }
            hv[p] = static_cast<uint8_t>(halves);
        }
        // pass 2: the entries kept, to their groups or in order
        int kept = 0;
        if constexpr (kGroups)
        {
            groups.reserve(nje);
            ClusterPairJ* HWY_RESTRICT to[4] = { groups.group(0), groups.group(1), groups.group(2), groups.group(3) };
            // group g's count at bit (c_groupShifts >> 8 g) & 0xff: 1 at 0, 3
            // at 21, 2 at 42, 0 (dropped) at 63
            constexpr uint32_t c_groupShifts = 0x152A003F;
            uint64_t           counts        = 0;
            for (int p = 0; p < nje; p++)
            {
                const unsigned halves = hv[p];
                const unsigned at     = (c_groupShifts >> 8 * halves) & 0xff;
                PruneGroups::put(to[halves], static_cast<int>((counts >> at) & 0x1fffff), jE[p]);
                counts += uint64_t(1) << at;
            }
            const int n0 = static_cast<int>(counts & 0x1fffff), nb = static_cast<int>((counts >> 21) & 0x1fffff);
            const int n1 = static_cast<int>((counts >> 42) & 0x1fffff);
            groups.copyOut(dst + nj, n0, nb, n1);
            kept = n0 + nb + n1;
            const int o = out.jOffset + nj;
            if (kept > 0)
            {
                out.i[out.numI++] = { e.ci, e.shift, o, o + kept, o + n0 + nb, o + n0 };
            }
        }
        else
        {
            for (int p = 0; p < nje; p++)
            {
                dst[nj + kept] = jE[p];
                kept += hv[p] != 0;
            }
            const int o = out.jOffset + nj;
            if (kept > 0)
            {
                out.i[out.numI++] = { e.ci, e.shift, o, o + kept };
            }
        }
        nj += kept;
    }
}
#pragma GCC pop_options

#endif // HWY_TARGET == HWY_SCALAR

const char* ClusterKernelTargetName()
{
    return hwy::TargetName(HWY_TARGET);
}

} // namespace HWY_NAMESPACE
} // namespace putmd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace putmd
{

HWY_EXPORT(ClusterKernelSimd);
HWY_EXPORT(ClusterKernelTargetName);
HWY_EXPORT(ClusterPruneSimd);

void clusterPruneSimd(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out)
{
    HWY_DYNAMIC_DISPATCH(ClusterPruneSimd)(in, rlist2, out);
}

void clusterKernelSimd(const ClusterKernelSetup& setup, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    HWY_DYNAMIC_DISPATCH(ClusterKernelSimd)(setup, in, out);
}

std::string clusterKernelTarget()
{
    return HWY_DYNAMIC_DISPATCH(ClusterKernelTargetName)();
}

std::vector<long long> clusterKernelTargets()
{
    std::vector<long long> t;
    for (int64_t target : hwy::SupportedAndGeneratedTargets())
    {
        t.push_back(target);
    }
    return t;
}

void restrictClusterKernelTarget(long long target)
{
    hwy::SetSupportedTargetsForTest(target);
}

} // namespace putmd
#endif
