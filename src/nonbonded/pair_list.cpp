#include "nonbonded/pair_list.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

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
    std::map<std::array<int, 3>, int> kindOf{ { { 0, 0, 0 }, 0 } };
    std::array<int, 3>                     lastShift{ 0, 0, 0 };
    int                                    lastKind = 0;
    /* The pairs come cell by cell, every pair of a cell's atoms (as first
     * atom) before the next cell's. Each cell's pairs are filed when its
     * cell is done: grouped by first atom (a counting sort, stable, so each
     * atom's j-list keeps the grid's order, which depends on the
     * coordinates alone) and appended to j_. No list of all pairs is made
     * (for 33,000 atoms it was 110 MB, written, then scattered). */
    const CellGrid grid(box, x, rlist);
    std::vector<int> slot(n); // an atom's place in its cell
    for (int c = 0; c < grid.numCells(); c++)
    {
        for (int a = grid.cellBegin(c); a < grid.cellEnd(c); a++)
        {
            slot[grid.atomAt(a)] = a - grid.cellBegin(c);
        }
    }
    struct Found
    {
        int i, j, kind;
    };
    std::vector<Found> found; // the pairs of one cell
    std::vector<int>   fill;
    begin_.assign(n, 0);
    std::vector<int> count(n, 0);
    const size_t     expected = j_.size() + j_.size() / 8;
    j_.clear();
    shift_.clear();
    j_.reserve(expected);
    shift_.reserve(expected);
    grid.forEachPairByCell(
            [&](int i, int j, const Vec3<real>&, real, const std::array<int, 3>& k) {
                const int b = top.exclusionStart[i], e = top.exclusionStart[i + 1];
                if (std::binary_search(top.exclusions.begin() + b, top.exclusions.begin() + e, j))
                {
                    return;
                }
                if (k != lastShift) // (pairs come cell pair by cell pair: mostly the last one)
                {
                    auto [it, added] = kindOf.try_emplace(k, int(shiftKinds_.size()));
                    if (added)
                    {
                        shiftKinds_.push_back(k);
                    }
                    lastShift = k;
                    lastKind  = it->second;
                }
                found.push_back({ i, j, lastKind });
            },
            [&](int c) {
                const int first = grid.cellBegin(c), size = grid.cellEnd(c) - first;
                fill.assign(size, 0);
                for (const auto& p : found)
                {
                    fill[slot[p.i]]++;
                }
                int q = static_cast<int>(j_.size());
                for (int s = 0; s < size; s++)
                {
                    const int i = grid.atomAt(first + s);
                    begin_[i]   = q;
                    count[i]    = fill[s];
                    fill[s]     = q;
                    q += count[i];
                }
                j_.resize(q);
                shift_.resize(q);
                for (const auto& p : found)
                {
                    const int at = fill[slot[p.i]]++;
                    j_[at]       = p.j;
                    shift_[at]   = p.kind;
                }
                found.clear();
            });
    setCounts(count);
}

void PairList::setCounts(const std::vector<int>& count)
{
    const int n = static_cast<int>(count.size());
    cumulative_.assign(n + 1, 0);
    for (int i = 0; i < n; i++)
    {
        cumulative_[i + 1] = cumulative_[i] + count[i];
    }
}

void PairList::setPairs(std::vector<int> start, std::vector<int> j, double rlist)
{
    rlist_ = rlist;
    begin_.assign(start.begin(), start.end() - 1);
    cumulative_ = std::move(start); // one CSR: the counts' sums are the starts
    j_          = std::move(j);
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
    // each kind of lattice shift as a displacement, with the sums of the
    // pair-by-pair kernel; the zero shift is +0, which subtracts exactly
    static thread_local std::vector<real> shiftVec;
    shiftVec.assign(3 * shiftKinds_.size(), real(0));
    for (size_t s = 1; s < shiftKinds_.size(); s++)
    {
        const auto& k = shiftKinds_[s];
        for (int c = 0; c < 3; c++)
        {
            shiftVec[3 * s + c] = real(k[0] * bv(0, c) + k[1] * bv(1, c) + k[2] * bv(2, c));
        }
    }
    PairGatherInput gather;
    gather.xq          = packed_.data()->v;
    gather.j           = j_.data();
    gather.shift       = shift_.data();
    gather.shiftVector = shiftVec.data();
    gather.ljType      = types;
    gather.rmax2       = rmax2;
    std::vector<RVec>& f = kernel.f;
    // the virial in locals (a Matrix3 went through memory on every pair);
    // the same terms added in the same order as addVirial's
    double vxx = kernel.virial(0, 0), vxy = kernel.virial(0, 1), vxz = kernel.virial(0, 2);
    double vyx = kernel.virial(1, 0), vyy = kernel.virial(1, 1), vyz = kernel.virial(1, 2);
    double vzx = kernel.virial(2, 0), vzy = kernel.virial(2, 1), vzz = kernel.virial(2, 2);
    double vljSum = kernel.vlj, vcoulSum = kernel.vcoul;
    const bool withVirial = kernel.computeVirial;
    for (int i = begin; i < end; i++)
    {
        for (int c = 0; c < 3; c++)
        {
            gather.xi[c] = x[i][c];
        }
        gather.rowI = int64_t(types[i]) * par.numTypes;
        // the i-atom's force, the energies and the virial in locals: through
        // the references, every pair's stores to f could change them, so
        // each pair would load and store them again (a chain through memory)
        real fix = f[i][0], fiy = f[i][1], fiz = f[i][2];
        // the list entries of i in parts of at most a batch
        const int listEnd = begin_[i] + (cumulative_[i + 1] - cumulative_[i]);
        for (int p0 = begin_[i]; p0 < listEnd; p0 += PairBatch::kCapacity)
        {
            gather.p0    = p0;
            gather.p1    = std::min(listEnd, p0 + PairBatch::kCapacity);
            int tooClose = -1;
            const int m = pairGather(gather, b, &tooClose);
            if (tooClose >= 0) [[unlikely]]
            {
                const int j = j_[tooClose];
                kernel(i, j, x[i] - x[j], real(0)); // names the two atoms and throws
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
            const real* __restrict dx = b.dx.data();
            const real* __restrict dy = b.dy.data();
            const real* __restrict dz = b.dz.data();
            const real* __restrict fs = b.fscal.data();
            const int* __restrict  jk = b.j.data();
            for (int k = 0; k < m; k++)
            {
                vljSum += b.vlj[k];
                vcoulSum += b.vcoul[k];
                const real fscal = fs[k];
                if (fscal == 0)
                {
                    continue;
                }
                const real fx = dx[k] * fscal, fy = dy[k] * fscal, fz = dz[k] * fscal;
                fix += fx;
                fiy += fy;
                fiz += fz;
                RVec& fj = f[jk[k]];
                fj[0] -= fx;
                fj[1] -= fy;
                fj[2] -= fz;
                if (withVirial)
                {
                    // vir[a][c] -= 0.5 d[a] f[c], as addVirial's terms
                    const double hx = 0.5 * double(dx[k]), hy = 0.5 * double(dy[k]), hz = 0.5 * double(dz[k]);
                    vxx -= hx * double(fx);
                    vxy -= hx * double(fy);
                    vxz -= hx * double(fz);
                    vyx -= hy * double(fx);
                    vyy -= hy * double(fy);
                    vyz -= hy * double(fz);
                    vzx -= hz * double(fx);
                    vzy -= hz * double(fy);
                    vzz -= hz * double(fz);
                }
            }
        }
        f[i][0] = fix;
        f[i][1] = fiy;
        f[i][2] = fiz;
    }
    kernel.vlj   = vljSum;
    kernel.vcoul = vcoulSum;
    const double virOut[3][3] = { { vxx, vxy, vxz }, { vyx, vyy, vyz }, { vzx, vzy, vzz } };
    for (int a = 0; a < 3; a++)
    {
        for (int c = 0; c < 3; c++)
        {
            kernel.virial(a, c) = virOut[a][c];
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
        while (i < n && cumulative_[i] < target)
        {
            i++;
        }
        threadStart_[t] = i;
    }
    // coordinates and charges packed once per call for all threads, one
    // aligned block of 4 per atom (a partner is one read in the gather)
    packed_.resize(x.size());
    for (size_t a = 0; a < x.size(); a++)
    {
        packed_[a] = { { x[a][0], x[a][1], x[a][2], parameters_.scaledCharge[a] } };
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
