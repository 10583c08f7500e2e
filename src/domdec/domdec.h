/* domdec/domdec.h — domain decomposition: which atoms a rank owns, which it
 * sees, and which interactions it computes.
 *
 * Ownership. The box is cut into a grid of domains (dd_grid.h), one per
 * rank. A rank owns the update groups (update_groups.h) whose centre lies in
 * its domain: its "home" atoms, kept in group order (groups by first atom).
 * At every search step groups are put back in the box as a whole and those
 * that left migrate to the neighbour domain, in three staged pulses (x, y,
 * z), so a group that crossed a corner arrives via its edge neighbours.
 *
 * Halo (eighth shell). A rank also sees copies of the atoms of its "upper"
 * neighbours (domain offsets o in {0..P_x} x {0..P_y} x {0..P_z}, o != 0,
 * with P_d the halo pulses of dimension d: 1 where domains are at least the
 * halo distance wide, up to 3 for narrower ones, dd_grid.h) whose groups
 * lie within the halo distance of its upper faces. Each local atom carries
 * the zone bit mask it came from (bit d: o_d > 0; home atoms 0). Coordinates of a copy are the
 * image next to this domain (box vectors added across the periodic edge),
 * so every distance on a rank is a plain difference. A dimension with one
 * domain takes its halo from the rank itself (a local copy), which keeps
 * one code path for every grid.
 *
 * Exactly once. A set of atom copies (a pair, a bonded interaction, an
 * excluded pair) is computed on a rank exactly when the copies are mutually
 * close and the AND of their zone masks is zero: in every dimension at least
 * one copy is in this rank's row of domains. For atoms of domains D_a the
 * computing rank is then unique (per dimension the lower of the one or two
 * domain indices involved), and it has all the copies because each lies on
 * the far side of a face from another atom within the halo distance.
 *
 * Two halo schedules move the same atoms: staged pulses (x, then y, then z,
 * forwarding what was received; P_d pulses in d, the k-th forwarding what
 * the (k-1)-th brought; P_x + P_y + P_z messages out per step) and direct
 * exchange with every zone's rank ((P_x+1)(P_y+1)(P_z+1) - 1 messages). Forces go back the
 * reverse way. All traffic goes through comm::Exchange, so the backend
 * (p2p, rma, shm, shmem) is a run-time choice that changes no result bit.
 */
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"
#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "domdec/dd_grid.h"
#include "domdec/domain_bounds.h"
#include "domdec/load_balance.h"
#include "timing/stage_timer.h"
#include "domdec/update_groups.h"
#include "topology/topology.h"

namespace putmd
{

enum class HaloSchedule
{
    Staged,
    Direct
};

struct DdOptions
{
    std::optional<std::array<int, 3>> grid; // -dd nx ny nz
    HaloSchedule                      schedule = HaloSchedule::Staged;
    DlbMode                           dlb      = DlbMode::Auto; // -dlb
    /* > 0: the update groups' radius to use (a continuation's, from its
     * checkpoint) instead of measuring it on the starting coordinates, so
     * the halo distance and the balancing limits are the run's. */
    double groupRadius = -1;
};

/* Pairs found at a search step, in CSR form over local atoms. */
struct LocalPairs
{
    std::vector<int> start; // numLocal + 1
    std::vector<int> j;
};

class DomainDecomposition
{
public:
    /* x: the starting coordinates (every rank reads the same input). */
    DomainDecomposition(comm::Communicator& comm, const Topology& global, const std::vector<Vec3<real>>& x,
                        const Box& box, double rlist, const DdOptions& options);
    ~DomainDecomposition();

    /* From the full state (same on every rank): keep this rank's groups.
     * xHome, vHome become the home atoms' coordinates and velocities. */
    void distribute(const std::vector<Vec3<real>>& x, const std::vector<Vec3<real>>& v, const Box& box,
                    std::vector<Vec3<real>>& xHome, std::vector<Vec3<real>>& vHome);

    /* Search step: put groups in the box, migrate, rebuild the halo, the
     * local topology and the pair lists. xHome, vHome are reordered. */
    void repartition(std::vector<Vec3<real>>& xHome, std::vector<Vec3<real>>& vHome, const Box& box);
    /* Pressure coupling changed the box between search steps: the halo's
     * periodic images from now on are shifted by the new box vectors. */
    void setBox(const Box& box);

    int numHome() const { return numHome_; }
    int numLocal() const { return static_cast<int>(globalIndex_.size()); }
    /* Global atom index of each local atom (home first, then halo). */
    const std::vector<int>& globalIndex() const { return globalIndex_; }
    /* The topology of the local atoms: parameters, exclusions and listed
     * interactions this rank computes (local indices). */
    const Topology& localTopology() const { return localTop_; }
    /* The topology of the home atoms only, with their constraints. */
    const Topology& homeTopology() const { return homeTop_; }
    /* Atom pairs within rlist this rank computes: both atoms home, and the
     * rest (the double build's atom-pair lists; the cluster lists search
     * the local atoms themselves). Searched when first asked after a
     * repartition. */
    const LocalPairs& localPairs()
    {
        searchPairsIfStale();
        return localPairs_;
    }
    const LocalPairs& nonlocalPairs()
    {
        searchPairsIfStale();
        return nonlocalPairs_;
    }
    /* Zone mask of each local atom (0 home, bit d: from the upper
     * neighbour in d) and the local coordinates at the last repartition
     * (home and halo), for a pair search. */
    const std::vector<int>&        zones() const { return zone_; }
    const std::vector<Vec3<real>>& searchCoordinates() const { return xLocal_; }
    /* Bumped at every repartition (so users know their caches are stale). */
    long partitionCount() const { return partitionCount_; }

    /* Halo coordinates: xLocal has numLocal() entries, the home part filled
     * by the caller; start/finish fill the rest. */
    void haloCoordinatesStart(std::vector<Vec3<real>>& xLocal);
    void haloCoordinatesFinish(std::vector<Vec3<real>>& xLocal);
    /* Halo forces: adds the forces on halo copies to their owners' entries. */
    /* The time of waiting for arrival goes to the HaloForcesWait stage, the
     * rest (packing, sending, adding) to HaloForces, when timers is set. */
    void haloForces(std::vector<Vec3<real>>& fLocal, StageTimers* timers = nullptr);

    /* Virtual sites built from atoms of several update groups (split sites,
     * update_groups.h), such as pdb2gmx -vsite hydrogens' backbone
     * hydrogens. Each is computed by exactly one rank, the one where the
     * site and its atoms are mutually close with a zero AND of zone masks
     * (the rule of the listed interactions), which has them all.
     *
     * constructSplitSites (after the update, on the new home coordinates):
     * a halo exchange of the home coordinates, the computing rank places
     * its sites in its local copies, and the moves go back to the sites'
     * home entries by the reverse (force) exchange.
     *
     * spreadSplitSiteForces (after haloForces summed the forces on home
     * entries): the total force on each site goes forward to every copy
     * (unshifted), the computing rank spreads it onto its local copies of
     * the atoms (and the virial), and a second reverse exchange brings the
     * halo parts home. Sites keep no force. */
    bool hasSplitSites() const { return numSplitSites_ > 0; }
    void constructSplitSites(std::vector<Vec3<real>>& xHome, const Box& box);
    void spreadSplitSiteForces(std::vector<Vec3<real>>& fLocal, const std::vector<Vec3<real>>& xLocal, const Box& box,
                               Matrix3* virial, StageTimers* timers);

    /* Home values of every rank, in global atom order, on rank 0 (empty on
     * the others). */
    std::vector<Vec3<real>> gatherHome(const std::vector<Vec3<real>>& home) const;
    /* Gathered positions (global order) with every update group's centre
     * put in the unit cell, the group moved as a whole: the images a
     * decomposed run holds depend on when its groups were last wrapped,
     * and a run continued from a checkpoint wraps them at its start, so
     * the final coordinates are written in these images (the same text
     * for the uninterrupted and the continued run). */
    void putGroupsInBox(std::vector<Vec3<real>>& x, const Box& box) const;

    /* Dynamic load balancing (load_balance.h, domain_bounds.h).
     * Boundaries: per dimension the fractional coordinates (0 .. 1) of the
     * slabs of domains, per column of the dimensions before (staggered),
     * flat; uniform until balance() moves them. balance(): the load of
     * every rank (the same vector on every rank, e.g. summed in rank order)
     * moves the boundaries; the next repartition migrates the groups. */
    using Bounds = DomainBounds::Flat;
    const Bounds& bounds() const { return bounds_.flat(); }
    /* Boundaries from a checkpoint; false (and nothing changed) when they
     * do not fit this grid and box (another grid, or slabs too narrow). */
    bool setBounds(const Bounds& bounds);
    void balance(const std::vector<double>& rankLoads, double damping = kDlbDamping);
    /* Balancing turned off: the boundaries a step towards equal domains
     * (domain_bounds.h); true once they are there. */
    bool relaxBounds();
    /* Each slab's width (nm) along d, column after column. */
    std::vector<double> slabWidths(int d) const;
    int                 numColumns(int d) const { return bounds_.numColumns(d); }

    const DdGrid& grid() const { return grid_; }
    double        haloDistance() const { return haloDistance_; }
    double        groupRadius() const { return groups_.maxRadius; }
    comm::Communicator& communicator() { return comm_; }

private:
    struct Pulse;
    void wrapGroups(std::vector<Vec3<real>>& xHome, const Box& box);
    void migrate(std::vector<Vec3<real>>& xHome, std::vector<Vec3<real>>& vHome, const Box& box);
    void migrateOneDomain(std::vector<Vec3<real>>& xHome, std::vector<Vec3<real>>& vHome, const Box& box, int d,
                          int roundsLeft);
    void sortHome(std::vector<Vec3<real>>& xHome, std::vector<Vec3<real>>& vHome);
    void setupHalo(const std::vector<Vec3<real>>& xHome, const Box& box);
    void buildLocalTopology(const Box& box);
    void searchPairs();
    void searchPairsIfStale()
    {
        if (pairsSearched_ != partitionCount_)
        {
            searchPairs();
            pairsSearched_ = partitionCount_;
        }
    }
    std::array<int, 3>    domainOf(const DVec& fractional) const;
    std::array<double, 3> boxWidths() const;
    DVec               groupCentre(const std::vector<Vec3<real>>& x, int begin, int count) const;

    comm::Communicator& comm_;
    const Topology&     global_;
    DdOptions           options_;
    DdGrid              grid_;
    std::array<int, 3>  coord_{};
    DomainBounds        bounds_;
    UpdateGroups        groups_;
    double              rlist_;
    double              haloDistance_;
    Box                 box_;
    long                partitionCount_ = 0;
    long                pairsSearched_  = -1; // partitionCount_ of the atom-pair lists

    int              numHome_ = 0;
    std::vector<int> globalIndex_; // local -> global
    std::vector<int> zone_;        // local -> zone mask (bit d: from the upper neighbour in d)
    std::vector<int> homeGroupStart_; // local start of each home group (+1 end)
    std::vector<Vec3<real>> xLocal_;  // coordinates at the last search (home + halo)
    std::vector<int> firstCopy_;      // global -> first local copy (-1)
    std::vector<int> nextCopy_;       // local -> next copy of the same atom (-1)

    std::vector<std::unique_ptr<Pulse>> pulses_; // staged: x (P_x), y (P_y), z (P_z); direct: one
    std::vector<std::unique_ptr<comm::Exchange>> migration_; // per dimension

    // per listed type: the interactions each atom is the first atom of (CSR)
    std::array<std::vector<int>, 16> reverseStart_, reverse_; // empty for listed types the system has none of
    bool                             reverseBuilt_ = false;
    long                             numListedGlobal_ = 0;
    std::vector<int>                 posresStart_, posres_; // restraints of each global atom (CSR)
    std::vector<int>                 vsiteOfAtom_;          // virtual site constructing each global atom, or -1
    long                             numSplitSites_ = 0;
    std::vector<VirtualSite>         localSplitSites_; // computed here: local copies of the site and its atoms
    std::vector<int>                 homeSplitSites_;  // home atoms that are split sites (per partition)
    std::vector<Vec3<real>>          splitScratch_, splitForce_;
    /* A forward halo exchange without the periodic shifts (for forces). */
    void haloForward(std::vector<Vec3<real>>& a);
    void packAndStart(Pulse& pulse, const std::vector<Vec3<real>>& a);

    Topology   localTop_;
    Topology   homeTop_;
    LocalPairs localPairs_, nonlocalPairs_;
};

} // namespace putmd
