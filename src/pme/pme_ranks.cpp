#include "pme/pme_ranks.h"

#include <mpi.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "comm/smpi_record.h"
#include "pme/pme_distributed.h"

namespace putmd
{

namespace
{

enum MessageKind : int
{
    kCoordinates = 0,
    kReplan      = 1,
    kStop        = 2
};

constexpr int kTimersTag = 901;

/* Collective calls and barriers of a communicator so far, every phase. */
long collectivesAndBarriers(const comm::Communicator& c)
{
    long n = 0;
    for (int p = 0; p < static_cast<int>(comm::Phase::Count); p++)
    {
        n += c.stats(static_cast<comm::Phase>(p)).collectives + c.stats(static_cast<comm::Phase>(p)).barriers;
    }
    return n;
}

std::size_t capacityFor(int homeAtoms)
{
    return static_cast<std::size_t>(1.25 * homeAtoms) + 32;
}

void writeHeader(std::byte* dst, const double (&h)[PmeMessageLayout::kHeaderDoubles])
{
    std::memcpy(dst, h, PmeMessageLayout::kHeaderBytes);
}

} // namespace

std::vector<int> RankLayout::ppRanksOf(int pmeIndex) const
{
    std::vector<int> out;
    for (int r = 0; r < numPp(); r++)
    {
        if (pmeRankOf(r) == numPp() + pmeIndex)
        {
            out.push_back(r);
        }
    }
    return out;
}

NpmeChoice chooseNpme(const NpmeModelInput& in, const NetworkCost& net)
{
    NpmeChoice c;
    if (in.worldSize < 2)
    {
        c.reason = "one rank";
        return c;
    }
    const std::vector<LayoutPrediction> layouts = predictLayouts(in, net);
    const LayoutPrediction*             best    = nullptr;
    const LayoutPrediction*             zero    = nullptr;
    const LayoutPrediction*             separate = nullptr;
    for (const LayoutPrediction& p : layouts)
    {
        if (p.npme == 0)
        {
            zero = &p;
        }
        else if (separate == nullptr || p.seconds < separate->seconds)
        {
            separate = &p;
        }
        if (best == nullptr || p.seconds < best->seconds)
        {
            best = &p;
        }
    }
    if (best == nullptr)
    {
        c.reason = "no layout's PP ranks can cut the box";
        return c;
    }
    c.npme         = best->npme;
    c.bestSeparate = separate != nullptr ? separate->npme : 0;
    auto describe  = [](const LayoutPrediction& p) {
        return fmt::format("npme {} {:.3g} ms ({}compute {:.3g}, communication {:.3g})", p.npme, p.seconds * 1e3,
                           p.npme == 0 ? "" : p.pmeSideSlower ? "PME ranks: " : "PP ranks: ", p.compute * 1e3,
                           p.communication * 1e3);
    };
    std::string predicted;
    for (const LayoutPrediction* p : { zero, separate })
    {
        if (p != nullptr)
        {
            predicted += (predicted.empty() ? "" : ", ") + describe(*p);
        }
    }
    auto gbs = [](double perByte) { return perByte > 0 ? 1e-9 / perByte : 0.0; };
    const std::string bandwidth =
        net.loadedRanks > 0 ? fmt::format("{:.3g} GB/s a rank with all {} at once, {:.3g} GB/s alone",
                                          gbs(net.perByte), net.loadedRanks, gbs(net.perByteAlone))
                            : fmt::format("{:.3g} GB/s", gbs(net.perByte));
    // the PP grid and halo the prediction assumed, to be read against the
    // run's "Domain decomposition" line (they must be the same)
    const std::optional<DdGrid> grid = in.ddGrid(in.worldSize - c.npme);
    c.reason = fmt::format("predicted step {}; network: {}, latency {:.3g} us, {:.3g} us a message in a burst, "
                           "{}; npme {} gives the shortest predicted step (PP ranks: grid {}, halo {:.3f} nm)",
                           predicted, net.source, net.latency * 1e6, net.perMessage * 1e6, bandwidth, c.npme,
                           grid ? describeGrid(*grid) : std::string("?"), in.haloDistance);
    return c;
}

PmeClient::PmeClient(comm::Communicator& world, comm::Communicator& pp, const RankLayout& layout, int homeAtoms) :
    world_(world), pp_(pp), layout_(layout)
{
    toPme_ = world.makeExchange(comm::Phase::Pme);
    toPp_  = world.makeExchange(comm::Phase::Pme);
    plan(capacityFor(homeAtoms));
}

PmeClient::~PmeClient() = default;

void PmeClient::plan(std::size_t capacity)
{
    capacity_             = capacity;
    const int          me = world_.rank();
    const comm::SendLink toPme{ layout_.pmeRankOf(me), PmeMessageLayout::toPmeBytes(capacity) };
    const int            from = layout_.pmeRankOf(me);
    toPme_->plan(std::span(&toPme, 1), {});
    toPp_->plan({}, std::span(&from, 1));
}

void PmeClient::checkCapacity(int homeAtoms)
{
    const bool tooSmall = static_cast<std::size_t>(homeAtoms) > capacity_;
    if (pp_.maxLong(comm::Phase::Pme, tooSmall ? 1 : 0) == 0)
    {
        return;
    }
    double h[PmeMessageLayout::kHeaderDoubles] = {};
    h[0]                                       = kReplan;
    writeHeader(toPme_->sendBuffer(0).data(), h);
    toPme_->setSendSize(0, PmeMessageLayout::kHeaderBytes);
    toPme_->start();
    toPme_->finish();
    plan(std::max(capacity_, capacityFor(homeAtoms)));
}

void PmeClient::send(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q, bool needVirial)
{
    if (x.size() > capacity_)
    {
        throw std::logic_error("PmeClient::send: " + std::to_string(x.size()) + " atoms exceed the planned capacity "
                               + std::to_string(capacity_) + " (checkCapacity was not called at the search step)");
    }
    std::byte* buf                             = toPme_->sendBuffer(0).data();
    double     h[PmeMessageLayout::kHeaderDoubles] = {};
    h[0]                                       = kCoordinates;
    h[1]                                       = double(x.size());
    h[2]                                       = needVirial ? 1 : 0;
    for (int a = 0; a < 3; a++)
    {
        for (int b = 0; b < 3; b++)
        {
            h[3 + 3 * a + b] = box.vectors()(a, b);
        }
    }
    writeHeader(buf, h);
    std::memcpy(buf + PmeMessageLayout::kHeaderBytes, x.data(), x.size() * 3 * sizeof(real));
    std::memcpy(buf + PmeMessageLayout::kHeaderBytes + PmeMessageLayout::xBytes(x.size()), q.data(),
                q.size() * sizeof(double));
    toPme_->setSendSize(0, PmeMessageLayout::toPmeBytes(x.size()));
    toPme_->start();
    toPp_->start();
    sent_ = x.size();
}

double PmeClient::receive(std::span<Vec3<real>> f, Matrix3* virial)
{
    toPme_->finish();
    toPp_->finish();
    const std::byte* buf = toPp_->recvBuffer(0).data();
    double           h[PmeMessageLayout::kHeaderDoubles];
    std::memcpy(h, buf, PmeMessageLayout::kHeaderBytes);
    if (static_cast<std::size_t>(h[1]) != sent_)
    {
        throw std::logic_error(fmt::format("PmeClient::receive: the PME rank returned {} forces for {} atoms", h[1], sent_));
    }
    const std::byte* forces = buf + PmeMessageLayout::kHeaderBytes;
    for (std::size_t a = 0; a < sent_ && a < f.size(); a++)
    {
        Vec3<real> fa;
        std::memcpy(&fa, forces + a * 3 * sizeof(real), 3 * sizeof(real));
        f[a] += fa;
    }
    if (pp_.rank() != 0)
    {
        return 0;
    }
    if (virial)
    {
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                (*virial)(a, b) += h[2 + 3 * a + b];
            }
        }
    }
    return h[0];
}

void PmeClient::stop()
{
    if (stopped_)
    {
        return;
    }
    double h[PmeMessageLayout::kHeaderDoubles] = {};
    h[0]                                       = kStop;
    writeHeader(toPme_->sendBuffer(0).data(), h);
    toPme_->setSendSize(0, PmeMessageLayout::kHeaderBytes);
    toPme_->start();
    toPme_->finish();
    stopped_ = true;
    if (world_.rank() == 0)
    {
        std::vector<double> buf(StageTimers::kSerialSize + 1 + serializedPhaseTableSize());
        MPI_Recv(buf.data(), static_cast<int>(buf.size()), MPI_DOUBLE, layout_.numPp(), kTimersTag, world_.mpiComm(),
                 MPI_STATUS_IGNORE);
        pmeTimers_            = StageTimers::deserialize(std::span(buf.data(), StageTimers::kSerialSize));
        pmeNormalCollectives_ = static_cast<long>(buf[StageTimers::kSerialSize]);
        pmeRanksComm_         = PhaseTable{};
        addSerializedPhases(pmeRanksComm_, buf.data() + StageTimers::kSerialSize + 1);
    }
}

PmeRankResult runPmeRank(comm::Communicator& world, comm::Communicator& pme, const RankLayout& layout,
                         const PmeParameters& params, TransposeAlgorithm transpose, double totalCharge, int numThreads)
{
    PmeRankResult          result;
    auto                   toPme   = world.makeExchange(comm::Phase::Pme);
    auto                   toPp    = world.makeExchange(comm::Phase::Pme);
    const std::vector<int> ppRanks = layout.ppRanksOf(pme.rank());
    const int              links   = static_cast<int>(ppRanks.size());
    auto planBoth = [&] {
        toPme->plan({}, ppRanks);
        std::vector<comm::SendLink> sends;
        for (int k = 0; k < links; k++)
        {
            const std::size_t cap = PmeMessageLayout::atomsForToPme(toPme->recvBytes(k));
            sends.push_back({ ppRanks[k], PmeMessageLayout::toPpBytes(cap) });
        }
        toPp->plan(sends, {});
    };
    DistributedPme dpme(params, pme, choosePencilGrid(pme.size(), params.gridSize), transpose, totalCharge);
    dpme.setNumThreads(numThreads);
    // the atoms this rank can receive from its PP ranks bound its PME atoms
    auto planAll = [&] {
        planBoth();
        std::size_t atoms = 0;
        for (int k = 0; k < links; k++)
        {
            atoms += PmeMessageLayout::atomsForToPme(toPme->recvBytes(k));
        }
        dpme.planRedistribution(static_cast<int>(atoms));
    };
    planAll();

    std::vector<Vec3<real>> x, f;
    std::vector<double>     q;
    std::vector<std::size_t> counts(links);
    std::vector<std::array<double, PmeMessageLayout::kHeaderDoubles>> headers(links);
    bool stepDone = true; // a step's forces were sent back: the next message starts a step
    while (true)
    {
        if (stepDone)
        {
            smpi_record::markStep(); // a replan and the coordinates after it are one step
            stepDone = false;
        }
        toPme->start();
        toPme->finish();
        int kinds[3] = { 0, 0, 0 };
        for (int k = 0; k < links; k++)
        {
            std::memcpy(headers[k].data(), toPme->recvBuffer(k).data(), PmeMessageLayout::kHeaderBytes);
            const int kind = static_cast<int>(headers[k][0]);
            if (kind < 0 || kind > 2)
            {
                throw std::runtime_error("PME rank: a message of unknown kind " + std::to_string(kind) + " from PP rank "
                                         + std::to_string(ppRanks[k]));
            }
            kinds[kind]++;
        }
        // every PP rank takes the same path at the same step (they agree at
        // search steps), and every PME rank serves at least one PP rank
        if (kinds[kStop] > 0 || kinds[kReplan] > 0)
        {
            if (kinds[kStop] != links && kinds[kReplan] != links)
            {
                throw std::runtime_error("PME rank: its PP ranks disagree about stopping or replanning");
            }
            if (kinds[kStop] == links)
            {
                break;
            }
            planAll();
            continue;
        }
        x.clear();
        q.clear();
        Box  box;
        bool needVirial = false;
        for (int k = 0; k < links; k++)
        {
            const auto&            h    = headers[k];
            const std::size_t      n    = static_cast<std::size_t>(h[1]);
            const std::byte*       data = toPme->recvBuffer(k).data();
            counts[k]                   = n;
            const std::size_t      at   = x.size();
            x.resize(at + n);
            q.resize(at + n);
            std::memcpy(x.data() + at, data + PmeMessageLayout::kHeaderBytes, n * 3 * sizeof(real));
            std::memcpy(q.data() + at, data + PmeMessageLayout::kHeaderBytes + PmeMessageLayout::xBytes(n),
                        n * sizeof(double));
            needVirial = h[2] != 0;
            Matrix3 v;
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    v(a, b) = h[3 + 3 * a + b];
                }
            }
            box = Box(v);
        }
        f.assign(x.size(), Vec3<real>());
        Matrix3    virial;
        double     energy       = 0;
        const long collectives0 = collectivesAndBarriers(world) + collectivesAndBarriers(pme);
        {
            Timed t(&result.timers, Stage::PmeMesh);
            energy = dpme.compute(box, x, q, f, needVirial ? &virial : nullptr, &result.timers);
        }
        double  ev[10] = { energy };
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                ev[1 + 3 * a + b] = virial(a, b);
            }
        }
        if (needVirial)
        {
            pme.sumInRankOrder(comm::Phase::Pme, ev);
        }
        std::size_t at = 0;
        for (int k = 0; k < links; k++)
        {
            std::byte* buf                             = toPp->sendBuffer(k).data();
            double     h[PmeMessageLayout::kHeaderDoubles] = {};
            h[0]                                       = needVirial ? ev[0] : 0.0;
            h[1]                                       = double(counts[k]);
            for (int i = 0; i < 9; i++)
            {
                h[2 + i] = needVirial ? ev[1 + i] : 0.0;
            }
            writeHeader(buf, h);
            std::memcpy(buf + PmeMessageLayout::kHeaderBytes, f.data() + at, counts[k] * 3 * sizeof(real));
            toPp->setSendSize(k, PmeMessageLayout::toPpBytes(counts[k]));
            at += counts[k];
        }
        toPp->start();
        toPp->finish();
        stepDone = true;
        result.computations++;
        if (!needVirial)
        {
            result.normalCollectives += collectivesAndBarriers(world) + collectivesAndBarriers(pme) - collectives0;
        }
    }
    // the PME ranks' communication (their PME and world communicators),
    // summed on the first, which sends it with its timers
    const std::vector<double> mine = serializePhaseTable(phaseTableOf(pme, &world));
    const std::vector<std::byte> all = pme.gatherToRoot(comm::Phase::Setup, std::as_bytes(std::span(mine)));
    if (pme.rank() == 0)
    {
        std::vector<double> sums(all.size() / sizeof(double));
        std::memcpy(sums.data(), all.data(), sums.size() * sizeof(double));
        PhaseTable total{};
        for (std::size_t at = 0; at + mine.size() <= sums.size(); at += mine.size())
        {
            addSerializedPhases(total, sums.data() + at);
        }
        std::vector<double> buf = result.timers.serialize();
        buf.push_back(double(result.normalCollectives));
        const std::vector<double> phases = serializePhaseTable(total);
        buf.insert(buf.end(), phases.begin(), phases.end());
        MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_DOUBLE, 0, kTimersTag, world.mpiComm());
    }
    return result;
}

} // namespace putmd
