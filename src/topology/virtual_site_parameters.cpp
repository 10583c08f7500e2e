#include "topology/virtual_site_parameters.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

namespace
{

constexpr double kDegToRad = M_PI / 180;
constexpr double kRadToDeg = 180 / M_PI;

bool typeStartsWith(const std::string& type, const char* prefix)
{
    const size_t n = std::strlen(prefix);
    if (type.size() < n)
    {
        return false;
    }
    for (size_t i = 0; i < n; i++)
    {
        if (std::tolower(static_cast<unsigned char>(type[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
        {
            return false;
        }
    }
    return true;
}

/* Atoms k and l are the two dummy masses of an NH3/CH3 group (pdb2gmx's
 * MNH* / MCH3* atom types). */
bool dummyMassPair(const MoleculeType& mol, int k, int l)
{
    const std::string& tk = mol.atoms[k].type;
    const std::string& tl = mol.atoms[l].type;
    return (typeStartsWith(tk, "MNH") && typeStartsWith(tl, "MNH")) || (typeStartsWith(tk, "MCH3") && typeStartsWith(tl, "MCH3"));
}

/* The equilibrium geometry of one molecule: bond lengths from bonds, then
 * constraints (the first line for a pair wins), and angles, by atoms. */
class EquilibriumGeometry
{
public:
    EquilibriumGeometry(const MoleculeType& mol, const BondedParameterLookup& lookup)
    {
        for (const auto& it : mol.list(InteractionKind::Bonds))
        {
            if (it.func != 5)
            {
                bonds_.emplace(key(it.atoms[0], it.atoms[1]), lookup("bondtypes", InteractionKind::Bonds, it)[0]);
            }
        }
        for (const auto& it : mol.list(InteractionKind::Constraints))
        {
            bonds_.emplace(key(it.atoms[0], it.atoms[1]), lookup("constrainttypes", InteractionKind::Constraints, it)[0]);
        }
        for (const auto& it : mol.list(InteractionKind::Angles))
        {
            const int i = std::min(it.atoms[0], it.atoms[2]), k = std::max(it.atoms[0], it.atoms[2]);
            angles_.emplace(std::array<int, 3>{ i, it.atoms[1], k }, lookup("angletypes", InteractionKind::Angles, it)[0]);
        }
    }

    std::optional<double> bond(int i, int j) const
    {
        auto it = bonds_.find(key(i, j));
        return it == bonds_.end() ? std::nullopt : std::optional<double>(it->second);
    }
    /* radians, as grompp converts the degrees */
    std::optional<double> angle(int i, int j, int k) const
    {
        auto it = angles_.find({ std::min(i, k), j, std::max(i, k) });
        return it == angles_.end() ? std::nullopt : std::optional<double>(kDegToRad * it->second);
    }

private:
    static std::pair<int, int> key(int i, int j) { return { std::min(i, j), std::max(i, j) }; }

    std::map<std::pair<int, int>, double> bonds_;
    std::map<std::array<int, 3>, double>  angles_;
};

/* Parameters for one site line without them; throws naming the line and
 * the missing bond or angle. */
class SiteParameters
{
public:
    SiteParameters(const MoleculeType& mol, const EquilibriumGeometry& g, const Interaction& it) : mol_(mol), g_(g), it_(it) {}

    std::vector<double> compute(InteractionKind kind) const
    {
        const int f = it_.func;
        if (kind == InteractionKind::VirtualSites3 && f == 1) return site3();
        if (kind == InteractionKind::VirtualSites3 && f == 2) return site3fd();
        if (kind == InteractionKind::VirtualSites3 && f == 3) return site3fad();
        if (kind == InteractionKind::VirtualSites3 && f == 4) return site3out();
        if (kind == InteractionKind::VirtualSites4 && f == 2) return site4fdn();
        throw InputError(it_.where, fmt::format("[ {} ] function {} needs its parameters on the line: grompp (and putmd) "
                                                "compute them only for virtual_sites3 1-4 and virtual_sites4 2",
                                                directiveName(kind), f));
    }

private:
    int atom(int n) const { return it_.atoms[n]; }
    std::string name(int a) const { return std::to_string(a + 1) + " (" + mol_.atoms[a].name + ")"; }

    double bond(int a, int b) const
    {
        if (auto v = g_.bond(a, b))
        {
            return *v;
        }
        throw InputError(it_.where, fmt::format("cannot compute the parameters of virtual site {}: no bond or constraint "
                                                "between atoms {} and {} gives their length; add it or give the "
                                                "parameters on the line",
                                                name(atom(0)), name(a), name(b)));
    }
    /* NH3/CH3 group on dummy masses k, l bonded to heavy atom j; the group's
     * N or C is the atom after the masses. */
    struct Xh3Group
    {
        int    n;      // the group's N (or C)
        double bCN;    // heavy atom - N
        double dM, rM; // masses: distance of their midpoint from j, half their distance
    };
    Xh3Group xh3Group() const
    {
        const int j = atom(1), k = atom(2), l = atom(3);
        const double bjk = bond(j, k), bjl = bond(j, l);
        if (bjk != bjl)
        {
            throw InputError(it_.where, fmt::format("virtual site {}: the dummy masses {} and {} are at different "
                                                    "distances from atom {} ({} and {} nm); grompp needs them equal",
                                                    name(atom(0)), name(k), name(l), name(j), bjk, bjl));
        }
        Xh3Group x;
        x.n = std::max(k, l) + 1;
        if (x.n >= static_cast<int>(mol_.atoms.size()))
        {
            throw InputError(it_.where, fmt::format("virtual site {}: the NH3/CH3 group's N or C must be the atom after "
                                                    "its dummy masses {} and {} (as pdb2gmx writes them), but the "
                                                    "molecule ends there",
                                                    name(atom(0)), name(k), name(l)));
        }
        x.bCN = bond(j, x.n);
        x.rM  = 0.5 * bond(k, l);
        x.dM  = std::sqrt(bjk * bjk - x.rM * x.rM);
        return x;
    }

    std::vector<double> site3() const
    {
        const int i = atom(0), j = atom(1);
        if (!dummyMassPair(mol_, atom(2), atom(3)))
        {
            throw InputError(it_.where, fmt::format("virtual site {}: [ virtual_sites3 ] function 1 without parameters "
                                                    "is computed only for NH3/CH3 groups on two dummy masses (atom "
                                                    "types MNH* or MCH3*), as grompp; give a and b on the line",
                                                    name(i)));
        }
        const Xh3Group x = xh3Group();
        if (i == x.n)
        {
            const double a = 0.5 * x.bCN / x.dM;
            return { a, a };
        }
        const double bNH = bond(x.n, i), aCNH = angleOf(j, x.n, i);
        const double dH  = x.bCN - bNH * std::cos(aCNH);
        const double rH  = bNH * std::sin(aCNH);
        return { 0.5 * (dH / x.dM + rH / x.rM), 0.5 * (dH / x.dM - rH / x.rM) };
    }

    std::vector<double> site3fd() const
    {
        const int    i = atom(0), j = atom(1), k = atom(2), l = atom(3);
        const double bij = bond(i, j), rk = bond(j, k) * std::sin(angleOf(i, j, k)), rl = bond(j, l) * std::sin(angleOf(i, j, l));
        return { rk / (rk + rl), -bij };
    }

    std::vector<double> site3fad() const
    {
        const int    i = atom(0), j = atom(1), k = atom(2);
        const double bij   = bond(i, j);
        double       theta = kRadToDeg * angleOf(i, j, k);
        if (it_.swapParity)
        {
            theta = 360 - theta;
        }
        return { theta, bij };
    }

    std::vector<double> site3out() const
    {
        const int i = atom(0), j = atom(1), k = atom(2), l = atom(3);
        double    a, b, c;
        if (dummyMassPair(mol_, k, l))
        {
            const Xh3Group x    = xh3Group();
            const double   bNH  = bond(x.n, i);
            const double   aCNH = angleOf(j, x.n, i);
            const double   dH   = x.bCN - bNH * std::cos(aCNH);
            const double   rH   = bNH * std::sin(aCNH);
            // the three hydrogens 120 degrees apart around the group's axis
            const double rHx = rH * std::cos(kDegToRad * 30);
            const double rHy = rH * std::sin(kDegToRad * 30);
            a = 0.5 * (dH / x.dM - rHy / x.rM);
            b = 0.5 * (dH / x.dM + rHy / x.rM);
            c = rHx / (2 * x.dM * x.rM);
        }
        else
        {
            const double bjk = bond(j, k), bjl = bond(j, l), bij = bond(i, j);
            const double aijk = angleOf(i, j, k), aijl = angleOf(i, j, l), akjl = angleOf(k, j, l);
            const double pijk = std::cos(aijk) * bij, pijl = std::cos(aijl) * bij;
            const double s2   = std::sin(akjl) * std::sin(akjl);
            a = (pijk + (pijk * std::cos(akjl) - pijl) * std::cos(akjl) / s2) / bjk;
            b = (pijl + (pijl * std::cos(akjl) - pijk) * std::cos(akjl) / s2) / bjl;
            c = -std::sqrt(bij * bij - (pijk * pijk - 2 * pijk * pijl * std::cos(akjl) + pijl * pijl) / s2)
                / (bjk * bjl * std::sin(akjl));
        }
        return { a, b, it_.swapParity ? -c : c };
    }

    std::vector<double> site4fdn() const
    {
        const int    i = atom(0), j = atom(1), k = atom(2), l = atom(3), m = atom(4);
        const double bij = bond(i, j);
        const double pk  = -bond(j, k) * std::cos(angleOf(i, j, k));
        const double pl  = -bond(j, l) * std::cos(angleOf(i, j, l));
        const double pm  = -bond(j, m) * std::cos(angleOf(i, j, m));
        if (std::fabs(pl) < 1e-300 || std::fabs(pm) < 1e-300)
        {
            throw InputError(it_.where, fmt::format("virtual site {}: the angles around atom {} leave no 4fdn "
                                                    "construction (a bond at 90 degrees to the site's bond)",
                                                    name(i), name(j)));
        }
        return { pk / pl, pk / pm, bij };
    }

    /* angle by atom numbers (not positions in the line) */
    double angleOf(int a, int b, int c) const
    {
        if (auto v = g_.angle(a, b, c))
        {
            return *v;
        }
        throw InputError(it_.where, fmt::format("cannot compute the parameters of virtual site {}: no angle {}-{}-{} "
                                                "in the topology gives it; add it or give the parameters on the line",
                                                name(atom(0)), a + 1, b + 1, c + 1));
    }
    const MoleculeType&        mol_;
    const EquilibriumGeometry& g_;
    const Interaction&         it_;
};

/* How each atom takes part in a virtual site, for the removal rules. */
struct SiteRole
{
    bool                    site = false;  // constructed by any [ virtual_sites* ] line
    bool                    siteN = false; // by [ virtual_sitesn ] (ignored by the rules, as grompp)
    bool                    flexible = false; // 3fd, 3fad, 4fd, 4fdn
    bool                    fad = false;      // 3fad
    bool                    out = false;      // 3out
    const std::vector<int>* line = nullptr;   // its line's atoms: site, then constructing atoms
};

class ConstantTermRemoval
{
public:
    ConstantTermRemoval(const MoleculeType& mol, const std::function<bool(const Interaction&)>& becomesConstraint) :
        roles_(mol.atoms.size())
    {
        for (auto kind : { InteractionKind::VirtualSites2, InteractionKind::VirtualSites3, InteractionKind::VirtualSites4 })
        {
            for (const auto& it : mol.list(kind))
            {
                SiteRole& r = roles_[it.atoms[0]];
                if (r.site)
                {
                    continue; // constructed twice: the resolver reports it
                }
                r.site     = true;
                r.line     = &it.atoms;
                r.fad      = kind == InteractionKind::VirtualSites3 && it.func == 3;
                r.out      = kind == InteractionKind::VirtualSites3 && it.func == 4;
                r.flexible = (kind == InteractionKind::VirtualSites3 && (it.func == 2 || it.func == 3))
                             || kind == InteractionKind::VirtualSites4;
            }
        }
        for (const auto& it : mol.list(InteractionKind::VirtualSitesN))
        {
            roles_[it.atoms[0]].site  = true;
            roles_[it.atoms[0]].siteN = true;
        }
        for (const auto& it : mol.list(InteractionKind::Constraints))
        {
            constrained_.insert(key(it.atoms[0], it.atoms[1]));
        }
        for (const auto& it : mol.list(InteractionKind::Bonds))
        {
            if (it.func != 5 && becomesConstraint(it))
            {
                constrained_.insert(key(it.atoms[0], it.atoms[1]));
            }
        }
    }

    bool removeTwoAtom(const std::vector<int>& atoms, bool isConstraint) const
    {
        Sites s;
        bool  keep = false, allFlexible = true;
        for (int k = 0; k < 2 && !keep; k++)
        {
            const SiteRole& r = roles_[atoms[k]];
            if (!r.site || r.siteN)
            {
                continue;
            }
            allFlexible = allFlexible && r.flexible;
            if (r.flexible || (r.out && isConstraint))
            {
                // the bond (constraint for 3out) from the site to its first
                // constructing atom: the construction fixes its length
                const int other = atoms[1 - k];
                if (!roles_[other].site && other == (*r.line)[1])
                {
                    return true;
                }
            }
            keep = !s.add(r);
        }
        return !keep && !keepFor(atoms, s, !allFlexible);
    }

    bool removeAngle(const std::vector<int>& atoms) const
    {
        Sites s;
        bool  keep = false, allFad = true;
        for (int k = 0; k < 3 && !keep; k++)
        {
            const SiteRole& r = roles_[atoms[k]];
            if (r.site && !r.siteN)
            {
                allFad = allFad && r.fad;
                keep   = !s.add(r);
            }
        }
        return !keep && !keepFor(atoms, s, !allFad);
    }

    bool removeDihedral(const std::vector<int>& atoms) const
    {
        Sites s;
        bool  keep = false;
        for (int k = 0; k < 4 && !keep; k++)
        {
            const SiteRole& r = roles_[atoms[k]];
            if (r.site && !r.siteN)
            {
                // grompp keeps looking when a later site has a different
                // number of constructing atoms (unlike for bonds and angles)
                keep = !s.add(r, /*differentSizeKeeps*/ false);
            }
        }
        if (keep || s.count == 0)
        {
            return false;
        }
        for (int a : atoms)
        {
            if (!roles_[a].site && s.position(a) < 0)
            {
                return false;
            }
        }
        return true;
    }

    /* a constraint left on a site: grompp's error */
    bool touchesSite(const std::vector<int>& atoms) const { return roles_[atoms[0]].site || roles_[atoms[1]].site; }

private:
    /* The sites of one interaction; all must share the first one's
     * constructing atoms. */
    struct Sites
    {
        int                     count = 0;
        const std::vector<int>* first = nullptr;

        /* false: this site is built from other atoms (keep the term) */
        bool add(const SiteRole& r, bool differentSizeKeeps = true)
        {
            count++;
            if (count == 1)
            {
                first = r.line;
                return true;
            }
            if (r.line->size() != first->size())
            {
                return !differentSizeKeeps;
            }
            for (size_t m = 1; m < r.line->size(); m++)
            {
                if (position((*r.line)[m]) < 0)
                {
                    return false;
                }
            }
            return true;
        }
        /* position of atom a among the first site's constructing atoms, -1 */
        int position(int a) const
        {
            if (!first)
            {
                return -1;
            }
            for (size_t m = 1; m < first->size(); m++)
            {
                if ((*first)[m] == a)
                {
                    return static_cast<int>(m) - 1;
                }
            }
            return -1;
        }
    };

    /* Keep a bond or angle: it has no site, or an atom that is neither a
     * site nor one of the constructing atoms, or (unless exempt) the
     * constructing atoms are not constrained together in a ring. Flexible
     * sites (3fad for angles) whose other atoms are the first two
     * constructing atoms are exempt from the ring. */
    bool keepFor(const std::vector<int>& atoms, const Sites& s, bool ringNeeded) const
    {
        if (s.count == 0)
        {
            return true;
        }
        bool firstTwo = true;
        for (int a : atoms)
        {
            if (roles_[a].site)
            {
                continue;
            }
            const int m = s.position(a);
            if (m < 0)
            {
                return true;
            }
            firstTwo = firstTwo && m < 2;
        }
        if (!ringNeeded && firstTwo)
        {
            return false;
        }
        const std::vector<int>& c = *s.first;
        const size_t            n = c.size() - 1;
        for (size_t m = 0; m < n; m++)
        {
            if (!constrained_.count(key(c[1 + m], c[1 + (m + 1) % n])))
            {
                return true;
            }
        }
        return false;
    }

    static std::pair<int, int> key(int i, int j) { return { std::min(i, j), std::max(i, j) }; }

    std::vector<SiteRole>         roles_;
    std::set<std::pair<int, int>> constrained_;
};

} // namespace

MoleculeType prepareVirtualSites(const MoleculeType& mol, const BondedParameterLookup& lookup,
                                 const std::function<bool(const Interaction&)>& becomesConstraint)
{
    bool anySite = !mol.list(InteractionKind::VirtualSitesN).empty();
    bool missing = false;
    for (auto kind : { InteractionKind::VirtualSites2, InteractionKind::VirtualSites3, InteractionKind::VirtualSites4 })
    {
        for (const auto& it : mol.list(kind))
        {
            anySite = true;
            missing = missing || it.params.empty();
        }
    }
    if (!anySite)
    {
        return mol;
    }
    MoleculeType out = mol;
    if (missing)
    {
        const EquilibriumGeometry g(mol, lookup);
        for (auto kind : { InteractionKind::VirtualSites2, InteractionKind::VirtualSites3, InteractionKind::VirtualSites4 })
        {
            for (auto& it : out.list(kind))
            {
                if (it.params.empty())
                {
                    it.params = SiteParameters(mol, g, it).compute(kind);
                }
            }
        }
    }

    // grompp -rmvsbds (its default): the rules read the original lists
    const ConstantTermRemoval rm(mol, becomesConstraint);
    auto& bonds = out.list(InteractionKind::Bonds);
    for (auto& it : bonds)
    {
        if ((it.func == 1 || it.func == 2) && rm.removeTwoAtom(it.atoms, becomesConstraint(it)))
        {
            it.func = 5; // a connection: exclusions unchanged, no energy
            it.params.clear();
        }
    }
    auto& constraints = out.list(InteractionKind::Constraints);
    std::vector<Interaction> kept;
    for (auto& it : constraints)
    {
        if (!rm.removeTwoAtom(it.atoms, true))
        {
            kept.push_back(it);
        }
        else if (it.func == 1)
        {
            Interaction c = it;
            c.func        = 5;
            c.params.clear();
            bonds.push_back(std::move(c));
        }
    }
    constraints.swap(kept);
    auto& angles = out.list(InteractionKind::Angles);
    angles.erase(std::remove_if(angles.begin(), angles.end(), [&](const Interaction& it) { return rm.removeAngle(it.atoms); }),
                 angles.end());
    auto& dihedrals = out.list(InteractionKind::Dihedrals);
    dihedrals.erase(std::remove_if(dihedrals.begin(), dihedrals.end(),
                                   [&](const Interaction& it) {
                                       return (it.func == 1 || it.func == 9 || it.func == 2) && rm.removeDihedral(it.atoms);
                                   }),
                    dihedrals.end());

    for (const auto& it : out.list(InteractionKind::Constraints))
    {
        if (rm.touchesSite(it.atoms))
        {
            throw InputError(it.where, fmt::format("constraint {}-{} involves a virtual site; a site's position follows "
                                                   "from its atoms and cannot be constrained",
                                                   it.atoms[0] + 1, it.atoms[1] + 1));
        }
    }
    for (const auto& it : out.list(InteractionKind::Bonds))
    {
        if (it.func != 5 && becomesConstraint(it) && rm.touchesSite(it.atoms))
        {
            throw InputError(it.where, fmt::format("bond {}-{} involves a virtual site and would become a constraint "
                                                   "(constraints setting); a site cannot be constrained",
                                                   it.atoms[0] + 1, it.atoms[1] + 1));
        }
    }
    return out;
}

} // namespace putmd
