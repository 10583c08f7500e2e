/* domdec/local_topology.cpp — what a rank computes after a repartition:
 * its local topology (parameters of home and halo atoms, the listed
 * interactions and excluded pairs assigned to it) and its pair lists.
 *
 * Assignment uses the rule of domdec.h: a set of copies is computed here
 * when the copies are close (within the halo distance of the first one)
 * and the AND of their zone masks is zero. Listed interactions are found
 * from each local copy of their first atom; the other atoms are the copies
 * nearest to it. Every search step checks that the ranks together compute
 * every listed interaction exactly once.
 */
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "nonbonded/candidate_filter.h"
#include "domdec/domdec.h"

namespace putmd
{

using RVec = Vec3<real>;

namespace
{

template<typename T>
struct AtomFields;
template<>
struct AtomFields<HarmonicBond>
{
    static constexpr std::array<int HarmonicBond::*, 2> f{ &HarmonicBond::i, &HarmonicBond::j };
};
template<>
struct AtomFields<MorseBond>
{
    static constexpr std::array<int MorseBond::*, 2> f{ &MorseBond::i, &MorseBond::j };
};
template<>
struct AtomFields<RestraintBond>
{
    static constexpr std::array<int RestraintBond::*, 2> f{ &RestraintBond::i, &RestraintBond::j };
};
template<>
struct AtomFields<HarmonicAngle>
{
    static constexpr std::array<int HarmonicAngle::*, 3> f{ &HarmonicAngle::i, &HarmonicAngle::j, &HarmonicAngle::k };
};
template<>
struct AtomFields<UreyBradley>
{
    static constexpr std::array<int UreyBradley::*, 3> f{ &UreyBradley::i, &UreyBradley::j, &UreyBradley::k };
};
template<>
struct AtomFields<PeriodicDihedral>
{
    static constexpr std::array<int PeriodicDihedral::*, 4> f{ &PeriodicDihedral::i, &PeriodicDihedral::j,
                                                               &PeriodicDihedral::k, &PeriodicDihedral::l };
};
template<>
struct AtomFields<HarmonicImproper>
{
    static constexpr std::array<int HarmonicImproper::*, 4> f{ &HarmonicImproper::i, &HarmonicImproper::j,
                                                               &HarmonicImproper::k, &HarmonicImproper::l };
};
template<>
struct AtomFields<RyckaertBellemans>
{
    static constexpr std::array<int RyckaertBellemans::*, 4> f{ &RyckaertBellemans::i, &RyckaertBellemans::j,
                                                                &RyckaertBellemans::k, &RyckaertBellemans::l };
};
template<>
struct AtomFields<Pair14>
{
    static constexpr std::array<int Pair14::*, 2> f{ &Pair14::i, &Pair14::j };
};

template<>
struct AtomFields<CmapTorsion>
{
    static constexpr std::array<int CmapTorsion::*, 5> f{ &CmapTorsion::i, &CmapTorsion::j, &CmapTorsion::k,
                                                          &CmapTorsion::l, &CmapTorsion::m };
};

/* Calls fn(index, globalList, localList) for each listed type. */
template<typename Fn>
void forEachListedType(const ListedInteractions& g, ListedInteractions& l, Fn&& fn)
{
    fn(0, g.bonds, l.bonds);
    fn(1, g.g96Bonds, l.g96Bonds);
    fn(2, g.angles, l.angles);
    fn(3, g.g96Angles, l.g96Angles);
    fn(4, g.ureyBradley, l.ureyBradley);
    fn(5, g.properDihedrals, l.properDihedrals);
    fn(6, g.periodicImpropers, l.periodicImpropers);
    fn(7, g.impropers, l.impropers);
    fn(8, g.ryckaertBellemans, l.ryckaertBellemans);
    fn(9, g.pairs, l.pairs);
    fn(10, g.cmap, l.cmap);
    fn(11, g.morseBonds, l.morseBonds);
    fn(12, g.harmonicPotentials, l.harmonicPotentials);
    fn(13, g.fourierDihedrals, l.fourierDihedrals);
    fn(14, g.restraintBonds, l.restraintBonds);
    fn(15, g.restrictedAngles, l.restrictedAngles);
    l.cmapGrids   = g.cmapGrids;
    l.connections = g.connections;
}

/* Per-atom data of the listed atoms (parameters and names). */
void copyAtoms(const Topology& g, const std::vector<int>& atoms, int count, Topology& t)
{
    t.systemName        = g.systemName;
    t.numLjTypes        = g.numLjTypes;
    t.fudgeQQ           = g.fudgeQQ;
    t.combRule          = g.combRule;
    if (t.c6.size() != g.c6.size())
    {
        t.c6                = g.c6;
        t.c12               = g.c12;
        t.moleculeTypeNames = g.moleculeTypeNames;
    }
    t.numAtoms = count;
    t.globalIndex.assign(atoms.begin(), atoms.begin() + count);
    t.charge.resize(count);
    t.mass.resize(count);
    t.ljType.resize(count);
    t.atomName.resize(count);
    t.residueName.resize(count);
    t.atomName.shareTable(g.atomName); // every entry is copied from g below
    t.residueName.shareTable(g.residueName);
    t.residueNumber.resize(count);
    t.moleculeIndex.resize(count);
    t.moleculeType.resize(count);
    for (int a = 0; a < count; a++)
    {
        const int gi       = atoms[a];
        t.charge[a]        = g.charge[gi];
        t.mass[a]          = g.mass[gi];
        t.ljType[a]        = g.ljType[gi];
        t.atomName.copyFrom(a, g.atomName, gi);
        t.residueName.copyFrom(a, g.residueName, gi);
        t.residueNumber[a] = g.residueNumber[gi];
        t.moleculeIndex[a] = gi < int(g.moleculeIndex.size()) ? g.moleculeIndex[gi] : 0;
        t.moleculeType[a]  = gi < int(g.moleculeType.size()) ? g.moleculeType[gi] : 0;
    }
}

} // namespace

void DomainDecomposition::buildLocalTopology(const Box& box)
{
    const int nl = numLocal();
    if (!reverseBuilt_)
    {
        reverseBuilt_ = true;
        ListedInteractions unused;
        forEachListedType(global_.listed, unused, [&](int t, const auto& all, auto&) {
            using T        = typename std::decay_t<decltype(all)>::value_type;
            auto& start    = reverseStart_[t];
            auto& index    = reverse_[t];
            const auto f0  = AtomFields<T>::f[0];
            if (all.empty())
            {
                return; // no index of the whole system's atoms for a type the system lacks
            }
            start.assign(global_.numAtoms + 1, 0);
            for (const auto& it : all)
            {
                start[it.*f0 + 1]++;
            }
            for (int a = 0; a < global_.numAtoms; a++)
            {
                start[a + 1] += start[a];
            }
            index.resize(all.size());
            std::vector<int> fill(start.begin(), start.end() - 1);
            for (size_t k = 0; k < all.size(); k++)
            {
                index[fill[all[k].*f0]++] = static_cast<int>(k);
            }
            numListedGlobal_ += static_cast<long>(all.size());
        });
    }
    copyAtoms(global_, globalIndex_, nl, localTop_);
    const double halo2 = haloDistance_ * haloDistance_;
    auto         close = [&](int a, int b) { return norm2(DVec(xLocal_[a]) - DVec(xLocal_[b])) < halo2; };
    /* The copy of global atom g nearest to local atom a, if close. */
    auto nearestCopy = [&](int g, int a) {
        int    best = -1;
        double bd   = std::numeric_limits<double>::infinity();
        for (int c = firstCopy_[g]; c >= 0; c = nextCopy_[c])
        {
            const double d2 = norm2(DVec(xLocal_[c]) - DVec(xLocal_[a]));
            if (d2 < bd)
            {
                bd   = d2;
                best = c;
            }
        }
        return bd < halo2 ? best : -1;
    };

    // excluded pairs this rank computes (for the Ewald / reaction-field corrections)
    localTop_.exclusionStart.assign(nl + 1, 0);
    localTop_.exclusions.clear();
    std::vector<int> row;
    for (int i = 0; i < nl; i++)
    {
        row.clear();
        const int gi = globalIndex_[i];
        for (int e = global_.exclusionStart[gi]; e < global_.exclusionStart[gi + 1]; e++)
        {
            for (int c = firstCopy_[global_.exclusions[e]]; c >= 0; c = nextCopy_[c])
            {
                if ((zone_[i] & zone_[c]) == 0 && close(i, c))
                {
                    row.push_back(c);
                }
            }
        }
        std::sort(row.begin(), row.end());
        localTop_.exclusions.insert(localTop_.exclusions.end(), row.begin(), row.end());
        localTop_.exclusionStart[i + 1] = static_cast<int>(localTop_.exclusions.size());
    }

    // listed interactions
    long assigned = 0;
    forEachListedType(global_.listed, localTop_.listed, [&](int t, const auto& all, auto& local) {
        using T             = typename std::decay_t<decltype(all)>::value_type;
        constexpr auto& fs  = AtomFields<T>::f;
        local.clear();
        for (int a = 0; a < nl && !all.empty(); a++)
        {
            const int gi = globalIndex_[a];
            for (int r = reverseStart_[t][gi]; r < reverseStart_[t][gi + 1]; r++)
            {
                T    it   = all[reverse_[t][r]];
                int  mask = zone_[a];
                bool ok   = true;
                it.*fs[0] = a;
                for (size_t k = 1; k < fs.size() && ok; k++)
                {
                    const int c = nearestCopy(it.*fs[k], a);
                    ok          = c >= 0;
                    if (ok)
                    {
                        mask &= zone_[c];
                        it.*fs[k] = c;
                    }
                }
                if (ok && mask == 0)
                {
                    local.push_back(it);
                }
            }
        }
        assigned += static_cast<long>(local.size());
    });
    // virtual sites built across update groups: computed where the site
    // and its atoms are close with a zero AND of zone masks (as above)
    if (!global_.virtualSites.empty() && vsiteOfAtom_.empty())
    {
        vsiteOfAtom_.assign(global_.numAtoms, -1);
        for (size_t k = 0; k < global_.virtualSites.size(); k++)
        {
            vsiteOfAtom_[global_.virtualSites[k].site] = static_cast<int>(k);
        }
    }
    localSplitSites_.clear();
    if (numSplitSites_ > 0)
    {
        std::vector<std::pair<int, VirtualSite>> mine;
        for (int a = 0; a < nl; a++)
        {
            const int k = vsiteOfAtom_[globalIndex_[a]];
            if (k < 0 || !groups_.splitSite[k])
            {
                continue;
            }
            VirtualSite v    = global_.virtualSites[k];
            int         mask = zone_[a];
            bool        ok   = true;
            v.site           = a;
            for (auto& c : v.from)
            {
                c  = nearestCopy(c, a);
                ok = ok && c >= 0;
                if (ok)
                {
                    mask &= zone_[c];
                }
            }
            if (ok && mask == 0)
            {
                mine.emplace_back(k, std::move(v));
            }
        }
        std::sort(mine.begin(), mine.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& [k, v] : mine)
        {
            localSplitSites_.push_back(std::move(v));
        }
        assigned += static_cast<long>(localSplitSites_.size());
    }
    // one collective for both checks
    const long total = comm_.sumLong(comm::Phase::Setup, assigned);
    if (total != numListedGlobal_ + numSplitSites_)
    {
        throw SimulationError(fmt::format(
                "domain decomposition: the ranks compute {} listed interactions and virtual-site constructions, but "
                "the topology has {}; an interaction spans more than the halo distance ({:.3f} nm). Use fewer ranks, "
                "or check the system is not blowing up",
                total, numListedGlobal_ + numSplitSites_, haloDistance_));
    }

    // position restraints go with their atom: the home copy computes them
    localTop_.positionRestraintSettings = global_.positionRestraintSettings;
    localTop_.positionRestraints.clear();
    if (!global_.positionRestraints.empty())
    {
        if (posresStart_.empty())
        {
            posresStart_.assign(global_.numAtoms + 1, 0);
            for (const auto& p : global_.positionRestraints)
            {
                posresStart_[p.i + 1]++;
            }
            for (int a = 0; a < global_.numAtoms; a++)
            {
                posresStart_[a + 1] += posresStart_[a];
            }
            posres_.resize(global_.positionRestraints.size());
            std::vector<int> fill(posresStart_.begin(), posresStart_.end() - 1);
            for (size_t k = 0; k < global_.positionRestraints.size(); k++)
            {
                posres_[fill[global_.positionRestraints[k].i]++] = static_cast<int>(k);
            }
        }
        for (int a = 0; a < numHome_; a++)
        {
            const int gi = globalIndex_[a];
            for (int r = posresStart_[gi]; r < posresStart_[gi + 1]; r++)
            {
                PositionRestraint p = global_.positionRestraints[posres_[r]];
                p.i                 = a;
                localTop_.positionRestraints.push_back(p);
            }
        }
    }

    // virtual sites whose site is home (their atoms are in its update group:
    // home too), in the global construction order, at home indices; the
    // split ones above
    localTop_.virtualSites.clear();
    homeSplitSites_.clear();
    if (!global_.virtualSites.empty())
    {
        std::vector<int> mine;
        for (int a = 0; a < numHome_; a++)
        {
            const int k = vsiteOfAtom_[globalIndex_[a]];
            if (k >= 0 && !groups_.splitSite[k])
            {
                mine.push_back(k);
            }
            else if (k >= 0)
            {
                homeSplitSites_.push_back(a);
            }
        }
        std::sort(mine.begin(), mine.end());
        for (int k : mine)
        {
            VirtualSite v = global_.virtualSites[k];
            v.site        = firstCopy_[v.site];
            for (auto& a : v.from)
            {
                a = firstCopy_[a];
            }
            localTop_.virtualSites.push_back(std::move(v));
        }
    }

    // the home atoms with their constraints, for the update
    copyAtoms(global_, globalIndex_, numHome_, homeTop_);
    homeTop_.constraints.clear();
    homeTop_.settles.clear();
    for (size_t g = 0; g + 1 < homeGroupStart_.size(); g++)
    {
        const int group = groups_.groupOf[globalIndex_[homeGroupStart_[g]]];
        for (int k = groups_.constraintStart[group]; k < groups_.constraintStart[group + 1]; k++)
        {
            Constraint c = global_.constraints[groups_.constraints[k]];
            c.i          = firstCopy_[c.i];
            c.j          = firstCopy_[c.j];
            homeTop_.constraints.push_back(c);
        }
        for (int k = groups_.settleStart[group]; k < groups_.settleStart[group + 1]; k++)
        {
            Settle s = global_.settles[groups_.settles[k]];
            s.o      = firstCopy_[s.o];
            s.h1     = firstCopy_[s.h1];
            s.h2     = firstCopy_[s.h2];
            homeTop_.settles.push_back(s);
        }
    }
    (void)box;
}

void DomainDecomposition::searchPairs()
{
    const int  nl = numLocal();
    const real rl2 = real(rlist_ * rlist_);
    // a plain (non-periodic) cell grid over the local copies
    const double big = std::numeric_limits<double>::max();
    DVec         lo(big, big, big), hi(-big, -big, -big);
    for (const auto& x : xLocal_)
    {
        for (int d = 0; d < 3; d++)
        {
            lo[d] = std::min(lo[d], double(x[d]));
            hi[d] = std::max(hi[d], double(x[d]));
        }
    }
    // cells at least rlist/2 wide, so the atoms within rlist of a cell's
    // atoms are in the 5 x 5 x 5 cells around it (42% fewer distances
    // than 3 x 3 x 3 cells of rlist); x is the fastest cell index, so the
    // five cells along x are one run of cellAtoms
    constexpr int      kReach = 2;
    std::array<int, 3> n;
    for (int d = 0; d < 3; d++)
    {
        n[d] = nl > 0 ? std::max(1, static_cast<int>((hi[d] - lo[d]) / (rlist_ / kReach))) : 1;
    }
    // (the cell of a coordinate is monotonic in it: the cells of the atoms
    // within w of x are those from cellIn(x - w) to cellIn(x + w))
    auto cellIn = [&](int d, double x) {
        return std::clamp(static_cast<int>((x - lo[d]) / (hi[d] - lo[d] + 1e-30) * n[d]), 0, n[d] - 1);
    };
    auto cellOf = [&](const RVec& x) {
        std::array<int, 3> c;
        for (int d = 0; d < 3; d++)
        {
            c[d] = cellIn(d, double(x[d]));
        }
        return c;
    };
    std::vector<int> cellStart(size_t(n[0]) * n[1] * n[2] + 1, 0), cellAtoms(nl);
    std::vector<int> cellOfAtom(nl);
    std::vector<std::array<int, 3>> cellXyz(nl);
    for (int a = 0; a < nl; a++)
    {
        const auto c  = cellOf(xLocal_[a]);
        cellXyz[a]    = c;
        cellOfAtom[a] = (c[2] * n[1] + c[1]) * n[0] + c[0];
        cellStart[cellOfAtom[a] + 1]++;
    }
    for (size_t c = 0; c + 1 < cellStart.size(); c++)
    {
        cellStart[c + 1] += cellStart[c];
    }
    {
        std::vector<int> fill(cellStart.begin(), cellStart.end() - 1);
        for (int a = 0; a < nl; a++)
        {
            cellAtoms[fill[cellOfAtom[a]]++] = a;
        }
    }
    // the lists are made in CSR directly, i by i, each j-list in the order
    // the cells are searched (a function of the local coordinates and
    // their order alone, so every backend and run gets the same lists)
    localPairs_.start.assign(nl + 1, 0);
    nonlocalPairs_.start.assign(nl + 1, 0);
    localPairs_.j.clear();
    nonlocalPairs_.j.clear();
    const RVec* const  xl   = xLocal_.data();
    const auto* const  zone = zone_.data();
    // coordinates, indices and zones in cell order, one array each (the
    // candidate filter reads a row as a stream, a register at a time)
    const size_t                padded = size_t(nl) + c_candidateSlack; // (read past a row's end)
    std::vector<real>           xCell(padded), yCell(padded), zCell(padded);
    std::vector<CandidateIndex> atomCell(padded), zoneCell(padded), cand(padded);
    for (int k = 0; k < nl; k++)
    {
        const int a = cellAtoms[k];
        xCell[k]    = xl[a][0];
        yCell[k]    = xl[a][1];
        zCell[k]    = xl[a][2];
        atomCell[k] = a;
        zoneCell[k] = zone[a];
    }
    const CandidateRow cells{ xCell.data(), yCell.data(), zCell.data(), atomCell.data(), zoneCell.data() };
    for (int i = 0; i < nl; i++)
    {
        const auto ci = cellXyz[i];
        const RVec xi = xl[i];
        const auto zi = zone[i];
        const int  gi = globalIndex_[i];
        const auto exBegin = global_.exclusions.begin() + global_.exclusionStart[gi];
        const auto exEnd   = global_.exclusions.begin() + global_.exclusionStart[gi + 1];
        int        m       = 0; // candidates of i in cand
        const CandidateQuery query{ xi[0], xi[1], xi[2], i, zi, rl2 };
        // rows of cells (y, z) nearer than rlist, each only over the x cells
        // the sphere reaches at that row's y, z distance (bounds widened by
        // a margin above rounding: the same pairs as the whole 5 x 5 x 5
        // block, in the same order)
        constexpr double kMargin = 1e-5; // nm: above float rounding too
        const double     rl      = rlist_ + kMargin;
        auto gap = [&](int d, int c) { // from x_i to cell c's slab in d
            const double width = (hi[d] - lo[d] + 1e-30) / n[d];
            if (c < ci[d])
            {
                return std::max(0.0, double(xi[d]) - (lo[d] + (c + 1) * width) - kMargin);
            }
            return c > ci[d] ? std::max(0.0, lo[d] + c * width - double(xi[d]) - kMargin) : 0.0;
        };
        for (int cz = cellIn(2, xi[2] - rl); cz <= cellIn(2, xi[2] + rl); cz++)
        {
            const double gz = gap(2, cz);
            for (int cy = cellIn(1, xi[1] - rl); cy <= cellIn(1, xi[1] + rl); cy++)
            {
                const double gy = gap(1, cy), left = rl * rl - gz * gz - gy * gy;
                if (left <= 0)
                {
                    continue;
                }
                const double w   = std::sqrt(left) + kMargin;
                const int    x0  = cellIn(0, xi[0] - w), x1 = cellIn(0, xi[0] + w);
                const int    row = (cz * n[1] + cy) * n[0];
                // the candidates inside rlist (candidate_filter.h), then the
                // exclusions
                m += filterCandidatesSimd(cells, query, cellStart[row + x0], cellStart[row + x1 + 1], cand.data() + m);
            }
        }
        for (int c = 0; c < m; c++)
        {
            const int j = cellAtoms[cand[c]];
            if (!std::binary_search(exBegin, exEnd, globalIndex_[j]))
            {
                // (a home i has home and halo j; a halo i only halo j)
                (j < numHome_ ? localPairs_ : nonlocalPairs_).j.push_back(j);
            }
        }
        localPairs_.start[i + 1]    = static_cast<int>(localPairs_.j.size());
        nonlocalPairs_.start[i + 1] = static_cast<int>(nonlocalPairs_.j.size());
    }
}

} // namespace putmd
