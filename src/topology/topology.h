/* topology/topology.h — the global topology: every atom of the system with
 * resolved parameters, in topology order.
 *
 * Built once from a parsed TopologyFile (see build_topology.h). Listed
 * interactions carry global atom indices and their final parameters in
 * internal units (nm, radians, kJ/mol); nonbonded parameters are a C6/C12
 * matrix over the atom types that occur. Exclusions are stored per atom
 * (CSR, sorted, without the atom itself).
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topology/name_list.h"

#include "core/error.h"

namespace putmd
{

struct HarmonicBond { int i, j; double b0, kb; };            // bonds 1, G96 bonds 2, harmonic potentials 6
struct MorseBond { int i, j; double b0, d, beta; };           // bonds 3: D [1 - exp(-beta (r - b0))]^2
struct RestraintBond { int i, j; double low, up1, up2, kdr; }; // bonds 10: flat between low and up1 (kdr: not "k", an atom field elsewhere)
struct HarmonicAngle { int i, j, k; double theta0, ktheta; };  // angles 1, G96 angles 2 (cos)
struct UreyBradley { int i, j, k; double theta0, ktheta, r13, kub; };
struct PeriodicDihedral { int i, j, k, l; double phi0, kphi; int mult; }; // 1, 4, 9
struct HarmonicImproper { int i, j, k, l; double xi0, kxi; };            // 2
struct RyckaertBellemans { int i, j, k, l; double c[6]; };               // 3
struct Pair14 { int i, j; double c6, c12, qq; }; // qq includes fudgeQQ
/* A virtual site: a massless particle placed from other atoms' positions
 * after every update, its force spread back onto them. Linear sites
 * (virtual_sites2 1, virtual_sites3 1, virtual_sitesn 1/2/3) are a
 * weighted sum of their atoms (weights summing to 1). The others, with
 * atoms i j k l of `from` and r_ij = x_j - x_i:
 *  - Fd2 (virtual_sites2 2): x_i + a r_ij/|r_ij|;
 *  - Fd3 (3fd): x_i + b t/|t|, t = r_ij + a r_jk;
 *  - Fad3 (3fad): x_i + a r_ij/|r_ij| + b p/|p|, p the part of r_jk
 *    normal to r_ij; a = d cos(theta), b = d sin(theta) (as GROMACS stores
 *    the line's theta and d);
 *  - Out3 (3out): x_i + a r_ij + b r_ik + c (r_ij x r_ik);
 *  - Fdn4 (4fdn): x_i + c m/|m|, m = (a r_ik - r_ij) x (b r_il - r_ij). */
struct VirtualSite
{
    enum class Kind { Linear, Fd2, Fd3, Fad3, Out3, Fdn4 };
    int                 site = 0;
    Kind                kind = Kind::Linear;
    std::vector<int>    from;    // constructing atoms (the first is the reference for periodic images)
    std::vector<double> weights; // Linear
    double              a = 0, b = 0, c = 0; // the others
};

struct CmapTorsion { int i, j, k, l, m; int type; }; // phi = i-j-k-l, psi = j-k-l-m
struct Constraint { int i, j; double length; };

/* A CMAP grid ready for bicubic interpolation: per grid point (phi-major,
 * phi and psi from -180 degrees in steps of 360/n) the energy and its
 * derivatives d/dphi, d/dpsi, d2/dphi dpsi (kJ/mol per degree), from
 * natural cubic splines over the periodically extended grid (as grompp). */
struct CmapGrid
{
    int                 n = 0;
    std::vector<double> data; // 4 * n * n
};
struct Settle { int o, h1, h2; double doh, dhh; };

/* A position restraint on one atom ([ position_restraints ]). Function 1
 * is harmonic per dimension (force constants k, kJ/mol/nm^2); function 2
 * is flat-bottomed: zero within r of the reference, harmonic (constant
 * kFlat) beyond it, or the reverse when r < 0, in the geometry GROMACS
 * numbers 1 sphere, 2 cylinder along z, 3/4/5 layer normal to x/y/z,
 * 6/7/8 cylinder along x/y/z. The reference is set from the restraint
 * coordinates (-r) in the form refcoord-scaling asks for (see
 * listed/position_restraints.h). */
struct PositionRestraint
{
    int    i;
    int    func;
    double k[3]     = { 0, 0, 0 }; // function 1
    int    geometry = 0;           // function 2
    double r = 0, kFlat = 0;       // function 2
    double ref[3]   = { 0, 0, 0 }; // reference: absolute, box fractions or relative to the COM
    /* Whether the atom's reference counts in the restraints' centre of mass
     * (refcoord-scaling com). As grompp: the first molecule of each
     * [ molecules ] line only, and a flat-bottomed restraint not when its
     * molecule-local atom number already had a harmonic one. */
    bool inCom = false;
};

enum class RefCoordScaling { No, All, Com };

/* A group of an index file (-n): 0-based atoms, with the line of each. */
struct IndexGroup
{
    std::string      name;
    std::vector<int> atoms;
    std::vector<int> lines;
    SourceLocation   where; // the header line
};

/* The restraints' shared state: how references follow the box, and the
 * restrained atoms' centre of mass in box fractions (refcoord-scaling com). */
struct PositionRestraintSettings
{
    RefCoordScaling scaling        = RefCoordScaling::No;
    double          comFraction[3] = { 0, 0, 0 };
    bool            any            = false; // the system has position restraints of function 1
    bool            anyFlat        = false; // ... of function 2
};

struct ListedInteractions
{
    std::vector<HarmonicBond>      bonds;
    std::vector<HarmonicBond>      g96Bonds;
    std::vector<MorseBond>         morseBonds;         // function 3
    std::vector<HarmonicBond>      harmonicPotentials; // function 6 (no exclusions, never a constraint)
    std::vector<RestraintBond>     restraintBonds;     // function 10 (no exclusions, never a constraint)
    std::vector<HarmonicAngle>     angles;
    std::vector<HarmonicAngle>     g96Angles;
    std::vector<HarmonicAngle>     restrictedAngles; // function 10: 1/2 k (cos - cos0)^2 / sin^2
    std::vector<UreyBradley>       ureyBradley;
    std::vector<PeriodicDihedral>  properDihedrals;   // functions 1 and 9
    std::vector<PeriodicDihedral>  periodicImpropers; // function 4
    std::vector<HarmonicImproper>  impropers;         // function 2
    std::vector<RyckaertBellemans> ryckaertBellemans; // function 3
    std::vector<RyckaertBellemans> fourierDihedrals;  // function 5, as grompp converts them to RB coefficients
    std::vector<Pair14>            pairs;
    std::vector<CmapTorsion>       cmap;
    std::shared_ptr<const std::vector<CmapGrid>> cmapGrids; // shared by every copy of the lists
    bool connections = false; // [ bonds ] 5 in the system: GROMACS lists "Connect Bonds" (always 0)
};

struct Topology
{
    std::string systemName;
    int         numAtoms = 0;

    std::vector<double>      charge;
    std::vector<double>      mass;
    std::vector<int>         ljType; // index into the C6/C12 matrix
    NameList                 atomName;
    NameList                 residueName;
    std::vector<int>         residueNumber;
    NameList                 typeName; // nonbonded atom type
    std::vector<int>         moleculeType;      // index into moleculeTypeNames
    std::vector<int>         moleculeIndex;     // 0-based molecule number
    std::vector<std::string> moleculeTypeNames;
    /* Set for the part of the system one rank holds (domain decomposition):
     * the global index of each atom, so messages name atoms as the user
     * numbers them. Empty for the whole system. */
    std::vector<int> globalIndex;

    int                 numLjTypes = 0;
    std::vector<double> c6, c12; // numLjTypes x numLjTypes

    std::vector<int> exclusionStart; // numAtoms + 1
    std::vector<int> exclusions;

    ListedInteractions      listed;
    std::vector<Constraint> constraints;
    std::vector<Settle>     settles;

    std::vector<VirtualSite>       virtualSites;       // in construction order
    std::vector<IndexGroup>        indexGroups;        // -n FILE's groups (empty: GROMACS's default groups)
    std::string                    indexFile;
    std::vector<PositionRestraint> positionRestraints; // global atom indices (local ones for a rank's part)
    PositionRestraintSettings      positionRestraintSettings;

    /* For the dispersion correction: number of excluded atom pairs (i<j) per
     * LJ type pair, accumulated as sum of C6 and count over excluded pairs. */
    double excludedPairC6Sum = 0;
    double excludedPairCount = 0;

    double fudgeQQ  = 1;
    int    combRule = 1;

    double c6Of(int ti, int tj) const { return c6[ti * numLjTypes + tj]; }
    double c12Of(int ti, int tj) const { return c12[ti * numLjTypes + tj]; }
    double totalCharge() const;

    /* "atom 12 (LYS1 CA)" — for error messages */
    std::string describeAtom(int i) const;
};

} // namespace putmd
