#include "topology/forcefield.h"

#include <algorithm>

namespace putmd
{

namespace
{
std::string joinTypes(const std::vector<std::string>& t)
{
    std::string s;
    for (const auto& x : t)
    {
        s += (s.empty() ? "" : " ") + x;
    }
    return s;
}
} // namespace

std::string ForceField::pairKey(const std::string& a, const std::string& b)
{
    return a < b ? a + '\x1f' + b : b + '\x1f' + a;
}

std::string ForceField::bondedKey(int func, const std::vector<std::string>& types)
{
    // canonical orientation: the lexicographically smaller of forward/backward
    std::vector<std::string> rev(types.rbegin(), types.rend());
    const auto&              t = std::lexicographical_compare(rev.begin(), rev.end(), types.begin(), types.end()) ? rev : types;
    std::string              key = std::to_string(func);
    for (const auto& x : t)
    {
        key += '\x1f' + x;
    }
    return key;
}

void ForceField::addAtomType(AtomType t, std::vector<std::string>& warnings)
{
    auto it = atomTypes_.find(t.name);
    if (it != atomTypes_.end())
    {
        warnings.push_back(t.where.str() + ": atom type '" + t.name + "' redefined (first at "
                           + it->second.where.str() + "); the new parameters are used");
    }
    atomTypes_[t.name] = std::move(t);
}

void ForceField::addNonbondParams(const std::string& a, const std::string& b, PairParams p)
{
    nonbond_[pairKey(a, b)] = std::move(p);
}

void ForceField::addPairType(const std::string& a, const std::string& b, PairParams p)
{
    pairTypes_[pairKey(a, b)] = std::move(p);
}

void ForceField::addBondedType(const std::string& table, BondedType t, std::vector<std::string>& warnings)
{
    const std::string key   = bondedKey(t.func, t.types);
    auto&             tab   = bonded_[table];
    auto              it    = tab.find(key);
    if (it != tab.end() && it->second.params != t.params)
    {
        warnings.push_back(t.where.str() + ": " + table + " entry for '" + joinTypes(t.types)
                           + "' redefined with other parameters (first at " + it->second.where.str()
                           + "); the new parameters are used");
    }
    tab[key] = std::move(t);
}

void ForceField::addDihedralType(DihedralType t, std::vector<std::string>& warnings)
{
    // Functions 1 and 9 share one table (as in grompp); 9 allows several terms.
    const int tableFunc = t.func == 9 ? 1 : t.func;
    auto&     list      = dihedrals_[tableFunc];
    const bool adjacent = lastDihedralFunc_ == tableFunc && lastDihedralIndex_ + 1 == list.size()
                          && list.back().types == t.types;
    if (t.func == 9 && adjacent)
    {
        auto& terms = list.back().terms;
        if (std::find(terms.begin(), terms.end(), t.terms.front()) == terms.end())
        {
            terms.push_back(t.terms.front());
        }
        return;
    }
    const std::array<std::string, 4> rev = { t.types[3], t.types[2], t.types[1], t.types[0] };
    for (auto& existing : list)
    {
        if (existing.types != t.types && existing.types != rev)
        {
            continue;
        }
        const bool same = existing.terms.size() == 1 && existing.terms.front() == t.terms.front();
        if (t.func == 9)
        {
            const bool known = std::find(existing.terms.begin(), existing.terms.end(), t.terms.front()) != existing.terms.end();
            if (known)
            {
                return; // an identical repeat is dropped, as grompp does
            }
            throw InputError(t.where, "a second block of [ dihedraltypes ] parameters for types '" + t.types[0] + " "
                                              + t.types[1] + " " + t.types[2] + " " + t.types[3]
                                              + "' with function 9 (the first is at " + existing.where.str()
                                              + "); several terms must be on adjacent lines");
        }
        if (!same)
        {
            warnings.push_back(t.where.str() + ": dihedraltypes entry for '" + t.types[0] + " " + t.types[1] + " "
                               + t.types[2] + " " + t.types[3] + "' redefined (first at " + existing.where.str()
                               + "); the new parameters are used");
        }
        existing          = std::move(t);
        lastDihedralFunc_ = -1;
        return;
    }
    lastDihedralFunc_  = tableFunc;
    lastDihedralIndex_ = list.size();
    list.push_back(std::move(t));
}

const AtomType* ForceField::atomType(const std::string& name) const
{
    auto it = atomTypes_.find(name);
    return it == atomTypes_.end() ? nullptr : &it->second;
}

const PairParams* ForceField::nonbondParams(const std::string& a, const std::string& b) const
{
    auto it = nonbond_.find(pairKey(a, b));
    return it == nonbond_.end() ? nullptr : &it->second;
}

const PairParams* ForceField::pairType(const std::string& a, const std::string& b) const
{
    auto it = pairTypes_.find(pairKey(a, b));
    return it == pairTypes_.end() ? nullptr : &it->second;
}

const BondedType* ForceField::bondedType(const std::string& table, int func, const std::vector<std::string>& types) const
{
    auto t = bonded_.find(table);
    if (t == bonded_.end())
    {
        return nullptr;
    }
    auto it = t->second.find(bondedKey(func, types));
    return it == t->second.end() ? nullptr : &it->second;
}

const DihedralType* ForceField::dihedralType(int func, const std::array<std::string, 4>& types) const
{
    auto list = dihedrals_.find(func == 9 ? 1 : func);
    if (list == dihedrals_.end())
    {
        return nullptr;
    }
    // Number of non-wildcard matches, forwards or backwards; -1 if no match.
    auto matches = [&](const DihedralType& d) {
        auto count = [&](bool reverse) {
            int n = 0;
            for (int a = 0; a < 4; a++)
            {
                const std::string& want = d.types[a];
                const std::string& have = types[reverse ? 3 - a : a];
                if (want == "X")
                {
                    continue;
                }
                if (want != have)
                {
                    return -1;
                }
                n++;
            }
            return n;
        };
        return std::max(count(false), count(true));
    };
    const DihedralType* best     = nullptr;
    int                 bestMatch = -1;
    for (const auto& d : list->second)
    {
        const int m = matches(d);
        if (m > bestMatch)
        {
            best      = &d;
            bestMatch = m;
            if (m == 4)
            {
                break;
            }
        }
    }
    return best;
}

} // namespace putmd
