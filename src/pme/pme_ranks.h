/* pme/pme_ranks.h — separate PME ranks (--npme K > 0).
 *
 * Layout. Of N ranks, the last K are PME ranks and the first N - K do the
 * particle-particle (PP) work with domain decomposition. PP rank r is
 * paired with PME rank floor(r K / (N - K)), so each PME rank serves a
 * contiguous run of PP ranks. The PME ranks form their own communicator and
 * compute with DistributedPme (pme_distributed.h) on a pencil grid.
 *
 * Traffic. Two comm::Exchange patterns on the world communicator, so the
 * backend chosen with --comm carries them: PP -> PME (a header with the
 * box and flags, then the home atoms' coordinates and charges) and PME -> PP
 * (energy, virial, forces). With a one-sided backend the PP rank puts its
 * coordinates into memory its PME rank exposed at plan time and goes on
 * with its short-range work; the forces come back the same way, and the
 * PP rank waits for them only after its own forces are done.
 *
 * Capacity. A link is planned for a number of atoms with headroom (1.25 x
 * the home atoms at planning, plus 32); every message carries its atom count
 * and only the used bytes travel (Exchange::setSendSize). When at a search
 * step some PP rank's home atoms no longer fit, the PP ranks agree on it
 * (a search-step collective), each sends a "replan" message instead of
 * coordinates, and every rank of the world plans both exchanges again with
 * the new sizes; the PME rank learns them from the plan itself.
 *
 * End. Each PP rank sends "stop" when its run ends; a PME rank returns when
 * all its PP ranks have. If a PP rank fails, the job is aborted (app/main).
 */
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"
#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "fft/pencil_fft.h"
#include "pme/npme_model.h"
#include "pme/pme.h"
#include "timing/perf_report.h"
#include "timing/stage_timer.h"

namespace putmd
{

/* Which world ranks do what. npme = 0: every rank does both. */
struct RankLayout
{
    int worldSize = 1;
    int npme      = 0;
    int numPp() const { return worldSize - npme; }
    bool isPme(int worldRank) const { return npme > 0 && worldRank >= numPp(); }
    /* The world rank of PP rank r's PME rank. */
    int pmeRankOf(int ppRank) const { return numPp() + static_cast<int>((long(ppRank) * npme) / numPp()); }
    /* The PP ranks (0-based PP numbering = world numbering) served by PME index k. */
    std::vector<int> ppRanksOf(int pmeIndex) const;
};

/* The choice of --npme and why, for the log. */
struct NpmeChoice
{
    int         npme = 0;
    int         bestSeparate = 0; // the estimate's fastest layout with PME ranks (0: none usable)
    std::string reason;
};

/* Default npme: the layout with the shortest predicted step
 * (pme/npme_model.h), npme 0 on ties; the reason names the predicted steps
 * of npme 0 and of the best K > 0, and the network's costs. */
NpmeChoice chooseNpme(const NpmeModelInput& in, const NetworkCost& net);

/* One recipe for both sides' messages. */
struct PmeMessageLayout
{
    static constexpr std::size_t kHeaderDoubles = 16;
    static constexpr std::size_t kHeaderBytes   = kHeaderDoubles * sizeof(double);
    static std::size_t xBytes(std::size_t atoms) { return (atoms * 3 * sizeof(real) + 7) / 8 * 8; }
    static std::size_t toPmeBytes(std::size_t atoms) { return kHeaderBytes + xBytes(atoms) + atoms * sizeof(double); }
    static std::size_t toPpBytes(std::size_t atoms) { return kHeaderBytes + xBytes(atoms); }
    static std::size_t atomsForToPme(std::size_t bytes) { return (bytes - kHeaderBytes) / (3 * sizeof(real) + sizeof(double)); }
};

/* The PP side: one per PP rank. */
class PmeClient
{
public:
    /* Collective over the world (both exchanges are made and planned);
     * homeAtoms: this rank's home atoms now. */
    PmeClient(comm::Communicator& world, comm::Communicator& pp, const RankLayout& layout, int homeAtoms);
    ~PmeClient();

    /* At a search step (collective over the PP ranks): grow the links when
     * some rank's home atoms no longer fit. */
    void checkCapacity(int homeAtoms);
    /* Coordinates and charges to the PME rank; returns at once. */
    void send(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q, bool needVirial);
    /* Waits for the forces and adds them to f (the atoms of the last send);
     * returns the reciprocal energy and adds the virial (on PP rank 0 only:
     * the other ranks get 0, so sums over PP ranks count them once). */
    double receive(std::span<Vec3<real>> f, Matrix3* virial);
    /* Tells the PME rank this PP rank is done. On world rank 0 it also
     * receives the first PME rank's timers (for the log). */
    void stop();
    const StageTimers& pmeRankTimers() const { return pmeTimers_; }
    /* The first PME rank's collective calls and barriers (every phase, its
     * world and PME communicators) in computations without virial, which
     * serve the PP ranks' normal steps (world rank 0, after stop()). */
    long pmeRankNormalCollectives() const { return pmeNormalCollectives_; }
    /* The PME ranks' communication summed over them (world rank 0, after
     * stop()): their PME communicator's and their world communicator's. */
    const PhaseTable& pmeRanksComm() const { return pmeRanksComm_; }

private:
    void plan(std::size_t capacity);

    comm::Communicator&             world_;
    comm::Communicator&             pp_;
    RankLayout                      layout_;
    std::unique_ptr<comm::Exchange> toPme_, toPp_;
    std::size_t                     capacity_ = 0;
    std::size_t                     sent_     = 0;
    bool                            stopped_  = false;
    StageTimers                     pmeTimers_;
    long                            pmeNormalCollectives_ = 0;
    PhaseTable                      pmeRanksComm_{};
};

/* The PME rank's whole life: serve its PP ranks until they stop. Collective
 * with the PP ranks' PmeClient construction. At the end (collective over
 * the PME ranks) the first PME rank sends its timers and the PME ranks'
 * summed communication to world rank 0 (PmeClient::stop receives them). */
struct PmeRankResult
{
    StageTimers timers;
    long        computations      = 0;
    long        normalCollectives = 0; // in computations without virial (see PmeClient)
};
PmeRankResult runPmeRank(comm::Communicator& world, comm::Communicator& pme, const RankLayout& layout,
                         const PmeParameters& params, TransposeAlgorithm transpose, double totalCharge,
                         int numThreads = 1);

} // namespace putmd
