#include "domdec/domdec.h"
#include "update/virtual_sites.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

using RVec = Vec3<real>;

namespace
{

template<typename T>
void put(std::byte*& p, const T& value)
{
    std::memcpy(p, &value, sizeof value);
    p += sizeof value;
}

template<typename T>
T take(const std::byte*& p)
{
    T value;
    std::memcpy(&value, p, sizeof value);
    p += sizeof value;
    return value;
}

RVec takeVec(const std::byte*& p)
{
    RVec v;
    for (int c = 0; c < 3; c++)
    {
        v[c] = take<real>(p);
    }
    return v;
}

void putVec(std::byte*& p, const RVec& v)
{
    for (int c = 0; c < 3; c++)
    {
        put(p, v[c]);
    }
}

RVec boxVector(const Box& box, int d)
{
    const Matrix3& b = box.vectors();
    return RVec(real(b(d, 0)), real(b(d, 1)), real(b(d, 2)));
}

constexpr size_t kSetupAtomBytes     = 2 * sizeof(int32_t) + 3 * sizeof(real); // index, zone, x
constexpr size_t kMigrationAtomBytes = sizeof(int32_t) + 6 * sizeof(real);     // index, x, v
constexpr size_t kVectorBytes        = 3 * sizeof(real);

} // namespace

/* One halo exchange unit: a staged pulse (one link each way) or the direct
 * exchange (a link per zone). Coordinates go out on the send links and
 * forces come back on them. */
struct DomainDecomposition::Pulse
{
    int                             dim  = -1; // staged: the dimension
    int                             step = 0;  // staged: 0 for the next domain's halo, k for the k-th further
    std::unique_ptr<comm::Exchange> setup, x, f;
    std::vector<int>                sendPeer, recvPeer;
    std::vector<int>                sendZone; // the zone mask each send link serves
    std::vector<std::vector<int>>   sendIndex;
    std::vector<int>                recvStart, recvCount;
    std::vector<RVec>               recvShift;
    std::vector<int>                recvShiftMask; // the box vectors recvShift adds (bit d: vector d)
};

DomainDecomposition::DomainDecomposition(comm::Communicator& comm, const Topology& global, const std::vector<RVec>& x,
                                         const Box& box, double rlist, const DdOptions& options) :
    comm_(comm), global_(global), options_(options), rlist_(rlist), box_(box)
{
    groups_       = makeUpdateGroups(global, x, box);
    if (options.groupRadius > 0)
    {
        groups_.maxRadius = options.groupRadius; // a continuation keeps its run's halo
    }
    numSplitSites_ = std::count(groups_.splitSite.begin(), groups_.splitSite.end(), char(1));
    haloDistance_ = rlist + 2 * groups_.maxRadius;
    grid_         = chooseDdGrid(box, comm.size(), haloDistance_, options.grid);
    coord_        = grid_.coordinatesOf(comm.rank());
    firstCopy_.assign(global.numAtoms, -1);
    bounds_       = DomainBounds(grid_, box, haloDistance_);

    auto addPulse = [&](int dim, int step) {
        auto pulse   = std::make_unique<Pulse>();
        pulse->dim   = dim;
        pulse->step  = step;
        pulse->setup = comm.makeExchange(comm::Phase::Setup);
        pulse->x     = comm.makeExchange(comm::Phase::HaloX);
        pulse->f     = comm.makeExchange(comm::Phase::HaloF);
        pulses_.push_back(std::move(pulse));
    };
    if (options.schedule == HaloSchedule::Staged)
    {
        for (int d = 0; d < 3; d++)
        {
            for (int k = 0; k < grid_.pulses[d]; k++)
            {
                addPulse(d, k);
            }
        }
    }
    else
    {
        addPulse(-1, 0);
    }
    for (int d = 0; d < 3; d++)
    {
        migration_.push_back(comm.makeExchange(comm::Phase::Migration));
    }
}

DomainDecomposition::~DomainDecomposition() = default;

std::array<int, 3> DomainDecomposition::domainOf(const DVec& s) const
{
    return bounds_.domainOf(s);
}

std::array<double, 3> DomainDecomposition::boxWidths() const
{
    return { box_.perpendicularWidth(0), box_.perpendicularWidth(1), box_.perpendicularWidth(2) };
}

std::vector<double> DomainDecomposition::slabWidths(int d) const
{
    return bounds_.widths(d, box_.perpendicularWidth(d));
}

void DomainDecomposition::balance(const std::vector<double>& rankLoads, double damping)
{
    bounds_.balance(rankLoads, boxWidths(), damping);
}

bool DomainDecomposition::relaxBounds()
{
    return bounds_.relaxToUniform(boxWidths());
}

bool DomainDecomposition::setBounds(const Bounds& bounds)
{
    return bounds_.set(bounds, boxWidths());
}

DVec DomainDecomposition::groupCentre(const std::vector<RVec>& x, int begin, int count) const
{
    DVec c;
    for (int k = begin; k < begin + count; k++)
    {
        c += DVec(x[k]);
    }
    return c * (1.0 / count);
}

void DomainDecomposition::distribute(const std::vector<RVec>& x, const std::vector<RVec>& v, const Box& box,
                                     std::vector<RVec>& xHome, std::vector<RVec>& vHome)
{
    box_ = box;
    const Pbc pbc(box);
    xHome.clear();
    vHome.clear();
    for (int a : globalIndex_) // home and halo of a previous partition (minimisation distributes every step)
    {
        firstCopy_[a] = -1;
    }
    globalIndex_.clear();
    homeGroupStart_.assign(1, 0);
    std::vector<RVec> whole;
    for (int g = 0; g < groups_.numGroups(); g++)
    {
        // make the group whole around its first atom, then put its centre in the box
        whole.clear();
        const int first = groups_.atoms[groups_.start[g]];
        for (int k = groups_.start[g]; k < groups_.start[g + 1]; k++)
        {
            // an atom already next to the first keeps its exact coordinates
            // (a continuation from a checkpoint then repeats the run's bits)
            const RVec& xa = x[groups_.atoms[k]];
            const RVec  d  = pbc.dx(xa, x[first]);
            const RVec  direct = xa - x[first];
            whole.push_back(d[0] == direct[0] && d[1] == direct[1] && d[2] == direct[2] ? xa : x[first] + d);
        }
        DVec s = box.toFractional(groupCentre(whole, 0, static_cast<int>(whole.size())));
        DVec shift;
        for (int d = 0; d < 3; d++)
        {
            shift[d] = std::floor(s[d]);
            s[d] -= shift[d];
        }
        if (domainOf(s) != coord_)
        {
            continue;
        }
        const RVec cartesianShift(box.fromFractional(shift));
        for (size_t k = 0; k < whole.size(); k++)
        {
            const int a = groups_.atoms[groups_.start[g] + k];
            xHome.push_back(whole[k] - cartesianShift);
            vHome.push_back(v.empty() ? RVec() : v[a]);
            globalIndex_.push_back(a);
        }
        homeGroupStart_.push_back(static_cast<int>(xHome.size()));
    }
    numHome_ = static_cast<int>(xHome.size());
    setupHalo(xHome, box);
    buildLocalTopology(box);
    partitionCount_++;
}

namespace
{

/* The lattice vector by which a group with this centre is outside the unit
 * cell (false: it is in it). */
bool cellShift(const Box& box, const DVec& centre, RVec& shift)
{
    const DVec s = box.toFractional(centre);
    DVec       cells;
    bool       any = false;
    for (int d = 0; d < 3; d++)
    {
        cells[d] = std::floor(s[d]);
        any      = any || cells[d] != 0;
    }
    if (any)
    {
        shift = RVec(box.fromFractional(cells));
    }
    return any;
}

} // namespace

void DomainDecomposition::putGroupsInBox(std::vector<RVec>& x, const Box& box) const
{
    for (int g = 0; g < groups_.numGroups(); g++)
    {
        DVec c;
        for (int k = groups_.start[g]; k < groups_.start[g + 1]; k++)
        {
            c += DVec(x[groups_.atoms[k]]);
        }
        RVec cs;
        if (cellShift(box, c * (1.0 / (groups_.start[g + 1] - groups_.start[g])), cs))
        {
            for (int k = groups_.start[g]; k < groups_.start[g + 1]; k++)
            {
                x[groups_.atoms[k]] -= cs;
            }
        }
    }
}

void DomainDecomposition::wrapGroups(std::vector<RVec>& xHome, const Box& box)
{
    const double r2max = groups_.maxRadius * groups_.maxRadius * (1 + 1e-6);
    for (size_t g = 0; g + 1 < homeGroupStart_.size(); g++)
    {
        const int  b = homeGroupStart_[g], n = homeGroupStart_[g + 1] - b;
        const DVec c = groupCentre(xHome, b, n);
        if (n > 1)
        {
            for (int k = b; k < b + n; k++)
            {
                if (norm2(DVec(xHome[k]) - c) > r2max)
                {
                    throw SimulationError(fmt::format(
                            "{} is {:.3f} nm from the centre of its constraint group, more than the {:.3f} nm the "
                            "domain decomposition allows; the system is probably blowing up",
                            global_.describeAtom(globalIndex_[k]), std::sqrt(norm2(DVec(xHome[k]) - c)),
                            groups_.maxRadius));
                }
            }
        }
        RVec cs;
        if (cellShift(box, c, cs))
        {
            for (int k = b; k < b + n; k++)
            {
                xHome[k] -= cs;
            }
        }
    }
}

/* Groups whose centre left the domain go to the neighbour towards their new
 * domain, dimension by dimension. A dimension of P halo pulses has domains
 * as narrow as a P-th of the halo distance, so a group may cross up to P of
 * them between two searches (a fast molecule in a vapour, long nstlist):
 * P rounds per dimension, each moving every group one domain on. */
void DomainDecomposition::migrate(std::vector<RVec>& xHome, std::vector<RVec>& vHome, const Box& box)
{
    for (int d = 0; d < 3; d++)
    {
        for (int round = 0; round < grid_.pulses[d]; round++)
        {
            migrateOneDomain(xHome, vHome, box, d, grid_.pulses[d] - round);
        }
    }
    numHome_ = static_cast<int>(xHome.size());
    // every group is home now (the halo and the exactly-once rule rely on it)
    for (size_t g = 0; g + 1 < homeGroupStart_.size(); g++)
    {
        const int b = homeGroupStart_[g], n = homeGroupStart_[g + 1] - b;
        if (domainOf(box.toFractional(groupCentre(xHome, b, n))) != coord_)
        {
            throw InternalError(fmt::format("after migration {} is on the rank of domain {} {} {}, not its own",
                                            global_.describeAtom(globalIndex_[b]), coord_[0], coord_[1], coord_[2]));
        }
    }
}

/* One round of migration along d: every group not in its domain moves one
 * domain towards it (roundsLeft: this one included). */
void DomainDecomposition::migrateOneDomain(std::vector<RVec>& xHome, std::vector<RVec>& vHome, const Box& box, int d,
                                           int roundsLeft)
{
    if (grid_.n[d] == 1)
    {
        return;
    }
    auto up = coord_, down = coord_;
    up[d]   = (coord_[d] + 1) % grid_.n[d];
    down[d] = (coord_[d] + grid_.n[d] - 1) % grid_.n[d];
    // which groups leave, and which way
    std::vector<int> direction(homeGroupStart_.size() - 1, -1); // -1 stay, 0 up, 1 down
    size_t           bytes[2] = { 0, 0 };
    for (size_t g = 0; g + 1 < homeGroupStart_.size(); g++)
    {
        const int  b = homeGroupStart_[g], n = homeGroupStart_[g + 1] - b;
        const DVec s = box.toFractional(groupCentre(xHome, b, n));
        const int  t = domainOf(s)[d];
        if (t == coord_[d])
        {
            continue;
        }
        const int delta = (t - coord_[d] + grid_.n[d]) % grid_.n[d];
        const int steps = std::min(delta, grid_.n[d] - delta);
        if (steps > roundsLeft)
        {
            throw SimulationError(fmt::format(
                    "{} moved to domain {} along {} between two pair searches, further than the {} domain(s) a "
                    "group may cross there (one per halo pulse); the system is probably blowing up (or nstlist "
                    "is far too long)",
                    global_.describeAtom(globalIndex_[b]), t, "xyz"[d], grid_.pulses[d]));
        }
        direction[g] = delta <= grid_.n[d] - delta ? 0 : 1;
        bytes[direction[g]] += n * kMigrationAtomBytes;
    }
    auto&                        ex = *migration_[d];
    const comm::SendLink         links[2] = { { grid_.rankOf(up), bytes[0] }, { grid_.rankOf(down), bytes[1] } };
    const int                    from[2]  = { grid_.rankOf(down), grid_.rankOf(up) };
    ex.plan(links, from);
    std::byte* out[2] = { ex.sendBuffer(0).data(), ex.sendBuffer(1).data() };
    std::vector<RVec> xKeep, vKeep;
    std::vector<int>  gKeep, startKeep{ 0 };
    for (size_t g = 0; g + 1 < homeGroupStart_.size(); g++)
    {
        const int b = homeGroupStart_[g], e = homeGroupStart_[g + 1];
        if (direction[g] < 0)
        {
            for (int k = b; k < e; k++)
            {
                xKeep.push_back(xHome[k]);
                vKeep.push_back(vHome[k]);
                gKeep.push_back(globalIndex_[k]);
            }
            startKeep.push_back(static_cast<int>(xKeep.size()));
            continue;
        }
        std::byte*& p = out[direction[g]];
        for (int k = b; k < e; k++)
        {
            put(p, int32_t(globalIndex_[k]));
            putVec(p, xHome[k]);
            putVec(p, vHome[k]);
        }
    }
    ex.start();
    ex.finish();
    for (int link = 0; link < 2; link++)
    {
        const auto       in = ex.recvBuffer(link);
        const std::byte* p  = in.data();
        const size_t     n  = in.size() / kMigrationAtomBytes;
        int              lastGroup = -1;
        for (size_t a = 0; a < n; a++)
        {
            const int  gi = take<int32_t>(p);
            const RVec xa = takeVec(p);
            const RVec va = takeVec(p);
            if (groups_.groupOf[gi] != lastGroup && a > 0)
            {
                startKeep.push_back(static_cast<int>(xKeep.size()));
            }
            lastGroup = groups_.groupOf[gi];
            xKeep.push_back(xa);
            vKeep.push_back(va);
            gKeep.push_back(gi);
        }
        if (n > 0)
        {
            startKeep.push_back(static_cast<int>(xKeep.size()));
        }
    }
    xHome.swap(xKeep);
    vHome.swap(vKeep);
    globalIndex_.swap(gKeep);
    homeGroupStart_.swap(startKeep);
}

/* Home groups in group order, so the layout depends only on which atoms a
 * rank owns, not on the order they arrived in. */
void DomainDecomposition::sortHome(std::vector<RVec>& xHome, std::vector<RVec>& vHome)
{
    const int        numGroups = static_cast<int>(homeGroupStart_.size()) - 1;
    std::vector<int> order(numGroups);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return groups_.groupOf[globalIndex_[homeGroupStart_[a]]] < groups_.groupOf[globalIndex_[homeGroupStart_[b]]];
    });
    std::vector<RVec> xs, vs;
    std::vector<int>  gs, starts{ 0 };
    xs.reserve(xHome.size());
    vs.reserve(xHome.size());
    gs.reserve(xHome.size());
    for (int g : order)
    {
        for (int k = homeGroupStart_[g]; k < homeGroupStart_[g + 1]; k++)
        {
            xs.push_back(xHome[k]);
            vs.push_back(vHome[k]);
            gs.push_back(globalIndex_[k]);
        }
        starts.push_back(static_cast<int>(xs.size()));
    }
    xHome.swap(xs);
    vHome.swap(vs);
    globalIndex_.swap(gs);
    homeGroupStart_.swap(starts);
}

void DomainDecomposition::repartition(std::vector<RVec>& xHome, std::vector<RVec>& vHome, const Box& box)
{
    box_ = box;
    for (int a : globalIndex_) // home and halo of the last partition
    {
        firstCopy_[a] = -1;
    }
    globalIndex_.resize(numHome_);
    wrapGroups(xHome, box);
    migrate(xHome, vHome, box);
    sortHome(xHome, vHome);
    setupHalo(xHome, box);
    buildLocalTopology(box);
    partitionCount_++;
}

/* Selects, packs and exchanges the halo atoms, pulse by pulse, recording
 * the send lists and receive ranges every step reuses.
 *
 * Staged: the pulses of dimension d run in order k = 0 .. P-1. Pulse 0
 * sends every group this rank has so far (home and the halo of earlier
 * dimensions) that lies within the halo distance of its lower face, to the
 * lower neighbour; pulse k > 0 forwards, by the same test, the groups that
 * arrived in pulse k-1 (they come from k domains up). Direct: one link per
 * domain offset o in {0..P_x} x {0..P_y} x {0..P_z}, o != 0, each sending
 * the home groups within the halo distance of the receiver's upper faces
 * (the receiver's upper face in d lies o_d - 1 domain widths below this
 * rank's lower face). Either way a copy's zone bit d says it came from
 * above in d, from however many domains up. */
void DomainDecomposition::setupHalo(const std::vector<RVec>& xHome, const Box& box)
{
    for (int d = 0; d < 3; d++)
    {
        // the pulses must cover the halo beyond the farthest column's face
        const double w       = box.perpendicularWidth(d);
        const double width   = bounds_.narrowest(d) * w;
        const double stagger = bounds_.stagger(d) * w;
        if (grid_.n[d] > 1 && grid_.pulses[d] * width * (1 + 1e-6) < haloDistance_ + stagger)
        {
            throw SimulationError(fmt::format(
                    "the box shrank to {:.3f} nm in {}: its narrowest domain is {:.3f} nm wide, and {} halo "
                    "pulse(s) no longer cover the halo distance {:.3f} nm (plus {:.3f} nm of staggered "
                    "boundaries); run with fewer domains in {} (-dd) or a stiffer pressure coupling",
                    w, "xyz"[d], width, grid_.pulses[d], haloDistance_, stagger, "xyz"[d]));
        }
    }
    globalIndex_.resize(numHome_);
    zone_.assign(numHome_, 0);
    xLocal_.assign(xHome.begin(), xHome.begin() + numHome_);
    std::vector<int> groupStart = homeGroupStart_; // of every local group copy

    // within the halo distance of the upper faces of the domain at offset
    // -o (each d with o_d > 0); with staggered boundaries the farthest of
    // the columns' faces (the receiver pairs its atoms with copies from
    // its neighbours' columns too, domain_bounds.h)
    std::array<std::vector<double>, 3> upperFaces; // by o_d
    for (int d = 0; d < 3; d++)
    {
        for (int od = 0; od <= grid_.pulses[d]; od++)
        {
            upperFaces[d].push_back(bounds_.maxFace(d, coord_[d] - od + 1));
        }
    }
    auto nearReceiver = [&](int begin, int count, const std::array<int, 3>& o) {
        const DVec s = box.toFractional(groupCentre(xLocal_, begin, count));
        for (int d = 0; d < 3; d++)
        {
            if (o[d] > 0)
            {
                const double upperFace = upperFaces[d][o[d]];
                if ((s[d] - upperFace) * box.perpendicularWidth(d) >= haloDistance_)
                {
                    return false;
                }
            }
        }
        return true;
    };
    auto rankAt = [&](const std::array<int, 3>& o, int sign) {
        std::array<int, 3> c = coord_;
        for (int d = 0; d < 3; d++)
        {
            c[d] = ((c[d] + sign * o[d]) % grid_.n[d] + grid_.n[d]) % grid_.n[d];
        }
        return grid_.rankOf(c);
    };
    auto maskOf = [](const std::array<int, 3>& o) {
        return (o[0] > 0 ? 1 : 0) | (o[1] > 0 ? 2 : 0) | (o[2] > 0 ? 4 : 0);
    };

    int previousBegin = 0, previousEnd = 0; // groups received by the previous pulse
    for (size_t p = 0; p < pulses_.size(); p++)
    {
        Pulse& pulse = *pulses_[p];
        pulse.sendPeer.clear();
        pulse.recvPeer.clear();
        pulse.sendZone.clear();
        pulse.sendIndex.clear();
        pulse.recvShift.clear();
        pulse.recvShiftMask.clear();
        // the domain offsets this unit serves: one per staged pulse, all at once for direct
        std::vector<std::array<int, 3>> offsets;
        if (options_.schedule == HaloSchedule::Staged)
        {
            std::array<int, 3> o{ 0, 0, 0 };
            o[pulse.dim] = 1;
            offsets.push_back(o);
        }
        else
        {
            for (int oz = 0; oz <= grid_.pulses[2]; oz++)
                for (int oy = 0; oy <= grid_.pulses[1]; oy++)
                    for (int ox = 0; ox <= grid_.pulses[0]; ox++)
                    {
                        if (ox + oy + oz > 0)
                        {
                            offsets.push_back({ ox, oy, oz });
                        }
                    }
        }
        const int numCandidateGroups = static_cast<int>(groupStart.size()) - 1;
        // staged pulse 0 and direct: every group so far (direct: home only);
        // a further staged pulse: what the previous one brought
        const bool forwarding = options_.schedule == HaloSchedule::Staged && pulse.step > 0;
        const int  firstGroup = forwarding ? previousBegin : 0;
        const int  endGroup   = forwarding ? previousEnd : numCandidateGroups;
        for (const auto& o : offsets)
        {
            pulse.sendPeer.push_back(rankAt(o, -1));
            pulse.recvPeer.push_back(rankAt(o, +1));
            pulse.sendZone.push_back(maskOf(o));
            std::vector<int> send;
            for (int g = firstGroup; g < endGroup; g++)
            {
                const int b = groupStart[g], n = groupStart[g + 1] - b;
                if ((options_.schedule == HaloSchedule::Direct && b >= numHome_) || !nearReceiver(b, n, o))
                {
                    continue;
                }
                for (int k = b; k < b + n; k++)
                {
                    send.push_back(k);
                }
            }
            pulse.sendIndex.push_back(std::move(send));
            RVec shift;
            int  shiftMask = 0;
            for (int d = 0; d < 3; d++)
            {
                if (o[d] > 0 && coord_[d] + o[d] >= grid_.n[d])
                {
                    shift += boxVector(box, d);
                    shiftMask |= 1 << d;
                }
            }
            pulse.recvShift.push_back(shift);
            pulse.recvShiftMask.push_back(shiftMask);
        }
        previousBegin = static_cast<int>(groupStart.size()) - 1;
        const int numLinks = static_cast<int>(offsets.size());
        // indices, zones and coordinates, once per search
        std::vector<comm::SendLink> links;
        for (int k = 0; k < numLinks; k++)
        {
            links.push_back({ pulse.sendPeer[k], pulse.sendIndex[k].size() * kSetupAtomBytes });
        }
        pulse.setup->plan(links, pulse.recvPeer);
        for (int k = 0; k < numLinks; k++)
        {
            std::byte* out = pulse.setup->sendBuffer(k).data();
            for (int a : pulse.sendIndex[k])
            {
                put(out, int32_t(globalIndex_[a]));
                put(out, int32_t(zone_[a] | pulse.sendZone[k]));
                putVec(out, xLocal_[a]);
            }
        }
        pulse.setup->start();
        pulse.setup->finish();
        pulse.recvStart.assign(numLinks, 0);
        pulse.recvCount.assign(numLinks, 0);
        for (int k = 0; k < numLinks; k++)
        {
            const auto       in = pulse.setup->recvBuffer(k);
            const std::byte* q  = in.data();
            const int        n  = static_cast<int>(in.size() / kSetupAtomBytes);
            pulse.recvStart[k]  = static_cast<int>(globalIndex_.size());
            pulse.recvCount[k]  = n;
            int lastGroup       = -1;
            for (int a = 0; a < n; a++)
            {
                const int  gi   = take<int32_t>(q);
                const int  zone = take<int32_t>(q);
                const RVec xa   = takeVec(q);
                if (groups_.groupOf[gi] != lastGroup && a > 0)
                {
                    groupStart.push_back(static_cast<int>(globalIndex_.size()));
                }
                lastGroup = groups_.groupOf[gi];
                globalIndex_.push_back(gi);
                zone_.push_back(zone);
                xLocal_.push_back(xa + pulse.recvShift[k]);
            }
            if (n > 0)
            {
                groupStart.push_back(static_cast<int>(globalIndex_.size()));
            }
        }
        // the per-step exchanges: coordinates out on the send links, forces back
        std::vector<comm::SendLink> xLinks, fLinks;
        for (int k = 0; k < numLinks; k++)
        {
            xLinks.push_back({ pulse.sendPeer[k], pulse.sendIndex[k].size() * kVectorBytes });
            fLinks.push_back({ pulse.recvPeer[k], size_t(pulse.recvCount[k]) * kVectorBytes });
        }
        pulse.x->plan(xLinks, pulse.recvPeer);
        pulse.f->plan(fLinks, pulse.sendPeer);
        previousEnd = static_cast<int>(groupStart.size()) - 1;
    }
    // every copy of each atom, for the bonded and exclusion assignment
    nextCopy_.assign(globalIndex_.size(), -1);
    for (int l = static_cast<int>(globalIndex_.size()) - 1; l >= 0; l--)
    {
        nextCopy_[l]               = firstCopy_[globalIndex_[l]];
        firstCopy_[globalIndex_[l]] = l;
    }
}

/* Packs the entries of a a pulse sends (coordinates or, unshifted, forces)
 * and starts its forward exchange. */
void DomainDecomposition::packAndStart(Pulse& pulse, const std::vector<RVec>& a)
{
    for (size_t k = 0; k < pulse.sendIndex.size(); k++)
    {
        std::byte* out = pulse.x->sendBuffer(static_cast<int>(k)).data();
        for (int i : pulse.sendIndex[k])
        {
            std::memcpy(out, &a[i], kVectorBytes);
            out += kVectorBytes;
        }
    }
    pulse.x->start();
}

void DomainDecomposition::haloCoordinatesStart(std::vector<RVec>& xLocal)
{
    packAndStart(*pulses_[0], xLocal);
}

void DomainDecomposition::haloCoordinatesFinish(std::vector<RVec>& xLocal)
{
    for (size_t p = 0; p < pulses_.size(); p++)
    {
        Pulse& pulse = *pulses_[p];
        if (p > 0)
        {
            packAndStart(pulse, xLocal);
        }
        pulse.x->finish();
        for (size_t k = 0; k < pulse.recvStart.size(); k++)
        {
            const std::byte* in    = pulse.x->recvBuffer(static_cast<int>(k)).data();
            const RVec       shift = pulse.recvShift[k];
            for (int a = 0; a < pulse.recvCount[k]; a++)
            {
                RVec xa;
                std::memcpy(&xa, in + a * kVectorBytes, kVectorBytes);
                xLocal[pulse.recvStart[k] + a] = xa + shift;
            }
        }
    }
}

void DomainDecomposition::haloForward(std::vector<RVec>& a)
{
    for (size_t p = 0; p < pulses_.size(); p++)
    {
        Pulse& pulse = *pulses_[p];
        packAndStart(pulse, a);
        pulse.x->finish();
        for (size_t k = 0; k < pulse.recvStart.size(); k++)
        {
            std::memcpy(&a[pulse.recvStart[k]], pulse.x->recvBuffer(static_cast<int>(k)).data(),
                        size_t(pulse.recvCount[k]) * kVectorBytes);
        }
    }
}

void DomainDecomposition::constructSplitSites(std::vector<RVec>& xHome, const Box& box)
{
    if (numSplitSites_ == 0)
    {
        return;
    }
    const int nl = numLocal();
    splitScratch_.resize(nl);
    std::copy(xHome.begin(), xHome.begin() + numHome_, splitScratch_.begin());
    haloCoordinatesStart(splitScratch_);
    haloCoordinatesFinish(splitScratch_);
    // the moves of the sites this rank computes, back to their home entries
    splitForce_.assign(nl, RVec());
    for (const auto& v : localSplitSites_)
    {
        splitForce_[v.site] = splitScratch_[v.site];
    }
    constructVirtualSites(localSplitSites_, splitScratch_, box);
    for (const auto& v : localSplitSites_)
    {
        splitForce_[v.site] = splitScratch_[v.site] - splitForce_[v.site];
    }
    haloForces(splitForce_);
    for (int a : homeSplitSites_)
    {
        xHome[a] += splitForce_[a];
    }
}

void DomainDecomposition::spreadSplitSiteForces(std::vector<RVec>& fLocal, const std::vector<RVec>& xLocal, const Box& box,
                                                Matrix3* virial, StageTimers* timers)
{
    if (numSplitSites_ == 0)
    {
        return;
    }
    const int nl = numLocal();
    // the total force on each site (summed on its home entry) to every copy
    splitForce_.assign(nl, RVec());
    for (int a : homeSplitSites_)
    {
        splitForce_[a] = fLocal[a];
        fLocal[a]      = RVec();
    }
    haloForward(splitForce_);
    // the halo entries were summed home: from here they hold what the
    // spreading puts on copies, which the second exchange brings home
    std::fill(fLocal.begin() + numHome_, fLocal.begin() + nl, RVec());
    for (const auto& v : localSplitSites_)
    {
        fLocal[v.site] = splitForce_[v.site];
    }
    spreadVirtualSiteForces(localSplitSites_, xLocal, fLocal, box, virial);
    haloForces(fLocal, timers);
}

void DomainDecomposition::setBox(const Box& box)
{
    box_ = box;
    for (auto& pulse : pulses_)
    {
        for (size_t k = 0; k < pulse->recvShift.size(); k++)
        {
            RVec shift;
            for (int d = 0; d < 3; d++)
            {
                if (pulse->recvShiftMask[k] & (1 << d))
                {
                    shift += boxVector(box, d);
                }
            }
            pulse->recvShift[k] = shift;
        }
    }
}

void DomainDecomposition::haloForces(std::vector<RVec>& fLocal, StageTimers* timers)
{
    // one row each for moving and for waiting, summed over the pulses
    StageClock moving(timers, Stage::HaloForces), waiting(timers, Stage::HaloForcesWait);
    moving.start();
    for (size_t p = pulses_.size(); p-- > 0;)
    {
        Pulse& pulse = *pulses_[p];
        for (size_t k = 0; k < pulse.recvStart.size(); k++)
        {
            std::memcpy(pulse.f->sendBuffer(static_cast<int>(k)).data(), &fLocal[pulse.recvStart[k]],
                        size_t(pulse.recvCount[k]) * kVectorBytes);
        }
        pulse.f->start();
        moving.stop();
        waiting.start();
        pulse.f->finish();
        waiting.stop();
        moving.start();
        for (size_t k = 0; k < pulse.sendIndex.size(); k++)
        {
            const std::byte* in = pulse.f->recvBuffer(static_cast<int>(k)).data();
            for (size_t a = 0; a < pulse.sendIndex[k].size(); a++)
            {
                RVec fa;
                std::memcpy(&fa, in + a * kVectorBytes, kVectorBytes);
                fLocal[pulse.sendIndex[k][a]] += fa;
            }
        }
    }
    moving.stop();
}

std::vector<RVec> DomainDecomposition::gatherHome(const std::vector<RVec>& home) const
{
    std::vector<std::byte> mine(size_t(numHome_) * (sizeof(int32_t) + kVectorBytes));
    std::byte*             p = mine.data();
    for (int a = 0; a < numHome_; a++)
    {
        put(p, int32_t(globalIndex_[a]));
        std::memcpy(p, &home[a], kVectorBytes);
        p += kVectorBytes;
    }
    const auto        all = comm_.gatherToRoot(comm::Phase::Setup, mine);
    std::vector<RVec> out;
    if (comm_.rank() == 0)
    {
        out.resize(global_.numAtoms);
        const std::byte* q = all.data();
        for (size_t a = 0; a < all.size() / (sizeof(int32_t) + kVectorBytes); a++)
        {
            const int gi = take<int32_t>(q);
            std::memcpy(&out[gi], q, kVectorBytes);
            q += kVectorBytes;
        }
    }
    return out;
}

} // namespace putmd
