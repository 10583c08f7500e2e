#include "domdec/update_groups.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

namespace
{

int findRoot(std::vector<int>& parent, int a)
{
    while (parent[a] != a)
    {
        parent[a] = parent[parent[a]];
        a         = parent[a];
    }
    return a;
}

void unite(std::vector<int>& parent, int a, int b)
{
    a = findRoot(parent, a);
    b = findRoot(parent, b);
    if (a != b)
    {
        parent[std::max(a, b)] = std::min(a, b);
    }
}

/* CSR of item indices per group. */
void index(int numGroups, const std::vector<int>& groupOfItem, std::vector<int>& start, std::vector<int>& items)
{
    start.assign(numGroups + 1, 0);
    for (int g : groupOfItem)
    {
        start[g + 1]++;
    }
    std::partial_sum(start.begin(), start.end(), start.begin());
    items.resize(groupOfItem.size());
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (size_t k = 0; k < groupOfItem.size(); k++)
    {
        items[fill[groupOfItem[k]]++] = static_cast<int>(k);
    }
}

} // namespace

UpdateGroups makeUpdateGroups(const Topology& top, const std::vector<Vec3<real>>& x, const Box& box)
{
    const int        n = top.numAtoms;
    std::vector<int> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    for (const auto& c : top.constraints)
    {
        unite(parent, c.i, c.j);
    }
    for (const auto& s : top.settles)
    {
        unite(parent, s.o, s.h1);
        unite(parent, s.o, s.h2);
    }
    // a virtual site lives with the atoms that place it when they are one
    // group (TIP4P's M); a site built across groups (pdb2gmx -vsite
    // hydrogens: a backbone H from N, C and CA of two residues) is a group
    // of its own, constructed after a halo exchange (DomainDecomposition::
    // constructSplitSites)
    UpdateGroups u;
    u.splitSite.assign(top.virtualSites.size(), 0);
    std::vector<char> isSplit(n, 0);
    for (size_t k = 0; k < top.virtualSites.size(); k++)
    {
        const auto& v    = top.virtualSites[k];
        bool        same = true;
        for (int a : v.from)
        {
            if (isSplit[a])
            {
                throw InputError(fmt::format("domain decomposition: virtual site {} is built from virtual site {}, "
                                             "which is built from atoms of several update groups; such chains are "
                                             "not decomposed: run on one rank with threads (-nt)",
                                             top.describeAtom(v.site), top.describeAtom(a)));
            }
            same = same && findRoot(parent, a) == findRoot(parent, v.from[0]);
        }
        if (same)
        {
            unite(parent, v.site, v.from[0]);
        }
        else
        {
            u.splitSite[k]    = 1;
            isSplit[v.site] = 1;
        }
    }
    u.groupOf.assign(n, -1);
    int numGroups = 0;
    for (int a = 0; a < n; a++)
    {
        const int r = findRoot(parent, a); // r <= a: roots are the first atoms
        u.groupOf[a] = r == a ? numGroups++ : u.groupOf[r];
    }
    index(numGroups, u.groupOf, u.start, u.atoms);
    std::vector<int> ofConstraint, ofSettle;
    for (const auto& c : top.constraints)
    {
        ofConstraint.push_back(u.groupOf[c.i]);
    }
    for (const auto& s : top.settles)
    {
        ofSettle.push_back(u.groupOf[s.o]);
    }
    index(numGroups, ofConstraint, u.constraintStart, u.constraints);
    index(numGroups, ofSettle, u.settleStart, u.settles);

    // radius bound: an atom is within (size - 1) constraint lengths of the
    // first atom, so within that of the centre; use the coordinates too
    const Pbc pbc(box);
    int       largest = 1, largestGroup = 0;
    for (int g = 0; g < numGroups; g++)
    {
        const int size = u.size(g);
        if (size > largest)
        {
            largest      = size;
            largestGroup = g;
        }
        if (size == 1)
        {
            continue;
        }
        const int  first = u.atoms[u.start[g]];
        DVec       centre;
        std::vector<DVec> rel;
        for (int k = u.start[g]; k < u.start[g + 1]; k++)
        {
            rel.push_back(DVec(pbc.dx(x[u.atoms[k]], x[first])));
            centre += rel.back();
        }
        centre *= 1.0 / size;
        for (const auto& r : rel)
        {
            u.maxRadius = std::max(u.maxRadius, std::sqrt(norm2(r - centre)));
        }
    }
    if (largest > 1)
    {
        // room for the vibrations of the angles that are not constrained;
        // every search step checks that no atom goes beyond it
        u.maxRadius += kUpdateGroupRadiusMargin;
    }
    if (largest > 64 || u.maxRadius > 0.5)
    {
        throw InputError(fmt::format(
                "domain decomposition: {} atoms starting at {} are linked by constraints into one group of radius "
                "{:.2f} nm, too large to move between domains as a unit; use constraints = h-bonds (or none), or "
                "run on one rank",
                largest, top.describeAtom(u.atoms[u.start[largestGroup]]), u.maxRadius));
    }
    return u;
}

} // namespace putmd
