#include "topology/topology_parser.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "io/text.h"

namespace putmd
{

const char* directiveName(InteractionKind k)
{
    switch (k)
    {
        case InteractionKind::Bonds: return "bonds";
        case InteractionKind::Pairs: return "pairs";
        case InteractionKind::Angles: return "angles";
        case InteractionKind::Dihedrals: return "dihedrals";
        case InteractionKind::Constraints: return "constraints";
        case InteractionKind::Settles: return "settles";
        case InteractionKind::PositionRestraints: return "position_restraints";
        case InteractionKind::Cmap: return "cmap";
        case InteractionKind::VirtualSites2: return "virtual_sites2";
        case InteractionKind::VirtualSites3: return "virtual_sites3";
        case InteractionKind::VirtualSites4: return "virtual_sites4";
        case InteractionKind::VirtualSitesN: return "virtual_sitesn";
        case InteractionKind::Count: break;
    }
    return "?";
}

const MoleculeType* TopologyFile::moleculeType(const std::string& name) const
{
    for (const auto& m : moleculeTypes)
    {
        if (m.name == name)
        {
            return &m;
        }
    }
    return nullptr;
}

namespace
{

/* An integer field held in an int: a value beyond int's range is an error
 * (a plain cast would wrap 4294967297 to 1 and accept it silently). */
int parseIntField(const std::string& tok, const SourceLocation& at, const std::string& what)
{
    const long v = parseInt(tok, at, what);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    {
        throw InputError(at, what + " " + tok + " is out of range (valid: " + std::to_string(std::numeric_limits<int>::min())
                                     + " to " + std::to_string(std::numeric_limits<int>::max()) + ")");
    }
    return static_cast<int>(v);
}

/* Supported function types and their parameter counts (A state, A+B state). */
struct FuncSpec
{
    int              func;
    std::vector<int> paramCounts;
};

const std::vector<FuncSpec>& funcSpecs(InteractionKind k)
{
    // bonds: harmonic, G96, Morse (b0 D beta), connection, harmonic potential (no exclusions),
    // restraint potential (low up1 up2 k; no exclusions)
    static const std::vector<FuncSpec> bonds       = { { 1, { 2, 4 } }, { 2, { 2, 4 } }, { 3, { 3, 6 } }, { 5, { 0 } },
                                                       { 6, { 2, 4 } }, { 10, { 4, 8 } } };
    static const std::vector<FuncSpec> pairs       = { { 1, { 2, 4 } } };
    // angles: harmonic, G96 cosine, Urey-Bradley, restricted bending (theta0 k)
    static const std::vector<FuncSpec> angles      = { { 1, { 2, 4 } }, { 2, { 2, 4 } }, { 5, { 4, 8 } }, { 10, { 2, 4 } } };
    // dihedrals: proper, improper, RB, periodic improper, Fourier (C1-C4), multiple proper
    static const std::vector<FuncSpec> dihedrals   = { { 1, { 3, 5 } }, { 2, { 2, 4 } }, { 3, { 6, 12 } }, { 4, { 3, 5 } },
                                                       { 5, { 4, 8 } }, { 9, { 3, 5 } } };
    static const std::vector<FuncSpec> constraints = { { 1, { 1, 2 } }, { 2, { 1, 2 } } };
    static const std::vector<FuncSpec> settles     = { { 1, { 2 } } };
    // harmonic: fx fy fz (and the B state); flat-bottomed: geometry r k
    static const std::vector<FuncSpec> posres      = { { 1, { 3, 6 } }, { 2, { 3 } } };
    static const std::vector<FuncSpec> cmap        = { { 1, { 0 } } };
    // virtual sites: 2 (a), 2fd (a), 3 (a b), 3fd (a b), 3fad (theta d), 3out (a b c), 4fdn (a b c)
    static const std::vector<FuncSpec> vsite2      = { { 1, { 1 } }, { 2, { 1 } } };
    static const std::vector<FuncSpec> vsite3      = { { 1, { 2 } }, { 2, { 2 } }, { 3, { 2 } }, { 4, { 3 } } };
    static const std::vector<FuncSpec> vsite4      = { { 2, { 3 } } };
    switch (k)
    {
        case InteractionKind::Bonds: return bonds;
        case InteractionKind::Pairs: return pairs;
        case InteractionKind::Angles: return angles;
        case InteractionKind::Dihedrals: return dihedrals;
        case InteractionKind::Constraints: return constraints;
        case InteractionKind::PositionRestraints: return posres;
        case InteractionKind::Cmap: return cmap;
        case InteractionKind::VirtualSites2: return vsite2;
        case InteractionKind::VirtualSites3: return vsite3;
        case InteractionKind::VirtualSites4: return vsite4;
        default: return settles;
    }
}

int numAtoms(InteractionKind k)
{
    switch (k)
    {
        case InteractionKind::Angles: return 3;
        case InteractionKind::Dihedrals: return 4;
        case InteractionKind::Settles: return 1;
        case InteractionKind::PositionRestraints: return 1;
        case InteractionKind::Cmap: return 5;
        case InteractionKind::VirtualSites2: return 3;
        case InteractionKind::VirtualSites3: return 4;
        case InteractionKind::VirtualSites4: return 5;
        default: return 2;
    }
}

/* Validate function type and parameter count; returns the spec. */
const FuncSpec& checkFunc(InteractionKind k, int func, size_t nparams, bool inlineParams, const SourceLocation& at,
                          const std::string& directive)
{
    const auto& specs = funcSpecs(k);
    auto it = std::find_if(specs.begin(), specs.end(), [func](const FuncSpec& s) { return s.func == func; });
    if (it == specs.end())
    {
        std::string valid;
        for (const auto& s : specs)
        {
            valid += (valid.empty() ? "" : ", ") + std::to_string(s.func);
        }
        throw InputError(at, "[ " + directive + " ] function type " + std::to_string(func)
                                     + " is not supported; supported: " + valid);
    }
    if (inlineParams || nparams > 0)
    {
        const auto& counts = it->paramCounts;
        if (std::find(counts.begin(), counts.end(), static_cast<int>(nparams)) == counts.end())
        {
            std::string valid;
            for (int c : counts)
            {
                valid += (valid.empty() ? "" : " or ") + std::to_string(c);
            }
            throw InputError(at, "[ " + directive + " ] function " + std::to_string(func) + " takes "
                                         + valid + " parameters, found " + std::to_string(nparams));
        }
    }
    return *it;
}

std::vector<double> parseParams(const std::vector<std::string>& tok, size_t first, const SourceLocation& at)
{
    std::vector<double> p;
    for (size_t i = first; i < tok.size(); i++)
    {
        p.push_back(parseDouble(tok[i], at, "parameter " + std::to_string(i - first + 1)));
    }
    return p;
}

bool isSingleLetter(const std::string& s)
{
    return s.size() == 1 && std::isalpha(static_cast<unsigned char>(s[0]));
}

class TopologyParser
{
public:
    TopologyFile result;

    void parse(const std::vector<SourceLine>& lines, const std::string& path);

private:
    void header(const std::string& text, const SourceLocation& at);
    void line(const std::vector<std::string>& tok, const SourceLine& src);

    void defaults(const std::vector<std::string>& tok, const SourceLocation& at);
    void atomtypes(const std::vector<std::string>& tok, const SourceLocation& at);
    void pairLike(const std::vector<std::string>& tok, const SourceLocation& at, bool nonbond);
    void bondedType(const std::vector<std::string>& tok, const SourceLocation& at, InteractionKind k, const char* table);
    void dihedraltypes(const std::vector<std::string>& tok, const SourceLocation& at);
    void moleculetype(const std::vector<std::string>& tok, const SourceLocation& at);
    void atoms(const std::vector<std::string>& tok, const SourceLocation& at);
    void interaction(const std::vector<std::string>& tok, const SourceLocation& at, InteractionKind k);
    void exclusions(const std::vector<std::string>& tok, const SourceLocation& at);
    void positionRestraint(const std::vector<std::string>& tok, const SourceLocation& at);
    void cmaptypes(const std::vector<std::string>& tok, const SourceLocation& at);
    void virtualSitesN(const std::vector<std::string>& tok, const SourceLocation& at);
    void molecules(const std::vector<std::string>& tok, const SourceLocation& at);

    MoleculeType& molecule(const SourceLocation& at);
    void          checkMoleculeTypeComplete(const SourceLocation& at);
    int           atomIndex(const std::string& tok, const SourceLocation& at);
    void          needFields(const std::vector<std::string>& tok, size_t n, const SourceLocation& at, const char* format);

    std::string    directive_;
    SourceLocation directiveAt_;
    bool           inMolecule_ = false;
    SourceLocation pendingMoleculeType_; // a [ moleculetype ] header still without its line
};

void TopologyParser::checkMoleculeTypeComplete(const SourceLocation& at)
{
    if (!pendingMoleculeType_.file.empty())
    {
        throw InputError(pendingMoleculeType_, "[ moleculetype ] has no 'name nrexcl' line before " + (at.line > 0 ? at.str() : std::string("the end of the topology")));
    }
}

void TopologyParser::needFields(const std::vector<std::string>& tok, size_t n, const SourceLocation& at, const char* format)
{
    if (tok.size() < n)
    {
        throw InputError(at, "[ " + directive_ + " ] line has " + std::to_string(tok.size()) + " fields, expected at least "
                                     + std::to_string(n) + " (" + format + ")");
    }
}

MoleculeType& TopologyParser::molecule(const SourceLocation& at)
{
    if (!inMolecule_)
    {
        throw InputError(at, "[ " + directive_ + " ] must follow a [ moleculetype ]");
    }
    return result.moleculeTypes.back();
}

int TopologyParser::atomIndex(const std::string& tok, const SourceLocation& at)
{
    const MoleculeType& mol = result.moleculeTypes.back();
    const long          i   = parseInt(tok, at, "an atom index");
    if (i < 1 || i > static_cast<long>(mol.atoms.size()))
    {
        throw InputError(at, "atom index " + tok + " is out of range: molecule type '" + mol.name + "' has "
                                     + std::to_string(mol.atoms.size()) + " atoms (valid: 1 to "
                                     + std::to_string(mol.atoms.size()) + ")");
    }
    return static_cast<int>(i - 1);
}

void TopologyParser::header(const std::string& text, const SourceLocation& at)
{
    const auto close = text.find(']');
    if (close == std::string::npos)
    {
        throw InputError(at, "directive header '" + text + "' has no closing ']'");
    }
    std::string name = toLower(std::string(trim(text.substr(1, close - 1))));
    if (!trim(text.substr(close + 1)).empty())
    {
        throw InputError(at, "unexpected text after directive header '" + text + "'");
    }
    static const std::set<std::string> known = {
        "defaults", "atomtypes", "nonbond_params", "pairtypes", "bondtypes", "constrainttypes", "angletypes",
        "dihedraltypes", "cmaptypes", "implicit_genborn_params", "moleculetype", "atoms", "bonds", "pairs",
        "angles", "dihedrals", "constraints", "settles", "exclusions", "system", "molecules", "position_restraints", "cmap", "virtual_sites2", "virtual_sites3", "virtual_sites4",
        "virtual_sitesn", "dummies2", "dummies3", "dummies4", "dummiesn"
    };
    static const std::set<std::string> unsupported = {
        "distance_restraints", "dihedral_restraints", "orientation_restraints",
        "angle_restraints", "angle_restraints_z", "virtual_sites1", "polarization", "water_polarization",
        "thole_polarization", "pairs_nb", "intermolecular_interactions", "bondtypes_nb"
    };
    if (unsupported.count(name))
    {
        throw InputError(at, "directive [ " + name + " ] is not supported by putmd"
                                     );
    }
    if (!known.count(name))
    {
        throw InputError(at, "unknown directive [ " + name + " ]");
    }
    checkMoleculeTypeComplete(at);
    if (name == "defaults" && result.ff.defaults.set)
    {
        throw InputError(at, "a second [ defaults ] directive (the first is at " + result.ff.defaults.where.str()
                                     + "); a topology may include only one force field");
    }
    static const std::set<std::string> needsDefaults = { "atomtypes", "nonbond_params", "pairtypes", "bondtypes",
                                                         "constrainttypes", "angletypes", "dihedraltypes",
                                                         "moleculetype" };
    if (needsDefaults.count(name) && !result.ff.defaults.set)
    {
        throw InputError(at, "[ " + name + " ] before [ defaults ]: the force field (its [ defaults ]) must be included first");
    }
    static const std::set<std::string> moleculeLevel = { "atoms", "bonds", "pairs", "angles", "dihedrals",
                                                         "constraints", "settles", "exclusions" };
    if (moleculeLevel.count(name) && !inMolecule_)
    {
        throw InputError(at, "[ " + name + " ] must follow a [ moleculetype ]");
    }
    if (name == "system" || name == "molecules")
    {
        inMolecule_ = false;
    }
    if (name == "moleculetype")
    {
        inMolecule_          = false;
        pendingMoleculeType_ = at;
    }
    directive_   = name;
    directiveAt_ = at;
}

void TopologyParser::defaults(const std::vector<std::string>& tok, const SourceLocation& at)
{
    Defaults& d = result.ff.defaults;
    if (d.set)
    {
        throw InputError(at, "[ defaults ] has more than one line");
    }
    needFields(tok, 2, at, "nbfunc comb-rule [gen-pairs fudgeLJ fudgeQQ]");
    d.nbfunc   = parseIntField(tok[0], at, "nbfunc");
    d.combRule = parseIntField(tok[1], at, "comb-rule");
    if (d.nbfunc != 1)
    {
        throw InputError(at, "nbfunc " + tok[0] + " is not supported; only 1 (Lennard-Jones) is (2 is Buckingham)");
    }
    if (d.combRule < 1 || d.combRule > 3)
    {
        throw InputError(at, "comb-rule " + tok[1] + " is invalid; valid: 1, 2, 3");
    }
    if (tok.size() > 2)
    {
        const std::string g = toLower(tok[2]);
        if (g != "yes" && g != "no")
        {
            throw InputError(at, "gen-pairs must be 'yes' or 'no', found '" + tok[2] + "'");
        }
        d.genPairs = g == "yes";
    }
    if (tok.size() > 3)
    {
        d.fudgeLJ = parseDouble(tok[3], at, "fudgeLJ");
    }
    if (tok.size() > 4)
    {
        d.fudgeQQ = parseDouble(tok[4], at, "fudgeQQ");
    }
    d.set   = true;
    d.where = at;
}

void TopologyParser::atomtypes(const std::vector<std::string>& tok, const SourceLocation& at)
{
    // Optional columns bond_type and at.num are recognised from where the
    // one-letter particle type stands (field 3, 4 or 5, counting from 0).
    needFields(tok, 6, at, "name [bond_type] [at.num] mass charge ptype V W");
    AtomType t;
    t.name = tok[0];
    size_t massField;
    if (isSingleLetter(tok[3]))
    {
        massField = 1;
    }
    else if (tok.size() >= 8 && isSingleLetter(tok[5]))
    {
        massField  = 3;
        t.bondType = tok[1];
        t.atomicNumber = parseIntField(tok[2], at, "the atomic number");
    }
    else if (tok.size() >= 7 && isSingleLetter(tok[4]))
    {
        massField = 2;
        if (std::isalpha(static_cast<unsigned char>(tok[1][0])))
        {
            t.bondType = tok[1];
        }
        else
        {
            t.atomicNumber = parseIntField(tok[1], at, "the atomic number");
        }
    }
    else
    {
        throw InputError(at, "cannot read [ atomtypes ] line: the particle type (a single letter such as A) must be "
                             "field 4, 5 or 6 (format: name [bond_type] [at.num] mass charge ptype V W)");
    }
    if (t.bondType.empty())
    {
        t.bondType = t.name;
    }
    if (tok.size() < massField + 5)
    {
        throw InputError(at, "[ atomtypes ] line for '" + t.name + "' is missing the nonbonded parameters V and W");
    }
    t.mass   = parseDouble(tok[massField], at, "the mass");
    t.charge = parseDouble(tok[massField + 1], at, "the charge");
    t.ptype  = static_cast<char>(std::toupper(static_cast<unsigned char>(tok[massField + 2][0])));
    t.v      = parseDouble(tok[massField + 3], at, "parameter V");
    t.w      = parseDouble(tok[massField + 4], at, "parameter W");
    t.where  = at;
    result.ff.addAtomType(std::move(t), result.warnings);
}

void TopologyParser::pairLike(const std::vector<std::string>& tok, const SourceLocation& at, bool nonbond)
{
    needFields(tok, 5, at, "type_i type_j func V W");
    const long func = parseInt(tok[2], at, "the function type");
    if (func != 1)
    {
        throw InputError(at, "[ " + directive_ + " ] function type " + tok[2] + " is not supported; supported: 1");
    }
    PairParams p{ parseDouble(tok[3], at, "parameter V"), parseDouble(tok[4], at, "parameter W"), at };
    if (nonbond)
    {
        result.ff.addNonbondParams(tok[0], tok[1], p);
    }
    else
    {
        result.ff.addPairType(tok[0], tok[1], p);
    }
}

void TopologyParser::bondedType(const std::vector<std::string>& tok, const SourceLocation& at, InteractionKind k, const char* table)
{
    const size_t n = numAtoms(k);
    needFields(tok, n + 1, at, "atom types, function type, parameters");
    BondedType t;
    t.types.assign(tok.begin(), tok.begin() + n);
    t.func   = parseIntField(tok[n], at, "the function type");
    t.params = parseParams(tok, n + 1, at);
    checkFunc(k, t.func, t.params.size(), true, at, directive_);
    t.where = at;
    result.ff.addBondedType(table, std::move(t), result.warnings);
}

void TopologyParser::dihedraltypes(const std::vector<std::string>& tok, const SourceLocation& at)
{
    // Two forms: "j k func params" (proper) / "i l func params" (improper,
    // func 2) or "i j k l func params"; the function type is the first field
    // that is a single digit.
    needFields(tok, 3, at, "2 or 4 atom types, function type, parameters");
    auto isFunc = [](const std::string& s) { return s.size() == 1 && std::isdigit(static_cast<unsigned char>(s[0])); };
    DihedralType t;
    size_t       nTypes;
    if (isFunc(tok[2]))
    {
        nTypes = 2;
        t.func = tok[2][0] - '0';
        if (t.func == 2)
        {
            t.types = { tok[0], "X", "X", tok[1] };
        }
        else
        {
            t.types = { "X", tok[0], tok[1], "X" };
        }
    }
    else if (tok.size() >= 5 && isFunc(tok[4]))
    {
        nTypes  = 4;
        t.func  = tok[4][0] - '0';
        t.types = { tok[0], tok[1], tok[2], tok[3] };
    }
    else
    {
        throw InputError(at, "cannot read [ dihedraltypes ] line: expected 2 or 4 atom types followed by a "
                             "one-digit function type");
    }
    auto params = parseParams(tok, nTypes + 1, at);
    checkFunc(InteractionKind::Dihedrals, t.func, params.size(), true, at, directive_);
    t.terms.push_back(std::move(params));
    t.where = at;
    result.ff.addDihedralType(std::move(t), result.warnings);
}

void TopologyParser::moleculetype(const std::vector<std::string>& tok, const SourceLocation& at)
{
    if (pendingMoleculeType_.file.empty())
    {
        throw InputError(at, "[ moleculetype ] has more than one line (expected: name nrexcl)");
    }
    pendingMoleculeType_ = SourceLocation{};
    needFields(tok, 2, at, "name nrexcl");
    if (result.moleculeType(tok[0]))
    {
        throw InputError(at, "molecule type '" + tok[0] + "' is defined twice (first at "
                                     + result.moleculeType(tok[0])->where.str() + ")");
    }
    MoleculeType m;
    m.name   = tok[0];
    const long nrexcl = parseInt(tok[1], at, "nrexcl");
    if (nrexcl < 0 || nrexcl > 10)
    {
        throw InputError(at, "nrexcl " + tok[1] + " is out of range (0 to 10)");
    }
    m.nrexcl = static_cast<int>(nrexcl);
    m.where = at;
    result.moleculeTypes.push_back(std::move(m));
    inMolecule_ = true;
}

void TopologyParser::atoms(const std::vector<std::string>& tok, const SourceLocation& at)
{
    MoleculeType& mol = molecule(at);
    needFields(tok, 5, at, "nr type resnr residue atom [cgnr charge mass]");
    const long nr = parseInt(tok[0], at, "the atom number");
    if (nr != static_cast<long>(mol.atoms.size()) + 1)
    {
        throw InputError(at, "atoms must be numbered consecutively from 1: expected " + std::to_string(mol.atoms.size() + 1)
                                     + ", found " + tok[0]);
    }
    const AtomType* type = result.ff.atomType(tok[1]);
    if (!type)
    {
        throw InputError(at, "atom type '" + tok[1] + "' is not defined in any [ atomtypes ]");
    }
    MolAtom a;
    a.type          = tok[1];
    a.residueNumber = parseIntField(tok[2], at, "the residue number");
    a.residueName   = tok[3];
    a.name          = tok[4];
    a.charge        = tok.size() > 6 ? parseDouble(tok[6], at, "the charge") : type->charge;
    a.mass          = tok.size() > 7 ? parseDouble(tok[7], at, "the mass") : type->mass;
    a.where         = at;
    if (type->ptype == 'A' && a.mass < 0)
    {
        throw InputError(at, "atom " + tok[0] + " (" + a.name + ") has mass " + std::to_string(a.mass)
                                     + (tok.size() > 7 ? "" : " (from its atom type)") + "; the mass of an atom must be positive");
    }
    // mass 0: allowed for an atom a [ virtual_sites* ] line constructs
    // (pdb2gmx -vsite); the topology builder checks that one does
    if (tok.size() > 5)
    {
        parseInt(tok[5], at, "the charge group number");
    }
    mol.atoms.push_back(std::move(a));
}

void TopologyParser::interaction(const std::vector<std::string>& tok, const SourceLocation& at, InteractionKind k)
{
    MoleculeType& mol = molecule(at);
    const size_t  n   = numAtoms(k);
    if (k == InteractionKind::Settles)
    {
        needFields(tok, 4, at, "OW func doh dhh");
        Interaction s;
        const int   ow = atomIndex(tok[0], at);
        if (ow + 2 >= static_cast<int>(mol.atoms.size()))
        {
            throw InputError(at, "settle on atom " + tok[0] + " needs atoms " + tok[0] + " to "
                                         + std::to_string(ow + 3) + " but the molecule has "
                                         + std::to_string(mol.atoms.size()) + " atoms");
        }
        s.atoms  = { ow, ow + 1, ow + 2 };
        s.func   = parseIntField(tok[1], at, "the function type");
        s.params = parseParams(tok, 2, at);
        checkFunc(k, s.func, s.params.size(), true, at, directive_);
        s.where = at;
        mol.list(k).push_back(std::move(s));
        return;
    }
    needFields(tok, n + 1, at, "atom indices, function type, [parameters]");
    Interaction it;
    for (size_t i = 0; i < n; i++)
    {
        it.atoms.push_back(atomIndex(tok[i], at));
    }
    for (size_t i = 0; i < n; i++)
    {
        for (size_t j = i + 1; j < n; j++)
        {
            if (it.atoms[i] == it.atoms[j])
            {
                if (i == 0 && directive_.find("virtual_sites") != std::string::npos)
                {
                    throw InputError(at, "virtual site " + tok[0] + " is constructed from itself");
                }
                throw InputError(at, "atom " + tok[i] + " appears twice in one [ " + directive_ + " ] entry");
            }
        }
    }
    it.func   = parseIntField(tok[n], at, "the function type");
    it.params = parseParams(tok, n + 1, at);
    if (it.func < 0)
    {
        // pdb2gmx writes -3 and -4: the mirror-image construction (grompp
        // flips it when it generates the parameters)
        if (k != InteractionKind::VirtualSites3 || (it.func != -3 && it.func != -4))
        {
            throw InputError(at, "[ " + directive_ + " ] function type " + tok[n]
                                         + " is negative; negative types (mirrored construction) exist only "
                                           "for [ virtual_sites3 ] 3 (3fad) and 4 (3out)");
        }
        it.func       = -it.func;
        it.swapParity = true;
    }
    checkFunc(k, it.func, it.params.size(), false, at, directive_);
    it.where = at;
    mol.list(k).push_back(std::move(it));
}

/* site func atoms...: function 1 centre of geometry, 2 centre of mass, 3
 * centre of weights (atom weight pairs). Parameters holds the weights for 3. */
void TopologyParser::virtualSitesN(const std::vector<std::string>& tok, const SourceLocation& at)
{
    MoleculeType& mol = molecule(at);
    needFields(tok, 3, at, "site, function type, constructing atoms");
    Interaction it;
    it.atoms.push_back(atomIndex(tok[0], at));
    it.func = parseIntField(tok[1], at, "the function type");
    if (it.func < 1 || it.func > 3)
    {
        throw InputError(at, "[ virtual_sitesn ] function type " + tok[1]
                                     + " is not valid; valid: 1 (centre of geometry), 2 (centre of mass), 3 (centre of weights)");
    }
    const size_t step = it.func == 3 ? 2 : 1;
    if ((tok.size() - 2) % step != 0)
    {
        throw InputError(at, "[ virtual_sitesn ] function 3 takes pairs of atom and weight");
    }
    for (size_t k = 2; k < tok.size(); k += step)
    {
        it.atoms.push_back(atomIndex(tok[k], at));
        if (step == 2)
        {
            it.params.push_back(parseDouble(tok[k + 1], at, "a weight"));
        }
    }
    for (size_t k = 1; k < it.atoms.size(); k++)
    {
        if (it.atoms[k] == it.atoms[0])
        {
            throw InputError(at, "virtual site " + tok[0] + " is constructed from itself");
        }
    }
    it.where = at;
    mol.list(InteractionKind::VirtualSitesN).push_back(std::move(it));
}

/* Five bonded types, function 1, the grid size nx ny (equal), then nx * ny
 * energies (kJ/mol), phi-major; force fields continue the line with '\'. */
void TopologyParser::cmaptypes(const std::vector<std::string>& tok, const SourceLocation& at)
{
    needFields(tok, 8, at, "five atom types, function type, grid size nx ny, then nx * ny values");
    CmapType t;
    for (int k = 0; k < 5; k++)
    {
        t.types[k] = tok[k];
    }
    const int func = parseIntField(tok[5], at, "the function type");
    if (func != 1)
    {
        throw InputError(at, "[ cmaptypes ] function type " + tok[5] + " is not supported; supported: 1");
    }
    const int nx = parseIntField(tok[6], at, "the grid size nx");
    const int ny = parseIntField(tok[7], at, "the grid size ny");
    if (nx < 4 || nx > 1000 || nx != ny)
    {
        throw InputError(at, "[ cmaptypes ] grid " + tok[6] + " x " + tok[7]
                                     + " is not valid: the grid must be square, 4 to 1000 points on a side (CHARMM's is 24 x 24)");
    }
    const size_t need = static_cast<size_t>(nx) * static_cast<size_t>(ny);
    if (tok.size() - 8 != need)
    {
        throw InputError(at, "[ cmaptypes ] grid of " + tok[6] + " x " + tok[7] + " needs " + std::to_string(need)
                                     + " values, found " + std::to_string(tok.size() - 8));
    }
    t.n    = nx;
    t.grid = parseParams(tok, 8, at);
    t.where = at;
    result.ff.cmapTypes.push_back(std::move(t));
}

/* ai func params: function 1 "fx fy fz" (harmonic; a B state is read and
 * ignored, as putmd has no free-energy perturbation), function 2 "g r k"
 * (flat-bottomed; g is one of GROMACS's geometries 1-8). */
void TopologyParser::positionRestraint(const std::vector<std::string>& tok, const SourceLocation& at)
{
    MoleculeType& mol = molecule(at);
    needFields(tok, 2, at, "atom, function type, parameters");
    Interaction it;
    it.atoms  = { atomIndex(tok[0], at) };
    it.func   = parseIntField(tok[1], at, "the function type");
    it.params = parseParams(tok, 2, at);
    checkFunc(InteractionKind::PositionRestraints, it.func, it.params.size(), true, at, directive_);
    if (it.func == 2)
    {
        const double g = it.params[0];
        if (g != std::floor(g) || g < 1 || g > 8)
        {
            throw InputError(at, "[ position_restraints ] function 2 geometry " + tok[2]
                                         + " is not valid; valid: 1 (sphere), 2 (cylinder along z), 3, 4, 5 (layer "
                                           "normal to x, y, z), 6, 7, 8 (cylinder along x, y, z)");
        }
        if (it.params[2] < 0)
        {
            throw InputError(at, "[ position_restraints ] force constant " + tok[4] + " is negative; use k >= 0 "
                                 "(a negative r, not k, turns the flat-bottomed restraint inside out)");
        }
    }
    it.where = at;
    mol.list(InteractionKind::PositionRestraints).push_back(std::move(it));
}

void TopologyParser::exclusions(const std::vector<std::string>& tok, const SourceLocation& at)
{
    MoleculeType& mol = molecule(at);
    const int     i   = atomIndex(tok[0], at);
    for (size_t k = 1; k < tok.size(); k++)
    {
        const int j = atomIndex(tok[k], at);
        if (j != i)
        {
            mol.explicitExclusions.emplace_back(i, j);
        }
    }
}

void TopologyParser::molecules(const std::vector<std::string>& tok, const SourceLocation& at)
{
    needFields(tok, 2, at, "molecule-type-name count");
    if (tok.size() > 2)
    {
        throw InputError(at, "[ molecules ] line has extra fields after the count: expected 'name count'");
    }
    if (!result.moleculeType(tok[0]))
    {
        throw InputError(at, "molecule type '" + tok[0] + "' in [ molecules ] is not defined by any [ moleculetype ]");
    }
    const long n = parseInt(tok[1], at, "the molecule count");
    if (n < 0 || n > 500'000'000)
    {
        throw InputError(at, "molecule count must be between 0 and 5e8, found " + tok[1]);
    }
    result.molecules.push_back({ tok[0], n, at });
}

void TopologyParser::line(const std::vector<std::string>& tok, const SourceLine& src)
{
    const SourceLocation& at = src.where;
    if (directive_.empty())
    {
        return; // grompp ignores text before the first directive (force-field banners use it)
    }
    if (directive_ == "defaults") defaults(tok, at);
    else if (directive_ == "atomtypes") atomtypes(tok, at);
    else if (directive_ == "nonbond_params") pairLike(tok, at, true);
    else if (directive_ == "pairtypes") pairLike(tok, at, false);
    else if (directive_ == "bondtypes") bondedType(tok, at, InteractionKind::Bonds, "bondtypes");
    else if (directive_ == "constrainttypes") bondedType(tok, at, InteractionKind::Constraints, "constrainttypes");
    else if (directive_ == "angletypes") bondedType(tok, at, InteractionKind::Angles, "angletypes");
    else if (directive_ == "dihedraltypes") dihedraltypes(tok, at);
    else if (directive_ == "cmaptypes") cmaptypes(tok, at);
    else if (directive_ == "cmap") interaction(tok, at, InteractionKind::Cmap);
    else if (directive_ == "implicit_genborn_params") { /* accepted, not used */ }
    else if (directive_ == "moleculetype") moleculetype(tok, at);
    else if (directive_ == "atoms") atoms(tok, at);
    else if (directive_ == "bonds") interaction(tok, at, InteractionKind::Bonds);
    else if (directive_ == "pairs") interaction(tok, at, InteractionKind::Pairs);
    else if (directive_ == "angles") interaction(tok, at, InteractionKind::Angles);
    else if (directive_ == "dihedrals") interaction(tok, at, InteractionKind::Dihedrals);
    else if (directive_ == "constraints") interaction(tok, at, InteractionKind::Constraints);
    else if (directive_ == "settles") interaction(tok, at, InteractionKind::Settles);
    else if (directive_ == "position_restraints") positionRestraint(tok, at);
    else if (directive_ == "virtual_sites2" || directive_ == "dummies2") interaction(tok, at, InteractionKind::VirtualSites2);
    else if (directive_ == "virtual_sites3" || directive_ == "dummies3") interaction(tok, at, InteractionKind::VirtualSites3);
    else if (directive_ == "virtual_sites4" || directive_ == "dummies4") interaction(tok, at, InteractionKind::VirtualSites4);
    else if (directive_ == "virtual_sitesn" || directive_ == "dummiesn") virtualSitesN(tok, at);
    else if (directive_ == "exclusions") exclusions(tok, at);
    else if (directive_ == "system") result.systemName += (result.systemName.empty() ? "" : " ") + std::string(trim(src.text));
    else if (directive_ == "molecules") molecules(tok, at);
}

void TopologyParser::parse(const std::vector<SourceLine>& lines, const std::string& path)
{
    for (const auto& src : lines)
    {
        const std::string_view t = trim(src.text);
        if (t.empty())
        {
            continue;
        }
        if (t[0] == '[')
        {
            header(std::string(t), src.where);
            continue;
        }
        line(splitWhitespace(t), src);
    }
    checkMoleculeTypeComplete(SourceLocation{ path, 0 });
    if (result.molecules.empty())
    {
        const SourceLocation end = lines.empty() ? SourceLocation{ path, 0 } : lines.back().where;
        throw InputError(end, "the topology has no [ molecules ] entries: nothing to simulate (a topology needs "
                              "[ system ] and [ molecules ] after the molecule types)");
    }
}

} // namespace

TopologyFile parseTopology(const std::vector<SourceLine>& lines, const std::string& path)
{
    TopologyParser p;
    p.parse(lines, path);
    return std::move(p.result);
}

} // namespace putmd
