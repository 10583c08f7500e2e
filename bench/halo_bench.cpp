/* bench/halo_bench.cpp — halo-exchange microbenchmark of the comm backends.
 *
 * Times one execution of a persistent exchange — the cycle a halo step
 * runs: pack every send link (memcpy from a source array into
 * sendBuffer), start(), finish(), unpack every receive link (memcpy from
 * recvBuffer) — for message sizes 64 B .. 1 MiB per link and 1, 2 or 6
 * links per rank:
 *   1  one-directional ring: send to rank+1, receive from rank-1;
 *   2  ring both ways (a 1D decomposition);
 *   6  six links, like the six faces of a 3D grid: link j goes to rank
 *      r+1+(j mod (P-1)) and comes from r-1-(j mod (P-1)); with 2 ranks all
 *      six join the same pair, as in a small grid with periodic images.
 * Packing and unpacking are included because the backends differ exactly
 * there (shm packs into exposed memory and lets the receiver read the
 * sender's memory; the others copy).
 *
 * Method: for each case, warm up, then `batches` batches of `reps`
 * executions; a barrier (untimed) before each batch; the time of a batch
 * is the slowest rank's; the result is the median over batches of the
 * time per execution, in microseconds. Output: one line per case,
 *   backend links bytes usec
 * Usage: mpirun -np 2 halo_bench --backend p2p|rma|shm|shmem [--quick]
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"

using namespace putmd::comm;

namespace
{

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double timeCase(Communicator& comm, int links, std::size_t bytes, int batches)
{
    const int me = comm.rank(), n = comm.size();
    auto      ex = comm.makeExchange(Phase::HaloX);
    std::vector<SendLink> sends;
    std::vector<int>      recvs;
    for (int j = 0; j < links; ++j)
    {
        int to = 0, from = 0;
        if (links == 1)
        {
            to = (me + 1) % n, from = (me + n - 1) % n;
        }
        else if (links == 2)
        {
            to   = j == 0 ? (me + 1) % n : (me + n - 1) % n;
            from = j == 0 ? (me + n - 1) % n : (me + 1) % n;
        }
        else
        {
            const int d = n > 1 ? 1 + j % (n - 1) : 0;
            to = (me + d) % n, from = (me + n - d) % n;
        }
        sends.push_back({to, bytes});
        recvs.push_back(from);
    }
    ex->plan(sends, recvs);
    std::vector<std::byte> source(bytes * links, std::byte{1}), sink(bytes * links);
    auto                   once = [&] {
        for (int k = 0; k < links; ++k)
        {
            std::memcpy(ex->sendBuffer(k).data(), source.data() + k * bytes, bytes);
        }
        ex->start();
        ex->finish();
        for (int k = 0; k < links; ++k)
        {
            std::memcpy(sink.data() + k * bytes, ex->recvBuffer(k).data(), bytes);
        }
    };
    // Enough executions per batch for ~2 ms of work at the expected speed.
    const int reps = bytes <= 4096 ? 200 : bytes <= 65536 ? 50 : 10;
    for (int i = 0; i < reps; ++i)
    {
        once();
    }
    std::vector<double> perExec;
    for (int b = 0; b < batches; ++b)
    {
        comm.barrier(Phase::Setup);
        const double t0 = now();
        for (int i = 0; i < reps; ++i)
        {
            once();
        }
        std::vector<double> t = {(now() - t0) / reps};
        // Slowest rank (sum of one value per rank; max by hand on rank 0).
        auto all = comm.gatherToRoot(Phase::Setup, std::as_bytes(std::span<const double>(t)));
        if (me == 0)
        {
            double worst = 0;
            for (int r = 0; r < n; ++r)
            {
                double v;
                std::memcpy(&v, all.data() + r * sizeof(double), sizeof v);
                worst = std::max(worst, v);
            }
            perExec.push_back(worst);
        }
    }
    if (me != 0)
    {
        return 0;
    }
    std::sort(perExec.begin(), perExec.end());
    return perExec[perExec.size() / 2] * 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    Communicator::initialize(&argc, &argv);
    Backend backend = Backend::P2p;
    bool    quick   = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc)
        {
            auto b = parseBackend(argv[++i]);
            if (!b)
            {
                std::fprintf(stderr, "unknown backend %s\n", argv[i]);
                return 2;
            }
            backend = *b;
        }
        else if (a == "--quick")
        {
            quick = true;
        }
    }
    {
        Communicator comm(backend);
        const int    batches = quick ? 5 : 15;
        for (int links : {1, 2, 6})
        {
            for (std::size_t bytes = 64; bytes <= (std::size_t{1} << 20); bytes *= 4)
            {
                const double us = timeCase(comm, links, bytes, batches);
                if (comm.rank() == 0)
                {
                    std::printf("%s %d %zu %.2f\n", backendName(backend), links, bytes, us);
                    std::fflush(stdout);
                }
            }
        }
    }
    Communicator::finalize();
    return 0;
}
