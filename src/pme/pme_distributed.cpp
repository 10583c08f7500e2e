#include "pme/pme_distributed.h"

#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/units.h"
#include "pme/bspline.h"

namespace putmd
{

namespace
{

int positiveMod(int a, int n)
{
    return ((a % n) + n) % n;
}

MPI_Datatype mpiReal()
{
    return sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
}

double now()
{
    return MPI_Wtime();
}

} // namespace

/* The scratch of borderExchange, reused by every call. */
struct DistributedPme::BorderScratch
{
    struct Side
    {
        int                     peer;
        const std::vector<int>* slabs;
    };
    std::vector<Side>              sends, recvs;
    std::vector<std::vector<real>> inBuf, outBuf;
    std::vector<MPI_Request>       requests;
};

/* Border traffic along one dimension. Spreading: this rank's extended slab
 * e (0..p-2) is added to slab `target` of the process `peer` owns it.
 * Filling reverses every arrow. */
struct DistributedPme::BorderPlan
{
    struct Out
    {
        int              peer; // process index along the dimension
        std::vector<int> ext;  // my extended slabs, ascending
        std::vector<int> target;
    };
    struct In
    {
        int              peer;
        std::vector<int> target; // my owned slabs its extended slabs land on, in its order
    };
    std::vector<Out> out;
    std::vector<In>  in; // ascending peer, self included
};

DistributedPme::DistributedPme(const PmeParameters& params, comm::Communicator& comm, std::array<int, 2> procGrid,
                               TransposeAlgorithm transpose, double totalCharge) :
    params_(params), comm_(comm), procGrid_(procGrid), totalCharge_(totalCharge)
{
    if (procGrid[0] * procGrid[1] != comm.size())
    {
        throw std::invalid_argument("DistributedPme: process grid " + std::to_string(procGrid[0]) + "x"
                                    + std::to_string(procGrid[1]) + " does not match " + std::to_string(comm.size())
                                    + " ranks");
    }
    const auto K = params.gridSize;
    const int  p = params.order;
    for (int d = 0; d < 3; d++)
    {
        moduli_[d] = bsplineModuli(K[d], params.order);
    }
    fft_ = std::make_unique<PencilFft3d>(comm.mpiComm(), K, procGrid, transpose);
    pi_  = comm.rank() / procGrid[1];
    pj_  = comm.rank() % procGrid[1];
    const int mine[2] = { pi_, pj_ };
    for (int d = 0; d < 2; d++)
    {
        const int P = procGrid[d];
        owner_[d].resize(K[d]);
        for (int c = 0; c < P; c++)
        {
            for (int g = blockStart(K[d], P, c); g < blockStart(K[d], P, c + 1); g++)
            {
                owner_[d][g] = c;
            }
        }
        own0_[d]    = blockStart(K[d], P, mine[d]);
        ownSize_[d] = blockStart(K[d], P, mine[d] + 1) - own0_[d];
        ext_[d]     = ownSize_[d] + p - 1;

        auto plan = std::make_unique<BorderPlan>();
        auto size = [&](int c) { return blockStart(K[d], P, c + 1) - blockStart(K[d], P, c); };
        if (ownSize_[d] > 0)
        {
            for (int e = 0; e < p - 1; e++)
            {
                const int g = positiveMod(own0_[d] - (p - 1) + e, K[d]);
                const int o = owner_[d][g];
                auto      it = std::find_if(plan->out.begin(), plan->out.end(), [o](const auto& l) { return l.peer == o; });
                if (it == plan->out.end())
                {
                    plan->out.push_back({ o, {}, {} });
                    it = plan->out.end() - 1;
                }
                it->ext.push_back(e);
                it->target.push_back(g - blockStart(K[d], P, o) + p - 1);
            }
            for (int src = 0; src < P; src++)
            {
                if (size(src) == 0)
                {
                    continue;
                }
                BorderPlan::In in{ src, {} };
                for (int e = 0; e < p - 1; e++)
                {
                    const int g = positiveMod(blockStart(K[d], P, src) - (p - 1) + e, K[d]);
                    if (owner_[d][g] == mine[d])
                    {
                        in.target.push_back(g - own0_[d] + p - 1);
                    }
                }
                if (!in.target.empty())
                {
                    plan->in.push_back(std::move(in));
                }
            }
        }
        border_[d] = std::move(plan);
    }
    grid_.assign(size_t(ext_[0]) * ext_[1] * K[2], real(0));
    exchangeScratch_ = std::make_unique<BorderScratch>();
    const int P = comm.size();
    sendCounts_.assign(P, 0);
    recvCounts_.assign(P, 0);
    sendDispl_.assign(P + 1, 0);
    recvDispl_.assign(P + 1, 0);
    for (auto& v : scaled_)
    {
        v.assign(P, 0);
    }
}

DistributedPme::~DistributedPme() = default;

/* Slab `slab` of dimension dim, part `part`: along x a slab is a whole
 * extended plane (one part of ext_y * nz values); along y it is row `slab`
 * of each owned plane (ownSize_x parts of nz values). */
real* DistributedPme::slabPointer(int dim, int slab, int part)
{
    const int nz = params_.gridSize[2];
    if (dim == 0)
    {
        return grid_.data() + size_t(slab) * ext_[1] * nz;
    }
    const int plane = params_.order - 1 + part;
    return grid_.data() + (size_t(plane) * ext_[1] + slab) * nz;
}

/* One border exchange along dim. Summing: my extended slabs go to their
 * owners, which add them to their owned slabs. Filling (the reverse): the
 * owners send those owned slabs back, which overwrite my extended slabs. */
void DistributedPme::borderExchange(int dim, bool sum)
{
    const BorderPlan& plan    = *border_[dim];
    const int         nz      = params_.gridSize[2];
    const int         parts   = dim == 0 ? 1 : ownSize_[0];
    const size_t      partLen = dim == 0 ? size_t(ext_[1]) * nz : size_t(nz);
    const size_t      slabLen = parts * partLen;
    const int         mine    = dim == 0 ? pi_ : pj_;
    auto              rankOf  = [&](int c) { return dim == 0 ? c * procGrid_[1] + pj_ : pi_ * procGrid_[1] + c; };

    // (peer, slabs) lists of both directions, in plan order
    auto&              sends = exchangeScratch_->sends;
    auto&              recvs = exchangeScratch_->recvs;
    sends.clear();
    recvs.clear();
    for (const auto& o : plan.out)
    {
        (sum ? sends : recvs).push_back({ o.peer, &o.ext });
    }
    for (const auto& in : plan.in)
    {
        (sum ? recvs : sends).push_back({ in.peer, &in.target });
    }
    const int tag = sum ? 700 + dim : 710 + dim;

    comm::PhaseStats&              stats = comm_.mutableStats(comm::Phase::Pme);
    // buffers kept between calls: no allocation once their sizes settled
    auto& inBuf    = exchangeScratch_->inBuf;
    auto& outBuf   = exchangeScratch_->outBuf;
    auto& requests = exchangeScratch_->requests;
    inBuf.resize(std::max(inBuf.size(), recvs.size()));
    outBuf.resize(std::max(outBuf.size(), sends.size()));
    requests.clear();
    for (size_t k = 0; k < recvs.size(); k++)
    {
        if (recvs[k].peer == mine)
        {
            continue;
        }
        inBuf[k].resize(recvs[k].slabs->size() * slabLen);
        requests.emplace_back();
        MPI_Irecv(inBuf[k].data(), static_cast<int>(inBuf[k].size()), mpiReal(), rankOf(recvs[k].peer), tag,
                  comm_.mpiComm(), &requests.back());
    }
    for (size_t k = 0; k < sends.size(); k++)
    {
        if (sends[k].peer == mine)
        {
            continue;
        }
        outBuf[k].resize(sends[k].slabs->size() * slabLen);
        real* dst = outBuf[k].data();
        for (int slab : *sends[k].slabs)
        {
            for (int part = 0; part < parts; part++, dst += partLen)
            {
                std::copy_n(slabPointer(dim, slab, part), partLen, dst);
            }
        }
        requests.emplace_back();
        MPI_Isend(outBuf[k].data(), static_cast<int>(outBuf[k].size()), mpiReal(), rankOf(sends[k].peer), tag,
                  comm_.mpiComm(), &requests.back());
        stats.recordMessage(static_cast<long>(outBuf[k].size() * sizeof(real)));
    }
    if (!requests.empty())
    {
        const double t0 = now();
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        stats.waitSeconds += now() - t0;
    }
    auto apply = [&](const real* src, real* dst) {
        if (sum)
        {
            for (size_t n = 0; n < partLen; n++)
            {
                dst[n] += src[n];
            }
        }
        else
        {
            std::copy_n(src, partLen, dst);
        }
    };
    // in ascending source order, self included, so sums do not depend on
    // arrival order; a self link maps my extended slabs to my owned ones
    const auto* self = [&]() -> const BorderPlan::Out* {
        for (const auto& o : plan.out)
        {
            if (o.peer == mine)
            {
                return &o;
            }
        }
        return nullptr;
    }();
    for (size_t k = 0; k < recvs.size(); k++)
    {
        if (recvs[k].peer == mine)
        {
            for (size_t s = 0; s < self->ext.size(); s++)
            {
                const int from = sum ? self->ext[s] : self->target[s];
                const int to   = sum ? self->target[s] : self->ext[s];
                for (int part = 0; part < parts; part++)
                {
                    apply(slabPointer(dim, from, part), slabPointer(dim, to, part));
                }
            }
            continue;
        }
        const real* src = inBuf[k].data();
        for (int slab : *recvs[k].slabs)
        {
            for (int part = 0; part < parts; part++, src += partLen)
            {
                apply(src, slabPointer(dim, slab, part));
            }
        }
    }
}

/* MPI_Alltoallv of per-atom blocks of `per` doubles: counts and
 * displacements in atoms (displ has P + 1 entries); counted in the PME
 * phase (one collective, a message per non-empty block to another rank). */
void DistributedPme::alltoallvAtoms(const double* send, const std::vector<int>& sendCounts,
                                    const std::vector<int>& sendDispl, double* recv, const std::vector<int>& recvCounts,
                                    const std::vector<int>& recvDispl, int per)
{
    const int         P     = comm_.size();
    comm::PhaseStats& stats = comm_.mutableStats(comm::Phase::Pme);
    for (int r = 0; r < P; r++)
    {
        scaled_[0][r] = sendCounts[r] * per;
        scaled_[1][r] = sendDispl[r] * per;
        scaled_[2][r] = recvCounts[r] * per;
        scaled_[3][r] = recvDispl[r] * per;
        if (r != comm_.rank() && sendCounts[r] > 0)
        {
            stats.recordMessage(long(scaled_[0][r]) * long(sizeof(double)));
        }
    }
    MPI_Alltoallv(send, scaled_[0].data(), scaled_[1].data(), MPI_DOUBLE, recv, scaled_[2].data(), scaled_[3].data(),
                  MPI_DOUBLE, comm_.mpiComm());
    stats.collectives++;
}

void DistributedPme::redistributeX(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q)
{
    const int      P   = comm_.size();
    const auto     K   = params_.gridSize;
    const Matrix3& inv = box.inverse();
    const int      n   = static_cast<int>(x.size());
    if (P == 1)
    {
        xMine_.assign(x.begin(), x.end());
        qMine_.assign(q.begin(), q.end());
        return;
    }
    destOf_.resize(n);
    slotOf_.resize(n);
    std::fill(sendCounts_.begin(), sendCounts_.end(), 0);
    for (int a = 0; a < n; a++)
    {
        double    w  = 0;
        const int cx = pmeGridCell(x[a], inv, 0, K[0], &w);
        const int cy = pmeGridCell(x[a], inv, 1, K[1], &w);
        destOf_[a]   = owner_[0][cx] * procGrid_[1] + owner_[1][cy];
        slotOf_[a]   = sendCounts_[destOf_[a]]++;
    }
    comm::PhaseStats& stats = comm_.mutableStats(comm::Phase::Pme);
    const double      t0    = now();
    MPI_Alltoall(sendCounts_.data(), 1, MPI_INT, recvCounts_.data(), 1, MPI_INT, comm_.mpiComm());
    stats.collectives++;
    constexpr int kPer = 4; // x, y, z, q as doubles
    for (int r = 0; r < P; r++)
    {
        sendDispl_[r + 1] = sendDispl_[r] + sendCounts_[r];
        recvDispl_[r + 1] = recvDispl_[r] + recvCounts_[r];
    }
    sendBuf_.resize(size_t(n) * kPer);
    for (int a = 0; a < n; a++)
    {
        double* dst = &sendBuf_[size_t(sendDispl_[destOf_[a]] + slotOf_[a]) * kPer];
        dst[0]      = x[a].x;
        dst[1]      = x[a].y;
        dst[2]      = x[a].z;
        dst[3]      = q[a];
    }
    const int total = recvDispl_[P];
    recvBuf_.resize(size_t(total) * kPer);
    alltoallvAtoms(sendBuf_.data(), sendCounts_, sendDispl_, recvBuf_.data(), recvCounts_, recvDispl_, kPer);
    stats.waitSeconds += now() - t0;
    xMine_.resize(total);
    qMine_.resize(total);
    for (int a = 0; a < total; a++)
    {
        const double* src = &recvBuf_[size_t(a) * kPer];
        xMine_[a]         = Vec3<real>(real(src[0]), real(src[1]), real(src[2]));
        qMine_[a]         = src[3];
    }
}

void DistributedPme::redistributeF(std::span<Vec3<real>> f)
{
    const int P = comm_.size();
    if (P == 1)
    {
        for (size_t a = 0; a < f.size(); a++)
        {
            f[a] += fMine_[a];
        }
        return;
    }
    constexpr int kPer  = 3;
    const int     total = recvDispl_[P];
    recvBuf_.resize(size_t(total) * kPer);
    for (int a = 0; a < total; a++)
    {
        for (int d = 0; d < 3; d++)
        {
            recvBuf_[size_t(a) * kPer + d] = fMine_[a][d];
        }
    }
    sendBuf_.resize(size_t(sendDispl_[P]) * kPer);
    const double t0 = now();
    // the reverse of redistributeX
    alltoallvAtoms(recvBuf_.data(), recvCounts_, recvDispl_, sendBuf_.data(), sendCounts_, sendDispl_, kPer);
    comm_.mutableStats(comm::Phase::Pme).waitSeconds += now() - t0;
    for (size_t a = 0; a < f.size(); a++)
    {
        const double* src = &sendBuf_[size_t(sendDispl_[destOf_[a]] + slotOf_[a]) * kPer];
        f[a] += Vec3<real>(real(src[0]), real(src[1]), real(src[2]));
    }
}

void DistributedPme::spread(const Box& box)
{
    const int      p   = params_.order;
    const auto     K   = params_.gridSize;
    const Matrix3& inv = box.inverse();
    const int      n   = static_cast<int>(xMine_.size());
    std::fill(grid_.begin(), grid_.end(), real(0));
    for (int d = 0; d < 3; d++)
    {
        cell_[d].resize(n);
        theta_[d].resize(size_t(n) * p);
        dtheta_[d].resize(size_t(n) * p);
    }
    const int nz = K[2];
    for (int a = 0; a < n; a++)
    {
        for (int d = 0; d < 3; d++)
        {
            double w    = 0;
            cell_[d][a] = pmeGridCell(xMine_[a], inv, d, K[d], &w);
            fillBspline(p, w, &theta_[d][size_t(a) * p], &dtheta_[d][size_t(a) * p]);
        }
        if (qMine_[a] == 0)
        {
            continue;
        }
        // extended-grid index of the first spline point: cell - own0 (see the header)
        const int     ex = cell_[0][a] - own0_[0];
        const int     ey = cell_[1][a] - own0_[1];
        const int     z0 = positiveMod(cell_[2][a] - p + 1, nz);
        const double* tx = &theta_[0][size_t(a) * p];
        const double* ty = &theta_[1][size_t(a) * p];
        const double* tz = &theta_[2][size_t(a) * p];
        for (int i = 0; i < p; i++)
        {
            const double qa = qMine_[a] * tx[i];
            for (int j = 0; j < p; j++)
            {
                const double qab = qa * ty[j];
                real*        row = grid_.data() + (size_t(ex + i) * ext_[1] + ey + j) * nz;
                for (int k = 0; k < p; k++)
                {
                    row[(z0 + k) % nz] += real(qab * tz[k]);
                }
            }
        }
    }
}

void DistributedPme::gather(const Box& box)
{
    const int      p   = params_.order;
    const auto     K   = params_.gridSize;
    const Matrix3& inv = box.inverse();
    const int      n   = static_cast<int>(xMine_.size());
    const int      nz  = K[2];
    fMine_.assign(n, Vec3<real>());
    for (int a = 0; a < n; a++)
    {
        if (qMine_[a] == 0)
        {
            continue;
        }
        const int     ex  = cell_[0][a] - own0_[0];
        const int     ey  = cell_[1][a] - own0_[1];
        const int     z0  = positiveMod(cell_[2][a] - p + 1, nz);
        const double* tx  = &theta_[0][size_t(a) * p];
        const double* ty  = &theta_[1][size_t(a) * p];
        const double* tz  = &theta_[2][size_t(a) * p];
        const double* dtx = &dtheta_[0][size_t(a) * p];
        const double* dty = &dtheta_[1][size_t(a) * p];
        const double* dtz = &dtheta_[2][size_t(a) * p];
        double        fu[3] = { 0, 0, 0 };
        for (int i = 0; i < p; i++)
        {
            for (int j = 0; j < p; j++)
            {
                const real* row = grid_.data() + (size_t(ex + i) * ext_[1] + ey + j) * nz;
                for (int k = 0; k < p; k++)
                {
                    const double g = row[(z0 + k) % nz];
                    fu[0] += dtx[i] * ty[j] * tz[k] * g;
                    fu[1] += tx[i] * dty[j] * tz[k] * g;
                    fu[2] += tx[i] * ty[j] * dtz[k] * g;
                }
            }
        }
        for (int e = 0; e < 3; e++)
        {
            double de = 0;
            for (int d = 0; d < 3; d++)
            {
                de += fu[d] * K[d] * inv(e, d);
            }
            fMine_[a][e] = real(-qMine_[a] * de);
        }
    }
}

double DistributedPme::compute(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q,
                               std::span<Vec3<real>> f, Matrix3* virial, StageTimers* timers)
{
    const int  p  = params_.order;
    const int  nz = params_.gridSize[2];
    {
        Timed t(timers, Stage::PmeRedistX);
        redistributeX(box, x, q);
    }
    {
        Timed t(timers, Stage::PmeSpread);
        spread(box);
    }
    {
        Timed t(timers, Stage::PmeBorder);
        borderExchange(0, true);
        borderExchange(1, true);
    }
    const size_t rowLen = size_t(nz);
    real*        fr     = fft_->realData();
    for (int i = 0; i < ownSize_[0]; i++)
    {
        for (int j = 0; j < ownSize_[1]; j++)
        {
            std::copy_n(grid_.data() + (size_t(i + p - 1) * ext_[1] + j + p - 1) * nz, rowLen,
                        fr + (size_t(i) * ownSize_[1] + j) * nz);
        }
    }
    const FftCommStats fft0 = fft_->stats();
    {
        Timed t(timers, Stage::PmeFft);
        fft_->forward();
    }
    double energy = 0;
    {
        Timed         t(timers, Stage::PmeSolve);
        SpectrumBlock block;
        block.start = fft_->complexStart();
        block.size  = fft_->complexSize();
        block.order = fft_->complexOrder();
        energy      = solvePmeBlock(params_, moduli_, box, fft_->complexData(), block, virial);
    }
    {
        Timed t(timers, Stage::PmeFft);
        fft_->backward();
    }
    if (timers && stageTimingEnabled())
    {
        timers->add(Stage::PmeFftComm, fft_->stats().commSeconds - fft0.commSeconds);
    }
    {
        // The transposes' messages count as PME traffic (their time is in
        // the PME 3D-FFT comm. row, not in the phase's transfer/wait).
        const FftCommStats& fft1  = fft_->stats();
        comm::PhaseStats&   stats = comm_.mutableStats(comm::Phase::Pme);
        stats.messages += fft1.messages - fft0.messages;
        stats.bytes += fft1.bytes - fft0.bytes;
        for (int b = 0; b < comm::MessageSizes::kBins; b++)
        {
            stats.sizes.bins[b] += fft1.sizes.bins[b] - fft0.sizes.bins[b];
        }
        stats.sizes.largest = std::max(stats.sizes.largest, fft1.sizes.largest);
    }
    for (int i = 0; i < ownSize_[0]; i++)
    {
        for (int j = 0; j < ownSize_[1]; j++)
        {
            std::copy_n(fr + (size_t(i) * ownSize_[1] + j) * nz, rowLen,
                        grid_.data() + (size_t(i + p - 1) * ext_[1] + j + p - 1) * nz);
        }
    }
    {
        Timed t(timers, Stage::PmeBorder);
        borderExchange(1, false);
        borderExchange(0, false);
    }
    {
        Timed t(timers, Stage::PmeGather);
        gather(box);
    }
    {
        Timed t(timers, Stage::PmeRedistF);
        redistributeF(f);
    }
    if (comm_.rank() == 0)
    {
        const double netChargeTerm = -params_.epsfac * units::pi * totalCharge_ * totalCharge_
                                     / (2 * box.volume() * params_.ewaldCoeff * params_.ewaldCoeff);
        if (virial)
        {
            for (int d = 0; d < 3; d++)
            {
                (*virial)(d, d) -= 0.5 * netChargeTerm;
            }
        }
        energy += netChargeTerm;
    }
    return energy;
}

} // namespace putmd
