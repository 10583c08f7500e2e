#include "nonbonded/pair_list.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <stdexcept>

#include "nonbonded/cell_grid.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/pair_batch.h"

namespace putmd
{

void PairList::build(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist)
{
    rlist_ = rlist;
    const int n = static_cast<int>(x.size());
    // the distinct lattice shifts of the list, kind 0 the zero shift
    shiftKinds_.assign(1, { 0, 0, 0 });
    std::map<std::array<int, 3>, uint16_t> kindOf{ { { 0, 0, 0 }, 0 } };
    std::array<int, 3>                     lastShift{ 0, 0, 0 };
    uint16_t                               lastKind = 0;
    // the pairs in the grid's order, then in CSR by i (a counting sort:
    // each j-list keeps the grid's order, which depends on the coordinates
    // alone)
    struct Found
    {
        int      i, j;
        uint16_t kind;
    };
    std::vector<Found> found;
    found.reserve(j_.size() + j_.size() / 8);
    CellGrid(box, x, rlist).forEachPairWithShift(
            [&](int i, int j, const Vec3<real>&, real, const std::array<int, 3>& k) {
                const int b = top.exclusionStart[i], e = top.exclusionStart[i + 1];
                if (std::binary_search(top.exclusions.begin() + b, top.exclusions.begin() + e, j))
                {
                    return;
                }
                if (k != lastShift) // (pairs come cell pair by cell pair: mostly the last one)
                {
                    auto [it, added] = kindOf.try_emplace(k, uint16_t(shiftKinds_.size()));
                    if (added)
                    {
                        if (shiftKinds_.size() > UINT16_MAX)
                        {
                            throw std::runtime_error("pair list: more than 65536 distinct periodic images");
                        }
                        shiftKinds_.push_back(k);
                    }
                    lastShift = k;
                    lastKind  = it->second;
                }
                found.push_back({ i, j, lastKind });
            });
    start_.assign(n + 1, 0);
    for (const auto& p : found)
    {
        start_[p.i + 1]++;
    }
    for (int i = 0; i < n; i++)
    {
        start_[i + 1] += start_[i];
    }
    j_.resize(found.size());
    shift_.resize(found.size());
    std::vector<int> fill(start_.begin(), start_.end() - 1);
    for (const auto& p : found)
    {
        const int q = fill[p.i]++;
        j_[q]       = p.j;
        shift_[q]   = p.kind;
    }
}

void PairList::setPairs(std::vector<int> start, std::vector<int> j, double rlist)
{
    rlist_ = rlist;
    start_ = std::move(start);
    j_     = std::move(j);
    shift_.assign(j_.size(), 0);
    shiftKinds_.assign(1, { 0, 0, 0 });
    parameters_.ljType.clear(); // the atoms changed: parameters again at the next compute
}

void PairParameters::set(const Topology& top, double epsfac)
{
    const double s = std::sqrt(epsfac);
    scaledCharge.resize(top.numAtoms);
    for (int i = 0; i < top.numAtoms; i++)
    {
        scaledCharge[i] = real(s * top.charge[i]);
    }
    ljType   = top.ljType;
    numTypes = top.numLjTypes;
    c6.assign(top.c6.begin(), top.c6.end());
    c12.assign(top.c12.begin(), top.c12.end());
}

namespace
{

/* The force-switched LJ terms of a batch into fscal and vlj (the batch
 * pass adds Coulomb): they branch on r, so a loop of their own, with
 * PairKernel's function. */
void switchedLennardJones(const InteractionConst& ic, const PairBatchSetup& s, int m, PairBatch& b)
{
    for (int k = 0; k < m; k++)
    {
        const real r2  = b.r2[k];
        const real c6  = s.c6[b.ljIndex[k]], c12 = s.c12[b.ljIndex[k]];
        real       flj = 0;
        double     vlj = 0;
        if (r2 < s.rvdw2 && !(c6 == 0 && c12 == 0))
        {
            const real   rinv2 = 1 / r2;
            const real   rinv6 = rinv2 * rinv2 * rinv2;
            double       f6, v6, f12, v12;
            const double r = std::sqrt(double(r2));
            forceSwitchedTerm(ic.fswitch6, 6, ic.rvdwSwitch, r, rinv6, &f6, &v6);
            forceSwitchedTerm(ic.fswitch12, 12, ic.rvdwSwitch, r, double(rinv6) * rinv6, &f12, &v12);
            vlj = c12 * v12 - c6 * v6;
            flj = real(c12 * f12 - c6 * f6);
        }
        b.fscal[k] = flj;
        b.vlj[k]   = vlj;
    }
}

} // namespace

/* Per i-atom: gather its pairs inside rmax into a batch, compute the batch
 * in one pass (pair_batch.h: SIMD in the double build, the plain loop in
 * the mixed one; the same bits), then add forces, energies and virial pair
 * by pair in list order, as PairKernel does: the same sums in the same
 * order, so the same bits as the pair-by-pair loop (the reference
 * cell-grid kernel keeps that loop, with the library erfc, as the plain
 * twin). */
template<typename Kernel>
void PairList::computeRange(int begin, int end, const Box& box, const std::vector<Vec3<real>>& x, Kernel& kernel,
                            real rmax2) const
{
    using RVec     = Vec3<real>;
    const auto& bv = box.vectors();
    static thread_local PairBatch b;
    const InteractionConst& ic = kernel.ic;
    const PairParameters&   par = *kernel.params;
    PairBatchSetup          setup(ic, kernel.table, par);
    const real* __restrict  sq    = par.scaledCharge.data();
    const int* __restrict   types = par.ljType.data();
    const int* __restrict   xj    = j_.data();
    const uint16_t* __restrict shift = shift_.data();
    const RVec* __restrict  xs    = x.data();
    // each kind of lattice shift as a displacement, with the sums of the
    // pair-by-pair kernel; the zero shift is +0, which subtracts exactly
    static thread_local std::vector<RVec> shiftVec;
    shiftVec.assign(shiftKinds_.size(), RVec(0, 0, 0));
    for (size_t s = 1; s < shiftKinds_.size(); s++)
    {
        const auto& k = shiftKinds_[s];
        for (int c = 0; c < 3; c++)
        {
            shiftVec[s][c] = real(k[0] * bv(0, c) + k[1] * bv(1, c) + k[2] * bv(2, c));
        }
    }
    std::vector<RVec>& f = kernel.f;
    // the virial in locals (a Matrix3 went through memory on every pair);
    // the same terms added in the same order as addVirial's
    double vir[3][3];
    for (int a = 0; a < 3; a++)
    {
        for (int c = 0; c < 3; c++)
        {
            vir[a][c] = kernel.virial(a, c);
        }
    }
    const bool withVirial = kernel.computeVirial;
    for (int i = begin; i < end; i++)
    {
        const RVec xi = x[i];
        const int  p0 = start_[i], p1 = start_[i + 1];
        b.reserve(size_t(p1 - p0));
        int* __restrict     bj = b.j.data();
        int64_t* __restrict bl = b.ljIndex.data();
        real* __restrict    bx = b.dx.data();
        real* __restrict    by = b.dy.data();
        real* __restrict    bz = b.dz.data();
        real* __restrict    br = b.r2.data();
        real* __restrict    bq = b.qj.data();
        const int64_t       rowI = int64_t(types[i]) * par.numTypes;
        int                 m    = 0;
        // every pair is written at m, and m moves on past those inside
        // rmax: no branch on the distance
        for (int p = p0; p < p1; p++)
        {
            const int   j  = xj[p];
            const RVec& xp = xs[j];
            const RVec& sv = shiftVec[shift[p]];
            const real  dx = (xi.x - xp.x) - sv.x, dy = (xi.y - xp.y) - sv.y, dz = (xi.z - xp.z) - sv.z;
            const real  r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < real(1e-12) && r2 < rmax2) [[unlikely]]
            {
                kernel(i, j, RVec(dx, dy, dz), r2); // names the two atoms and throws
            }
            bj[m] = j, bx[m] = dx, by[m] = dy, bz[m] = dz, br[m] = r2, bq[m] = sq[j], bl[m] = rowI + types[j];
            m += r2 < rmax2;
        }
        b.pad(m);
        setup.qi = sq[i];
        if (setup.forceSwitch)
        {
            switchedLennardJones(ic, setup, m, b);
        }
#if PUTMD_DOUBLE
        pairBatchSimd(setup, m, b);
#else
        pairBatchReference(setup, m, b);
#endif
        for (int k = 0; k < m; k++)
        {
            kernel.vlj += b.vlj[k];
            kernel.vcoul += b.vcoul[k];
            const real fscal = b.fscal[k];
            if (fscal == 0)
            {
                continue;
            }
            const RVec d(b.dx[k], b.dy[k], b.dz[k]);
            const RVec fi = d * fscal;
            f[i] += fi;
            f[b.j[k]] -= fi;
            if (withVirial)
            {
                for (int a = 0; a < 3; a++)
                {
                    for (int c = 0; c < 3; c++)
                    {
                        vir[a][c] -= 0.5 * double(d[a]) * double(fi[c]);
                    }
                }
            }
        }
    }
    for (int a = 0; a < 3; a++)
    {
        for (int c = 0; c < 3; c++)
        {
            kernel.virial(a, c) = vir[a][c];
        }
    }
}

void PairList::compute(const Topology& top, const InteractionConst& ic, const Box& box, const std::vector<Vec3<real>>& x,
                       std::vector<Vec3<real>>& f, EnergyTerms& energies, Matrix3* virial)
{
    const real rmax2 = real(ic.rmax * ic.rmax);
    const int  n     = static_cast<int>(x.size());
    const int  nt    = std::max(1, std::min(numThreads_, n));
    if (ic.coulombType == CoulombType::Pme && (ewaldTable_.empty() || ewaldTableBeta_ != ic.ewaldCoeff || ewaldTableRange_ < ic.rmax))
    {
        ewaldTable_      = EwaldTable(ic.ewaldCoeff, ic.rmax);
        ewaldTableBeta_  = ic.ewaldCoeff;
        ewaldTableRange_ = ic.rmax;
    }
    if (parameters_.ljType.size() != x.size())
    {
        parameters_.set(top, ic.epsfac);
    }
    // shares of equal numbers of pairs
    threadStart_.assign(nt + 1, n);
    threadStart_[0] = 0;
    for (int t = 1, i = 0; t < nt; t++)
    {
        const long target = static_cast<long>(j_.size()) * t / nt;
        while (i < n && start_[i] < target)
        {
            i++;
        }
        threadStart_[t] = i;
    }
    threadForces_.resize(nt - 1);
    std::vector<double>             vlj(nt, 0), vcoul(nt, 0);
    std::vector<Matrix3>            vir(nt);
    std::vector<std::exception_ptr> failure(nt);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        try
        {
            auto& buffer = t == 0 ? f : threadForces_[t - 1];
            if (t > 0)
            {
                buffer.assign(x.size(), Vec3<real>());
            }
            PairKernel kernel(top, ic, buffer, ewaldTable_.empty() ? nullptr : &ewaldTable_, &parameters_);
            kernel.computeVirial = virial != nullptr;
            computeRange(threadStart_[t], threadStart_[t + 1], box, x, kernel, rmax2);
            vlj[t]   = kernel.vlj;
            vcoul[t] = kernel.vcoul;
            vir[t]   = kernel.virial;
        }
        catch (...)
        {
            failure[t] = std::current_exception();
        }
    }
    for (const auto& e : failure)
    {
        if (e)
        {
            std::rethrow_exception(e);
        }
    }
    double ljSum = 0, coulSum = 0;
    for (int t = 0; t < nt; t++)
    {
        if (t > 0)
        {
            for (int i = 0; i < n; i++)
            {
                f[i] += threadForces_[t - 1][i];
            }
        }
        ljSum += vlj[t];
        coulSum += vcoul[t];
        if (virial)
        {
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    (*virial)(a, b) += vir[t](a, b);
                }
            }
        }
    }
    const double vexcl = exclusionCorrections_ ? exclusionCorrections(top, ic, Pbc(box), x, f, virial) : 0.0;
    energies.add(EnergyTerm::LJSR, ljSum);
    energies.add(EnergyTerm::CoulombSR, coulSum + vexcl);
}

} // namespace putmd
