/* fft/transpose.h — the transposes of the pencil FFT (internal to src/fft).
 *
 * A transpose moves complex data between two pencil layouts inside one
 * sub-communicator (a row or a column of the process grid). Its plan
 * (TransposePlan) is fixed when the FFT is built: for every peer the box of
 * grid points sent and the box received, and where they sit in the packed
 * send and receive buffers. A block is packed in the storage order of the
 * source layout, so sender and receiver agree on it without talking.
 *
 * A Transport executes plans with one of the three algorithms; it owns the
 * packed buffers (and for rma the window), sized once for every plan it will
 * run. Blocks a rank sends to itself never go through MPI: they are copied
 * directly from the source array to the destination array.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/real.h"
#include "fft/pencil_fft.h"

namespace putmd::fft
{

using Complex = std::complex<real>;

/* An axis-aligned box of grid points (axes 0 = x, 1 = y, 2 = z). */
struct Box
{
    std::array<int, 3> start{};
    std::array<int, 3> size{};
    long               volume() const { return long(size[0]) * size[1] * size[2]; }
};

Box intersect(const Box& a, const Box& b);

/* A local array: the box it holds and its storage order, axes from slowest
 * to fastest; the fastest axis has stride 1, the others the product of the
 * faster extents. */
struct Layout
{
    Box                box;
    std::array<int, 3> order{0, 1, 2};
    std::array<long, 3> strides() const; // per axis (x, y, z)
};

/* Copy the points of `box` (inside both layouts) from src to dst. */
void copyBox(const Complex* src, const Layout& srcLayout, Complex* dst, const Layout& dstLayout, const Box& box);

struct TransposePlan
{
    Layout from, to; // this rank's source and destination arrays
    int    me = 0;   // this rank in the sub-communicator
    std::vector<Box>  send, recv;             // per peer; send[me] == recv[me] is the self block
    std::vector<Layout> peerFrom;             // peer k's source layout (shm reads its blocks there)
    std::vector<long> sendOffset, recvOffset; // complex elements into the packed buffers (self: unused)
    long              sendTotal = 0, recvTotal = 0; // elements exchanged with other ranks
    long              messages = 0, bytes = 0;      // non-empty blocks to other ranks, their bytes
    std::vector<long> messageBytes;                 // the size of each of those blocks
    std::vector<int>  mpiSendCounts, mpiSendDispls, mpiRecvCounts, mpiRecvDispls; // in reals; self 0
    /* rma: byte offset in peer k's window where this rank's block for k goes,
     * per parity (exchanged once when the transport is built). */
    std::vector<std::array<std::int64_t, 2>> remoteOffset;
};

/* Build the plan of a transpose from layout `fromOf(k)` to layout `toOf(k)`
 * over the p ranks of a sub-communicator (peer k's layouts). */
template<typename FromOf, typename ToOf>
TransposePlan makeTransposePlan(int p, int me, FromOf fromOf, ToOf toOf);

class Transport
{
public:
    virtual ~Transport() = default;
    /* Move the data of `plan` from src (layout plan.from) to dst (plan.to).
     * Collective over the sub-communicator; adds to stats. */
    virtual void execute(TransposePlan& plan, const Complex* src, Complex* dst, FftCommStats& stats) = 0;
    /* Returns once no peer reads `array` any more as the source of this
     * transport's last execution. Only shm lets execute() return while
     * peers still copy from its source (they read it in place; the next
     * execution's ready flags, or this call, wait for them); the other
     * transports have their data out before execute() returns. Every
     * local write into a stage array goes after this call. */
    virtual void settle(const Complex* /*array*/) {}
};

/* The complex stages' arrays (A, B, C of pencil_fft.cpp) of every rank of
 * the FFT's communicator in one shared-memory window (MPI-3
 * MPI_Win_allocate_shared), for the shm transposes: a rank reads each
 * peer's block where it lies in the peer's array. Each rank's segment
 * holds two flag words (one per transport: row, column; 64 bytes apart)
 * and then its three arrays, all 64-byte aligned (as fftw_malloc's: the
 * FFTW plans are made on these arrays); the offsets are exchanged when the
 * window is made. Needs every rank on one machine
 * (allOnOneMachine). Collective over parent. */
class SharedStageArrays
{
public:
    SharedStageArrays(MPI_Comm parent, std::array<long, 3> counts);
    ~SharedStageArrays();
    SharedStageArrays(const SharedStageArrays&)            = delete;
    SharedStageArrays& operator=(const SharedStageArrays&) = delete;

    Complex*       mine(int array) const;
    const Complex* peer(int parentRank, int array) const;
    std::uint64_t* flag(int parentRank, int transport) const;
    /* Which of this rank's arrays starts at p (0, 1, 2), or -1. */
    int            arrayOf(const Complex* p) const;

private:
    MPI_Win                                  win_ = MPI_WIN_NULL;
    int                                      rank_ = 0;
    std::vector<std::byte*>                  base_;    // per parent rank
    std::vector<std::array<std::int64_t, 4>> offsets_; // per parent rank, bytes from its base: flags, A, B, C
};

/* True when every rank of comm shares memory with every other (one
 * machine); false in the SMPI build, which has no shared windows. Collective. */
bool allOnOneMachine(MPI_Comm comm);

/* A transport for the plans in `plans`, all on the sub-communicator `comm`
 * (MPI_COMM_NULL in serial mode; a one-rank sub-communicator never calls
 * MPI in execute). parent: the FFT's communicator (the rma window lives
 * there). peerRanks[k]: peer k's rank in the parent. name: "row" or
 * "column", for messages. Collective over the parent. */
std::unique_ptr<Transport> makeTransport(TransposeAlgorithm alg, MPI_Comm comm, MPI_Comm parent,
                                         std::vector<TransposePlan*> plans, std::vector<int> peerRanks,
                                         const char* name, SharedStageArrays* shared = nullptr,
                                         int transportIndex = 0);

// ---------------------------------------------------------------------------

template<typename FromOf, typename ToOf>
TransposePlan makeTransposePlan(int p, int me, FromOf fromOf, ToOf toOf)
{
    TransposePlan t;
    t.me   = me;
    t.from = fromOf(me);
    t.to   = toOf(me);
    t.send.resize(p);
    t.recv.resize(p);
    t.sendOffset.assign(p, 0);
    t.recvOffset.assign(p, 0);
    t.mpiSendCounts.assign(p, 0);
    t.mpiSendDispls.assign(p, 0);
    t.mpiRecvCounts.assign(p, 0);
    t.mpiRecvDispls.assign(p, 0);
    t.remoteOffset.assign(p, {0, 0});
    t.peerFrom.resize(p);
    for (int k = 0; k < p; ++k)
    {
        t.peerFrom[k] = fromOf(k);
        t.send[k] = intersect(t.from.box, toOf(k).box);
        t.recv[k] = intersect(fromOf(k).box, t.to.box);
        if (k == me)
        {
            continue;
        }
        t.sendOffset[k] = t.sendTotal;
        t.recvOffset[k] = t.recvTotal;
        t.sendTotal += t.send[k].volume();
        t.recvTotal += t.recv[k].volume();
        if (t.send[k].volume() > 0)
        {
            ++t.messages;
            t.bytes += t.send[k].volume() * long(sizeof(Complex));
            t.messageBytes.push_back(t.send[k].volume() * long(sizeof(Complex)));
        }
    }
    return t;
}

} // namespace putmd::fft
