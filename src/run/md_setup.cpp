#include "run/md_setup.h"

#include <fmt/format.h>

#include <type_traits>

#include <chrono>
#include <cmath>

#include "core/random.h"
#include "core/units.h"
#include "nonbonded/cluster_nonbonded.h"
#include "nonbonded/verlet_buffer.h"
#include "io/text.h"
#include "run/groups.h"
#include "update/kinetic.h"

namespace putmd
{

namespace
{

void checkSupported(const MdpOptions& mdp)
{
    if (mdp.tcoupl == TCoupl::NoseHoover && mdp.integrator == Integrator::MdVv)
    {
        throw InputError(mdp.where("tcoupl"), "tcoupl = nose-hoover is implemented for integrator = md (leap-frog) only");
    }
    if (mdp.pcoupl != PCoupl::No)
    {
        const size_t need = mdp.pcouplType == PCouplType::Isotropic       ? 1
                            : mdp.pcouplType == PCouplType::SemiIsotropic ? 2
                                                                          : 6;
        if (mdp.refP.size() != need || mdp.compressibility.size() != need)
        {
            throw InputError(mdp.where(mdp.refP.size() != need ? "ref-p" : "compressibility"),
                             std::string("pcoupltype = ")
                                     + (need == 1   ? "isotropic needs one value"
                                        : need == 2 ? "semiisotropic needs two values (xy, z)"
                                                    : "anisotropic needs six values (xx, yy, zz, xy/yx, xz/zx, yz/zy)")
                                     + " for ref-p and for compressibility; found " + std::to_string(mdp.refP.size())
                                     + " and " + std::to_string(mdp.compressibility.size()));
        }
        if (mdp.pcouplType == PCouplType::Anisotropic && mdp.pcoupl == PCoupl::CRescale)
        {
            throw InputError(mdp.where("pcoupltype"),
                             "pcoupltype = anisotropic is implemented for pcoupl = Parrinello-Rahman and Berendsen; "
                             "C-rescale is isotropic or semiisotropic (GROMACS's mdrun stops for it too)");
        }
        if (mdp.integrator == Integrator::MdVv)
        {
            throw InputError(mdp.where("pcoupl"), "pressure coupling is implemented for integrator = md (leap-frog) only");
        }
    }
    if (!mdp.freezeGrps.empty() && mdp.integrator != Integrator::Md)
    {
        throw InputError(mdp.where("freezegrps"), "freezegrps is implemented for integrator = md (leap-frog) only");
    }
    if (mdp.integrator != Integrator::Steep && mdp.nsteps < 0)
    {
        throw InputError(mdp.where("nsteps"), "nsteps = -1 (run forever) is not supported yet; give the number of steps");
    }
}

/* How many of x, y, z a freeze mask freezes. */
int frozenDimensions(uint8_t mask)
{
    return (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
}

/* freezegrps / freezedim: per atom the frozen dimensions (bits x, y, z);
 * empty without freeze groups. A frozen atom with constraints must be frozen
 * in every dimension, with every atom of its constraint or SETTLE. */
std::vector<uint8_t> freezeMask(const Topology& top, const MdpOptions& mdp)
{
    if (mdp.freezeGrps.empty())
    {
        if (!mdp.freezeDim.empty())
        {
            throw InputError(mdp.where("freezedim"), "freezedim is given without freezegrps");
        }
        return {};
    }
    if (mdp.freezeDim.size() != 3 * mdp.freezeGrps.size())
    {
        throw InputError(mdp.where("freezedim"), "freezedim needs three values (Y or N for x, y, z) per freeze group: "
                                                         + std::to_string(3 * mdp.freezeGrps.size()) + " for "
                                                         + std::to_string(mdp.freezeGrps.size()) + " groups, found "
                                                         + std::to_string(mdp.freezeDim.size()));
    }
    std::vector<uint8_t> mask(top.numAtoms, 0);
    for (size_t g = 0; g < mdp.freezeGrps.size(); g++)
    {
        uint8_t bits = 0;
        for (int d = 0; d < 3; d++)
        {
            const std::string v = toLower(mdp.freezeDim[3 * g + d]);
            if (v == "y" || v == "yes")
            {
                bits |= uint8_t(1 << d);
            }
            else if (v != "n" && v != "no")
            {
                throw InputError(mdp.where("freezedim"), "freezedim value '" + mdp.freezeDim[3 * g + d]
                                                                 + "' is not valid; valid: Y, N (yes, no)");
            }
        }
        const auto in = atomsOfGroup(top, mdp.freezeGrps[g], mdp.where("freezegrps"));
        for (int i = 0; i < top.numAtoms; i++)
        {
            if (in[i])
            {
                mask[i] |= bits;
            }
        }
    }
    auto check = [&](std::initializer_list<int> atoms, const char* what) {
        bool any = false, all = true;
        for (int a : atoms)
        {
            any = any || mask[a] != 0;
            all = all && mask[a] == 7;
        }
        if (any && !all)
        {
            throw InputError(mdp.where("freezegrps"),
                             std::string("a ") + what + " joins " + top.describeAtom(*atoms.begin())
                                     + " to atoms that are not frozen in every dimension with it; freeze whole "
                                       "constrained molecules in x, y and z, or none of them");
        }
    };
    for (const auto& c : top.constraints)
    {
        check({ c.i, c.j }, "constraint");
    }
    for (const auto& st : top.settles)
    {
        check({ st.o, st.h1, st.h2 }, "SETTLE");
    }
    return mask;
}

/* Coupling interval: the mdp's, or GROMACS's default: 10, fewer when the
 * shortest coupling time would get under nmin steps per tau (nmin 5 for
 * v-rescale/Berendsen, 20 for Nose-Hoover, 10 for pressure coupling). */
int couplingInterval(int requested, double dt, double tauMin, int nmin)
{
    if (requested > 0)
    {
        return requested;
    }
    int n = 10;
    if (n * nmin * dt > tauMin)
    {
        n = static_cast<int>(tauMin / (dt * nmin));
    }
    return std::max(n, 1);
}

} // namespace

MdSettings prepareMd(const Topology& top, const MdpOptions& mdp, int numConstraintDof, const Box& box,
                     const std::vector<Vec3<real>>& velocities)
{
    checkSupported(mdp);
    MdSettings s;
    s.nstcalcenergy = mdp.nstcalcenergy > 0 ? mdp.nstcalcenergy : 1;
    double tauTMin  = 1e20;
    for (double t : mdp.tauT)
    {
        if (t > 0)
        {
            tauTMin = std::min(tauTMin, t);
        }
    }
    s.nsttcouple = couplingInterval(mdp.nsttcouple, mdp.dt, tauTMin, mdp.tcoupl == TCoupl::NoseHoover ? 20 : 5);
    // GROMACS's minimum integration steps per tau-p: 20 for the harmonic
    // Parrinello-Rahman barostat, 10 for the first-order ones
    s.nstpcouple = couplingInterval(mdp.nstpcouple, mdp.dt, mdp.tauP, mdp.pcoupl == PCoupl::ParrinelloRahman ? 20 : 10);
    s.ldSeed        = resolveSeed(mdp.ldSeed);
    s.freeze = freezeMask(top, mdp);
    // a molecule frozen whole has no constraint to remove degrees of freedom
    // from: its frozen dimensions are counted instead (as GROMACS)
    auto wholeFrozen = [&](std::initializer_list<int> atoms) {
        bool all = !s.freeze.empty();
        for (int a : atoms)
        {
            all = all && s.freeze[a] == 7;
        }
        return all;
    };
    for (const auto& st : top.settles)
    {
        numConstraintDof -= wholeFrozen({ st.o, st.h1, st.h2 }) ? 3 : 0;
    }
    for (const auto& c : top.constraints)
    {
        numConstraintDof -= wholeFrozen({ c.i, c.j }) ? 1 : 0;
    }
    double frozenDims = 0;
    for (uint8_t m : s.freeze)
    {
        frozenDims += frozenDimensions(m);
    }
    s.totalDof = 3.0 * (top.numAtoms - static_cast<double>(top.virtualSites.size())) - frozenDims - numConstraintDof
                 - (mdp.commMode == CommMode::Linear ? 3 : 0); // virtual sites have no degrees of freedom

    // temperature-coupling groups (one group, System, without coupling)
    std::vector<std::string> names = mdp.tcGrps.empty() ? std::vector<std::string>{ "System" } : mdp.tcGrps;
    s.groups.groupOfAtom = partitionIntoGroups(top, names, mdp.where("tc-grps"));
    s.groups.dof.assign(names.size(), 0);
    for (int g = 0; g < s.groups.size(); g++)
    {
        s.groups.refT.push_back(g < static_cast<int>(mdp.refT.size()) ? mdp.refT[g] : 0);
        s.groups.tauT.push_back(g < static_cast<int>(mdp.tauT.size()) ? mdp.tauT[g] : 0);
    }
    // degrees of freedom per group in proportion to the atoms' share (as GROMACS
    // does for the COM correction); constraints count for the group of their atoms
    std::vector<double> atoms(names.size(), 0);
    for (int i = 0; i < top.numAtoms; i++)
    {
        // not the virtual sites, nor frozen dimensions
        const int frozen = s.freeze.empty() ? 0 : frozenDimensions(s.freeze[i]);
        atoms[s.groups.groupOfAtom[i]] += top.mass[i] > 0 ? (3 - frozen) / 3.0 : 0;
    }
    std::vector<double> constrained(names.size(), 0);
    for (const auto& c : top.constraints)
    {
        if (!wholeFrozen({ c.i, c.j }))
        {
            constrained[s.groups.groupOfAtom[c.i]] += 0.5;
            constrained[s.groups.groupOfAtom[c.j]] += 0.5;
        }
    }
    for (const auto& st : top.settles)
    {
        if (!wholeFrozen({ st.o, st.h1, st.h2 }))
        {
            constrained[s.groups.groupOfAtom[st.o]] += 3;
        }
    }
    // centre-of-mass removal takes its 3 degrees of freedom from the groups
    // in proportion to their unconstrained degrees of freedom (GROMACS)
    const double comDof = mdp.commMode == CommMode::Linear ? 3 : 0;
    double       total  = 0;
    for (int g = 0; g < s.groups.size(); g++)
    {
        total += 3 * atoms[g] - constrained[g];
    }
    for (int g = 0; g < s.groups.size(); g++)
    {
        s.groups.dof[g] = (3 * atoms[g] - constrained[g]) * (total > 0 ? (total - comDof) / total : 0.0);
    }
    if (mdp.commMode == CommMode::Linear && !mdp.commGrps.empty()
        && !(mdp.commGrps.size() == 1 && toLower(mdp.commGrps[0]) == "system"))
    {
        // several centre-of-mass groups: each takes 3 degrees of freedom from
        // the (temperature group x COM group) cells of its atoms, in
        // proportion (as GROMACS); atoms in no COM group keep theirs
        const int ncom = static_cast<int>(mdp.commGrps.size());
        s.comGroupOfAtom.assign(top.numAtoms, -1);
        s.comGroupMass.assign(ncom, 0.0);
        for (int j = 0; j < ncom; j++)
        {
            const auto in = atomsOfGroup(top, mdp.commGrps[j], mdp.where("comm-grps"));
            for (int i = 0; i < top.numAtoms; i++)
            {
                if (!in[i])
                {
                    continue;
                }
                if (s.comGroupOfAtom[i] >= 0)
                {
                    throw InputError(mdp.where("comm-grps"), top.describeAtom(i) + " is in comm-grps groups '"
                                                                     + mdp.commGrps[s.comGroupOfAtom[i]] + "' and '"
                                                                     + mdp.commGrps[j] + "'; each atom may be in one");
                }
                s.comGroupOfAtom[i] = j;
                s.comGroupMass[j] += top.mass[i];
            }
        }
        const int                        ntc = s.groups.size();
        std::vector<std::vector<double>> cell(ntc, std::vector<double>(ncom + 1, 0.0)); // last: no COM group
        auto col = [&](int a) { return s.comGroupOfAtom[a] < 0 ? ncom : s.comGroupOfAtom[a]; };
        for (int i = 0; i < top.numAtoms; i++)
        {
            const int frozen = s.freeze.empty() ? 0 : frozenDimensions(s.freeze[i]);
            cell[s.groups.groupOfAtom[i]][col(i)] += top.mass[i] > 0 ? 3 - frozen : 0;
        }
        for (const auto& c : top.constraints)
        {
            if (!wholeFrozen({ c.i, c.j }))
            {
                cell[s.groups.groupOfAtom[c.i]][col(c.i)] -= 0.5;
                cell[s.groups.groupOfAtom[c.j]][col(c.j)] -= 0.5;
            }
        }
        for (const auto& st : top.settles)
        {
            if (!wholeFrozen({ st.o, st.h1, st.h2 }))
            {
                cell[s.groups.groupOfAtom[st.o]][col(st.o)] -= 3;
            }
        }
        std::vector<double> perCom(ncom + 1, 0.0);
        for (int g = 0; g < ntc; g++)
            for (int j = 0; j <= ncom; j++)
                perCom[j] += cell[g][j];
        s.totalDof = 0;
        for (int g = 0; g < ntc; g++)
        {
            double d = cell[g][ncom];
            for (int j = 0; j < ncom; j++)
            {
                d += perCom[j] > 0 ? cell[g][j] * (perCom[j] - 3) / perCom[j] : 0.0;
            }
            s.groups.dof[g] = d;
            s.totalDof += d;
        }
    }
    if (mdp.tcoupl != TCoupl::No)
    {
        if (mdp.tcGrps.empty())
        {
            throw InputError(mdp.where("tcoupl"), "temperature coupling needs tc-grps, tau-t and ref-t");
        }
        for (int g = 0; g < s.groups.size(); g++)
        {
            if (s.groups.refT[g] < 0)
            {
                throw InputError(mdp.where("ref-t"), "ref-t must not be negative (group " + names[g] + ")");
            }
            if (s.groups.tauT[g] == 0 || (s.groups.tauT[g] < 0 && s.groups.tauT[g] != -1))
            {
                throw InputError(mdp.where("tau-t"), "tau-t must be positive, or -1 for a group that is not coupled (group "
                                                             + names[g] + ")");
            }
        }
    }

    // pair list: GROMACS's buffer estimate for putmd's exact atom-pair list
    // (a 1x1 list), raising nstlist as mdrun would where that is safe
    double refT = maxReferenceTemperature(mdp);
    if (refT < 0)
    {
        std::vector<DVec> v;
        for (const auto& vi : velocities)
        {
            v.push_back(DVec(vi));
        }
        refT = mdp.genVel && !mdp.continuation ? mdp.genTemp : initialTemperature(top, v, s.totalDof);
    }
    // The double build's list holds exact atom pairs. GROMACS's estimate is
    // an upper bound; its clustered list, which also holds pairs beyond
    // rlist, ends up about 20 times below verlet-buffer-tolerance in
    // practice, an exact list sized for the same tolerance only about 8
    // times (12k SPC/E water, NVE: docs/validation.md), so the exact list is
    // sized for a tenth of the tolerance. The mixed build's cluster-pair
    // list (4x4 clusters, bounding boxes) is GROMACS's kind of list: it gets
    // GROMACS's 4x4 estimate at the full tolerance, and so the same nstlist
    // and rlist as mdrun.
    constexpr bool clusterList = std::is_same_v<real, float>;
    MdpOptions     forBuffer   = mdp;
    if (forBuffer.verletBufferTolerance > 0 && !clusterList)
    {
        forBuffer.verletBufferTolerance *= kExactListToleranceFactor;
    }
    const PairListSetup      listSetup = clusterList ? PairListSetup{ 4, 4 } : PairListSetup{ 1, 1 };
    // the cluster build lets the list grow as GROMACS does on GPUs (its
    // kernel is fast next to its search); the exact list as on CPUs
    const VerletBufferResult buffer =
            chooseNstlistAndRlist(top, forBuffer, box, refT, listSetup, clusterList ? c_listGrowthGpu : c_listGrowthCpu);
    s.nstlist                       = buffer.nstlist;
    s.rlist                         = buffer.rlist;
    // the displacement check (md_checks.cpp) measures motion against the
    // buffer an exact atom-pair list would need for this nstlist (a cluster
    // list may have none: rlist = cut-off, its clusters reach further)
    s.displacementBuffer = s.rlist - std::max(mdp.rcoulomb, mdp.rvdw);
    if (clusterList && mdp.verletBufferTolerance > 0 && mdp.integrator != Integrator::Steep)
    {
        MdpOptions exact = mdp;
        exact.verletBufferTolerance *= kExactListToleranceFactor;
        s.displacementBuffer = estimateRlist(top, exact, box, s.nstlist, refT, PairListSetup{ 1, 1 })
                               - std::max(mdp.rcoulomb, mdp.rvdw);
    }
    for (const auto& note : buffer.notes)
    {
        s.notes.push_back(note);
    }
    s.notes.push_back("pair list: rlist " + std::to_string(s.rlist) + " nm, updated every " + std::to_string(s.nstlist)
                      + " steps (buffer for " + std::to_string(refT) + " K)");
    s.bufferTemperature = refT;
    return s;
}

void choosePruning(MdSettings& s, const Topology& top, const MdpOptions& mdp, const Box& box)
{
    constexpr bool clusterList = std::is_same_v<real, float>;
    const double   refT        = s.bufferTemperature;
    // dynamic pruning (the cluster-pair kernels): an inner list, buffered for
    // the prune interval, pruned from the outer list every interval steps.
    // The interval minimises a cost model per step: the kernel's work grows
    // as (rlistInner + 0.3 nm)^3 (0.3: the clusters' overhang) and a prune
    // costs about 0.4 of a kernel call over the outer list (AVX2, Intel
    // Xeon, nonbonded_kernel_bench: 5.2 ms against 8.0 ms for the kernel
    // over the pruned list, 64% of the outer one)
    if (clusterList && mdp.verletBufferTolerance > 0 && s.nstlist > 2 && mdp.integrator != Integrator::Steep)
    {
        auto   cube      = [](double r) { return (r + 0.3) * (r + 0.3) * (r + 0.3); };
        // the AVX2 kernel skips the half of a cluster pair with no pair
        // within the inner radius: its inner list is one of 2 x 4 clusters
        const PairListSetup innerSetup{ clusterKernelPruneRows(), 4 };
        double bestCost  = cube(s.rlist); // no pruning
        const std::vector<AtomKind> kinds = atomKinds(top); // once for every interval tried
        // the inner radius grows with the interval, so once its own term
        // reaches the best cost no longer interval can win: the search
        // stops there (rnase-amber-cubic, nstlist 100: a fifth of the
        // estimates' time, the same choice; DynamicPruning.* in
        // tests/nonbonded/mixed_paths_tests.cpp checks the choice against
        // trying every interval)
        for (int n = 2; n < s.nstlist; n++)
        {
            const double inner = estimateRlist(top, kinds, mdp, box, n, refT, innerSetup);
            if (cube(inner) >= bestCost)
            {
                break;
            }
            const double cost  = cube(inner) + 0.4 * cube(s.rlist) / n;
            if (inner < s.rlist && cost < bestCost)
            {
                bestCost       = cost;
                s.nstlistPrune = n;
                s.rlistInner   = inner;
            }
        }
        if (s.nstlistPrune > 0)
        {
            s.notes.push_back(fmt::format("dynamic pruning: inner list rlist {:.4f} nm, pruned every {} steps",
                                          s.rlistInner, s.nstlistPrune));
        }
    }
}

int topologyConstraintDof(const Topology& top)
{
    return static_cast<int>(3 * top.settles.size() + top.constraints.size());
}

uint64_t resolveSeed(long mdpSeed)
{
    if (mdpSeed >= 0)
    {
        return static_cast<uint64_t>(mdpSeed);
    }
    return static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
}

std::vector<Vec3<real>> generateVelocities(const std::vector<double>& mass, double temperature, uint64_t seed, double dof)
{
    std::vector<Vec3<real>> v(mass.size());
    for (size_t i = 0; i < mass.size(); i++)
    {
        CounterRandom rng(seed, RandomPurpose::VelocityGeneration, 0, static_cast<uint32_t>(i));
        const double  sd = mass[i] > 0 ? std::sqrt(units::kBoltzmann * temperature / mass[i]) : 0;
        v[i]             = Vec3<real>(real(sd * rng.normal()), real(sd * rng.normal()), real(sd * rng.normal()));
    }
    removeCenterOfMassVelocity(v, mass);
    const double t = temperatureOf(trace(kineticEnergyTensor(v, mass)), dof);
    if (t > 0)
    {
        const real scale = real(std::sqrt(temperature / t));
        for (auto& vi : v)
        {
            vi *= scale;
        }
    }
    return v;
}

} // namespace putmd
