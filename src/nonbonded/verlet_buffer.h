/* nonbonded/verlet_buffer.h — the pair-list radius rlist from the
 * verlet-buffer-tolerance, and the nstlist mdrun would raise it to, as
 * GROMACS 2022 chooses them (Páll & Hess, Comput. Phys. Commun. 184, 2641
 * (2013); GROMACS's calc_verletbuf.cpp and pairlist_tuning.cpp).
 *
 * A pair list built every nstlist steps with radius rlist > rc is used for
 * nstlist - 1 further steps (GROMACS's list lifetime). Pairs that start
 * beyond rlist and drift inside rc in that time are missed; the estimate
 * of the energy error they cause is:
 *  - atoms are grouped into kinds by (LJ type, charge, mass, constraint
 *    partner mass and length); massless particles are skipped;
 *  - an atom's displacement over t = (nstlist - 1) dt is Gaussian with
 *    variance kT t^2 / m per dimension; an atom constrained to a partner of
 *    more than 0.4 times its mass (one constraint, the heaviest partner;
 *    for SETTLE O-H) moves with the pair's centre of mass in 3D plus a
 *    rotation in 2D whose variance saturates (GROMACS's rational fit), and
 *    the 2D distribution is bounded by a shifted, scaled Gaussian;
 *  - a pair's potential beyond the cut-off is expanded to third order in
 *    the derivatives at rc and integrated against the relative
 *    displacement distribution, weighted by the pair count and the shell
 *    density 4 pi (rlist + sigma)^2 N / V; the absolute values per kind
 *    pair are summed (LJ and Coulomb of one kind pair may cancel);
 *  - the cluster pair list (4 atoms in i, 4 in j on CPUs) misses only a
 *    fraction of the pairs just beyond rlist; the drift is multiplied by
 *    the two clusters' surface fractions (GROMACS's tetrahedron formula,
 *    with the particle spacing of an HCP packing at the mean density);
 *  - rlist = rc + k * 0.001 nm with the smallest k (found by bisection)
 *    whose drift per atom per ps, over nstlist dt, is within the tolerance.
 *
 * Derivatives at the cut-off, as GROMACS 2022 takes them (checked against
 * gmx -debug output): LJ with Potential-shift or no modifier uses only -V'
 * (later versions add V'' and -V'''); Force-switch uses only -V''' with
 * GROMACS's expression, which is not the exact one (the unswitched part is
 * p(p+1)(p+2) rc^(p+3) instead of rc^-(p+3), and the switch part lacks the
 * factor p) but is what sets GROMACS's buffer; Coulomb uses -V' and V'' of
 * reaction-field (plain cut-off is reaction-field with eps-rf = 1) or of
 * Ewald real space. The density is N / V (GROMACS 2023 and later use a
 * local, cell-weighted density).
 *
 * Reference temperature: the largest ref-t of the coupled groups. With
 * tcoupl = no and integrator md/md-vv (NVE) GROMACS uses the initial
 * temperature: gen-temp with gen-vel = yes, else sum m v^2 / (ndf kB) of
 * the starting velocities (initialTemperature below); at 0 K it uses a
 * fixed buffer of 10 % of the cut-off. mdrun keeps the NVE buffer and does
 * not change nstlist.
 *
 * chooseNstlistAndRlist() reproduces mdrun's increaseNstlist(): it tries
 * nstlist 20, 25, 40, 50, 80, 100 (those above the mdp value), accepting a
 * value while its rlist fits the box and stays below rlist_max, and stops
 * after the first one whose rlist reaches rlist_ok, where
 *   rlist_ok/max = (rlist(10) + inc) * cbrt(1.25 / 1.35) - inc,
 *   inc = 0.6 cbrt((ci - 1 + cj - 1) / density),
 * i.e. the pair list may grow by 25 % (at most 35 %) over that of nstlist
 * 10. Not reproduced: dynamic pruning (mdrun's inner list), GPU and Xeon
 * Phi factors, domain-decomposition limits, virtual sites, free energy,
 * Brownian dynamics, LJ-PME.
 */
#pragma once

#include <string>
#include <vector>

#include "core/box.h"
#include "core/vec.h"
#include "io/mdp.h"
#include "topology/topology.h"

namespace putmd
{

/* Atoms per i- and j-cluster of the pair list the buffer is set for.
 * GROMACS's CPU setups (plain C 4x4, SIMD 4xN, 2xNN) all count as 4x4 for
 * the drift (clusters above 4 use the 4-atom formula); {1, 1} is a plain
 * atom-pair list (grompp's "rlist for 1x1 atom pair-list"). j sizes above 4
 * only change the nstlist search (a larger effective list radius). */
struct PairListSetup
{
    int clusterSizeI = 4;
    int clusterSizeJ = 4;
};

struct VerletBufferResult
{
    double                   rlist   = 0;
    int                      nstlist = 10;
    std::vector<std::string> notes; // what was chosen and why, for the log
};

/* The largest ref-t over groups with tau-t >= 0; -1 for NVE (tcoupl = no
 * with md or md-vv), where the caller supplies the initial temperature;
 * 0 for energy minimisation. */
double maxReferenceTemperature(const MdpOptions& mdp);

/* sum m v^2 / (degreesOfFreedom kB), GROMACS's NVE buffer temperature
 * (degrees of freedom as grompp counts them: 3 per massive atom, minus
 * constraints, 3 per SETTLE, minus 3 with centre-of-mass removal). */
double initialTemperature(const Topology& top, const std::vector<DVec>& v, double degreesOfFreedom);

/* Estimated energy drift in kJ/mol/ps per atom for a list of radius rlist
 * updated every nstlist steps at temperature T (the quantity compared with
 * verlet-buffer-tolerance). */
double estimateDriftPerAtom(const Topology& top, const MdpOptions& mdp, const Box& box, int nstlist,
                            double referenceTemperature, double rlist, PairListSetup setup = {});

/* rlist for the given nstlist. verlet-buffer-tolerance = -1: the mdp rlist,
 * which must be >= max(rvdw, rcoulomb) (InputError otherwise); a tolerance
 * of exactly 0 is an InputError. Energy minimisation: the cut-off. NVE at
 * 0 K: 1.1 times the cut-off. Negative temperatures are an InputError. */
double estimateRlist(const Topology& top, const MdpOptions& mdp, const Box& box, int nstlist,
                     double referenceTemperature, PairListSetup setup = {});

/* Atoms that move and interact alike (the kinds above; massless particles
 * left out), with how many there are. Making them takes a pass over the
 * atoms; estimates for several nstlist values share one set (water-spce-96k
 * makes about 90 estimates at start-up, for nstlist and the prune
 * interval: 0.61 -> 0.54 s for the whole start-up of a run on one rank,
 * on every rank of a decomposed run). */
struct AtomKind
{
    double mass        = 0;
    int    ljType      = 0;
    double charge      = 0;
    bool   constrained = false;
    double partnerMass = 0; // heaviest constraint partner
    double partnerDist = 0; // constraint length to it
    double count       = 0;
};
std::vector<AtomKind> atomKinds(const Topology& top);

/* estimateRlist with the kinds of top made once by the caller. */
double estimateRlist(const Topology& top, const std::vector<AtomKind>& kinds, const MdpOptions& mdp, const Box& box,
                     int nstlist, double referenceTemperature, PairListSetup setup = {});

/* How much the pair list may grow (in volume, cluster overhang included)
 * over that of nstlist 10 when nstlist is raised: GROMACS's CPU factor, and
 * its GPU factor, which putmd's mixed build uses (its SIMD kernel is fast
 * next to its search, as GROMACS's GPU kernels are: nstlist 80 instead of
 * 40-50 saved ~0.1 s of search per 500 steps of rnase at the same kernel
 * time). */
constexpr double c_listGrowthCpu = 1.25;
constexpr double c_listGrowthGpu = 1.4;

/* The nstlist mdrun would switch to and the rlist it needs (see above);
 * starts from estimateRlist at the mdp nstlist, which must fit the box
 * (rlist below half the shortest box vector and below the smallest
 * diagonal element, else InputError). The caller decides whether to use
 * the larger nstlist. listGrowth: c_listGrowthCpu gives mdrun's CPU choice. */
VerletBufferResult chooseNstlistAndRlist(const Topology& top, const MdpOptions& mdp, const Box& box,
                                         double referenceTemperature, PairListSetup setup = {},
                                         double listGrowth = c_listGrowthCpu);

} // namespace putmd
