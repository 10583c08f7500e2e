#include "topology/build_topology.h"
#include "topology/virtual_site_parameters.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"

namespace putmd
{

namespace
{

/* Largest periodic-dihedral multiplicity accepted (force fields use 1-6). */
constexpr double kMaxMultiplicity = 1000;

constexpr double deg = units::deg2rad;

/* C6/C12 from a (V, W) pair given in the force field's combination-rule units. */
void toC6C12(int combRule, double v, double w, double* c6, double* c12)
{
    if (combRule == 1)
    {
        *c6  = v;
        *c12 = w;
    }
    else
    {
        const double s6 = std::pow(v, 6);
        *c6             = 4 * w * s6;
        *c12            = 4 * w * s6 * s6;
    }
}

/* Combination rule applied to two atom types' (V, W), giving C6/C12. */
void combine(int combRule, const AtomType& a, const AtomType& b, double scale, double* c6, double* c12)
{
    switch (combRule)
    {
        case 1:
            *c6  = scale * std::sqrt(a.v * b.v);
            *c12 = scale * std::sqrt(a.w * b.w);
            break;
        case 2: toC6C12(2, 0.5 * (a.v + b.v), scale * std::sqrt(a.w * b.w), c6, c12); break;
        default: toC6C12(3, std::sqrt(a.v * b.v), scale * std::sqrt(a.w * b.w), c6, c12); break;
    }
}

/* The nonbonded C6/C12 of a type pair: [ nonbond_params ] or the rule. */
void nonbondedC6C12(const ForceField& ff, const AtomType& a, const AtomType& b, double* c6, double* c12)
{
    if (const PairParams* p = ff.nonbondParams(a.name, b.name))
    {
        toC6C12(ff.defaults.combRule, p->v, p->w, c6, c12);
    }
    else
    {
        combine(ff.defaults.combRule, a, b, 1.0, c6, c12);
    }
}

bool isHydrogen(const MolAtom& a)
{
    return !a.name.empty() && std::toupper(static_cast<unsigned char>(a.name[0])) == 'H';
}

/* Listed interactions of one molecule type with local indices. */
struct ResolvedMolecule
{
    ListedInteractions                listed;
    std::vector<Constraint>           constraints;
    std::vector<Settle>               settles;
    std::vector<VirtualSite>          virtualSites;
    std::vector<std::vector<int>>     exclusions; // per local atom, sorted, without self
    double                            exclC6Sum = 0;
    double                            exclCount = 0;
};

class MoleculeResolver
{
public:
    MoleculeResolver(const ForceField& ff, const MoleculeType& mol, ConstraintsMode cm) :
        ff_(ff), mol_(mol), constraintsMode_(cm)
    {
    }

    ResolvedMolecule resolve();

    std::vector<double> lookupBonded(const char* table, InteractionKind k, const Interaction& it) const;
    /* constraints = h-bonds / all-bonds turns this [ bonds ] line into a constraint */
    bool bondBecomesConstraint(const Interaction& it) const
    {
        return constraintsMode_ == ConstraintsMode::AllBonds
               || (constraintsMode_ == ConstraintsMode::HBonds
                   && (isHydrogen(mol_.atoms[it.atoms[0]]) || isHydrogen(mol_.atoms[it.atoms[1]])));
    }

private:
    const AtomType& type(int local) const { return *ff_.atomType(mol_.atoms[local].type); }
    std::string     bondedTypes(const Interaction& it) const;
    void bonds(ResolvedMolecule& r) const;
    void angles(ResolvedMolecule& r) const;
    void dihedrals(ResolvedMolecule& r) const;
    void pairs(ResolvedMolecule& r) const;
    void constraints(ResolvedMolecule& r) const;
    void exclusions(ResolvedMolecule& r) const;
    void cmap(ResolvedMolecule& r) const;
    void virtualSites(ResolvedMolecule& r) const;

    const ForceField&   ff_;
    const MoleculeType& mol_;
    ConstraintsMode     constraintsMode_;
};

std::string MoleculeResolver::bondedTypes(const Interaction& it) const
{
    std::string s;
    for (int a : it.atoms)
    {
        s += (s.empty() ? "" : " ") + type(a).bondType;
    }
    return s;
}

std::vector<double> MoleculeResolver::lookupBonded(const char* table, InteractionKind k, const Interaction& it) const
{
    if (!it.params.empty())
    {
        return it.params;
    }
    std::vector<std::string> types;
    for (int a : it.atoms)
    {
        types.push_back(type(a).bondType);
    }
    if (const BondedType* t = ff_.bondedType(table, it.func, types))
    {
        return t->params;
    }
    throw InputError(it.where, std::string("no parameters for this [ ") + directiveName(k) + " ] entry: no [ " + table
                                       + " ] line for bonded atom types '" + bondedTypes(it) + "' with function "
                                       + std::to_string(it.func) + "; give the parameters on the line or add a type entry");
}

void MoleculeResolver::bonds(ResolvedMolecule& r) const
{
    for (const auto& it : mol_.list(InteractionKind::Bonds))
    {
        if (it.func == 5)
        {
            r.listed.connections = true;
            continue; // a connection: bonded graph only
        }
        const auto p = lookupBonded("bondtypes", InteractionKind::Bonds, it);
        const int  i = it.atoms[0], j = it.atoms[1];
        if (it.func == 6)
        {
            // a harmonic potential: never a constraint, no exclusions (as grompp)
            r.listed.harmonicPotentials.push_back({ i, j, p[0], p[1] });
            continue;
        }
        if (it.func == 10)
        {
            // a restraint potential: never a constraint, no exclusions
            if (!(p[0] <= p[1] && p[1] <= p[2]))
            {
                throw InputError(it.where, fmt::format("[ bonds ] function 10 needs low <= up1 <= up2 (nm), found {:g} "
                                                       "{:g} {:g}",
                                                       p[0], p[1], p[2]));
            }
            r.listed.restraintBonds.push_back({ i, j, p[0], p[1], p[2], p[3] });
            continue;
        }
        if (bondBecomesConstraint(it))
        {
            r.constraints.push_back({ i, j, p[0] }); // (a Morse bond too, at its b0, as grompp)
            continue;
        }
        if (it.func == 3)
        {
            r.listed.morseBonds.push_back({ i, j, p[0], p[1], p[2] });
            continue;
        }
        (it.func == 1 ? r.listed.bonds : r.listed.g96Bonds).push_back({ i, j, p[0], p[1] });
    }
}

void MoleculeResolver::angles(ResolvedMolecule& r) const
{
    for (const auto& it : mol_.list(InteractionKind::Angles))
    {
        const auto p = lookupBonded("angletypes", InteractionKind::Angles, it);
        const int  i = it.atoms[0], j = it.atoms[1], k = it.atoms[2];
        switch (it.func)
        {
            case 1: r.listed.angles.push_back({ i, j, k, p[0] * deg, p[1] }); break;
            case 2: r.listed.g96Angles.push_back({ i, j, k, p[0] * deg, p[1] }); break;
            case 10: r.listed.restrictedAngles.push_back({ i, j, k, p[0] * deg, p[1] }); break;
            default: r.listed.ureyBradley.push_back({ i, j, k, p[0] * deg, p[1], p[2], p[3] }); break;
        }
    }
}

void MoleculeResolver::dihedrals(ResolvedMolecule& r) const
{
    for (const auto& it : mol_.list(InteractionKind::Dihedrals))
    {
        std::vector<std::vector<double>> terms;
        if (!it.params.empty())
        {
            terms.push_back(it.params);
        }
        else
        {
            std::array<std::string, 4> types;
            for (int a = 0; a < 4; a++)
            {
                types[a] = type(it.atoms[a]).bondType;
            }
            const DihedralType* t = ff_.dihedralType(it.func, types);
            if (!t)
            {
                throw InputError(it.where, "no parameters for this [ dihedrals ] entry: no [ dihedraltypes ] line matches "
                                           "bonded atom types '" + bondedTypes(it) + "' with function "
                                           + std::to_string(it.func) + " (wildcard X included)");
            }
            terms = t->terms;
        }
        const int i = it.atoms[0], j = it.atoms[1], k = it.atoms[2], l = it.atoms[3];
        for (const auto& p : terms)
        {
            switch (it.func)
            {
                case 2: r.listed.impropers.push_back({ i, j, k, l, p[0] * deg, p[1] }); break;
                case 3:
                    r.listed.ryckaertBellemans.push_back({ i, j, k, l, { p[0], p[1], p[2], p[3], p[4], p[5] } });
                    break;
                case 5:
                {
                    // Fourier (C1-C4, kJ/mol) as the RB series it equals (GROMACS manual,
                    // "Fourier dihedrals"; grompp converts them the same way)
                    const double f1 = p[0], f2 = p[1], f3 = p[2], f4 = p[3];
                    r.listed.fourierDihedrals.push_back(
                            { i, j, k, l, { f2 + 0.5 * (f1 + f3), 0.5 * (-f1 + 3 * f3), -f2 + 4 * f4, -2 * f3, -4 * f4, 0 } });
                    break;
                }
                default:
                {
                    const double mult = p[2];
                    if (mult != std::round(mult) || mult < 0 || mult > kMaxMultiplicity)
                    {
                        // %g: 1e300 is not printed as 301 digits
                        throw InputError(it.where, fmt::format("dihedral multiplicity must be an integer from 0 to {}, "
                                                               "found {:g}",
                                                               kMaxMultiplicity, mult));
                    }
                    PeriodicDihedral d{ i, j, k, l, p[0] * deg, p[1], static_cast<int>(mult) };
                    (it.func == 4 ? r.listed.periodicImpropers : r.listed.properDihedrals).push_back(d);
                }
            }
        }
    }
}

void MoleculeResolver::pairs(ResolvedMolecule& r) const
{
    const Defaults& d = ff_.defaults;
    for (const auto& it : mol_.list(InteractionKind::Pairs))
    {
        const int       i = it.atoms[0], j = it.atoms[1];
        const AtomType& ti = type(i);
        const AtomType& tj = type(j);
        double          c6 = 0, c12 = 0;
        if (!it.params.empty())
        {
            toC6C12(d.combRule, it.params[0], it.params[1], &c6, &c12);
        }
        else if (const PairParams* p = ff_.pairType(ti.name, tj.name))
        {
            toC6C12(d.combRule, p->v, p->w, &c6, &c12);
        }
        else if (d.genPairs)
        {
            // from the final nonbonded matrix ([ nonbond_params ] included),
            // scaled by fudgeLJ (epsilon only for comb-rule 2 and 3: the same)
            nonbondedC6C12(ff_, ti, tj, &c6, &c12);
            c6 *= d.fudgeLJ;
            c12 *= d.fudgeLJ;
        }
        else
        {
            throw InputError(it.where, "no parameters for this [ pairs ] entry: no [ pairtypes ] line for atom types '"
                                               + ti.name + " " + tj.name + "' and gen-pairs is 'no' in [ defaults ]");
        }
        const double qq = d.fudgeQQ * mol_.atoms[i].charge * mol_.atoms[j].charge;
        r.listed.pairs.push_back({ i, j, c6, c12, qq });
    }
}

/* Virtual sites with their parameters on the line; the site must be
 * massless and constructed once. */
void MoleculeResolver::virtualSites(ResolvedMolecule& r) const
{
    std::vector<char> constructed(mol_.atoms.size(), 0);
    auto add = [&](const Interaction& it, VirtualSite v) {
        const int site = it.atoms[0];
        if (constructed[site])
        {
            throw InputError(it.where, "virtual site " + std::to_string(site + 1) + " is constructed twice");
        }
        constructed[site] = 1;
        if (mol_.atoms[site].mass != 0)
        {
            throw InputError(it.where, fmt::format("virtual site {} ({}) has mass {}; give it mass 0 (an atom type of "
                                                   "particle type V, or 0 in the [ atoms ] mass column)",
                                                   site + 1, mol_.atoms[site].name, mol_.atoms[site].mass));
        }
        v.site = site;
        v.from.assign(it.atoms.begin() + 1, it.atoms.end());
        r.virtualSites.push_back(std::move(v));
    };
    // parameters are on every line by now (prepareVirtualSites)
    for (const auto& it : mol_.list(InteractionKind::VirtualSites2))
    {
        VirtualSite v;
        if (it.func == 1)
        {
            v.weights = { 1 - it.params[0], it.params[0] };
        }
        else
        {
            v.kind = VirtualSite::Kind::Fd2;
            v.a    = it.params[0];
        }
        add(it, v);
    }
    for (const auto& it : mol_.list(InteractionKind::VirtualSites3))
    {
        VirtualSite v;
        const auto& p = it.params;
        switch (it.func)
        {
            case 1: v.weights = { 1 - p[0] - p[1], p[0], p[1] }; break;
            case 2: v.kind = VirtualSite::Kind::Fd3; v.a = p[0]; v.b = p[1]; break;
            case 3:
                v.kind = VirtualSite::Kind::Fad3;
                v.a    = p[1] * std::cos(deg * p[0]);
                v.b    = p[1] * std::sin(deg * p[0]);
                break;
            default: v.kind = VirtualSite::Kind::Out3; v.a = p[0]; v.b = p[1]; v.c = p[2]; break;
        }
        add(it, v);
    }
    for (const auto& it : mol_.list(InteractionKind::VirtualSites4))
    {
        VirtualSite v;
        v.kind = VirtualSite::Kind::Fdn4;
        v.a    = it.params[0];
        v.b    = it.params[1];
        v.c    = it.params[2];
        add(it, v);
    }
    for (const auto& it : mol_.list(InteractionKind::VirtualSitesN))
    {
        VirtualSite v;
        const size_t n = it.atoms.size() - 1;
        double       sum = 0;
        for (size_t k = 0; k < n; k++)
        {
            const double w = it.func == 1 ? 1.0 : it.func == 2 ? mol_.atoms[it.atoms[k + 1]].mass : it.params[k];
            v.weights.push_back(w);
            sum += w;
        }
        if (!(sum > 0))
        {
            throw InputError(it.where, "[ virtual_sitesn ] the weights (or masses) of the constructing atoms sum to "
                                       + std::to_string(sum) + "; they must sum to a positive number");
        }
        for (auto& w : v.weights)
        {
            w /= sum;
        }
        add(it, v);
    }
    for (size_t a = 0; a < mol_.atoms.size(); a++)
    {
        const AtomType* t = ff_.atomType(mol_.atoms[a].type);
        if (t->ptype == 'A' && !constructed[a] && !(mol_.atoms[a].mass > 0))
        {
            throw InputError(mol_.atoms[a].where, fmt::format("atom {} ({}) has mass {}; the mass of an atom must be "
                                                              "positive (mass 0 only for a virtual site, which a "
                                                              "[ virtual_sites* ] line must construct)",
                                                              a + 1, mol_.atoms[a].name, mol_.atoms[a].mass));
        }
        if ((t->ptype == 'V' || t->ptype == 'D') && !constructed[a])
        {
            throw InputError(mol_.atoms[a].where, "atom " + std::to_string(a + 1) + " (" + mol_.atoms[a].name
                                                          + ") is a virtual site (particle type V) that no [ virtual_sites* ] line constructs");
        }
    }
}

/* Each [ cmap ] entry takes the [ cmaptypes ] entry of its five bonded
 * types, in order (the index into ff.cmapTypes is the grid's). */
void MoleculeResolver::cmap(ResolvedMolecule& r) const
{
    for (const auto& it : mol_.list(InteractionKind::Cmap))
    {
        int found = -1;
        for (size_t t = 0; t < ff_.cmapTypes.size() && found < 0; t++)
        {
            bool match = true;
            for (int a = 0; a < 5 && match; a++)
            {
                match = ff_.cmapTypes[t].types[a] == type(it.atoms[a]).bondType;
            }
            if (match)
            {
                found = static_cast<int>(t);
            }
        }
        if (found < 0)
        {
            throw InputError(it.where, "no [ cmaptypes ] entry for bonded atom types '" + bondedTypes(it)
                                               + "' of this [ cmap ] entry; the force field's cmap.itp must define it");
        }
        const auto& a = it.atoms;
        r.listed.cmap.push_back({ a[0], a[1], a[2], a[3], a[4], found });
    }
}

void MoleculeResolver::constraints(ResolvedMolecule& r) const
{
    for (const auto& it : mol_.list(InteractionKind::Constraints))
    {
        const auto p = lookupBonded("constrainttypes", InteractionKind::Constraints, it);
        r.constraints.push_back({ it.atoms[0], it.atoms[1], p[0] });
    }
    for (const auto& it : mol_.list(InteractionKind::Settles))
    {
        r.settles.push_back({ it.atoms[0], it.atoms[1], it.atoms[2], it.params[0], it.params[1] });
    }
}

void MoleculeResolver::exclusions(ResolvedMolecule& r) const
{
    const int                     n = static_cast<int>(mol_.atoms.size());
    std::vector<std::vector<int>> graph(n);
    auto link = [&](int a, int b) {
        graph[a].push_back(b);
        graph[b].push_back(a);
    };
    for (const auto& it : mol_.list(InteractionKind::Bonds))
    {
        if (it.func != 6 && it.func != 10) // harmonic and restraint potentials are no chemical bonds
        {
            link(it.atoms[0], it.atoms[1]);
        }
    }
    for (const auto& it : mol_.list(InteractionKind::Constraints))
    {
        if (it.func == 1)
        {
            link(it.atoms[0], it.atoms[1]);
        }
    }
    // settles are not chemical bonds for grompp: water topologies list
    // their exclusions explicitly
    std::vector<std::set<int>> excl(n);
    std::vector<int>           dist(n, -1);
    for (int a = 0; a < n && mol_.nrexcl > 0; a++)
    {
        // breadth-first search up to nrexcl bonds
        std::vector<int> frontier{ a }, touched{ a };
        dist[a] = 0;
        for (int depth = 1; depth <= mol_.nrexcl && !frontier.empty(); depth++)
        {
            std::vector<int> next;
            for (int u : frontier)
            {
                for (int v : graph[u])
                {
                    if (dist[v] < 0)
                    {
                        dist[v] = depth;
                        next.push_back(v);
                        touched.push_back(v);
                        excl[a].insert(v);
                    }
                }
            }
            frontier.swap(next);
        }
        for (int t : touched)
        {
            dist[t] = -1;
        }
    }
    for (const auto& [a, b] : mol_.explicitExclusions)
    {
        excl[a].insert(b);
        excl[b].insert(a);
    }
    r.exclusions.resize(n);
    for (int a = 0; a < n; a++)
    {
        r.exclusions[a].assign(excl[a].begin(), excl[a].end());
    }
}

ResolvedMolecule MoleculeResolver::resolve()
{
    for (const auto& a : mol_.atoms)
    {
        const AtomType* t = ff_.atomType(a.type);
        if (t->ptype != 'A' && t->ptype != 'V' && t->ptype != 'D')
        {
            throw InputError(a.where, std::string("atom type '") + a.type + "' has particle type '" + t->ptype
                                              + "'; putmd supports atoms (A) and virtual sites (V), not shells");
        }
    }
    ResolvedMolecule r;
    bonds(r);
    angles(r);
    dihedrals(r);
    cmap(r);
    virtualSites(r);
    pairs(r);
    constraints(r);
    exclusions(r);
    return r;
}

template<typename T>
void appendShifted(std::vector<T>& dst, const std::vector<T>& src, int offset)
{
    for (T t : src)
    {
        t.i += offset;
        t.j += offset;
        if constexpr (requires { t.k; })
        {
            t.k += offset;
        }
        if constexpr (requires { t.l; })
        {
            t.l += offset;
        }
        dst.push_back(t);
    }
}

/* The [ position_restraints ] of one molecule, at global atom numbers;
 * references are set later, from the restraint coordinates. */
void positionRestraints(const MoleculeType& mol, int offset, bool firstOfBlock, std::vector<char>& hadHarmonic, Topology& top)
{
    const auto& list = mol.list(InteractionKind::PositionRestraints);
    if (hadHarmonic.size() < mol.atoms.size())
    {
        hadHarmonic.resize(mol.atoms.size(), 0);
    }
    for (int pass = 1; pass <= 2; pass++) // harmonic first: the COM rule depends on it
    {
        for (const auto& it : list)
        {
            if (it.func != pass)
            {
                continue;
            }
            PositionRestraint p;
            p.i    = it.atoms[0] + offset;
            p.func = it.func;
            if (it.func == 1)
            {
                std::copy(it.params.begin(), it.params.begin() + 3, p.k);
                p.inCom = firstOfBlock;
                if (firstOfBlock)
                {
                    hadHarmonic[it.atoms[0]] = 1;
                }
                top.positionRestraintSettings.any = true;
            }
            else
            {
                p.geometry = static_cast<int>(it.params[0]);
                p.r        = it.params[1];
                p.kFlat    = it.params[2];
                p.inCom    = firstOfBlock && !hadHarmonic[it.atoms[0]];
                top.positionRestraintSettings.anyFlat = true;
            }
            top.positionRestraints.push_back(p);
        }
    }
}

/* Natural cubic spline through y (n points, spacing dx): second
 * derivatives y2, and the value and slope at x (grid from xmin). */
void splineSecondDerivatives(double dx, const double* y, int n, double* y2)
{
    std::vector<double> u(n, 0.0);
    y2[0] = 0;
    for (int i = 1; i < n - 1; i++)
    {
        const double p = 0.5 * y2[i - 1] + 2.0;
        y2[i]          = -0.5 / p;
        const double q = (y[i + 1] - 2.0 * y[i] + y[i - 1]) / dx;
        u[i]           = (3.0 * q / dx - 0.5 * u[i - 1]) / p;
    }
    y2[n - 1] = 0;
    for (int i = n - 2; i >= 0; i--)
    {
        y2[i] = y2[i] * y2[i + 1] + u[i];
    }
}

void splineAt(double xmin, double dx, const double* y, const double* y2, double x, double* value, double* slope)
{
    const int    i = static_cast<int>((x - xmin) / dx);
    const double a = (xmin + (i + 1) * dx - x) / dx;
    const double b = (x - xmin - i * dx) / dx;
    *value = a * y[i] + b * y[i + 1] + ((a * a * a - a) * y2[i] + (b * b * b - b) * y2[i + 1]) * (dx * dx) / 6.0;
    *slope = (y[i + 1] - y[i]) / dx - (3.0 * a * a - 1.0) / 6.0 * dx * y2[i] + (3.0 * b * b - 1.0) / 6.0 * dx * y2[i + 1];
}

} // namespace

/* The grid's derivatives as grompp computes them: the n x n grid repeated
 * to 2n x 2n (from -360 degrees), splines along psi for every phi row,
 * then along phi through the values and through the psi-slopes. */
CmapGrid makeCmapGrid(int n, const std::vector<double>& grid)
{
    CmapGrid g;
    g.n = n;
    g.data.assign(4 * n * n, 0.0);
    const int    m    = 2 * n;
    const double dx   = 360.0 / n;
    const double xmin = -180.0 - dx * (n / 2);
    std::vector<double> ext(m * m), ext2(m * m), rowV(m), rowS(m), y2(m);
    for (int i = 0; i < m; i++)
    {
        const int ii = (i + n - n / 2) % n;
        for (int j = 0; j < m; j++)
        {
            const int jj   = (j + n - n / 2) % n;
            ext[i * m + j] = grid[ii * n + jj];
        }
    }
    for (int i = 0; i < m; i++)
    {
        splineSecondDerivatives(dx, &ext[i * m], m, &ext2[i * m]);
    }
    for (int i = n / 2; i < n + n / 2; i++)
    {
        const int    ii  = i - n / 2;
        const double phi = ii * dx - 180.0;
        for (int j = n / 2; j < n + n / 2; j++)
        {
            const int    jj  = j - n / 2;
            const double psi = jj * dx - 180.0;
            for (int k = 0; k < m; k++)
            {
                splineAt(xmin, dx, &ext[k * m], &ext2[k * m], psi, &rowV[k], &rowS[k]);
            }
            double v, v1, v2, v12;
            splineSecondDerivatives(dx, rowV.data(), m, y2.data());
            splineAt(xmin, dx, rowV.data(), y2.data(), phi, &v, &v1);
            splineSecondDerivatives(dx, rowS.data(), m, y2.data());
            splineAt(xmin, dx, rowS.data(), y2.data(), phi, &v2, &v12);
            const int idx       = ii * n + jj;
            g.data[4 * idx]     = grid[idx];
            g.data[4 * idx + 1] = v1;
            g.data[4 * idx + 2] = v2;
            g.data[4 * idx + 3] = v12;
        }
    }
    return g;
}

namespace
{

void appendListed(ListedInteractions& dst, const ListedInteractions& src, int offset)
{
    dst.connections = dst.connections || src.connections;
    appendShifted(dst.bonds, src.bonds, offset);
    appendShifted(dst.g96Bonds, src.g96Bonds, offset);
    appendShifted(dst.morseBonds, src.morseBonds, offset);
    appendShifted(dst.harmonicPotentials, src.harmonicPotentials, offset);
    appendShifted(dst.restraintBonds, src.restraintBonds, offset);
    appendShifted(dst.angles, src.angles, offset);
    appendShifted(dst.g96Angles, src.g96Angles, offset);
    appendShifted(dst.restrictedAngles, src.restrictedAngles, offset);
    appendShifted(dst.ureyBradley, src.ureyBradley, offset);
    appendShifted(dst.properDihedrals, src.properDihedrals, offset);
    appendShifted(dst.periodicImpropers, src.periodicImpropers, offset);
    appendShifted(dst.impropers, src.impropers, offset);
    appendShifted(dst.ryckaertBellemans, src.ryckaertBellemans, offset);
    appendShifted(dst.fourierDihedrals, src.fourierDihedrals, offset);
    appendShifted(dst.pairs, src.pairs, offset);
    for (auto c : src.cmap)
    {
        c.i += offset;
        c.j += offset;
        c.k += offset;
        c.l += offset;
        c.m += offset;
        dst.cmap.push_back(c);
    }
}

/* C6/C12 matrix over the types that occur, in order of first use. */
void buildLjMatrix(const ForceField& ff, const std::vector<std::string>& typeNames, Topology& top)
{
    const int n    = static_cast<int>(typeNames.size());
    top.numLjTypes = n;
    top.c6.assign(n * n, 0);
    top.c12.assign(n * n, 0);
    for (int a = 0; a < n; a++)
    {
        for (int b = 0; b < n; b++)
        {
            double c6, c12;
            nonbondedC6C12(ff, *ff.atomType(typeNames[a]), *ff.atomType(typeNames[b]), &c6, &c12);
            top.c6[a * n + b]  = c6;
            top.c12[a * n + b] = c12;
        }
    }
}

} // namespace

double Topology::totalCharge() const
{
    double q = 0;
    for (double c : charge)
    {
        q += c;
    }
    return q;
}

std::string Topology::describeAtom(int i) const
{
    // residue numbers restart in every molecule (as in [ atoms ]), so the
    // molecule number is what finds the atom in a box of water
    const std::string molecule = static_cast<size_t>(i) < moleculeIndex.size()
                                         ? ", molecule " + std::to_string(moleculeIndex[i] + 1)
                                         : std::string();
    const int number = globalIndex.empty() ? i : globalIndex[i];
    return "atom " + std::to_string(number + 1) + " (" + residueName[i] + std::to_string(residueNumber[i]) + " "
           + atomName[i] + molecule + ")";
}

Topology buildTopology(const TopologyFile& file, ConstraintsMode constraintsMode)
{
    Topology top;
    top.systemName = file.systemName;
    top.fudgeQQ    = file.ff.defaults.fudgeQQ;
    top.combRule   = file.ff.defaults.combRule;

    std::map<std::string, ResolvedMolecule> resolved;
    std::map<std::string, int>              typeIndex;
    std::vector<std::string>                typeNames;
    long                                    total = 0;
    for (const auto& block : file.molecules)
    {
        const MoleculeType* mol = file.moleculeType(block.name);
        total += block.count * static_cast<long>(mol->atoms.size()); // both below 5e8: no overflow
        if (total > 500'000'000)
        {
            throw InputError(block.where, "the system has more than 5e8 atoms, more than putmd supports");
        }
        if (!resolved.count(block.name))
        {
            // grompp's virtual-site step first: parameters for the sites
            // without them, constant bonded terms removed
            const MoleculeResolver raw(file.ff, *mol, constraintsMode);
            const MoleculeType     prepared = prepareVirtualSites(
                    *mol, [&](const char* table, InteractionKind k, const Interaction& it) { return raw.lookupBonded(table, k, it); },
                    [&](const Interaction& it) { return raw.bondBecomesConstraint(it); });
            resolved.emplace(block.name, MoleculeResolver(file.ff, prepared, constraintsMode).resolve());
        }
        for (const auto& a : mol->atoms)
        {
            if (typeIndex.emplace(a.type, static_cast<int>(typeNames.size())).second)
            {
                typeNames.push_back(a.type);
            }
        }
    }
    if (total > 500'000'000)
    {
        throw InputError(file.molecules.back().where, "the system has " + std::to_string(total) + " atoms, more than putmd supports (5e8)");
    }
    buildLjMatrix(file.ff, typeNames, top);
    if (!file.ff.cmapTypes.empty())
    {
        auto grids = std::make_shared<std::vector<CmapGrid>>();
        for (const auto& t : file.ff.cmapTypes)
        {
            grids->push_back(makeCmapGrid(t.n, t.grid));
        }
        top.listed.cmapGrids = grids;
    }

    top.numAtoms = static_cast<int>(total);
    top.exclusionStart.reserve(total + 1);
    top.exclusionStart.push_back(0);
    int offset   = 0;
    int molecule = 0;
    std::vector<char> hadHarmonic; // molecule-local atom numbers with a harmonic restraint (grompp's COM rule)
    for (const auto& block : file.molecules)
    {
        const MoleculeType&     mol = *file.moleculeType(block.name);
        auto nameIt = std::find(top.moleculeTypeNames.begin(), top.moleculeTypeNames.end(), block.name);
        if (nameIt == top.moleculeTypeNames.end())
        {
            top.moleculeTypeNames.push_back(block.name);
            nameIt = top.moleculeTypeNames.end() - 1;
        }
        const int molTypeIndex = static_cast<int>(nameIt - top.moleculeTypeNames.begin());
        const ResolvedMolecule& r   = resolved.at(block.name);
        // excluded pairs' C6 for the dispersion correction, once per type
        double c6Sum = 0, count = 0;
        for (size_t a = 0; a < mol.atoms.size(); a++)
        {
            for (int b : r.exclusions[a])
            {
                if (b > static_cast<int>(a))
                {
                    c6Sum += top.c6Of(typeIndex[mol.atoms[a].type], typeIndex[mol.atoms[b].type]);
                    count += 1;
                }
            }
        }
        top.excludedPairC6Sum += c6Sum * block.count;
        top.excludedPairCount += count * block.count;
        for (long m = 0; m < block.count; m++)
        {
            for (size_t a = 0; a < mol.atoms.size(); a++)
            {
                const MolAtom& at = mol.atoms[a];
                top.charge.push_back(at.charge);
                top.mass.push_back(at.mass);
                top.ljType.push_back(typeIndex[at.type]);
                top.atomName.push_back(at.name);
                top.residueName.push_back(at.residueName);
                top.residueNumber.push_back(at.residueNumber);
                top.typeName.push_back(at.type);
                top.moleculeType.push_back(molTypeIndex);
                top.moleculeIndex.push_back(molecule);
                for (int b : r.exclusions[a])
                {
                    top.exclusions.push_back(b + offset);
                }
                top.exclusionStart.push_back(static_cast<int>(top.exclusions.size()));
            }
            appendListed(top.listed, r.listed, offset);
            for (auto c : r.constraints)
            {
                c.i += offset;
                c.j += offset;
                top.constraints.push_back(c);
            }
            for (auto s : r.settles)
            {
                s.o += offset;
                s.h1 += offset;
                s.h2 += offset;
                top.settles.push_back(s);
            }
            positionRestraints(mol, offset, m == 0, hadHarmonic, top);
            for (auto v : r.virtualSites)
            {
                v.site += offset;
                for (auto& a : v.from)
                {
                    a += offset;
                }
                top.virtualSites.push_back(std::move(v));
            }
            offset += static_cast<int>(mol.atoms.size());
            molecule++;
        }
    }
    return top;
}

} // namespace putmd
