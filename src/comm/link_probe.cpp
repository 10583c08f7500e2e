/* comm/link_probe.cpp — the start-up measurement behind --comm auto across
 * machines (see link_probe.h). */
#include "comm/link_probe.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
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
} // namespace

LinkProbe probeLinksAcrossMachines()
{
    const int rank = Communicator::worldRank(), size = Communicator::worldSize();
    // every rank's machine, named by its first world rank
    MPI_Comm machine = splitByMachine(MPI_COMM_WORLD, rank);
    int      first   = rank;
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, machine);
    MPI_Comm_free(&machine);
    std::vector<int> machineOf(static_cast<std::size_t>(size));
    MPI_Allgather(&first, 1, MPI_INT, machineOf.data(), 1, MPI_INT, MPI_COMM_WORLD);

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

} // namespace putmd::comm
