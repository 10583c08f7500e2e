/* comm/backend_shmem.cpp — OpenSHMEM (Open MPI's oshmem, spml ucx).
 *
 * The same protocol as rma (backend_rma.cpp), in OpenSHMEM terms:
 *   arena generation  shmem_malloc of the same size on every PE (symmetric
 *                     heap; the address of a block is valid on every PE);
 *   data              shmem_putmem into the receiver's region of parity s;
 *   order             shmem_fence: the puts to a PE are delivered before
 *                     anything issued after the fence to that PE;
 *   flag / ack        shmem_ulong_atomic_set (an atomic, so it may race with
 *                     the owner's test legally);
 *   wait              shmem_ulong_test(word, SHMEM_CMP_GE, s) on the local
 *                     word, which also makes the data the flag guards
 *                     visible to the following loads;
 *   end of start()    shmem_quiet: flags delivered, like rma's flush.
 *
 * Start-up. OpenSHMEM is initialised (shmem_init) only when a Communicator
 * with this backend is made, after MPI_Init, and finalised before MPI
 * (shmem_finalize ends MPI too in Open MPI 4.1, see Communicator::finalize).
 * PE numbers must equal MPI world ranks (Open MPI guarantees it; checked).
 *
 * Sub-communicators: shmem_malloc is collective over ALL PEs, so only a
 * world-sized split (every rank the same color) can use this backend;
 * Communicator::split() refuses smaller groups. Puts and atomics address
 * PEs by world rank (pe()).
 *
 * What was found on this machine (Open MPI 4.1.4, UCX): OpenSHMEM works
 * under plain mpirun together with MPI — puts, fence, atomics and waits are
 * correct — but as soon as shmem_init() has run, Open MPI's osc/rdma
 * component (the default one-sided component) crashes with SIGSEGV inside
 * MPI_Finalize (free() in the component's finalize), whether or not any
 * window was used. With osc/rdma excluded (mpirun --mca osc ^rdma, or
 * OMPI_MCA_osc=^rdma) everything finishes cleanly. checkShmemUsable
 * therefore stops the job at start-up, with that advice, when osc/rdma is
 * not excluded, instead of letting it crash after the run.
 */
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "comm/backends.h"
#include "comm/onesided.h"

#if PUTMD_HAVE_SHMEM
#include <shmem.h>
#endif

namespace putmd::comm
{

namespace
{
bool g_shmemUp = false;
}

bool shmemInitialized()
{
    return g_shmemUp;
}

#if PUTMD_HAVE_SHMEM

void shmemInitOnce()
{
    if (g_shmemUp)
    {
        return;
    }
    shmem_init();
    g_shmemUp = true;
    if (shmem_my_pe() != Communicator::worldRank() || shmem_n_pes() != Communicator::worldSize())
    {
        fail("OpenSHMEM PE " + std::to_string(shmem_my_pe()) + " of " + std::to_string(shmem_n_pes())
             + " is not MPI world rank " + std::to_string(Communicator::worldRank()) + " of "
             + std::to_string(Communicator::worldSize()) + "; the shmem backend needs them equal");
    }
}

namespace
{

static_assert(sizeof(unsigned long) == 8, "flag words are 64-bit unsigned long");

class ShmemArena final : public Arena
{
public:
    using Arena::Arena;
    ~ShmemArena() override
    {
        if (!g_shmemUp || !Communicator::parallel())
        {
            return;
        }
        for (auto& g : gens_)
        {
            shmem_free(g.base); // collective, like the allocation
        }
    }

protected:
    Generation create(std::size_t size) override
    {
        Generation g;
        g.size = size;
        g.base = static_cast<std::byte*>(shmem_malloc(size));
        if (g.base == nullptr)
        {
            fail("shmem_malloc(" + std::to_string(size)
                 + " bytes) failed: the OpenSHMEM symmetric heap is too small; raise SHMEM_SYMMETRIC_SIZE "
                   "(e.g. mpirun -x SHMEM_SYMMETRIC_SIZE=1G) or use another backend");
        }
        std::memset(g.base, 0, size);
        shmem_barrier_all(); // every PE zeroed its part before anyone writes
        return g;
    }
};

class ShmemExchange final : public OneSidedExchange
{
public:
    ShmemExchange(Communicator::Impl& comm, Phase phase) : OneSidedExchange(comm, phase, true, 2) {}

private:
    /* OpenSHMEM names PEs by world rank; exchange peers are ranks of the
     * communicator (the same numbers, as only world-sized splits are
     * allowed with shmem, but translated all the same). */
    int pe(int rank) const { return comm_.worldRanks[static_cast<std::size_t>(rank)]; }

    unsigned long* wordAt(ArenaBlock ctrl, std::size_t offset)
    {
        return reinterpret_cast<unsigned long*>(arena().local(ArenaBlock{ctrl.gen, offset}));
    }

    template<typename Word>
    void waitOwn(const std::vector<PeerLinks>& peers, std::uint64_t value, Word word, const char* what)
    {
        for (const auto& p : peers)
        {
            unsigned long* w = word(p.peer);
            if (shmem_ulong_test(w, SHMEM_CMP_GE, value))
            {
                continue;
            }
            Waiter waiter([&] { return describe(what, p.peer, value); });
            while (!shmem_ulong_test(w, SHMEM_CMP_GE, value))
            {
                waiter.poll();
            }
        }
    }

    void startRemote(std::uint64_t seq) override
    {
        if (seq >= baseline_ + 3)
        {
            waitOwn(sendPeers_, seq - 2, [&](int peer) { return wordAt(ctrl_, ackOffset(ctrl_, peer)); },
                    "an acknowledgement (shmem)");
        }
        for (const auto& p : sendPeers_)
        {
            for (int k : p.links)
            {
                const auto        data = localSend(k, seq);
                const std::size_t n    = sendSize(k); // setSendSize: maybe fewer than planned
                if (n > 0)
                {
                    const Region& r = remote_[k];
                    shmem_putmem(arena().local(ArenaBlock{r.gen, r.off[seq % 2]}), data.data(), n, pe(p.peer));
                }
            }
        }
        shmem_fence();
        for (const auto& p : sendPeers_)
        {
            const ArenaBlock c = peerCtrl_[p.peer];
            shmem_ulong_atomic_set(wordAt(c, flagOffset(c, comm_.rank)), seq, pe(p.peer));
        }
        shmem_quiet();
    }

    void finishRemote(std::uint64_t seq) override
    {
        if (seq >= baseline_ + 2)
        {
            for (const auto& p : recvPeers_)
            {
                const ArenaBlock c = peerCtrl_[p.peer];
                shmem_ulong_atomic_set(wordAt(c, ackOffset(c, comm_.rank)), seq - 1, pe(p.peer));
            }
        }
        waitOwn(recvPeers_, seq, [&](int peer) { return wordAt(ctrl_, flagOffset(ctrl_, peer)); },
                "data (shmem flag)");
    }

    std::span<const std::byte> remoteRecvBuffer(int link, std::uint64_t seq) override
    {
        const Region& r = own_[link];
        return {arena().local(ArenaBlock{r.gen, r.off[seq % 2]}), recvs_[link].bytes};
    }
};

} // namespace

void checkShmemUsable(Communicator::Impl& comm)
{
    // osc/rdma must not be loadable and osc/ucx must be (see the file
    // comment). mpirun --mca osc X reaches the ranks as OMPI_MCA_osc: a list
    // of components, or one of those to leave out after '^'.
    const char*       v       = std::getenv("OMPI_MCA_osc");
    const std::string osc     = v ? v : "";
    const bool        exclude = !osc.empty() && osc[0] == '^';
    auto              listed  = [&](const std::string& name)
    {
        const std::string list = "," + osc.substr(exclude ? 1 : 0) + ",";
        return list.find("," + name + ",") != std::string::npos;
    };
    const bool rdma = osc.empty() || (exclude ? !listed("rdma") : listed("rdma"));
    const bool ucx  = osc.empty() || (exclude ? !listed("ucx") : listed("ucx"));
    if (rdma || !ucx)
    {
        fail(fmt::format("the shmem backend needs Open MPI's one-sided components set so: osc/rdma left out and "
                         "osc/ucx available (OMPI_MCA_osc is '{}'). With OpenSHMEM initialised, Open MPI 4.1 "
                         "crashes in MPI_Finalize when osc/rdma is loaded, or when osc/ucx is not (measured with "
                         "pt2pt, sm and pt2pt,sm). Run with 'mpirun --mca osc ^rdma ...' (or export "
                         "OMPI_MCA_osc=^rdma), or choose another backend (--comm p2p|rma|shm).",
                         osc));
    }
    shmemInitOnce();
    (void)comm;
}

std::unique_ptr<Arena> makeShmemArena(Communicator::Impl& comm)
{
    return std::make_unique<ShmemArena>(comm);
}

std::unique_ptr<Exchange> makeShmemExchange(Communicator::Impl& comm, Phase phase)
{
    return std::make_unique<ShmemExchange>(comm, phase);
}

#else // no OpenSHMEM in this build

void shmemInitOnce() {}

void checkShmemUsable(Communicator::Impl&)
{
    fail("this putmd was built without OpenSHMEM (liboshmem not found at configure time); "
         "choose --comm p2p, rma or shm");
}

std::unique_ptr<Arena> makeShmemArena(Communicator::Impl&)
{
    fail("shmem backend not built");
}

std::unique_ptr<Exchange> makeShmemExchange(Communicator::Impl&, Phase)
{
    fail("shmem backend not built");
}

#endif

} // namespace putmd::comm
