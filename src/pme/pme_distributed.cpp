#include "pme/pme_distributed.h"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "pme/bspline.h"
#include "pme/pme_kernels.h"
#include "pme/pme_rows.h"

namespace putmd
{

namespace
{

int positiveMod(int a, int n)
{
    return ((a % n) + n) % n;
}

} // namespace

/* The links of one border exchange (a dimension, summing or filling),
 * planned once: per peer the slabs that go out or come in, in plan order;
 * the messages travel as puts into regions the receiver exposed
 * (comm::Exchange on the backend of the run). A self entry (a process row
 * of one rank) has no link: its slabs are mapped on the rank itself. */
struct DistributedPme::BorderScratch
{
    struct Side
    {
        int                     peer; // process index along the dimension
        const std::vector<int>* slabs;
        int                     link; // exchange link, -1 for self
    };
    std::vector<Side>               sends, recvs;
    std::unique_ptr<comm::Exchange> exchange;
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
    // the FFT's real block inside the spread's extended block: p - 1 planes
    // and rows before it, summed and filled in place by the borders
    fft_ = std::make_unique<PencilFft3d>(comm.mpiComm(), K, procGrid, transpose, params.fftPlanning,
                                         std::array<int, 2>{ p - 1, p - 1 });
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
    grid_       = fft_->realBuffer();
    gridPoints_ = size_t(ext_[0]) * ext_[1] * K[2];
    if (fft_->realStart()[0] != own0_[0] || fft_->realStart()[1] != own0_[1] || fft_->realSize()[0] != ownSize_[0]
        || fft_->realSize()[1] != ownSize_[1])
    {
        throw std::logic_error("DistributedPme: the FFT's real block is not the owned grid block");
    }
    std::fill_n(grid_, gridPoints_, real(0));
    for (int d = 0; d < 2; d++)
    {
        rowTable_[d].resize(ext_[d]);
        for (int e = 0; e < ext_[d]; e++)
        {
            rowTable_[d][e] = e; // the extended block is not periodic
        }
    }
    rowTable_[2].resize(K[2] + p);
    for (int z = 0; z < K[2] + p; z++)
    {
        rowTable_[2][z] = z % K[2];
    }
    planBorders();
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
        return grid_ + size_t(slab) * ext_[1] * nz;
    }
    const int plane = params_.order - 1 + part;
    return grid_ + (size_t(plane) * ext_[1] + slab) * nz;
}

/* The four border exchanges (x and y, summing and filling), planned once
 * (collective): summing sends my extended slabs to their owners and
 * receives the slabs my owned ones take; filling reverses every arrow. */
void DistributedPme::planBorders()
{
    const int nz = params_.gridSize[2];
    for (int dim = 0; dim < 2; dim++)
    {
        const BorderPlan& plan    = *border_[dim];
        const int         parts   = dim == 0 ? 1 : ownSize_[0];
        const size_t      slabLen = parts * (dim == 0 ? size_t(ext_[1]) * nz : size_t(nz));
        const int         mine    = dim == 0 ? pi_ : pj_;
        auto rankOf = [&](int c) { return dim == 0 ? c * procGrid_[1] + pj_ : pi_ * procGrid_[1] + c; };
        for (int sum = 0; sum < 2; sum++)
        {
            auto& b = borderLinks_[dim][sum];
            b     = std::make_unique<BorderScratch>();
            for (const auto& o : plan.out)
            {
                (sum ? b->sends : b->recvs).push_back({ o.peer, &o.ext, -1 });
            }
            for (const auto& in : plan.in)
            {
                (sum ? b->recvs : b->sends).push_back({ in.peer, &in.target, -1 });
            }
            std::vector<comm::SendLink> links;
            std::vector<int>            from;
            for (auto& side : b->sends)
            {
                if (side.peer != mine)
                {
                    side.link = static_cast<int>(links.size());
                    links.push_back({ rankOf(side.peer), side.slabs->size() * slabLen * sizeof(real) });
                }
            }
            for (auto& side : b->recvs)
            {
                if (side.peer != mine)
                {
                    side.link = static_cast<int>(from.size());
                    from.push_back(rankOf(side.peer));
                }
            }
            b->exchange = comm_.makeExchange(comm::Phase::Pme);
            b->exchange->plan(links, from);
        }
    }
}

/* One border exchange along dim. Summing: my extended slabs go to their
 * owners, which add them to their owned slabs. Filling (the reverse): the
 * owners send those owned slabs back, which overwrite my extended slabs.
 * borderStart packs what goes to other ranks and starts the transfer (the
 * slabs sent must be final: summing, the extended ones; filling, the owned
 * ones); borderFinish waits and applies (in ascending source order, self
 * included), so the two may enclose other work that does not touch the
 * slabs received into. */
void DistributedPme::borderExchange(int dim, bool sum)
{
    borderStart(dim, sum);
    borderFinish(dim, sum);
}

void DistributedPme::borderStart(int dim, bool sum)
{
    BorderScratch&        b       = *borderLinks_[dim][sum ? 1 : 0];
    const int             nz      = params_.gridSize[2];
    const int             parts   = dim == 0 ? 1 : ownSize_[0];
    const size_t          partLen = dim == 0 ? size_t(ext_[1]) * nz : size_t(nz);
    for (const auto& side : b.sends)
    {
        if (side.link < 0)
        {
            continue;
        }
        real* dst = reinterpret_cast<real*>(b.exchange->sendBuffer(side.link).data());
        for (int slab : *side.slabs)
        {
            for (int part = 0; part < parts; part++, dst += partLen)
            {
                std::copy_n(slabPointer(dim, slab, part), partLen, dst);
            }
        }
    }
    b.exchange->start();
}

void DistributedPme::borderFinish(int dim, bool sum)
{
    const BorderPlan&     plan    = *border_[dim];
    BorderScratch&        b       = *borderLinks_[dim][sum ? 1 : 0];
    const int             nz      = params_.gridSize[2];
    const int             parts   = dim == 0 ? 1 : ownSize_[0];
    const size_t          partLen = dim == 0 ? size_t(ext_[1]) * nz : size_t(nz);
    b.exchange->finish();
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
    const int   mine = dim == 0 ? pi_ : pj_;
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
    for (const auto& side : b.recvs)
    {
        if (side.link < 0)
        {
            for (size_t k = 0; k < self->ext.size(); k++)
            {
                const int from = sum ? self->ext[k] : self->target[k];
                const int to   = sum ? self->target[k] : self->ext[k];
                for (int part = 0; part < parts; part++)
                {
                    apply(slabPointer(dim, from, part), slabPointer(dim, to, part));
                }
            }
            continue;
        }
        const real* src = reinterpret_cast<const real*>(b.exchange->recvBuffer(side.link).data());
        for (int slab : *side.slabs)
        {
            for (int part = 0; part < parts; part++, src += partLen)
            {
                apply(src, slabPointer(dim, slab, part));
            }
        }
    }
}

/* Redistribution plans: links sized for all of a sender's atoms, so that
 * every step moves only data and flags; the receiver learns a link's atom
 * count from its header. Without home atoms every rank is linked (self
 * included); with them, the owners of the cells within kRedistMarginNm of
 * a home atom's cell (x and y), and an all-to-all of flags tells every
 * rank who sends to it. Forces go back on the reverse links, sized from
 * what can arrive. Collective (search steps). */
void DistributedPme::planRedistribution(int maxAtoms, std::span<const Vec3<real>> home, const Box* box)
{
    const int P = comm_.size();
    if (!redistX_)
    {
        redistX_ = comm_.makeExchange(comm::Phase::Pme);
        redistF_ = comm_.makeExchange(comm::Phase::Pme);
    }
    std::vector<char> to(P, box == nullptr ? 1 : 0);
    if (box != nullptr)
    {
        const Matrix3& inv = box->inverse();
        std::array<std::vector<char>, 2> owners;
        for (int d = 0; d < 2; d++)
        {
            const int K = params_.gridSize[d];
            std::vector<char> cell(K, 0);
            for (const auto& x : home)
            {
                cell[cellOf(x, inv, d)] = 1;
            }
            // cells an atom reaches moving kRedistMarginNm (fractional
            // change at most margin x |column d of the inverse box|)
            const double colNorm = std::sqrt(inv(0, d) * inv(0, d) + inv(1, d) * inv(1, d) + inv(2, d) * inv(2, d));
            const int    m       = static_cast<int>(std::ceil(kRedistMarginNm * K * colNorm)) + 1;
            owners[d].assign(procGrid_[d], 0);
            for (int c = 0; c < K; c++)
            {
                if (!cell[c])
                {
                    continue;
                }
                for (int k = -std::min(m, K); k <= std::min(m, K); k++)
                {
                    owners[d][owner_[d][((c + k) % K + K) % K]] = 1;
                }
            }
        }
        for (int i = 0; i < procGrid_[0]; i++)
        {
            for (int j = 0; j < procGrid_[1]; j++)
            {
                to[i * procGrid_[1] + j] = owners[0][i] && owners[1][j];
            }
        }
    }
    std::vector<char> from(to);
    if (box != nullptr && comm_.mpiComm() != MPI_COMM_NULL && P > 1)
    {
        MPI_Alltoall(to.data(), 1, MPI_CHAR, from.data(), 1, MPI_CHAR, comm_.mpiComm());
        comm_.mutableStats(comm::Phase::Pme).collectives++;
    }
    sendPeers_.clear();
    recvPeers_.clear();
    linkOf_.assign(P, -1);
    // atoms this rank owns never leave it: no link to itself
    const int me = comm_.rank();
    keepsOwn_    = to[me] != 0;
    linkOf_[me]  = keepsOwn_ ? kOwnLink : -1;
    std::vector<comm::SendLink> sends;
    for (int r = 0; r < P; r++)
    {
        if (r == me)
        {
            continue;
        }
        if (to[r])
        {
            linkOf_[r] = static_cast<int>(sendPeers_.size());
            sendPeers_.push_back(r);
            sends.push_back({ r, kRedistHeaderBytes + size_t(maxAtoms) * kAtomXBytes });
        }
        if (from[r])
        {
            recvPeers_.push_back(r);
        }
    }
    redistX_->plan(sends, recvPeers_);
    sends.clear();
    for (size_t k = 0; k < recvPeers_.size(); k++)
    {
        const size_t atoms = (redistX_->recvBytes(static_cast<int>(k)) - kRedistHeaderBytes) / kAtomXBytes;
        sends.push_back({ recvPeers_[k], atoms * kAtomFBytes });
    }
    redistF_->plan(sends, sendPeers_);
    sendCounts_.assign(sendPeers_.size() + 1, 0);
    recvCounts_.assign(recvPeers_.size(), 0);
    recvDispl_.assign(recvPeers_.size() + 1, 0);
    plannedAtoms_ = maxAtoms;
}

/* The grid cell of an atom along d: the spline code's own arithmetic (see
 * pmeCellOrder4), so the owner a sender chooses is the owner of the cell
 * the splines put the atom in. */
int DistributedPme::cellOf(const Vec3<real>& x, const Matrix3& inv, int d) const
{
    if (params_.order == 4)
    {
        return pme_detail::pmeCellOrder4(x, inv, d, params_.gridSize[d]);
    }
    double w = 0;
    return pmeGridCell(x, inv, d, params_.gridSize[d], &w);
}

void DistributedPme::startRedistribution(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q)
{
    const Matrix3& inv = box.inverse();
    const int      n   = static_cast<int>(x.size());
    if (plannedAtoms_ < 0)
    {
        planRedistribution(n); // the first computation (collective like it)
    }
    if (n > plannedAtoms_)
    {
        throw std::logic_error("DistributedPme: " + std::to_string(n) + " atoms, but the redistribution was planned for "
                               + std::to_string(plannedAtoms_) + " (planRedistribution at the search step)");
    }
    const int links = static_cast<int>(sendPeers_.size());
    destOf_.resize(n);
    slotOf_.resize(n);
    std::fill(sendCounts_.begin(), sendCounts_.end(), 0);
    // one pass: the owner of each atom's cell, then the atom into its send
    // block (x, y, z, q in the build's precision after a header with the
    // count) or, kept, straight to the front of xMine_
    std::vector<std::byte*>& out = sendCursor_; // kept: no allocation in the step
    out.resize(links);
    for (int k = 0; k < links; k++)
    {
        out[k] = redistX_->sendBuffer(k).data() + kRedistHeaderBytes;
    }
    xMine_.resize(std::max(xMine_.size(), size_t(n)));
    qMine_.resize(xMine_.size());
    const int        py     = procGrid_[1];
    const int*       ownerX = owner_[0].data();
    const int*       ownerY = owner_[1].data();
    const int*       linkOf = linkOf_.data();
    int*             counts = sendCounts_.data();
    int*             dest   = destOf_.data();
    int*             slot   = slotOf_.data();
    Vec3<real>*      xKeep  = xMine_.data();
    double*          qKeep  = qMine_.data();
    std::byte* const* to    = out.data();
    const bool       order4 = params_.order == 4;
    // the cells first (dest and slot hold them until the routing loop), in
    // SIMD for order 4; only along split axes (one process along an axis:
    // one owner, whatever the cell)
    const bool splitX = procGrid_[0] > 1, splitY = procGrid_[1] > 1;
    auto       cells  = [&](int d, int* out) {
        const Vec3<real>* xa = x.data();
        if (order4)
        {
            pme_detail::cellsOrder4(xa, n, inv, d, params_.gridSize[d], out);
        }
        else
        {
            for (int a = 0; a < n; a++)
            {
                out[a] = cellOf(xa[a], inv, d);
            }
        }
    };
    if (splitX)
    {
        cells(0, dest);
    }
    if (splitY)
    {
        cells(1, slot);
    }
    // Each atom to its owner's send block (x, y, z, q in the build's
    // precision after a header with the count) or, kept, straight to the
    // front of xMine_; dest and slot become its link and place there. The
    // axes' splits are template constants, the kept count a local (the
    // int stores to dest and slot would otherwise reload it per atom).
    auto route = [&](auto sx, auto sy) -> int {
        constexpr bool    kSplitX = decltype(sx)::value, kSplitY = decltype(sy)::value;
        int               kept    = 0;
        const Vec3<real>* xa      = x.data();
        const double*     qa      = q.data();
        for (int a = 0; a < n; a++)
        {
            const int ox   = kSplitX ? ownerX[dest[a]] : 0;
            const int oy   = kSplitY ? ownerY[slot[a]] : 0;
            const int link = linkOf[ox * py + oy];
            if (link == kOwnLink)
            {
                xKeep[kept] = xa[a];
                qKeep[kept] = real(qa[a]);
                dest[a]     = links;
                slot[a]     = kept++;
            }
            else if (link < 0)
            {
                counts[links] = kept;
                return a;
            }
            else
            {
                const real v[4] = { xa[a].x, xa[a].y, xa[a].z, real(qa[a]) };
                std::memcpy(to[link] + size_t(counts[link]) * kAtomXBytes, v, kAtomXBytes);
                dest[a] = link;
                slot[a] = counts[link]++;
            }
        }
        counts[links] = kept;
        return -1;
    };
    using Yes       = std::true_type;
    using No        = std::false_type;
    const int stray = splitX ? (splitY ? route(Yes{}, Yes{}) : route(Yes{}, No{}))
                             : (splitY ? route(No{}, Yes{}) : route(No{}, No{}));
    if (stray >= 0)
    {
        const int a = stray;
        throw SimulationError(fmt::format(
                "an atom of PME rank {}'s input (its {}-th, at {:.3f} {:.3f} {:.3f} nm) moved more than {} nm from "
                "the grid cells its rank's atoms held at the last pair search, to a grid owner this rank has "
                "no link to: the system is blowing up, or nstlist is too long for this time step",
                comm_.rank(), a + 1, x[a].x, x[a].y, x[a].z, kRedistMarginNm));
    }
    for (int k = 0; k < links; k++)
    {
        const int64_t c = sendCounts_[k];
        std::memcpy(redistX_->sendBuffer(k).data(), &c, sizeof c);
        redistX_->setSendSize(k, kRedistHeaderBytes + size_t(c) * kAtomXBytes);
    }
    redistX_->start();
    started_ = true;
}

void DistributedPme::finishRedistributionX()
{
    const int links = static_cast<int>(recvPeers_.size());
    redistX_->finish();
    started_ = false;
    // the kept atoms, then arrivals in source rank order (recvPeers_
    // ascends): the same order on every backend
    int total = sendCounts_[sendPeers_.size()];
    for (int k = 0; k < links; k++)
    {
        int64_t c = 0;
        std::memcpy(&c, redistX_->recvBuffer(k).data(), sizeof c);
        recvCounts_[k] = static_cast<int>(c);
        recvDispl_[k]  = total;
        total += recvCounts_[k];
    }
    recvDispl_[links] = total;
    xMine_.resize(total);
    qMine_.resize(total);
    for (int k = 0; k < links; k++)
    {
        const std::byte* in = redistX_->recvBuffer(k).data() + kRedistHeaderBytes;
        for (int i = 0; i < recvCounts_[k]; i++)
        {
            real v[4];
            std::memcpy(v, in + size_t(i) * kAtomXBytes, kAtomXBytes);
            xMine_[recvDispl_[k] + i] = Vec3<real>(v[0], v[1], v[2]);
            qMine_[recvDispl_[k] + i] = v[3];
        }
    }
}

/* Redistribution F: the forces on the atoms that arrived go back to their
 * senders (start: they must be gathered), and the forces on this rank's
 * own atoms come back and are added to f in input order (finish). */
void DistributedPme::startRedistributionF()
{
    const int links = static_cast<int>(recvPeers_.size());
    for (int k = 0; k < links; k++)
    {
        std::memcpy(redistF_->sendBuffer(k).data(), fMine_.data() + recvDispl_[k], size_t(recvCounts_[k]) * kAtomFBytes);
        redistF_->setSendSize(k, size_t(recvCounts_[k]) * kAtomFBytes);
    }
    redistF_->start();
}

void DistributedPme::finishRedistributionF(std::span<Vec3<real>> f)
{
    redistF_->finish();
    const int kept = static_cast<int>(sendPeers_.size());
    fFrom_.resize(kept);
    for (int k = 0; k < kept; k++)
    {
        fFrom_[k] = redistF_->recvBuffer(k).data();
    }
    for (size_t a = 0; a < f.size(); a++)
    {
        if (destOf_[a] == kept)
        {
            f[a] += fMine_[slotOf_[a]];
        }
        else
        {
            Vec3<real> fa;
            std::memcpy(&fa, fFrom_[destOf_[a]] + size_t(slotOf_[a]) * kAtomFBytes, kAtomFBytes);
            f[a] += fa;
        }
    }
}

/* Splines of the atoms this rank spreads; x and y indices become the first
 * spline point in the extended block (cell - own0, see the header), z stays
 * the wrapped global index. */
void DistributedPme::computeSplines(const Box& box)
{
    const int      p   = params_.order;
    const auto     K   = params_.gridSize;
    const Matrix3& inv = box.inverse();
    const int      n   = static_cast<int>(xMine_.size());
    for (int d = 0; d < 3; d++)
    {
        index_[d].resize(n);
        theta_[d].resize(size_t(n) * p);
        dtheta_[d].resize(size_t(n) * p);
    }
    if (p == 4)
    {
        real* const theta[3]  = { theta_[0].data(), theta_[1].data(), theta_[2].data() };
        real* const dtheta[3] = { dtheta_[0].data(), dtheta_[1].data(), dtheta_[2].data() };
        int* const  index[3]  = { index_[0].data(), index_[1].data(), index_[2].data() };
        const int nt = std::max(1, std::min(numThreads_, n / 256 + 1));
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            const int t = nt > 1 ? omp_get_thread_num() : 0;
            pme_detail::splinesOrder4(xMine_.data(), int(long(n) * t / nt), int(long(n) * (t + 1) / nt), inv, K, theta,
                                      dtheta, index);
        }
    }
    else
    {
        for (int a = 0; a < n; a++)
        {
            for (int d = 0; d < 3; d++)
            {
                double    w  = 0;
                const int iu = pmeGridCell(xMine_[a], inv, d, K[d], &w);
                pme_detail::splinesOf(w, &theta_[d][size_t(a) * p], &dtheta_[d][size_t(a) * p], p);
                index_[d][a] = positiveMod(iu - p + 1, K[d]);
            }
        }
    }
    // the atom's cell (first point + p - 1, in [p - 1, K + p - 2]) relative
    // to the owned range
    for (int d = 0; d < 2; d++)
    {
        int* const     index = index_[d].data();
        const int      Kd = K[d], own0 = own0_[d];
        const unsigned own     = unsigned(ownSize_[d]);
        unsigned       foreign = 0; // (unsigned compare: e < 0 or e >= own)
#pragma omp simd reduction(| : foreign)
        for (int a = 0; a < n; a++)
        {
            int c = index[a] + p - 1;
            c -= c >= Kd ? Kd : 0;
            const int e = c - own0;
            foreign |= unsigned(unsigned(e) >= own);
            index[a] = e;
        }
        if (foreign != 0)
        {
            throw std::logic_error("DistributedPme: an atom arrived whose grid cell this rank does not own");
        }
    }
}

/* The spread with the one-rank kernels (pme_kernels.h) on the extended
 * block: identity row tables in x and y, wrapping in z. Threaded as the
 * one-rank spread (pme.h): the charged atoms are put in slabs of at least
 * p - 1 extended x planes by their first plane, even slabs are spread in
 * parallel, then odd ones, each slab's atoms in input order; every grid
 * point receives its contributions in the same order for any thread count. */
void DistributedPme::spread(const Box& box, const std::function<void()>& extendedFinal)
{
    const int                p    = params_.order;
    const int                nz   = params_.gridSize[2];
    const std::array<int, 3> Kext = { ext_[0], ext_[1], nz };
    std::fill_n(grid_, gridPoints_, real(0));
    computeSplines(box);
    const int  n  = static_cast<int>(xMine_.size());
    const int* wx = rowTable_[0].data();
    const int* wy = rowTable_[1].data();
    const int* wz = rowTable_[2].data();
    // slabs of extended x planes (an even number; one when too thin)
    const int numSlabs = ext_[0] / (p - 1) >= 2 ? 2 * (ext_[0] / (2 * (p - 1))) : 1;
    slabStart_.assign(numSlabs + 1, 0);
    slabOfPlane_.resize(ext_[0]);
    for (int i = 0; i < ext_[0]; i++)
    {
        slabOfPlane_[i] = int(long(i) * numSlabs / ext_[0]);
    }
    const int* slabOf = slabOfPlane_.data();
    const int* first  = index_[0].data();
    for (int a = 0; a < n; a++)
    {
        if (qMine_[a] != 0)
        {
            slabStart_[slabOf[first[a]] + 1]++;
        }
    }
    for (int sl = 0; sl < numSlabs; sl++)
    {
        slabStart_[sl + 1] += slabStart_[sl];
    }
    slabAtoms_.resize(slabStart_[numSlabs]);
    {
        std::vector<int>& fill = slabFill_;
        fill.assign(slabStart_.begin(), slabStart_.end() - 1);
        for (int a = 0; a < n; a++)
        {
            if (qMine_[a] != 0)
            {
                slabAtoms_[fill[slabOf[first[a]]]++] = a;
            }
        }
    }
    const int nt = std::max(1, std::min(numThreads_, numSlabs / 2));
    const pme_detail::SplineAtoms atoms = splineAtoms();
    const pme_detail::GridRows    rows{ Kext, wx, wy, wz, size_t(Kext[2]), Kext[2] };
    // The p - 1 extended x planes are written only by slab 0 (every slab
    // is at least p - 1 planes wide and reaches p - 1 planes beyond its
    // own): once slab 0 is done they are final, and extendedFinal can send
    // them while the other slabs are spread (on one thread at once; on
    // several, between the parities).
    const bool early = extendedFinal && numSlabs > 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
    for (int parity = 0; parity < 2; parity++)
    {
#pragma omp for schedule(dynamic, 1)
        for (int sl = parity; sl < numSlabs; sl += 2)
        {
            pme_detail::spreadAtoms(grid_, rows, atoms, slabAtoms_.data(), slabStart_[sl], slabStart_[sl + 1],
                                    true);
            if (sl == 0 && early && nt == 1)
            {
                extendedFinal();
            }
        }
        if (parity == 0 && early && nt > 1)
        {
#pragma omp masked
            extendedFinal();
        }
    }
    if (extendedFinal && !early)
    {
        extendedFinal();
    }
}

pme_detail::SplineAtoms DistributedPme::splineAtoms() const
{
    return { params_.order,
             { theta_[0].data(), theta_[1].data(), theta_[2].data() },
             { dtheta_[0].data(), dtheta_[1].data(), dtheta_[2].data() },
             { index_[0].data(), index_[1].data(), index_[2].data() },
             qMine_.data() };
}

/* The forces on the atoms [begin, end) of xMine_ into fMine_ (sized by
 * the caller; every entry of the range written: GatherStore::Assign). */
void DistributedPme::gather(const Box& box, int begin, int end)
{
    const auto               K    = params_.gridSize;
    const std::array<int, 3> Kext = { ext_[0], ext_[1], K[2] };
    const Matrix3&           inv  = box.inverse();
    const int                n    = end - begin;
    const int*               wx   = rowTable_[0].data();
    const int*               wy   = rowTable_[1].data();
    const int*               wz   = rowTable_[2].data();
    const int nt = std::max(1, std::min(numThreads_, n / 256 + 1));
    const pme_detail::SplineAtoms atoms = splineAtoms();
    const pme_detail::GridRows    rows{ Kext, wx, wy, wz, size_t(Kext[2]), Kext[2] };
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? omp_get_thread_num() : 0;
        pme_detail::gatherAtoms(grid_, rows, atoms, begin + int(long(n) * t / nt), begin + int(long(n) * (t + 1) / nt),
                                K, inv, fMine_.data(), pme_detail::GatherStore::Assign, true);
    }
}

double DistributedPme::compute(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q,
                               std::span<Vec3<real>> f, Matrix3* virial, StageTimers* timers)
{
    {
        Timed t(timers, Stage::PmeRedistX);
        if (!started_)
        {
            startRedistribution(box, x, q);
        }
        finishRedistributionX();
    }
    {
        // the x border's sums leave as soon as the extended planes are
        // final, while the rest of the atoms are spread (their packing is
        // in the spread's row)
        Timed t(timers, Stage::PmeSpread);
        spread(box, [&] { borderStart(0, true); });
    }
    {
        Timed t(timers, Stage::PmeBorder);
        borderFinish(0, true);
        borderExchange(1, true);
    }
    // the summed block is the FFT's input where it lies (realHalo)
    const FftCommStats fft0 = fft_->stats();
    // the transforms with the solve of each ky row between its x
    // transforms (PencilFft3d::convolve); the factors of the last full
    // solve while the box is unchanged (Pme::solve's cache): no exp per
    // point on steps without virial. Energy and virial per row, summed in
    // row order.
    double energy = 0;
    {
        const auto   start = fft_->complexStart(), size = fft_->complexSize();
        const size_t row   = size_t(size[0]) * size[2];
        const size_t n     = row * size[1];
        bool same = influence_.size() == n;
        for (int a = 0; a < 9 && same; a++)
        {
            same = box.vectors()(a / 3, a % 3) == influenceBox_.vectors()(a / 3, a % 3);
        }
        const bool full = virial || !same;
        if (full)
        {
            influence_.resize(n);
            influenceBox_ = box;
        }
        rowEnergies_.assign(size[1], 0.0);
        rowVirials_.assign(virial ? size[1] : 0, Matrix3());
        double solveSeconds = 0;
        {
            Timed t(timers, Stage::PmeFft);
            fft_->convolve(numThreads_, [&](int a, std::complex<real>* points) {
                SpectrumBlock block;
                block.start = { start[0], start[1] + a, start[2] };
                block.size  = { size[0], 1, size[2] };
                block.order = fft_->complexOrder();
                real* factors = influence_.data() + a * row;
                rowEnergies_[a] = full ? solvePmeBlockSerial(params_, moduli_, box, points, block,
                                                            virial ? &rowVirials_[a] : nullptr, factors)
                                       : applyInfluenceBlock(params_, points, block, factors);
            }, &solveSeconds);
        }
        if (timers && stageTimingEnabled())
        {
            // the solve ran inside the transforms' stage: its time moves
            // to its own row
            timers->remove(Stage::PmeFft, solveSeconds, 0);
            timers->add(Stage::PmeSolve, solveSeconds);
        }
        energy = sumInOrder(rowEnergies_, rowVirials_, virial);
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
        stats.collectives += fft1.collectives - fft0.collectives;
        stats.bytes += fft1.bytes - fft0.bytes;
        for (int b = 0; b < comm::MessageSizes::kBins; b++)
        {
            stats.sizes.bins[b] += fft1.sizes.bins[b] - fft0.sizes.bins[b];
        }
        stats.sizes.largest = std::max(stats.sizes.largest, fft1.sizes.largest);
    }
    {
        Timed t(timers, Stage::PmeBorder);
        borderExchange(1, false);
        borderExchange(0, false);
    }
    // The atoms that arrived first: their forces travel back while this
    // rank's own atoms are gathered (the kept atoms are xMine_'s front)
    const int n    = static_cast<int>(xMine_.size());
    const int kept = sendCounts_[sendPeers_.size()];
    fMine_.resize(n);
    {
        Timed t(timers, Stage::PmeGather);
        gather(box, kept, n);
    }
    {
        Timed t(timers, Stage::PmeRedistF);
        startRedistributionF();
    }
    {
        Timed t(timers, Stage::PmeGather);
        gather(box, 0, kept);
    }
    {
        Timed t(timers, Stage::PmeRedistF);
        finishRedistributionF(f);
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
