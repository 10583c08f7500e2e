#include "nonbonded/cluster_nonbonded.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

#include <hwy/targets.h>

#include "core/error.h"
#include "nonbonded/exclusion_corrections.h"
#include "listed/listed_simd.h"
#include "pme/pme_rows.h"

namespace putmd
{

ClusterKernelKind clusterKernelFromEnvironment()
{
    const char* v = std::getenv("PUTMD_SIMD");
    if (!v || !*v || std::strcmp(v, "auto") == 0)
    {
        return ClusterKernelKind::Simd;
    }
    const std::string s = v;
    if (s == "reference")
    {
        allowListedSimd(false); // the listed forces' plain loops too
        return ClusterKernelKind::Reference;
    }
    long long cap = 0;
    if (s == "sse4")
    {
        cap = HWY_SSE4 | HWY_EMU128;
        pme_detail::allowFusedRows(false); // PME's spread and gather rows without FMA too
    }
    else if (s == "avx2")
    {
        cap = HWY_AVX2 | HWY_SSE4 | HWY_EMU128;
    }
    else if (s == "avx512")
    {
        cap = HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_EMU128;
    }
    else
    {
        throw InputError("environment variable PUTMD_SIMD is '" + s
                         + "'; valid values are auto, reference, sse4, avx2 and avx512");
    }
    restrictClusterKernelTarget(cap & hwy::SupportedTargets());
    return ClusterKernelKind::Simd;
}

int clusterKernelPruneRows()
{
    return clusterKernelFromEnvironment() == ClusterKernelKind::Simd && clusterKernelTarget() == "AVX2" ? 2 : 4;
}

ClusterLjComb detectCombinationRule(const Topology& top, std::vector<float>* a, std::vector<float>* b)
{
    const int n = top.numLjTypes;
    auto close  = [](double x, double y) { return std::abs(x - y) <= 1e-5 * std::max(std::abs(x), std::abs(y)) + 1e-30; };
    bool geometric = true, lb = true;
    std::vector<double> sigma(n, 0.0), eps(n, 0.0);
    for (int t = 0; t < n; t++)
    {
        const double c6 = top.c6Of(t, t), c12 = top.c12Of(t, t);
        if (c6 < 0 || c12 < 0)
        {
            geometric = lb = false;
        }
        if (c6 > 0 && c12 > 0)
        {
            sigma[t] = std::pow(c12 / c6, 1.0 / 6);
            eps[t]   = c6 * c6 / (4 * c12);
        }
        else if (c6 != 0 || c12 != 0)
        {
            lb = false; // one of C6, C12 zero: no sigma/epsilon
        }
    }
    for (int i = 0; i < n && (geometric || lb); i++)
    {
        for (int j = 0; j < n; j++)
        {
            const double c6 = top.c6Of(i, j), c12 = top.c12Of(i, j);
            if (geometric && c6 >= 0 && c12 >= 0)
            {
                geometric = close(c6, std::sqrt(top.c6Of(i, i) * top.c6Of(j, j)))
                            && close(c12, std::sqrt(top.c12Of(i, i) * top.c12Of(j, j)));
            }
            if (lb)
            {
                const double s   = 0.5 * (sigma[i] + sigma[j]);
                const double e   = std::sqrt(eps[i] * eps[j]);
                const double s6  = std::pow(s, 6);
                lb = close(c6, 4 * e * s6) && close(c12, 4 * e * s6 * s6);
            }
        }
    }
    a->assign(n, 0.0f);
    b->assign(n, 0.0f);
    if (geometric)
    {
        for (int t = 0; t < n; t++)
        {
            (*a)[t] = float(std::sqrt(top.c6Of(t, t)));
            (*b)[t] = float(std::sqrt(top.c12Of(t, t)));
        }
        return ClusterLjComb::Geometric;
    }
    if (lb)
    {
        for (int t = 0; t < n; t++)
        {
            (*a)[t] = float(0.5 * sigma[t]);
            (*b)[t] = float(2 * std::sqrt(eps[t]));
        }
        return ClusterLjComb::LorentzBerthelot;
    }
    return ClusterLjComb::Matrix;
}

ClusterNonbonded::ClusterNonbonded() : kind_(clusterKernelFromEnvironment()) {}

std::string ClusterNonbonded::kernelName() const
{
    return kind_ == ClusterKernelKind::Reference ? "plain reference (4x4 clusters)"
                                                 : "SIMD " + clusterKernelTarget() + " (4x4 clusters)";
}

/* The pruned list is stale once a search begins (the next compute prunes
 * the new list before any kernel runs): its storage is lent to the search
 * as the second thread's room and kept for the next prune, so that after
 * the first search neither the second thread's share of the search nor
 * the prune touches memory for the first time (page faults: 2.5% of a
 * two-thread run's CPU on water-spce-12k, and an imbalance, the second
 * thread faulting in its half of the list at every search and every
 * first prune after it; threads beyond the second still allocate theirs).
 * The peak is what it was: the search's second buffer was allocated while
 * the stale list had been given back, and the pruned list is allocated
 * beside the new one at the next prune. Without pruning nothing is lent,
 * so that no storage the kernel never reads is held between searches. */
std::vector<ClusterPairJ>* ClusterNonbonded::staleInnerList()
{
    innerI_.clear();
    innerJ_.clear();
    innerJCount_ = innerHalfCount_ = 0;
    if (pruneInterval_ <= 0 || rlistInner_ <= 0)
    {
        std::vector<ClusterPairI>().swap(innerI_);
        std::vector<ClusterPairJ>().swap(innerJ_);
        return nullptr;
    }
    return &innerJ_;
}

void ClusterNonbonded::build(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist)
{
    rlist_ = rlist;
    grid_.build(box, x, true, -1, leadingAtoms(top, x.size()), numThreads_);
    gridVersion_++;
    list_.search(grid_, box, rlist, top, true, numThreads_, nullptr, staleInnerList());
    markLennardJonesClusters(top);
    list_.partitionJ(clusterLJ_, numThreads_);
    listVersion_++;
    countFromList_       = true; // numPairs() counts when asked (a serial pass over the list)
    pendingPairs_        = false;
    setupFor_            = nullptr; // the slots changed: types again
    computesSinceSearch_ = 0;
}

void ClusterNonbonded::buildLocal(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist,
                                  const std::vector<int>& zone, int numHome, bool homePairs)
{
    rlist_ = rlist;
    ZoneFilter filter;
    filter.zone          = zone.data();
    filter.skipHomePairs = !homePairs;
    if (homePairs)
    {
        grid_.build(box, std::vector<Vec3<real>>(x.begin(), x.begin() + numHome), false, -1,
                    leadingAtoms(top, size_t(numHome)), numThreads_);
    }
    else
    {
        // home and halo atoms in separate layers: no cluster mixes them
        grid_.build(box, x, false, numHome, leadingAtoms(top, x.size()), numThreads_);
    }
    gridVersion_++;
    list_.search(grid_, box, rlist, top, false, numThreads_, &filter, staleInnerList());
    markLennardJonesClusters(top);
    list_.partitionJ(clusterLJ_, numThreads_);
    listVersion_++;
    countFromList_       = true;
    pendingPairs_        = false;
    setupFor_            = nullptr;
    computesSinceSearch_ = 0;
}

void lennardJonesTypes(const Topology& top, std::vector<uint8_t>& typeLJ)
{
    const int nt = top.numLjTypes;
    typeLJ.assign(nt, 0);
    for (int a = 0; a < nt; a++)
    {
        for (int b = 0; b < nt; b++)
        {
            typeLJ[a] = typeLJ[a] || top.c6[size_t(a) * nt + b] != 0 || top.c12[size_t(a) * nt + b] != 0;
        }
    }
}

const uint8_t* ClusterNonbonded::leadingAtoms(const Topology& top, size_t n)
{
    lennardJonesTypes(top, typeLJ_);
    atomLJ_.resize(n);
    for (size_t a = 0; a < n; a++)
    {
        atomLJ_[a] = typeLJ_[top.ljType[a]];
    }
    return atomLJ_.data();
}

void ClusterNonbonded::markLennardJonesClusters(const Topology& top)
{
    lennardJonesTypes(top, typeLJ_);
    const std::vector<uint8_t>& typeLJ = typeLJ_;
    const int nc = grid_.numClusters();
    clusterLJ_.assign(nc, 0);
    for (int slot = 0; slot < nc * c_clusterSize; slot++)
    {
        const int a = grid_.atomOfSlot()[slot];
        if (a >= 0 && typeLJ[top.ljType[a]])
        {
            clusterLJ_[slot / c_clusterSize] |= uint8_t(1 << (slot % c_clusterSize / 2));
        }
    }
}

void ClusterNonbonded::prune()
{
    // in place: thread t writes the entries it keeps from its range of the
    // outer list at that range's own offsets (a pruned range is never
    // longer), so no per-thread copies; the i-entries are then closed up
    // in order, the j-entries may keep gaps (the kernel follows jBegin/jEnd)
    const auto& outer  = list_.iEntries();
    const auto& outerJ = list_.jEntries();
    const int   ni     = static_cast<int>(outer.size());
    const int   nt     = std::max(1, std::min(numThreads_, std::max(1, ni)));
    // every entry is written again: nothing to keep (after a search the
    // room holds the search's entries, which a reallocation would copy);
    // room for lists a little longer than this one, so that the next
    // searches' lists, which differ by a few entries, fit (a new block is
    // memory touched for the first time)
    innerJ_.clear();
    if (innerJ_.capacity() < outerJ.size())
    {
        innerJ_.reserve(outerJ.size() + outerJ.size() / 32);
    }
    innerI_.resize(outer.size());
    innerJ_.resize(outerJ.size());
    std::vector<int> kept(nt, 0);
    const float      rl2 = float(rlistInner_ * rlistInner_);
    // the threads' i-entries: equal shares of an estimated cost, a j-entry
    // 1 and an i-entry K (its set-up and the copy of its groups), instead
    // of equal numbers of i-entries
    constexpr long   K    = 8;
    auto             cost = [&](int i) { return (i < ni ? long(outer[i].jBegin) : long(outerJ.size())) + K * i; };
    std::vector<int> first(nt + 1, ni);
    for (int t = 0; t < nt; t++)
    {
        const long target = cost(ni) * t / nt;
        int        lo = 0, hi = ni; // the first i with cost(i) >= target
        while (lo < hi)
        {
            const int mid = (lo + hi) / 2;
            if (cost(mid) < target)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        first[t] = lo;
    }
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        ClusterKernelInput in;
        in.x = x_.data(), in.y = y_.data(), in.z = z_.data();
        in.shift    = shift_;
        in.iEntries = outer.data();
        in.jEntries = outerJ.data();
        in.iBegin   = first[t];
        in.iEnd     = first[t + 1];
        if (in.iBegin == in.iEnd)
        {
            continue;
        }
        ClusterPruneOutput out{ innerI_.data() + in.iBegin, innerJ_.data() + outer[in.iBegin].jBegin,
                                outer[in.iBegin].jBegin, 0 };
        if (kind_ == ClusterKernelKind::Reference)
        {
            clusterPruneReference(in, rl2, out);
        }
        else
        {
            clusterPruneSimd(in, rl2, out);
        }
        kept[t] = out.numI;
    }
    int n = 0;
    for (int t = 0; t < nt; t++)
    {
        const int from = first[t];
        std::copy(innerI_.begin() + from, innerI_.begin() + from + kept[t], innerI_.begin() + n);
        n += kept[t];
    }
    innerI_.resize(n);
    listVersion_++;
    innerJCount_ = innerHalfCount_ = 0;
    for (const ClusterPairI& e : innerI_)
    {
        innerJCount_ += e.jEnd - e.jBegin;
        innerHalfCount_ += (e.end0() - e.jBegin) + (e.jEnd - e.begin1());
    }
}

void ClusterNonbonded::setPairs(std::vector<int> start, std::vector<int> j, double rlist)
{
    rlist_        = rlist;
    pairStart_    = std::move(start);
    pairJ_        = std::move(j);
    numAtomPairs_ = pairJ_.size();
    countFromList_ = false;
    pendingPairs_ = true;
}

void ClusterNonbonded::prepareSetup(const Topology& top, const InteractionConst& ic)
{
    ClusterKernelSetup& k = setup_;
    k.coulomb   = ic.coulombType == CoulombType::Pme ? ClusterCoulomb::Ewald : ClusterCoulomb::ReactionField;
    k.vdw       = ic.vdwModifier == InteractionModifier::ForceSwitch ? ClusterVdw::ForceSwitch : ClusterVdw::PotentialShift;
    k.rcoulomb2 = float(ic.rcoulomb * ic.rcoulomb);
    k.rvdw2     = float(ic.rvdw * ic.rvdw);
    k.beta      = ic.ewaldCoeff;
    k.shEwald   = ic.shEwald;
    k.kRf       = ic.kRf;
    k.cRf       = ic.cRf;
    k.shiftC6   = ic.shiftC6;
    k.shiftC12  = ic.shiftC12;
    k.rswitch   = ic.rvdwSwitch;
    k.fs6[0]    = ic.fswitch6.a;
    k.fs6[1]    = ic.fswitch6.b;
    k.fs6[2]    = ic.fswitch6.c;
    k.fs12[0]   = ic.fswitch12.a;
    k.fs12[1]   = ic.fswitch12.b;
    k.fs12[2]   = ic.fswitch12.c;
    if (k.coulomb == ClusterCoulomb::Ewald && setupBeta_ != ic.ewaldCoeff)
    {
        k.ewald    = EwaldCorrection::fit(ic.ewaldCoeff, ic.rcoulomb);
        setupBeta_ = ic.ewaldCoeff;
    }
    c6_.assign(top.c6.begin(), top.c6.end());
    c12_.assign(top.c12.begin(), top.c12.end());
    k.c6       = c6_.data();
    k.c12      = c12_.data();
    k.numTypes = top.numLjTypes;
    k.comb     = detectCombinationRule(top, &typeA_, &typeB_);
    if (forceMatrix_)
    {
        k.comb = ClusterLjComb::Matrix;
    }
    // charges, types and per-atom LJ parameters in slot order (padding:
    // no charge, type 0, no LJ)
    const int ns = grid_.numSlots();
    const double s = std::sqrt(ic.epsfac);
    q_.assign(ns, 0.0f);
    type_.assign(ns, 0);
    ljA_.assign(ns, 0.0f);
    ljB_.assign(ns, 0.0f);
    for (int slot = 0; slot < ns; slot++)
    {
        const int a = grid_.atomOfSlot()[slot];
        if (a >= 0)
        {
            q_[slot]    = float(s * top.charge[a]);
            type_[slot] = top.ljType[a];
            ljA_[slot]  = typeA_[top.ljType[a]];
            ljB_[slot]  = typeB_[top.ljType[a]];
        }
    }
    setupFor_ = &ic;
}

void ClusterNonbonded::fillCoordinates(const Box& box, const std::vector<Vec3<real>>& x)
{
    const int   ns = grid_.numSlots();
    const auto& b  = box.vectors();
    x_.resize(ns);
    y_.resize(ns);
    z_.resize(ns);
    // each slot's lattice shift in the build's precision, made again when
    // the grid or the box changes (every step under pressure coupling,
    // once per search otherwise): the per-step loop is then one
    // subtraction per coordinate, without a branch or the double products
    // it had for the wrapped slots (the same values: x - 0 is x)
    bool sameBox = shiftListVersion_ == gridVersion_; // -1: never made
    for (int r = 0; r < 3 && sameBox; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            sameBox = sameBox && b(r, c) == shiftBox_(r, c);
        }
    }
    // every step: threaded (serial, the other threads waited ~0.1 ms per
    // step of rnase)
    const int nt = std::max(1, std::min(numThreads_, ns / 1024 + 1));
    if (!sameBox)
    {
        slotShift_.resize(3 * size_t(ns));
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int slot = 0; slot < ns; slot++)
        {
            const auto& w = grid_.wrapOfSlot()[slot];
            for (int d = 0; d < 3; d++)
            {
                slotShift_[3 * size_t(slot) + d] =
                        (w[0] | w[1] | w[2]) ? real(w[0] * b(0, d) + w[1] * b(1, d) + w[2] * b(2, d)) : real(0);
            }
        }
        shiftBox_         = b;
        shiftListVersion_ = gridVersion_;
    }
    const int* const  atomOf = grid_.atomOfSlot().data();
    const real* const shift  = slotShift_.data();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int slot = 0; slot < ns; slot++)
    {
        const int a = atomOf[slot];
        if (a < 0)
        {
            x_[slot] = y_[slot] = z_[slot] = 0;
            continue;
        }
        const Vec3<real>& p = x[a];
        x_[slot]            = float(p.x - shift[3 * size_t(slot)]);
        y_[slot]            = float(p.y - shift[3 * size_t(slot) + 1]);
        z_[slot]            = float(p.z - shift[3 * size_t(slot) + 2]);
    }
    for (int s = 0; s < c_numShifts; s++)
    {
        const Vec3<float> v = shiftVector(box, s);
        shift_[3 * s]     = v.x;
        shift_[3 * s + 1] = v.y;
        shift_[3 * s + 2] = v.z;
    }
}

void ClusterNonbonded::reportOverlap(const Topology& top)
{
    ClusterKernelInput in;
    in.x = x_.data(), in.y = y_.data(), in.z = z_.data(), in.q = q_.data(), in.type = type_.data();
    in.shift    = shift_;
    in.iEntries = list_.iEntries().data();
    in.jEntries = list_.jEntries().data();
    in.iEnd     = static_cast<int>(list_.iEntries().size());
    std::vector<float>  f(3 * x_.size());
    ClusterKernelOutput out;
    out.fx = f.data(), out.fy = f.data() + x_.size(), out.fz = f.data() + 2 * x_.size();
    clusterKernelReference(setup_, in, out);
    const int i = out.overlapSlot[0] >= 0 ? grid_.atomOfSlot()[out.overlapSlot[0]] : 0;
    const int j = out.overlapSlot[1] >= 0 ? grid_.atomOfSlot()[out.overlapSlot[1]] : 0;
    throw AtomOverlapError(std::min(i, j), std::max(i, j),
                           top.describeAtom(std::min(i, j)) + " and " + top.describeAtom(std::max(i, j))
                                   + " are at the same position but interact (they are not excluded); "
                                     "the coordinates are not a valid configuration");
}

/* Thread shares of about equal estimated cost. A j-entry computed whole
 * (both halves of a 4x4 pair) counts 8, one computed as a single half 6
 * (on AVX2 a register alone costs about 18.5 ns against 15 for one of a
 * pair), an i-entry 4 more; an unpruned or ungrouped list is all whole
 * entries. The split depends only on the list, so a run stays
 * reproducible. The pruned list keeps gaps between the threads' ranges of
 * the outer list: splitting by positions (as before) gave the second
 * thread 4-5% more kernel time than the first (water-spce-12k and rnase,
 * AVX2, 2 threads); by this cost, 0.4-3.6% either way. */
void ClusterNonbonded::splitByCost(const std::vector<ClusterPairI>& ie, int nt)
{
    const int ni = static_cast<int>(ie.size());
    entryCost_.resize(size_t(ni) + 1);
    long total = 0;
    for (int e = 0; e < ni; e++)
    {
        entryCost_[e] = total;
        const ClusterPairI& p = ie[e];
        const long whole = std::max(0, p.end0() - p.begin1());
        const long halves = (p.jEnd - p.jBegin) - whole;
        total += 8 * whole + 6 * halves + 4;
    }
    entryCost_[ni] = total;
    threadStart_.assign(nt + 1, ni);
    threadStart_[0] = 0;
    for (int t = 1, e = 0; t < nt; t++)
    {
        const long target = total * t / nt;
        while (e < ni && entryCost_[e] < target)
        {
            e++;
        }
        threadStart_[t] = e;
    }
}

void ClusterNonbonded::compute(const Topology& top, const InteractionConst& ic, const Box& box,
                               const std::vector<Vec3<real>>& x, std::vector<Vec3<real>>& f, EnergyTerms& energies,
                               Matrix3* virial)
{
    if (pendingPairs_)
    {
        grid_.build(box, x, false, -1, leadingAtoms(top, x.size()), numThreads_);
        gridVersion_++;
        list_.fromPairs(grid_, pairStart_, pairJ_);
        markLennardJonesClusters(top);
        list_.partitionJ(clusterLJ_, numThreads_);
        listVersion_++;
        pendingPairs_        = false;
        computesSinceSearch_ = 0;
        setupFor_     = nullptr;
    }
    if (setupFor_ != &ic || q_.size() != size_t(grid_.numSlots()))
    {
        prepareSetup(top, ic);
    }
    setup_.energies = !energiesOnlyWithVirial_ || virial != nullptr;
    fillCoordinates(box, x);
    const bool pruned = pruneInterval_ > 0 && rlistInner_ > 0 && !pendingPairs_;
    if (pruned && computesSinceSearch_ % pruneInterval_ == 0)
    {
        prune();
    }
    computesSinceSearch_++;
    const auto& ie    = pruned ? innerI_ : list_.iEntries();
    const auto& jList = pruned ? innerJ_ : list_.jEntries();
    computedClusterPairs_ = pruned ? innerJCount_ : jList.size();
    computedRowHalves_    = pruned ? innerHalfCount_ : 2 * jList.size();
    const int   ni = static_cast<int>(ie.size());
    const int   nt = std::max(1, std::min(numThreads_, std::max(1, ni)));
    const int   ns = grid_.numSlots();
    // the shares change with the list only (a serial pass over the entries,
    // 15 us of a 4.1 ms 2-thread water step when made every step)
    if (splitVersion_ != listVersion_ || splitThreads_ != nt || splitPruned_ != pruned)
    {
        splitByCost(ie, nt);
        splitVersion_ = listVersion_;
        splitThreads_ = nt;
        splitPruned_  = pruned;
    }
    threadF_.resize(nt);
    threadJScratch_.resize(nt);
    threadOut_.assign(nt, ClusterKernelOutput());
    // the threads' force buffers are left zero by the reduction below (it
    // reads every atom's slot; padding slots only ever get zeros), so they
    // are cleared here only when new or after a call that did not finish
    const bool clean = threadFClean_;
    threadFClean_    = false;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        auto& buf = threadF_[t];
        if (!clean || buf.size() != 3 * size_t(ns))
        {
            buf.assign(3 * size_t(ns), 0.0f);
        }
        ClusterKernelOutput& out = threadOut_[t];
        out.fx = buf.data();
        out.fy = buf.data() + ns;
        out.fz = buf.data() + 2 * size_t(ns);
        threadJScratch_[t].resize(size_t(ns / 4) * c_clusterJScratchFloats);
        out.jScratch = threadJScratch_[t].data();
        ClusterKernelInput in;
        in.x = x_.data(), in.y = y_.data(), in.z = z_.data(), in.q = q_.data(), in.type = type_.data();
        in.ljA = ljA_.data(), in.ljB = ljB_.data();
        in.clusterLJ = clusterLJ_.data();
        in.shift    = shift_;
        in.iEntries = ie.data();
        in.jEntries = jList.data();
        in.iBegin   = threadStart_[t];
        in.iEnd     = threadStart_[t + 1];
        in.numClusters = ns / 4;
        if (kind_ == ClusterKernelKind::Reference)
        {
            clusterKernelReference(setup_, in, out);
        }
        else
        {
            clusterKernelSimd(setup_, in, out);
        }
    }
    for (const ClusterKernelOutput& out : threadOut_)
    {
        if (out.overlapSlot[0] != -1)
        {
            reportOverlap(top);
        }
    }
    // The reduction in two passes over the threads' slot-ordered buffers:
    // 1. each thread sums a contiguous run of slots over the buffers (in
    //    thread order; vector loads) into fsum_ as (x, y, z, 0) per slot and
    //    leaves the buffers zero for the next call;
    // 2. each thread adds the sums to its own run of atoms (one scattered
    //    16-byte read per atom).
    // Atom by atom straight from the buffers (six scattered reads and
    // writes per atom, half of them lines the other core had written) took
    // 90 us per step of 12k water on 2 threads.
    const auto& atomOf = grid_.atomOfSlot();
    const auto& slotOf = grid_.slotOfAtom();
    const int   na     = static_cast<int>(slotOf.size());
    fsum_.resize(4 * size_t(ns));
    float* const fsum = fsum_.data();
#pragma omp parallel num_threads(nt)
    {
        const int t  = nt > 1 ? omp_get_thread_num() : 0;
        // slot runs of whole clusters (4 slots)
        const int s0 = 4 * int(long(ns / 4) * t / nt), s1 = 4 * int(long(ns / 4) * (t + 1) / nt);
        float* const f0 = threadF_[0].data();
        for (int slot = s0; slot < s1; slot++)
        {
            float sx = f0[slot], sy = f0[ns + slot], sz = f0[2 * size_t(ns) + slot];
            for (int u = 1; u < nt; u++)
            {
                const float* const fu = threadF_[u].data();
                sx += fu[slot];
                sy += fu[ns + slot];
                sz += fu[2 * size_t(ns) + slot];
            }
            fsum[4 * size_t(slot)]     = sx;
            fsum[4 * size_t(slot) + 1] = sy;
            fsum[4 * size_t(slot) + 2] = sz;
            fsum[4 * size_t(slot) + 3] = 0;
        }
        for (int u = 0; u < nt; u++)
        {
            float* const fu = threadF_[u].data();
            for (int d = 0; d < 3; d++)
            {
                std::fill(fu + d * size_t(ns) + s0, fu + d * size_t(ns) + s1, 0.0f);
            }
        }
#pragma omp barrier
        const int a0 = int(long(na) * t / nt), a1 = int(long(na) * (t + 1) / nt);
        for (int a = a0; a < a1; a++)
        {
            const int slot = slotOf[a];
            if (slot >= 0)
            {
                const float* const fs = fsum + 4 * size_t(slot);
                f[a] += Vec3<real>(real(fs[0]), real(fs[1]), real(fs[2]));
            }
        }
    }
    double vlj = 0, vcoul = 0;
    double fshift[c_numShifts][3] = {};
    for (const ClusterKernelOutput& out : threadOut_)
    {
        vlj += out.vlj;
        vcoul += out.vcoul;
        for (int s = 0; s < c_numShifts; s++)
        {
            for (int d = 0; d < 3; d++)
            {
                fshift[s][d] += out.fshift[s][d];
            }
        }
    }
    if (virial)
    {
        // -0.5 sum_slots x (x) F - 0.5 sum_shifts T (x) F_i(T)
        for (int slot = 0; slot < ns; slot++)
        {
            if (atomOf[slot] >= 0)
            {
                addVirial(*virial, DVec(x_[slot], y_[slot], z_[slot]),
                          DVec(fsum[4 * size_t(slot)], fsum[4 * size_t(slot) + 1], fsum[4 * size_t(slot) + 2]));
            }
        }
        for (int s = 0; s < c_numShifts; s++)
        {
            addVirial(*virial, DVec(shift_[3 * s], shift_[3 * s + 1], shift_[3 * s + 2]),
                      DVec(fshift[s][0], fshift[s][1], fshift[s][2]));
        }
    }
    threadFClean_ = true;
    if (exclusionCorrections_ && (excludedFor_ != &top || excludedEpsfac_ != ic.epsfac
                                  || excludedPairs_.numAtoms != top.numAtoms || excludedCount_ != top.exclusions.size()))
    {
        // the excluded pairs once per topology (not per step)
        excludedPairs_  = ExcludedPairList::make(top, ic.epsfac);
        excludedFor_    = &top;
        excludedEpsfac_ = ic.epsfac;
        excludedCount_  = top.exclusions.size();
    }
    const double vexcl = exclusionCorrections_ ? exclusionCorrections(top, ic, Pbc(box), x, f, virial, -1, numThreads_,
                                                                  setup_.coulomb == ClusterCoulomb::Ewald ? &setup_.ewald : nullptr,
                                                                  &excludedPairs_, setup_.energies)
                                           : 0.0;
    if (setup_.energies)
    {
        energies.add(EnergyTerm::LJSR, vlj);
        energies.add(EnergyTerm::CoulombSR, vcoul);
        energies.add(EnergyTerm::CoulombSR, vexcl);
    }
}

} // namespace putmd
