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

template<typename Kernel>
void PairList::computeRange(int begin, int end, const Box& box, const std::vector<Vec3<real>>& x, Kernel& kernel,
                            real rmax2) const
{
    using RVec     = Vec3<real>;
    const auto& bv = box.vectors();
    for (int i = begin; i < end; i++)
    {
        const RVec xi = x[i];
        for (int p = start_[i]; p < start_[i + 1]; p++)
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
                kernel(i, j, d, r2);
            }
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
