#include "io/mdp.h"

#include <cstdlib>
#include <sstream>

#include <functional>
#include <limits>
#include <utility>

#include "io/text.h"

namespace putmd
{

namespace
{

using Setter = std::function<void(MdpOptions&, const std::string& value, const SourceLocation&)>;

template<typename E>
using EnumTable = std::vector<std::pair<const char*, E>>;

std::string validList(const std::vector<std::string>& names)
{
    std::string s;
    for (size_t i = 0; i < names.size(); i++)
    {
        s += (i ? ", " : "") + names[i];
    }
    return s;
}

template<typename E>
Setter enumSetter(E MdpOptions::*field, EnumTable<E> table, std::vector<std::string> unsupported = {})
{
    return [field, table, unsupported](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        const std::string v = toLower(value);
        for (const auto& [name, e] : table)
        {
            if (toLower(name) == v)
            {
                o.*field = e;
                return;
            }
        }
        std::vector<std::string> names;
        for (const auto& entry : table)
        {
            names.emplace_back(entry.first);
        }
        for (const auto& u : unsupported)
        {
            if (toLower(u) == v)
            {
                throw InputError(at, "value '" + value + "' is a GROMACS option that putmd does not support; supported values: "
                                             + validList(names));
            }
        }
        throw InputError(at, "invalid value '" + value + "'; valid values: " + validList(names));
    };
}

Setter doubleSetter(double MdpOptions::*field, double lo, double hi, const char* range)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        const double v = parseDouble(value, at, "this key");
        if (v < lo || v > hi)
        {
            throw InputError(at, "value " + value + " is out of range; it must be " + range);
        }
        o.*field = v;
    };
}

template<typename I>
Setter intSetter(I MdpOptions::*field, long lo, long hi, const char* range)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        const long v = parseInt(value, at, "this key");
        if (v < lo || v > hi)
        {
            throw InputError(at, "value " + value + " is out of range; it must be " + range);
        }
        o.*field = static_cast<I>(v);
    };
}

Setter boolSetter(bool MdpOptions::*field)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        const std::string v = toLower(value);
        if (v == "yes" || v == "true" || v == "on")
        {
            o.*field = true;
        }
        else if (v == "no" || v == "false" || v == "off")
        {
            o.*field = false;
        }
        else
        {
            throw InputError(at, "invalid value '" + value + "'; valid values: yes, no");
        }
    };
}

Setter stringsSetter(std::vector<std::string> MdpOptions::*field)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation&) { o.*field = splitWhitespace(value); };
}

Setter doublesSetter(std::vector<double> MdpOptions::*field)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        (o.*field).clear();
        for (const auto& t : splitWhitespace(value))
        {
            (o.*field).push_back(parseDouble(t, at, "this key"));
        }
    };
}

Setter fourierSetter(int d)
{
    return [d](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        const long v = parseInt(value, at, "this key");
        if (v != 0 && (v < 4 || v > 4096))
        {
            throw InputError(at, "value " + value + " is out of range; it must be 0 (use fourierspacing) or 4 to 4096");
        }
        o.fourierN[d] = static_cast<int>(v);
    };
}

/* "-DPOSRES -DFLEXIBLE" and "-I../top" style values. */
Setter flagListSetter(std::vector<std::string> MdpOptions::*field, const std::string& flag)
{
    return [=](MdpOptions& o, const std::string& value, const SourceLocation& at) {
        for (const auto& t : splitWhitespace(value))
        {
            if (!startsWith(t, flag) || t.size() == flag.size())
            {
                throw InputError(at, "invalid entry '" + t + "'; each entry must have the form " + flag + "NAME");
            }
            (o.*field).push_back(t.substr(flag.size()));
        }
    };
}

/* Keys GROMACS has that putmd accepts only at the value that means "off". */
Setter onlyValue(std::vector<std::string> accepted, const std::string& why)
{
    return [=](MdpOptions&, const std::string& value, const SourceLocation& at) {
        for (const auto& a : accepted)
        {
            if (toLower(a) == toLower(value))
            {
                return;
            }
        }
        throw InputError(at, "value '" + value + "' is not supported by putmd (" + why + "); valid values: " + validList(accepted));
    };
}

/* Keys that must be empty (or absent): a feature putmd does not have. */
Setter onlyEmpty(const std::string& why)
{
    return [=](MdpOptions&, const std::string& value, const SourceLocation& at) {
        if (!value.empty())
        {
            throw InputError(at, "value '" + value + "' is not supported by putmd (" + why
                                         + "); leave the key empty or remove the line");
        }
    };
}

/* Keys whose "off" is zero in every number (electric fields, deform). */
Setter zerosOnly(const std::string& why)
{
    return [=](MdpOptions&, const std::string& value, const SourceLocation& at) {
        std::istringstream in(value);
        for (std::string t; in >> t;)
        {
            char*        end = nullptr;
            const double v   = std::strtod(t.c_str(), &end);
            if (end == t.c_str() || *end != '\0' || v != 0)
            {
                throw InputError(at, "value '" + value + "' is not supported by putmd (" + why
                                             + "); only zeros (off) are valid");
            }
        }
    };
}

const std::map<std::string, Setter>& keyTable()
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr long   big = std::numeric_limits<int>::max();
    static const EnumTable<InteractionModifier> modifiers = {
        { "Potential-shift", InteractionModifier::PotentialShift },
        { "Potential-shift-Verlet", InteractionModifier::PotentialShift },
        { "None", InteractionModifier::None },
        { "Force-switch", InteractionModifier::ForceSwitch },
    };
    static const std::map<std::string, Setter> table = {
        { "integrator", enumSetter(&MdpOptions::integrator, EnumTable<Integrator>{ { "md", Integrator::Md }, { "md-vv", Integrator::MdVv }, { "steep", Integrator::Steep } },
                                   { "sd", "bd", "cg", "l-bfgs", "nm", "tpi", "tpic", "mimic", "md-vv-avek" }) },
        { "tinit", doubleSetter(&MdpOptions::tinit, -inf, inf, "a real number") },
        { "dt", doubleSetter(&MdpOptions::dt, 1e-9, 1.0, "in (0, 1] ps") },
        { "nsteps", intSetter(&MdpOptions::nsteps, -1, std::numeric_limits<long>::max(), "-1 (no limit) or more") },
        { "init-step", onlyValue({ "0" }, "continue from a checkpoint instead") },
        { "emtol", doubleSetter(&MdpOptions::emtol, 0, inf, "0 or more (kJ/mol/nm)") },
        { "emstep", doubleSetter(&MdpOptions::emstep, 1e-12, inf, "positive (nm)") },
        { "define", flagListSetter(&MdpOptions::defines, "-D") },
        { "include", flagListSetter(&MdpOptions::includeDirs, "-I") },
        { "cutoff-scheme", onlyValue({ "Verlet" }, "the group scheme was removed from GROMACS too") },
        { "nstlist", intSetter(&MdpOptions::nstlist, 1, big, "1 or more") },
        { "verlet-buffer-tolerance", doubleSetter(&MdpOptions::verletBufferTolerance, -1, inf, "-1 (use rlist) or positive") },
        { "rlist", doubleSetter(&MdpOptions::rlist, 0, inf, "0 or more (nm)") },
        { "pbc", onlyValue({ "xyz" }, "only full periodicity is implemented") },
        { "periodic-molecules", onlyValue({ "no" }, "molecules bonded through the box are not implemented") },
        { "coulombtype", enumSetter(&MdpOptions::coulombType, EnumTable<CoulombType>{ { "Cut-off", CoulombType::Cutoff }, { "Reaction-Field", CoulombType::ReactionField }, { "PME", CoulombType::Pme } },
                                    { "Ewald", "P3M-AD", "User", "PME-Switch", "PME-User", "PME-User-Switch", "Shift", "Switch", "Reaction-Field-zero", "Generalized-Reaction-Field" }) },
        { "coulomb-modifier", enumSetter(&MdpOptions::coulombModifier, EnumTable<InteractionModifier>{ { "Potential-shift", InteractionModifier::PotentialShift }, { "Potential-shift-Verlet", InteractionModifier::PotentialShift }, { "None", InteractionModifier::None } }) },
        { "rcoulomb", doubleSetter(&MdpOptions::rcoulomb, 1e-3, inf, "positive (nm)") },
        { "rcoulomb-switch", onlyValue({ "0", "0.0" }, "switched Coulomb is not implemented") },
        { "epsilon-r", doubleSetter(&MdpOptions::epsilonR, 1e-6, inf, "positive") },
        { "epsilon-rf", doubleSetter(&MdpOptions::epsilonRf, 0, inf, "0 (infinity) or positive") },
        { "vdwtype", enumSetter(&MdpOptions::vdwType, EnumTable<VdwType>{ { "Cut-off", VdwType::Cutoff } }, { "PME", "Shift", "Switch", "User" }) },
        { "vdw-type", enumSetter(&MdpOptions::vdwType, EnumTable<VdwType>{ { "Cut-off", VdwType::Cutoff } }, { "PME", "Shift", "Switch", "User" }) },
        { "vdw-modifier", enumSetter(&MdpOptions::vdwModifier, modifiers, { "Potential-switch", "Exact-cutoff" }) },
        { "rvdw", doubleSetter(&MdpOptions::rvdw, 1e-3, inf, "positive (nm)") },
        { "rvdw-switch", doubleSetter(&MdpOptions::rvdwSwitch, 0, inf, "0 or more (nm)") },
        { "dispcorr", enumSetter(&MdpOptions::dispCorr, EnumTable<DispCorr>{ { "no", DispCorr::No }, { "EnerPres", DispCorr::EnerPres }, { "Ener", DispCorr::Ener } }, { "AllEnerPres", "AllEner" }) },
        { "fourierspacing", doubleSetter(&MdpOptions::fourierSpacing, 1e-3, inf, "positive (nm)") },
        { "fourier-nx", fourierSetter(0) },
        { "fourier-ny", fourierSetter(1) },
        { "fourier-nz", fourierSetter(2) },
        { "pme-order", intSetter(&MdpOptions::pmeOrder, 3, 12, "between 3 and 12") },
        { "ewald-rtol", doubleSetter(&MdpOptions::ewaldRtol, 1e-300, 1.0, "in (0, 1)") },
        { "ewald-geometry", onlyValue({ "3d" }, "only 3D Ewald geometry is implemented") },
        { "epsilon-surface", onlyValue({ "0" }, "dipole surface correction is not implemented") },
        { "constraints", enumSetter(&MdpOptions::constraints, EnumTable<ConstraintsMode>{ { "none", ConstraintsMode::None }, { "h-bonds", ConstraintsMode::HBonds }, { "all-bonds", ConstraintsMode::AllBonds } }, { "h-angles", "all-angles" }) },
        { "constraint-algorithm", enumSetter(&MdpOptions::constraintAlgorithm, EnumTable<ConstraintAlgorithm>{ { "lincs", ConstraintAlgorithm::Lincs }, { "shake", ConstraintAlgorithm::Shake } }) },
        { "lincs-order", intSetter(&MdpOptions::lincsOrder, 1, 64, "between 1 and 64") },
        { "lincs-iter", intSetter(&MdpOptions::lincsIter, 1, 64, "between 1 and 64") },
        { "shake-tol", doubleSetter(&MdpOptions::shakeTol, 1e-15, 1, "in (0, 1)") },
        { "continuation", boolSetter(&MdpOptions::continuation) },
        { "tcoupl", enumSetter(&MdpOptions::tcoupl, EnumTable<TCoupl>{ { "no", TCoupl::No }, { "v-rescale", TCoupl::VRescale }, { "berendsen", TCoupl::Berendsen }, { "nose-hoover", TCoupl::NoseHoover } }, { "andersen", "andersen-massive" }) },
        { "nsttcouple", intSetter(&MdpOptions::nsttcouple, -1, big, "-1 (automatic) or positive") },
        { "tc-grps", stringsSetter(&MdpOptions::tcGrps) },
        { "freezegrps", stringsSetter(&MdpOptions::freezeGrps) },
        { "freezedim", stringsSetter(&MdpOptions::freezeDim) },
        { "tau-t", doublesSetter(&MdpOptions::tauT) },
        { "ref-t", doublesSetter(&MdpOptions::refT) },
        { "pcoupl", enumSetter(&MdpOptions::pcoupl, EnumTable<PCoupl>{ { "no", PCoupl::No }, { "c-rescale", PCoupl::CRescale }, { "berendsen", PCoupl::Berendsen }, { "parrinello-rahman", PCoupl::ParrinelloRahman } }, { "mttk" }) },
        { "pcoupltype", enumSetter(&MdpOptions::pcouplType, EnumTable<PCouplType>{ { "isotropic", PCouplType::Isotropic }, { "semiisotropic", PCouplType::SemiIsotropic }, { "anisotropic", PCouplType::Anisotropic } }, { "surface-tension" }) },
        { "nstpcouple", intSetter(&MdpOptions::nstpcouple, -1, big, "-1 (automatic) or positive") },
        { "tau-p", doubleSetter(&MdpOptions::tauP, 1e-9, inf, "positive (ps)") },
        { "ref-p", doublesSetter(&MdpOptions::refP) },
        { "compressibility", doublesSetter(&MdpOptions::compressibility) },
        { "refcoord-scaling", enumSetter(&MdpOptions::refcoordScaling, EnumTable<RefCoordScaling>{ { "no", RefCoordScaling::No }, { "all", RefCoordScaling::All }, { "com", RefCoordScaling::Com } }, {}) },
        { "gen-vel", boolSetter(&MdpOptions::genVel) },
        { "gen-temp", doubleSetter(&MdpOptions::genTemp, 0, inf, "0 or more (K)") },
        { "gen-seed", intSetter(&MdpOptions::genSeed, -1, std::numeric_limits<long>::max(), "-1 (random) or more") },
        { "ld-seed", intSetter(&MdpOptions::ldSeed, -1, std::numeric_limits<long>::max(), "-1 (random) or more") },
        { "comm-mode", enumSetter(&MdpOptions::commMode, EnumTable<CommMode>{ { "Linear", CommMode::Linear }, { "None", CommMode::None } }, { "Angular", "Linear-acceleration-correction" }) },
        { "nstcomm", intSetter(&MdpOptions::nstcomm, 0, big, "0 or more") },
        { "comm-grps", stringsSetter(&MdpOptions::commGrps) },
        { "nstcalcenergy", intSetter(&MdpOptions::nstcalcenergy, -1, big, "-1 or more") },
        { "nstenergy", intSetter(&MdpOptions::nstenergy, 0, big, "0 or more") },
        { "nstlog", intSetter(&MdpOptions::nstlog, 0, big, "0 or more") },
        { "nstxout", intSetter(&MdpOptions::nstxout, 0, big, "0 or more") },
        { "nstvout", intSetter(&MdpOptions::nstvout, 0, big, "0 or more") },
        { "nstfout", intSetter(&MdpOptions::nstfout, 0, big, "0 or more") },
        { "nstxout-compressed", intSetter(&MdpOptions::nstxoutCompressed, 0, big, "0 or more") },
        { "compressed-x-precision", doubleSetter(&MdpOptions::compressedXPrecision, 1, 1e9, "between 1 and 1e9") },
        { "compressed-x-grps", stringsSetter(&MdpOptions::compressedXGrps) },
        { "free-energy", onlyValue({ "no" }, "free-energy perturbation is not implemented") },
        { "pull", onlyValue({ "no" }, "the pull code is not implemented") },
        { "awh", onlyValue({ "no" }, "AWH is not implemented") },
        { "rotation", onlyValue({ "no" }, "enforced rotation is not implemented") },
        { "simulated-annealing", onlyValue({ "no" }, "simulated annealing is not implemented") },
        { "qmmm", onlyValue({ "no" }, "QM/MM is not implemented") },
        { "qmmm-cp2k-active", onlyValue({ "false", "no" }, "QM/MM is not implemented") },
        { "nwall", onlyValue({ "0" }, "walls are not implemented") },
        { "cos-acceleration", zerosOnly("non-equilibrium cosine acceleration is not implemented") },
        { "deform", zerosOnly("box deformation is not implemented") },
        { "electric-field-x", zerosOnly("electric fields are not implemented") },
        { "electric-field-y", zerosOnly("electric fields are not implemented") },
        { "electric-field-z", zerosOnly("electric fields are not implemented") },
        { "energygrps", stringsSetter(&MdpOptions::energyGrps) },
        { "energygrp-excl", onlyEmpty("energy-group exclusions are not implemented (GROMACS's Verlet scheme has "
                                      "none either); exclude the pairs in the topology instead") },
        { "energygrp-table", onlyEmpty("tabulated interactions are not implemented") },
    };
    return table;
}

const std::map<std::string, std::string>& aliases()
{
    static const std::map<std::string, std::string> a = {
        { "nstxtcout", "nstxout-compressed" },
        { "xtc-precision", "compressed-x-precision" },
        { "xtc-grps", "compressed-x-grps" },
    };
    return a;
}

} // namespace

namespace
{
/* Checks that involve several keys, after all are read. */
void checkConsistency(const MdpOptions& o)
{
    const size_t ngroups = o.tcGrps.size();
    auto         check   = [&](const char* key, size_t n) {
        if (o.tcoupl != TCoupl::No || n > 0 || ngroups > 0)
        {
            if (n != ngroups)
            {
                throw InputError(o.where(key), std::string("mdp key '") + key + "' has " + std::to_string(n) + " value(s) but tc-grps has "
                                                       + std::to_string(ngroups) + " group(s); give one value per group");
            }
        }
    };
    check("tau-t", o.tauT.size());
    check("ref-t", o.refT.size());
}
} // namespace

std::string normaliseMdpKey(const std::string& key)
{
    std::string k = toLower(key);
    for (char& c : k)
    {
        if (c == '_')
        {
            c = '-';
        }
    }
    return k;
}

SourceLocation MdpOptions::where(const std::string& key) const
{
    auto it = setAt.find(normaliseMdpKey(key));
    return it != setAt.end() ? it->second : SourceLocation{ file, 0 };
}

MdpParseResult parseMdp(const std::string& text, const std::string& path)
{
    MdpParseResult result;
    result.options.file = path;
    const auto lines    = splitLines(text);
    for (size_t i = 0; i < lines.size(); i++)
    {
        const SourceLocation at{ path, static_cast<int>(i) + 1 };
        std::string_view     line = lines[i];
        if (auto semi = line.find(';'); semi != std::string_view::npos)
        {
            line = line.substr(0, semi);
        }
        line = trim(line);
        if (line.empty())
        {
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos)
        {
            throw InputError(at, "expected 'key = value', found '" + std::string(line) + "'");
        }
        std::string key = normaliseMdpKey(std::string(trim(line.substr(0, eq))));
        const std::string value(trim(line.substr(eq + 1)));
        if (key.empty())
        {
            throw InputError(at, "missing key before '='");
        }
        if (auto a = aliases().find(key); a != aliases().end())
        {
            key = a->second;
        }
        if (key == "vdw-type")
        {
            key = "vdwtype";
        }
        const auto& table = keyTable();
        auto        it    = table.find(key);
        if (it == table.end())
        {
            result.warnings.push_back(at.str() + ": unknown mdp key '" + std::string(trim(line.substr(0, eq)))
                                      + "' ignored (see docs/mdp-options.md for the keys putmd reads)");
            continue;
        }
        if (result.options.setAt.count(key))
        {
            throw InputError(at, "key '" + key + "' is set twice (first at " + result.options.setAt[key].str() + ")");
        }
        if (value.empty() && key != "define" && key != "include" && key != "energygrps" && key != "energygrp-excl"
            && key != "energygrp-table"
            && key != "compressed-x-grps" && key != "tc-grps" && key != "freezegrps" && key != "freezedim" && key != "comm-grps")
        {
            throw InputError(at, "key '" + key + "' has no value");
        }
        try
        {
            it->second(result.options, value, at);
        }
        catch (const InputError& e)
        {
            // prefix the key name for context; the location is already in the message
            throw InputError(at, "mdp key '" + key + "': " + std::string(e.what()).substr(at.str().size() + 2));
        }
        result.options.setAt[key] = at;
    }
    checkConsistency(result.options);
    return result;
}

MdpParseResult readMdp(const std::string& path)
{
    return parseMdp(readFile(path), path);
}

const char* enumName(CoulombType v)
{
    switch (v)
    {
        case CoulombType::Cutoff: return "Cut-off";
        case CoulombType::ReactionField: return "Reaction-Field";
        case CoulombType::Pme: return "PME";
    }
    return "?";
}

const char* enumName(InteractionModifier v)
{
    switch (v)
    {
        case InteractionModifier::None: return "None";
        case InteractionModifier::PotentialShift: return "Potential-shift";
        case InteractionModifier::ForceSwitch: return "Force-switch";
    }
    return "?";
}

const char* enumName(DispCorr v)
{
    switch (v)
    {
        case DispCorr::No: return "no";
        case DispCorr::EnerPres: return "EnerPres";
        case DispCorr::Ener: return "Ener";
    }
    return "?";
}

const char* enumName(Integrator v)
{
    switch (v)
    {
        case Integrator::Md: return "md";
        case Integrator::MdVv: return "md-vv";
        case Integrator::Steep: return "steep";
    }
    return "?";
}

const char* enumName(ConstraintsMode v)
{
    switch (v)
    {
        case ConstraintsMode::None: return "none";
        case ConstraintsMode::HBonds: return "h-bonds";
        case ConstraintsMode::AllBonds: return "all-bonds";
    }
    return "?";
}

} // namespace putmd
