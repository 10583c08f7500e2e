#include "run/groups.h"

#include <algorithm>
#include <set>

#include "io/text.h"

namespace putmd
{

namespace
{

const std::set<std::string>& aminoAcids()
{
    static const std::set<std::string> names = {
        "ABU", "ACE", "AIB", "ALA", "ARG", "ARGN", "ASN", "ASN1", "ASP", "ASP1", "ASPH", "ASPP", "ASH", "CT3", "CYS",
        "CYS1", "CYS2", "CYSH", "CYX", "CYM", "DALA", "GLN", "GLU", "GLUH", "GLUP", "GLH", "GLY", "HIS", "HIS1", "HISA",
        "HISB", "HISH", "HISD", "HISE", "HISP", "HSD", "HSE", "HSP", "HYP", "ILE", "LEU", "LSN", "LYS", "LYSH", "LYN",
        "LYP", "MET", "MEU", "NAC", "NH2", "NHE", "NME", "PHE", "PHEH", "PHEU", "PHL", "PRO", "SER", "THR", "TRP",
        "TRPH", "TRPU", "TYR", "TYRH", "TYRU", "VAL", "PGLU", "HID", "HIE", "HIP", "LYSN", "ASPN", "GLUN", "CALA",
        "CARG", "CASN", "CASP", "CCYS", "CGLN", "CGLU", "CGLY", "CHIS", "CILE", "CLEU", "CLYS", "CMET", "CPHE", "CPRO",
        "CSER", "CTHR", "CTRP", "CTYR", "CVAL", "NALA", "NARG", "NASN", "NASP", "NCYS", "NGLN", "NGLU", "NGLY", "NHIS",
        "NILE", "NLEU", "NLYS", "NMET", "NPHE", "NPRO", "NSER", "NTHR", "NTRP", "NTYR", "NVAL"
    };
    return names;
}

const std::set<std::string>& waterResidues()
{
    static const std::set<std::string> names = { "SOL", "WAT", "HOH", "H2O", "TIP3", "TIP4", "TIP5", "SPC", "T3P", "T4P", "T5P" };
    return names;
}

const std::set<std::string>& ionResidues()
{
    static const std::set<std::string> names = { "NA", "CL", "K", "MG", "CA", "ZN", "LI", "RB", "CS", "F", "BR", "I",
                                                   "NA+", "CL-", "K+", "SOD", "CLA", "POT", "CAL", "MG2", "CU", "CU1", "NI" };
    return names;
}

} // namespace

std::vector<bool> atomsOfGroup(const Topology& top, const std::string& name, const SourceLocation& where)
{
    const int         n = top.numAtoms;
    std::vector<bool> in(n, false);
    const std::string lower = toLower(name);
    if (!top.indexFile.empty())
    {
        // with -n the index file's groups only, as grompp
        for (const auto& g : top.indexGroups)
        {
            if (toLower(g.name) != lower)
            {
                continue;
            }
            for (size_t k = 0; k < g.atoms.size(); k++)
            {
                if (g.atoms[k] >= n)
                {
                    throw InputError(SourceLocation{ top.indexFile, g.lines[k] },
                                     "group '" + g.name + "' has atom " + std::to_string(g.atoms[k] + 1)
                                             + ", but the system has " + std::to_string(n)
                                             + " atoms: the index file belongs to another system");
                }
                in[g.atoms[k]] = true;
            }
            return in;
        }
        std::string names;
        for (const auto& g : top.indexGroups)
        {
            names += (names.empty() ? "" : ", ") + g.name;
        }
        throw InputError(where, "group '" + name + "' is not in the index file " + top.indexFile + "; its groups: "
                                        + (names.empty() ? "(none)" : names));
    }
    auto byResidue = [&](const std::set<std::string>& set, bool member) {
        for (int i = 0; i < n; i++)
        {
            std::string r = top.residueName[i];
            std::transform(r.begin(), r.end(), r.begin(), ::toupper);
            in[i] = (set.count(r) > 0) == member;
        }
    };
    if (lower == "system")
    {
        in.assign(n, true);
    }
    else if (lower == "protein" || lower == "non-protein")
    {
        byResidue(aminoAcids(), lower == "protein");
    }
    else if (lower == "water" || lower == "non-water")
    {
        byResidue(waterResidues(), lower == "water");
    }
    else if (lower == "ion")
    {
        byResidue(ionResidues(), true);
    }
    else if (lower == "water_and_ions")
    {
        std::set<std::string> both = waterResidues();
        both.insert(ionResidues().begin(), ionResidues().end());
        byResidue(both, true);
    }
    else
    {
        bool found = false;
        for (int i = 0; i < n; i++)
        {
            in[i] = toLower(top.moleculeTypeNames[top.moleculeType[i]]) == lower || toLower(top.residueName[i]) == lower;
            found = found || in[i];
        }
        if (!found)
        {
            std::string names;
            for (const auto& m : top.moleculeTypeNames)
            {
                names += ", " + m;
            }
            throw InputError(where, "group '" + name + "' matches no atom; valid: System, Protein, non-Protein, Water, "
                                    "non-Water, Ion, Water_and_ions, a residue name, or a molecule type" + names);
        }
    }
    if (std::find(in.begin(), in.end(), true) == in.end())
    {
        throw InputError(where, "group '" + name + "' is empty in this system");
    }
    return in;
}

std::vector<int> partitionIntoGroups(const Topology& top, const std::vector<std::string>& names, const SourceLocation& where)
{
    std::vector<int> group(top.numAtoms, -1);
    for (size_t g = 0; g < names.size(); g++)
    {
        const auto in = atomsOfGroup(top, names[g], where);
        for (int i = 0; i < top.numAtoms; i++)
        {
            if (!in[i])
            {
                continue;
            }
            if (group[i] >= 0)
            {
                throw InputError(where, top.describeAtom(i) + " is in both '" + names[group[i]] + "' and '" + names[g]
                                                + "'; every atom must be in exactly one group");
            }
            group[i] = static_cast<int>(g);
        }
    }
    for (int i = 0; i < top.numAtoms; i++)
    {
        if (group[i] < 0)
        {
            throw InputError(where, top.describeAtom(i) + " is in none of the groups; every atom must be in exactly one group");
        }
    }
    return group;
}

} // namespace putmd
