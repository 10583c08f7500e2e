#include "run/energy_groups.h"

#include <algorithm>
#include <array>
#include <exception>

#include <omp.h>

#include <fmt/format.h>

#include "core/energy_terms.h"
#include "listed/listed.h"
#include "nonbonded/cell_grid.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/pair_kernel.h"
#include "run/groups.h"

namespace putmd
{

namespace
{

using RVec = Vec3<real>;

/* Index of the group pair (a, b), a <= b: (0,0), (0,1), ..., (1,1), ... */
int pairIndex(int a, int b, int n)
{
    if (a > b)
    {
        std::swap(a, b);
    }
    return a * n - a * (a - 1) / 2 + (b - a);
}

} // namespace

std::vector<std::string> EnergyGroups::termNames() const
{
    std::vector<std::string> t;
    for (int a = 0; a < size(); a++)
    {
        for (int b = a; b < size(); b++)
        {
            const std::string pair = names[a] + "-" + names[b];
            for (const char* kind : { "Coul-SR:", "LJ-SR:", "Coul-14:", "LJ-14:" })
            {
                t.push_back(kind + pair);
            }
        }
    }
    return t;
}

EnergyGroups makeEnergyGroups(const Topology& top, const std::vector<std::string>& names, const SourceLocation& where)
{
    EnergyGroups g;
    if (names.empty() || (names.size() == 1 && names[0] == "System"))
    {
        return g;
    }
    g.groupOf.assign(top.numAtoms, -1);
    for (size_t k = 0; k < names.size(); k++)
    {
        const auto in = atomsOfGroup(top, names[k], where);
        for (int a = 0; a < top.numAtoms; a++)
        {
            if (!in[a])
            {
                continue;
            }
            if (g.groupOf[a] >= 0)
            {
                throw InputError(where, fmt::format("energygrps: {} is in both '{}' and '{}'; energy groups must not "
                                                    "overlap",
                                                    top.describeAtom(a), names[g.groupOf[a]], names[k]));
            }
            g.groupOf[a] = static_cast<int>(k);
        }
        g.names.push_back(names[k]);
    }
    if (std::count(g.groupOf.begin(), g.groupOf.end(), -1) > 0)
    {
        // the atoms of no listed group, as grompp adds them
        for (auto& k : g.groupOf)
        {
            if (k < 0)
            {
                k = static_cast<int>(names.size());
            }
        }
        g.names.push_back("rest");
    }
    return g;
}

std::vector<double> computeEnergyGroupTerms(const EnergyGroups& groups, const Topology& top, const InteractionConst& ic,
                                            const Box& box, const std::vector<Vec3<real>>& x)
{
    const int           n      = groups.size();
    const int           npairs = n * (n + 1) / 2;
    std::vector<double> coulSR(npairs, 0.0), ljSR(npairs, 0.0), coul14(npairs, 0.0), lj14(npairs, 0.0);
    std::vector<RVec>   scratch(x.size());

    // pairs within the cut-offs: the reference kernel's pair functions, one
    // pair at a time into the pair's group pair; threads take slabs of
    // cells, their sums added in thread order (the same bits for a given
    // thread count)
    {
        const CellGrid grid(box, x, ic.rmax);
        const int      nt = std::max(1, std::min(omp_get_max_threads(), grid.numCellsZ()));
        std::vector<std::vector<double>> tCoul(nt, std::vector<double>(npairs, 0.0)), tLj(nt, std::vector<double>(npairs, 0.0));
        std::vector<std::exception_ptr> errors(nt); // (an exception must not leave a parallel region)
#pragma omp parallel num_threads(nt)
        {
            const int         t = omp_get_thread_num();
            std::vector<RVec> f(x.size());
            PairKernel        kernel(top, ic, f);
            const int         z0 = grid.numCellsZ() * t / nt, z1 = grid.numCellsZ() * (t + 1) / nt;
            try
            {
                grid.forEachPairWithShift(
                        [&](int i, int j, const RVec& d, real r2, const std::array<int, 3>&) {
                            const int b = top.exclusionStart[i], e = top.exclusionStart[i + 1];
                            if (std::binary_search(top.exclusions.begin() + b, top.exclusions.begin() + e, j))
                            {
                                return;
                            }
                            kernel.vlj   = 0;
                            kernel.vcoul = 0;
                            kernel(i, j, d, r2);
                            const int p = pairIndex(groups.groupOf[i], groups.groupOf[j], n);
                            tCoul[t][p] += kernel.vcoul;
                            tLj[t][p] += kernel.vlj;
                        },
                        z0, z1);
            }
            catch (...)
            {
                errors[t] = std::current_exception();
            }
        }
        for (const auto& e : errors)
        {
            if (e)
            {
                std::rethrow_exception(e);
            }
        }
        for (int t = 0; t < nt; t++)
        {
            for (int p = 0; p < npairs; p++)
            {
                coulSR[p] += tCoul[t][p];
                ljSR[p] += tLj[t][p];
            }
        }
    }

    // excluded pairs and self terms: bilinear in the charges, so with the
    // charges of group A only (A-A) and of A and B only (A-B = AB - AA - BB)
    {
        Topology   masked = top;
        const Pbc  pbc(box);
        auto       correctionsOf = [&](int a, int b) {
            for (int i = 0; i < top.numAtoms; i++)
            {
                const int g      = groups.groupOf[i];
                masked.charge[i] = (g == a || g == b) ? top.charge[i] : 0.0;
            }
            return exclusionCorrections(masked, ic, pbc, x, scratch, nullptr);
        };
        std::vector<double> self(n);
        for (int a = 0; a < n; a++)
        {
            self[a] = correctionsOf(a, a);
            coulSR[pairIndex(a, a, n)] += self[a];
        }
        for (int a = 0; a < n; a++)
        {
            for (int b = a + 1; b < n; b++)
            {
                coulSR[pairIndex(a, b, n)] += correctionsOf(a, b) - self[a] - self[b];
            }
        }
    }

    // 1-4 pairs: each group pair's own list through the listed code
    {
        std::vector<ListedInteractions> byPair(npairs);
        for (const auto& p : top.listed.pairs)
        {
            byPair[pairIndex(groups.groupOf[p.i], groups.groupOf[p.j], n)].pairs.push_back(p);
        }
        ListedSettings settings;
        settings.epsfac = ic.epsfac;
        const Pbc pbc(box);
        for (int p = 0; p < npairs; p++)
        {
            if (byPair[p].pairs.empty())
            {
                continue;
            }
            EnergyTerms e;
            computeListed(byPair[p], settings, x, pbc, scratch, e);
            coul14[p] = e[EnergyTerm::Coulomb14];
            lj14[p]   = e[EnergyTerm::LJ14];
        }
    }

    std::vector<double> out;
    for (int p = 0; p < npairs; p++)
    {
        out.insert(out.end(), { coulSR[p], ljSR[p], coul14[p], lj14[p] });
    }
    return out;
}

} // namespace putmd
