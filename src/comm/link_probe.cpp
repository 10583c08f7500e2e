/* comm/link_probe.cpp — the start-up measurement behind --comm auto across
 * machines (see link_probe.h). */
#include "comm/link_probe.h"

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "comm/comm_impl.h"
#include "comm/exchange.h"

namespace putmd::comm
{

namespace
{
constexpr std::size_t kBytes  = 64 * 1024;
constexpr int         kWarmUp = 3;
constexpr int         kRounds = 20;

/* Seconds per execution of the probe pattern with this backend, the
 * slowest rank's. */
double timeBackend(Backend backend, int sendTo, const std::vector<int>& recvFrom)
{
    Communicator c(backend);
    auto         ex = c.makeExchange(Phase::Setup);
    SendLink     link{sendTo, kBytes};
    ex->plan(std::span<const SendLink>(&link, sendTo >= 0 ? 1 : 0), recvFrom);
    double t0 = 0;
    for (int round = 0; round < kWarmUp + kRounds; ++round)
    {
        if (round == kWarmUp)
        {
            t0 = nowSeconds();
        }
        if (sendTo >= 0)
        {
            auto buf = ex->sendBuffer(0);
            std::memset(buf.data(), round & 0xff, buf.size());
        }
        ex->start();
        ex->finish();
    }
    double mine = (nowSeconds() - t0) / kRounds, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Every rank's machine, named by its first world rank. */
std::vector<int> machinesOfRanks(int rank, int size)
{
    MPI_Comm machine = splitByMachine(MPI_COMM_WORLD, rank);
    int      first   = rank;
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, machine);
    MPI_Comm_free(&machine);
    std::vector<int> machineOf(static_cast<std::size_t>(size));
    MPI_Allgather(&first, 1, MPI_INT, machineOf.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return machineOf;
}

constexpr int kCostTag    = 907;
constexpr int kBurst      = 16;
constexpr int kCostWarmUp = 2;
constexpr int kCostRounds = 10;

/* Seconds of one execution of a pattern every rank runs at once, as the
 * transposes and the redistribution do: each rank sends `count` messages
 * of `bytes` to the ranks `stride`, 2 stride, ... after it (cyclically)
 * and receives as many from the ranks as far before it. kCostRounds
 * executions follow each other, each with another stride (partners near
 * and far in rank order), after kCostWarmUp and a barrier; the slowest
 * rank's time over the whole chain counts, divided by the executions (so
 * that the ranks' skew leaving the barrier is spread over them). */
double allRanksExchange(int rank, int size, int count, std::size_t bytes)
{
    std::vector<std::byte>              out(bytes);
    std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(count), std::vector<std::byte>(bytes));
    std::vector<MPI_Request>            req(2 * static_cast<std::size_t>(count));
    auto execute = [&](int round) {
        const int stride = 1 + static_cast<int>((long(round) * 7919) % std::max(1, (size - 1) / count));
        for (int m = 0; m < count; ++m)
        {
            const int k    = (m + 1) * stride % size;
            const int to   = (rank + k) % size;
            const int from = (rank - k + size) % size;
            MPI_Irecv(in[static_cast<std::size_t>(m)].data(), static_cast<int>(bytes), MPI_BYTE, from, kCostTag,
                      MPI_COMM_WORLD, &req[2 * static_cast<std::size_t>(m)]);
            MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, to, kCostTag, MPI_COMM_WORLD,
                      &req[2 * static_cast<std::size_t>(m) + 1]);
        }
        MPI_Waitall(2 * count, req.data(), MPI_STATUSES_IGNORE);
    };
    for (int round = 0; round < kCostWarmUp; ++round)
    {
        execute(round);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = nowSeconds();
    for (int round = kCostWarmUp; round < kCostWarmUp + kCostRounds; ++round)
    {
        execute(round);
    }
    double mine = (nowSeconds() - t0) / kCostRounds, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Seconds of a round trip from rank 0's side, the median of kCostRounds
 * after kCostWarmUp: `bytes` to the peer, 8 bytes back. */
double pingPong(bool first, int peer, std::size_t bytes)
{
    std::vector<std::byte> out(bytes), back(8);
    std::vector<double>    times;
    for (int round = 0; round < kCostWarmUp + kCostRounds; ++round)
    {
        const double t0 = nowSeconds();
        if (first)
        {
            MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, peer, kCostTag, MPI_COMM_WORLD);
            MPI_Recv(back.data(), 8, MPI_BYTE, peer, kCostTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        else
        {
            MPI_Recv(out.data(), static_cast<int>(bytes), MPI_BYTE, peer, kCostTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(back.data(), 8, MPI_BYTE, peer, kCostTag, MPI_COMM_WORLD);
        }
        if (round >= kCostWarmUp)
        {
            times.push_back(nowSeconds() - t0);
        }
    }
    std::nth_element(times.begin(), times.begin() + kCostRounds / 2, times.end());
    return times[kCostRounds / 2];
}
} // namespace

LinkProbe probeLinksAcrossMachines()
{
    const int              rank = Communicator::worldRank(), size = Communicator::worldSize();
    const std::vector<int> machineOf = machinesOfRanks(rank, size);

    // each rank sends to the next rank on another machine; every rank knows
    // every rank's choice, so it knows whom it receives from
    auto target = [&](int r) {
        for (int k = 1; k < size; ++k)
        {
            const int t = (r + k) % size;
            if (machineOf[static_cast<std::size_t>(t)] != machineOf[static_cast<std::size_t>(r)])
            {
                return t;
            }
        }
        return -1;
    };
    std::vector<int> recvFrom;
    for (int r = 0; r < size; ++r)
    {
        if (r != rank && target(r) == rank)
        {
            recvFrom.push_back(r);
        }
    }

    LinkProbe out;
    out.p2pSeconds = timeBackend(Backend::P2p, target(rank), recvFrom);
    out.rmaSeconds = timeBackend(Backend::Rma, target(rank), recvFrom);
    out.across     = out.rmaSeconds < out.p2pSeconds ? Backend::Rma : Backend::P2p;
    std::vector<int> firsts = machineOf;
    std::sort(firsts.begin(), firsts.end());
    firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
    out.machines = static_cast<int>(firsts.size());
    for (int f : firsts)
    {
        const long n = std::count(machineOf.begin(), machineOf.end(), f);
        out.ranksPerMachine += (out.ranksPerMachine.empty() ? "" : ", ") + std::to_string(n);
    }
    return out;
}

NetworkCost probeNetworkCost()
{
    const int rank = Communicator::worldRank(), size = Communicator::worldSize();
    if (size < 2)
    {
        return NetworkCost{}; // one rank (or serial mode, no MPI)
    }
    // once per run: every rank asks at the same points (the estimate of
    // --npme auto, then the run's set-up), so every rank keeps the same
    static std::optional<NetworkCost> measured;
    if (measured)
    {
        return *measured;
    }
    const std::vector<int> machineOf = machinesOfRanks(rank, size);
    const bool             oneMachine =
        !PUTMD_SMPI && std::count(machineOf.begin(), machineOf.end(), machineOf[0]) == size;
    if (oneMachine)
    {
        measured = NetworkCost{};
        return *measured;
    }
    // every rank at once (the network as loaded as in a transpose): one
    // message of 8 bytes each way (a latency), kBurst of them (+ kBurst - 1
    // per-message costs), one of 64 KiB (+ its bytes)
    const double one  = allRanksExchange(rank, size, 1, 8);
    const double many = allRanksExchange(rank, size, std::min(kBurst, size - 1), 8);
    const double big  = allRanksExchange(rank, size, 1, 64 * 1024);
    // the bytes' cost with the network to themselves: rank 0 and the
    // rank farthest from it in rank order on another machine
    int peer = -1;
    for (int k = 0; k < size && peer < 0; ++k)
    {
        for (int r : { size / 2 + k, size / 2 - k })
        {
            if (peer < 0 && r > 0 && r < size && (PUTMD_SMPI || machineOf[static_cast<std::size_t>(r)] != machineOf[0]))
            {
                peer = r;
            }
        }
    }
    double alone = 0;
    if (rank == 0 || rank == peer)
    {
        const double small = pingPong(rank == 0, rank == 0 ? peer : 0, 8);
        const double large = pingPong(rank == 0, rank == 0 ? peer : 0, 64 * 1024);
        alone              = std::max(0.0, (large - small) / (64 * 1024 - 8));
    }
    MPI_Bcast(&alone, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    NetworkCost  out;
    out.latency    = one;
    out.perMessage = std::max(0.0, (many - one) / std::max(1, std::min(kBurst, size - 1) - 1));
    out.perByte    = std::max(0.0, (big - one) / (64 * 1024 - 8));
    out.perByteAlone = std::min(alone, out.perByte);
    out.loadedRanks  = size;
    out.source     = fmt::format("measured at start-up, all {} ranks exchanging at once", size);
    measured       = out;
    return out;
}

} // namespace putmd::comm
