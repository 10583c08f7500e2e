/* run/md_setup.h — everything decided before the first step of `putmd run`.
 *
 * Checks the mdp for what dynamics needs (and reports what is not
 * supported before the run starts), resolves coupling groups, counts
 * degrees of freedom, chooses the pair-list radius and update interval,
 * and prepares initial velocities (read, or generated with gen-vel from a
 * Maxwell-Boltzmann distribution by the counter-based generator).
 */
#pragma once

#include <string>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "io/mdp.h"
#include "topology/topology.h"

namespace putmd
{

/* The fraction of verlet-buffer-tolerance putmd's exact pair list is sized
 * for (see prepareMd). */
constexpr double kExactListToleranceFactor = 0.1;

struct CouplingGroups
{
    std::vector<int>    groupOfAtom;
    std::vector<double> dof;  // degrees of freedom per group
    std::vector<double> refT; // reference temperature per group
    std::vector<double> tauT;
    int                 size() const { return static_cast<int>(dof.size()); }
};

struct MdSettings
{
    int            nstlist    = 10;
    double         rlist      = 1.0;
    double         displacementBuffer = 0; // for the blow-up check: the exact list's buffer
    int            nstlistPrune = 0;   // dynamic pruning interval (0: none)
    double         rlistInner   = 0;   // its list radius
    double         bufferTemperature = 0; // K: the temperature the pair-list buffers are sized for
    int            nsttcouple = 10;
    int            nstpcouple = 10;
    int            nstcalcenergy = 100;
    double         totalDof   = 0;
    CouplingGroups groups;
    std::vector<uint8_t> freeze; // per atom: bit d set when dimension d is frozen (freezegrps); empty: none
    std::vector<int>     comGroupOfAtom; // comm-grps: per atom, or -1 (not corrected); empty: one group, System
    std::vector<double>  comGroupMass;   // total mass per comm group
    uint64_t       ldSeed     = 0;
    std::vector<std::string> notes; // automatic choices, for the log
};

/* Throws InputError at the offending mdp line for unsupported settings.
 * box and the starting velocities choose the pair-list buffer (GROMACS's
 * estimate from verlet-buffer-tolerance; NVE uses the starting
 * temperature, or gen-temp with gen-vel). */
MdSettings prepareMd(const Topology& top, const MdpOptions& mdp, int numConstraintDof, const Box& box,
                     const std::vector<Vec3<real>>& velocities);

/* Dynamic pruning for prepareMd's pair list (the cluster-pair build): the
 * inner radius and interval that minimise the kernel's modelled cost per
 * step, into s.rlistInner and s.nstlistPrune (0: no pruning). Separate
 * from prepareMd because it estimates a buffer for every interval below
 * nstlist (about 0.1 s for rnase-amber-cubic), which the parallel set-up,
 * needing only rlist, should not pay. */
void choosePruning(MdSettings& s, const Topology& top, const MdpOptions& mdp, const Box& box);

/* The constraints' degrees of freedom that prepareMd takes, counted from
 * the topology (SETTLE 3 a molecule, 1 a constraint); what Constraints::
 * numConstraints gives for every topology whose constrained atoms have mass. */
int topologyConstraintDof(const Topology& top);

/* Maxwell-Boltzmann velocities at temperature T (seeded), with the
 * centre-of-mass motion removed and scaled to exactly T for dof. */
std::vector<Vec3<real>> generateVelocities(const std::vector<double>& mass, double temperature, uint64_t seed, double dof);

/* A seed from the mdp (-1: from the clock), reported in the log. */
uint64_t resolveSeed(long mdpSeed);

} // namespace putmd
