/* topology/forcefield.h — force-field parameter tables as read from a topology.
 *
 * These are the type tables of a GROMACS topology ([ defaults ], [ atomtypes ],
 * [ nonbond_params ], [ pairtypes ], [ bondtypes ], [ constrainttypes ],
 * [ angletypes ], [ dihedraltypes ]) kept as read, with the location of every
 * entry. Lookups follow grompp's rules: bonds and angles match their bonded
 * atom types exactly, forwards or backwards; dihedrals allow the wildcard X
 * and take the first entry with the most non-wildcard matches, and for
 * function 9 every adjacent line with the same types adds a term.
 */
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace putmd
{

struct Defaults
{
    int            nbfunc   = 1;
    int            combRule = 1;
    bool           genPairs = false;
    double         fudgeLJ  = 1.0;
    double         fudgeQQ  = 1.0;
    bool           set      = false;
    SourceLocation where;
};

struct AtomType
{
    std::string    name;
    std::string    bondType; // equals name when the column is absent
    int            atomicNumber = -1;
    double         mass         = 0;
    double         charge       = 0;
    char           ptype        = 'A';
    double         v = 0, w = 0; // c6/c12 (comb-rule 1) or sigma/epsilon (2, 3)
    SourceLocation where;
};

/* A parameter line for bonded types: atom types, function, parameters. */
struct BondedType
{
    std::vector<std::string> types;
    int                      func = 0;
    std::vector<double>      params;
    SourceLocation           where;
};

/* One dihedral type: for function 9 several parameter sets (adjacent lines). */
struct DihedralType
{
    std::array<std::string, 4>       types; // "X" is a wildcard
    int                              func = 0;
    std::vector<std::vector<double>> terms;
    SourceLocation                   where;
};

/* [ cmaptypes ]: a correction map over the (phi, psi) dihedral pair of
 * five bonded types; grid[i * n + j] is the energy (kJ/mol) at phi =
 * -180 + i * 360/n, psi = -180 + j * 360/n degrees. */
struct CmapType
{
    std::array<std::string, 5> types;
    int                        n = 0;
    std::vector<double>        grid;
    SourceLocation             where;
};

struct PairParams
{
    double         v = 0, w = 0;
    SourceLocation where;
};

class ForceField
{
public:
    Defaults              defaults;
    std::vector<CmapType> cmapTypes;

    void addAtomType(AtomType t, std::vector<std::string>& warnings);
    void addNonbondParams(const std::string& a, const std::string& b, PairParams p);
    void addPairType(const std::string& a, const std::string& b, PairParams p);
    void addBondedType(const std::string& table, BondedType t, std::vector<std::string>& warnings);
    void addDihedralType(DihedralType t, std::vector<std::string>& warnings);

    const AtomType*   atomType(const std::string& name) const;
    const PairParams* nonbondParams(const std::string& a, const std::string& b) const;
    const PairParams* pairType(const std::string& a, const std::string& b) const;
    /* table is "bondtypes", "constrainttypes" or "angletypes" */
    const BondedType* bondedType(const std::string& table, int func, const std::vector<std::string>& types) const;
    /* Best dihedral match for bonded types i-j-k-l and function func, or null. */
    const DihedralType* dihedralType(int func, const std::array<std::string, 4>& types) const;

    size_t numAtomTypes() const { return atomTypes_.size(); }

private:
    static std::string pairKey(const std::string& a, const std::string& b);
    static std::string bondedKey(int func, const std::vector<std::string>& types);

    std::map<std::string, AtomType>                      atomTypes_;
    std::map<std::string, PairParams>                    nonbond_;
    std::map<std::string, PairParams>                    pairTypes_;
    std::map<std::string, std::map<std::string, BondedType>> bonded_; // table -> key -> type
    std::map<int, std::vector<DihedralType>>             dihedrals_;
    int                                                  lastDihedralFunc_  = -1; // last line added,
    size_t                                               lastDihedralIndex_ = 0;  // for function-9 blocks
};

} // namespace putmd
