/* pme/pme_distributed.h — PME over several ranks: the grid cut into 2D
 * pencils, atoms redistributed by grid position, a distributed 3D FFT.
 *
 * The ranks of a communicator (all ranks with --npme 0, the PME ranks
 * otherwise) form a Px x Py process grid. Rank (i, j) = (rank / Py,
 * rank % Py) owns the real-space grid columns x in [X_i, X_i+1) and rows
 * y in [Y_j, Y_j+1), all z, where X_i = i K1 / Px (integer division; sizes
 * need not divide, and a rank may own nothing). One computation:
 *
 *  1. redistribution X: each atom goes to the rank owning the grid cell its
 *     position falls in (x, y); coordinates and charges are put into a
 *     region the owner planned for them (comm::Exchange, sized at search
 *     steps by planRedistribution; a header carries the count), so a step
 *     has no collective. Given the home atoms, the plan links a rank only
 *     to the owners of the cells they occupy widened by kRedistMarginNm
 *     (an atom that moves farther before the next search stops the run
 *     with a message); otherwise every rank is linked. On many ranks that
 *     is what keeps the step's messages and the buffers from growing with
 *     the rank count;
 *  2. spread: B-splines of order p reach p-1 points below an atom's cell,
 *     so a rank spreads into its block extended by p-1 planes below in x
 *     and p-1 rows below in y (z is whole, wrapped locally), with the
 *     one-rank kernels (pme_kernels.h: order-4 splines as one vectorised
 *     loop, SSE rows in the mixed build);
 *  3. border summation: the extended planes go to the ranks owning them
 *     (puts into regions planned once, comm::Exchange) and are added
 *     there, first along x (whole extended rows, so corners travel on),
 *     then along y (owned planes only). The x planes leave as soon as
 *     the spread's first slab (the only one that reaches them) is done,
 *     while the rest is spread; they are added after. The owner is looked up
 *     per plane, so a thin block whose border spans several ranks, or a
 *     process row of one rank (a periodic self-sum), takes the same path;
 *  4. the distributed r2c FFT (fft/pencil_fft.h), the solve on this rank's
 *     block of the half spectrum (pme/bspline.h, the same arithmetic as the
 *     one-rank reference in pme.h), the c2r FFT: PencilFft3d::convolve,
 *     which solves each ky row between its x transforms (energy and
 *     virial per row, summed in row order);
 *  5. border fill, the reverse of 3 (y, then x): extended planes get the
 *     owners' potential values;
 *  6. gather forces on the redistributed atoms, and redistribution F: the
 *     forces go back to where the atoms came from, in their input order.
 *     The atoms that arrived are gathered first and their forces sent
 *     while the rank's own atoms are gathered.
 *
 * Every sum is done in a fixed order (sources in rank order), so a fixed
 * layout gives the same bits whichever transpose algorithm moves the FFT
 * data. The reference Pme (pme.h) stays the plain twin the tests compare to.
 */
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"
#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "fft/pencil_fft.h"
#include "pme/pme.h"
#include "timing/stage_timer.h"

namespace putmd
{
namespace pme_detail
{
struct SplineAtoms;
} // namespace pme_detail

class DistributedPme
{
public:
    /* Collective over comm. procGrid {Px, Py} with Px * Py = comm.size().
     * totalCharge: the whole system's net charge (for the background term). */
    DistributedPme(const PmeParameters& params, comm::Communicator& comm, std::array<int, 2> procGrid,
                   TransposeAlgorithm transpose, double totalCharge);
    ~DistributedPme();

    /* Collective: sizes the redistribution for at most maxAtoms atoms in
     * any later compute() on this rank (search steps; the first compute()
     * plans for its own count if this was never called). With home (this
     * rank's atoms now) and box, only the owners within kRedistMarginNm of
     * their cells are linked; every rank of the communicator must then pass
     * them (one all-to-all of flags tells each rank its senders). */
    void planRedistribution(int maxAtoms, std::span<const Vec3<real>> home = {}, const Box* box = nullptr);
    /* How far an atom may move from its cell at the search step before the
     * next one without leaving the ranks its rank is linked to. */
    static constexpr double kRedistMarginNm = 0.5;
    /* Ranks this one sends atoms to (the linked owners). */
    int numRedistTargets() const { return static_cast<int>(sendPeers_.size()) + (keepsOwn_ ? 1 : 0); }

    /* Sends this rank's atoms to their grid owners and returns at once, so
     * that other work (the short-range forces) overlaps the transfer; the
     * next compute() with the same x and q completes it. Optional. */
    void startRedistribution(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q);

    /* Collective over the communicator. Adds the reciprocal forces on this
     * rank's atoms x (charges q) to f. Returns this rank's share of the
     * energy (the shares of all ranks add up to the reciprocal energy; rank 0
     * holds the net-charge term) and adds its share of the virial to *virial
     * when not null. */
    double compute(const Box& box, std::span<const Vec3<real>> x, std::span<const double> q,
                   std::span<Vec3<real>> f, Matrix3* virial, StageTimers* timers = nullptr);

    /* Threads for splines, spread (slabs of x planes, even then odd: the
     * grid is the same for every count) and gather. */
    void setNumThreads(int n) { numThreads_ = n > 0 ? n : 1; }

    std::array<int, 2>   procGrid() const { return procGrid_; }
    const PencilFft3d&   fft() const { return *fft_; }
    const PmeParameters& parameters() const { return params_; }

private:
    struct BorderPlan;
    struct BorderScratch;
    void finishRedistributionX();
    void startRedistributionF();
    void finishRedistributionF(std::span<Vec3<real>> f);
    int  cellOf(const Vec3<real>& x, const Matrix3& inv, int d) const;
    void computeSplines(const Box& box);
    /* extendedFinal (optional) runs once the extended x planes hold all
     * their charge, before the spread ends where it can */
    void spread(const Box& box, const std::function<void()>& extendedFinal = {});
    void gather(const Box& box, int begin, int end);
    pme_detail::SplineAtoms splineAtoms() const; // the spline arrays, for pme_rows.h
    void planBorders();
    void borderExchange(int dim, bool sum);
    void borderStart(int dim, bool sum);
    void borderFinish(int dim, bool sum);
    real* slabPointer(int dim, int slab, int part);

    PmeParameters                      params_;
    comm::Communicator&                comm_;
    std::array<int, 2>                 procGrid_;
    int                                pi_ = 0, pj_ = 0; // this rank's process-grid coordinates
    double                             totalCharge_;
    std::array<std::vector<double>, 3> moduli_;
    std::unique_ptr<PencilFft3d>       fft_;
    std::array<std::vector<int>, 2>    owner_;      // owning process index of each grid x / y
    std::array<int, 2>                 own0_{}, ownSize_{}; // owned range in x and y
    std::array<int, 2>                 ext_{};      // extended sizes (owned + p - 1)
    real*                              grid_ = nullptr; // ext x ext y x nz: the FFT's real buffer (realHalo p - 1)
    size_t                             gridPoints_ = 0;
    std::unique_ptr<BorderPlan>        border_[2];
    std::unique_ptr<BorderScratch>     borderLinks_[2][2]; // [dim][summing]: the planned exchanges

    // redistribution: links to every rank, planned at search steps
    static constexpr size_t kRedistHeaderBytes = 16;                // the atom count
    static constexpr size_t kAtomXBytes        = 4 * sizeof(real); // x, y, z, q
    static constexpr size_t kAtomFBytes        = 3 * sizeof(real);
    std::unique_ptr<comm::Exchange> redistX_, redistF_;
    int                             plannedAtoms_ = -1;
    std::vector<std::byte*>         sendCursor_; // per send link: where its atoms start (after the header)
    std::vector<int>                sendPeers_;  // X: other ranks sent to, ascending (F: received from)
    std::vector<int>                recvPeers_;  // X: other ranks received from, ascending (F: sent to)
    // per rank: its index in sendPeers_, kOwnLink for this rank itself when
    // it may keep atoms, -1 if not linked
    std::vector<int>                linkOf_;
    bool                            keepsOwn_ = false; // atoms whose cells this rank owns stay here
    static constexpr int            kOwnLink  = -2;
    bool                            started_      = false; // startRedistribution before compute
    // redistribution state of the current computation
    // sendCounts_: per send link, then the atoms kept (last entry);
    // recvDispl_: where each receive link's atoms start in xMine_ (after
    // the kept ones), and the total
    std::vector<int>        sendCounts_, recvCounts_, recvDispl_;
    std::vector<int>        destOf_;      // send link of each input atom (sendPeers_.size(): kept)
    std::vector<int>        slotOf_;      // position of each input atom in its destination's block
    std::vector<const std::byte*> fFrom_; // per send link: the forces' receive buffer
    // the atoms this rank spreads: the kept ones (input order), then those
    // received, by source rank
    std::vector<Vec3<real>> xMine_;
    std::vector<double>     qMine_;
    std::vector<Vec3<real>> fMine_;
    // splines of xMine_: first point (x, y: in the extended block; z: global)
    std::array<std::vector<int>, 3>  index_;
    std::array<std::vector<real>, 3> theta_, dtheta_;
    std::array<std::vector<int>, 3>  rowTable_; // identity (x, y), wrap (z)
    std::vector<real>                influence_; // solve factors for influenceBox_
    int                              numThreads_ = 1;
    std::vector<int>                 slabStart_, slabFill_, slabAtoms_; // spread: charged atoms by x slab
    std::vector<int>                 slabOfPlane_;                      // spread: the slab of each extended x plane
    Box                              influenceBox_;
    std::vector<double>              rowEnergies_; // per ky row of the spectrum block, summed in row order
    std::vector<Matrix3>             rowVirials_;
};

} // namespace putmd
