#include "nonbonded/pair_list.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "nonbonded/cell_grid.h"
#include "nonbonded/exclusion_corrections.h"

namespace putmd
{

void PairList::build(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist)
{
    rlist_ = rlist;
    const int n = static_cast<int>(x.size());
    // collect per i, then compact into CSR
    std::vector<std::vector<std::pair<int, std::array<int8_t, 3>>>> perAtom(n);
    CellGrid(box, x, rlist).forEachPairWithShift(
            [&](int i, int j, const Vec3<real>&, real, const std::array<int, 3>& k) {
                const int b = top.exclusionStart[i], e = top.exclusionStart[i + 1];
                if (std::binary_search(top.exclusions.begin() + b, top.exclusions.begin() + e, j))
                {
                    return;
                }
                perAtom[i].push_back({ j, { int8_t(k[0]), int8_t(k[1]), int8_t(k[2]) } });
            });
    start_.assign(n + 1, 0);
    for (int i = 0; i < n; i++)
    {
        start_[i + 1] = start_[i] + static_cast<int>(perAtom[i].size());
    }
    j_.resize(start_[n]);
    shift_.resize(start_[n]);
    for (int i = 0; i < n; i++)
    {
        auto& list = perAtom[i];
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (size_t p = 0; p < list.size(); p++)
        {
            j_[start_[i] + p]     = list[p].first;
            shift_[start_[i] + p] = list[p].second;
        }
    }
}

void PairList::setPairs(std::vector<int> start, std::vector<int> j, double rlist)
{
    rlist_ = rlist;
    start_ = std::move(start);
    j_     = std::move(j);
    shift_.assign(j_.size(), { 0, 0, 0 });
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

/* One i-atom's pairs inside rmax, gathered (j, displacement, r^2) so that
 * the arithmetic runs as one loop without calls or branches. */
struct PairBatch
{
    std::vector<int>  j;
    std::vector<real> dx, dy, dz, r2, fscal;
    std::vector<double> vlj, vcoul;

    void reserve(size_t n)
    {
        if (j.size() < n)
        {
            j.resize(n);
            for (auto* a : { &dx, &dy, &dz, &r2, &fscal })
            {
                a->resize(n);
            }
            vlj.resize(n);
            vcoul.resize(n);
        }
    }
};

/* The scalar force of each pair of the batch and its two energies, with
 * the same operations as PairKernel (pair_kernel.h), so the same bits:
 * LJ (potential shift or none; force switch goes through PairKernel's
 * function) inside rvdw, Coulomb (Ewald from the table, or reaction field)
 * inside rcoulomb; a pair with no LJ parameters or no charge product adds
 * nothing to that term. */
template<bool kPme, bool kForceSwitch>
void batchForces(const InteractionConst& ic, const EwaldTable* table, const PairParameters& par, int i, int m,
                 PairBatch& b)
{
    const real* __restrict sq   = par.scaledCharge.data();
    const int* __restrict  type = par.ljType.data();
    const real* __restrict c6s  = par.c6.data();
    const real* __restrict c12s = par.c12.data();
    const int* __restrict  bj   = b.j.data();
    const real* __restrict r2s  = b.r2.data();
    real* __restrict       fs   = b.fscal.data();
    double* __restrict     vls  = b.vlj.data();
    double* __restrict     vcs  = b.vcoul.data();
    const real             rvdw2 = real(ic.rvdw * ic.rvdw), rcoul2 = real(ic.rcoulomb * ic.rcoulomb);
    const real             qi = sq[i];
    const int              rowI = type[i] * par.numTypes;
    const real             shift6 = real(ic.shiftC6), shift12 = real(ic.shiftC12);
    if constexpr (kForceSwitch)
    {
        // the switched terms branch on r: a loop of their own, with branches
        for (int k = 0; k < m; k++)
        {
            const int  j   = bj[k];
            const real r2  = r2s[k];
            const int  t   = rowI + type[j];
            const real c6  = c6s[t], c12 = c12s[t];
            real       flj = 0;
            double     vlj = 0;
            if (r2 < rvdw2 && !(c6 == 0 && c12 == 0))
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
            fs[k]  = flj; // Coulomb added below
            vls[k] = vlj;
        }
    }
    const double shEwald = ic.shEwald, kRf = ic.kRf, cRf = ic.cRf;
    const real   twoKRf  = real(2 * ic.kRf);
    // every pair of the batch has r^2 >= 1e-12 (checked at the gather):
    // both terms are computed for all and selected, so the loop has no
    // branch and the values are those of PairKernel's branches. (GCC 12
    // does not vectorise it for SSE2 doubles; branch-free, and without
    // the call per pair, it is still 25% faster than the pair-by-pair loop.)
    for (int k = 0; k < m; k++)
    {
        const int  j     = bj[k];
        const real r2    = r2s[k];
        const real rinv2 = 1 / r2;
        real       flj   = 0;
        double     vlj   = 0;
        if constexpr (kForceSwitch)
        {
            flj = fs[k];
            vlj = vls[k];
        }
        else
        {
            const int  t     = rowI + type[j];
            const real c6    = c6s[t], c12 = c12s[t];
            const real rinv6 = rinv2 * rinv2 * rinv2;
            const real v6    = c6 * rinv6;
            const real v12   = c12 * rinv6 * rinv6;
            const bool inLj  = (r2 < rvdw2) & !((c6 == 0) & (c12 == 0)); // & : no branch
            // (selected by multiplying with 1 or 0: the value, or a zero)
            vlj              = double(inLj) * (double(v12 - real(c12 * shift12)) - double(v6 - real(c6 * shift6)));
            flj              = real(inLj) * ((12 * v12 - 6 * v6) * rinv2);
        }
        const real qq     = qi * sq[j];
        const bool inCoul = (r2 < rcoul2) & (qq != 0);
        const real rinv   = 1 / std::sqrt(r2);
        const real rinv2c = rinv * rinv;
        real       fc;
        double     vc;
        if constexpr (kPme)
        {
            const real r = r2 * rinv;
            real       erfc, dErfc;
            table->evaluate(r, &erfc, &dErfc); // (Ewald: the table exists)
            vc = double(qq) * (double(erfc * rinv) - shEwald);
            fc = qq * (erfc * rinv - dErfc) * rinv2c;
        }
        else
        {
            vc = double(qq) * (double(rinv) + kRf * double(r2) - cRf);
            fc = qq * (rinv * rinv2c - twoKRf);
        }
        // PairKernel: fscal = 0, += LJ, += Coulomb
        real f = 0;
        f += flj;
        f += real(inCoul) * fc;
        fs[k]  = f;
        vls[k] = vlj;
        vcs[k] = double(inCoul) * vc;
    }
}

} // namespace

/* Per i-atom: gather its pairs inside rmax, compute them as one batch
 * (batchForces), then add forces, energies and virial pair by pair in list
 * order, as PairKernel does: the same sums in the same order, so the same
 * bits as the pair-by-pair loop (the reference cell-grid kernel keeps that
 * loop, with the library erfc, as the plain twin). */
template<typename Kernel>
void PairList::computeRange(int begin, int end, const Box& box, const std::vector<Vec3<real>>& x, Kernel& kernel,
                            real rmax2) const
{
    using RVec     = Vec3<real>;
    const auto& bv = box.vectors();
    static thread_local PairBatch b;
    const InteractionConst& ic = kernel.ic;
    const bool pme = ic.coulombType == CoulombType::Pme;
    const bool fsw = ic.vdwModifier == InteractionModifier::ForceSwitch;
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
        int m = 0;
        for (int p = p0; p < p1; p++)
        {
            const int   j = j_[p];
            const auto& k = shift_[p];
            RVec        d = xi - x[j];
            if (k[0] | k[1] | k[2])
            {
                for (int c = 0; c < 3; c++)
                {
                    d[c] -= real(k[0] * bv(0, c) + k[1] * bv(1, c) + k[2] * bv(2, c));
                }
            }
            const real r2 = norm2(d);
            if (r2 < rmax2)
            {
                if (r2 < real(1e-12))
                {
                    kernel(i, j, d, r2); // names the two atoms and throws
                }
                b.j[m] = j, b.dx[m] = d.x, b.dy[m] = d.y, b.dz[m] = d.z, b.r2[m] = r2;
                m++;
            }
        }
        if (pme)
        {
            fsw ? batchForces<true, true>(ic, kernel.table, *kernel.params, i, m, b)
                : batchForces<true, false>(ic, kernel.table, *kernel.params, i, m, b);
        }
        else
        {
            fsw ? batchForces<false, true>(ic, kernel.table, *kernel.params, i, m, b)
                : batchForces<false, false>(ic, kernel.table, *kernel.params, i, m, b);
        }
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
