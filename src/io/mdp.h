/* io/mdp.h — the run parameters, typed, parsed from a GROMACS .mdp file.
 *
 * This is the one place where .mdp text becomes configuration. Keys are
 * case-insensitive and '-' and '_' are equivalent (as in GROMACS). Every key
 * putmd knows is bound to a typed field with a validator; a known key with a
 * value putmd does not support is an error naming the line, the value and the
 * values that are valid. Unknown keys are collected as warnings (GROMACS
 * users keep many keys in their files), and a key given twice is an error.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "topology/topology.h"

namespace putmd
{

enum class Integrator { Md, MdVv, Steep };
enum class CoulombType { Cutoff, ReactionField, Pme };
enum class InteractionModifier { None, PotentialShift, ForceSwitch };
enum class VdwType { Cutoff };
enum class DispCorr { No, EnerPres, Ener };
enum class ConstraintsMode { None, HBonds, AllBonds };
enum class ConstraintAlgorithm { Lincs, Shake };
enum class TCoupl { No, VRescale, Berendsen, NoseHoover };
enum class PCoupl { No, CRescale, Berendsen, ParrinelloRahman };
enum class PCouplType { Isotropic, SemiIsotropic, Anisotropic };
enum class CommMode { Linear, None };

struct MdpOptions
{
    // run control
    Integrator integrator = Integrator::Md;
    double     tinit      = 0;
    double     dt         = 0.001;
    long       nsteps     = 0;
    double     emtol      = 10.0;
    double     emstep     = 0.01;
    std::vector<std::string> defines; // from "define = -DX -DY=1"
    std::vector<std::string> includeDirs; // from "include = -I/dir"
    RefCoordScaling          refcoordScaling = RefCoordScaling::No; // position restraints' references under pressure coupling

    // neighbour searching
    int    nstlist               = 10;
    double verletBufferTolerance = 0.005;
    double rlist                 = 1.0;

    // electrostatics and van der Waals
    CoulombType         coulombType     = CoulombType::Cutoff;
    InteractionModifier coulombModifier = InteractionModifier::PotentialShift;
    double              rcoulomb        = 1.0;
    double              epsilonR        = 1.0;
    double              epsilonRf       = 0.0; // 0 means infinity
    VdwType             vdwType         = VdwType::Cutoff;
    InteractionModifier vdwModifier     = InteractionModifier::PotentialShift;
    double              rvdw            = 1.0;
    double              rvdwSwitch      = 0.0;
    DispCorr            dispCorr        = DispCorr::No;

    // Ewald / PME
    double fourierSpacing = 0.12;
    int    fourierN[3]    = { 0, 0, 0 };
    int    pmeOrder       = 4;
    double ewaldRtol      = 1e-5;

    // constraints
    ConstraintsMode     constraints         = ConstraintsMode::None;
    ConstraintAlgorithm constraintAlgorithm = ConstraintAlgorithm::Lincs;
    int                 lincsOrder          = 4;
    int                 lincsIter           = 1;
    double              shakeTol            = 1e-4;
    bool                continuation        = false;

    // coupling
    TCoupl                   tcoupl     = TCoupl::No;
    int                      nsttcouple = -1;
    std::vector<std::string> tcGrps;
    std::vector<double>      tauT;
    std::vector<double>      refT;
    PCoupl                   pcoupl     = PCoupl::No;
    PCouplType               pcouplType = PCouplType::Isotropic;
    int                      nstpcouple = -1;
    double                   tauP       = 1.0;
    std::vector<double>      refP;
    std::vector<double>      compressibility;

    // velocities and centre of mass
    bool     genVel  = false;
    double   genTemp = 300;
    long     genSeed = -1;
    long     ldSeed  = -1;
    CommMode commMode = CommMode::Linear;
    std::vector<std::string> commGrps;   // centre-of-mass groups (empty: System)
    std::vector<std::string> freezeGrps; // frozen groups, with freezeDim: Y/N for x y z per group
    std::vector<std::string> freezeDim;
    int      nstcomm  = 100;

    // output
    int    nstcalcenergy        = 100;
    int    nstenergy            = 1000;
    int    nstlog               = 1000;
    int    nstxout              = 0;
    int    nstvout              = 0;
    int    nstfout              = 0;
    int    nstxoutCompressed    = 0;
    double compressedXPrecision = 1000;
    std::vector<std::string> compressedXGrps;
    std::vector<std::string> energyGrps; // energy groups: group-pair energy terms (run/energy_groups.h)

    /* Where each key was set (normalised key -> file:line), for later errors
     * that involve several keys or the system (e.g. a cut-off longer than half
     * the box). */
    std::map<std::string, SourceLocation> setAt;

    /* Location of a key, or the file alone when it kept its default. */
    SourceLocation where(const std::string& key) const;
    std::string    file;
};

struct MdpParseResult
{
    MdpOptions               options;
    std::vector<std::string> warnings; // unknown keys, each with file:line
};

MdpParseResult parseMdp(const std::string& text, const std::string& path);
MdpParseResult readMdp(const std::string& path);

/* Normalised key: lower case, '_' replaced by '-'. */
std::string normaliseMdpKey(const std::string& key);

const char* enumName(CoulombType v);
const char* enumName(InteractionModifier v);
const char* enumName(DispCorr v);
const char* enumName(Integrator v);
const char* enumName(ConstraintsMode v);

} // namespace putmd
