/* run/force_calculator.h — the forces of one MD step.
 *
 * Owns what persists between steps: the interaction constants, the
 * buffered pair list (rebuilt at search steps), the PME object (grid and
 * FFT plans made once) and the dispersion correction. compute() fills
 * forces, every energy term and, when asked, the virial
 * Xi = -0.5 sum r (x) f of all interactions (pairs, exclusion corrections,
 * listed terms, PME reciprocal and net-charge term, dispersion correction).
 * The constraint virial is added by the integrator.
 */
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "fft/fft3d.h"
#include "fft/pencil_fft.h"
#include "io/mdp.h"
#include "listed/listed.h"
#include "nonbonded/dispersion_correction.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/cluster_nonbonded.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/pair_list.h"
#include "timing/stage_timer.h"
#include "topology/topology.h"

namespace putmd
{

class Pme;
class DistributedPme;
class PmeClient;
class DomainDecomposition;
namespace comm
{
class Communicator;
}

struct ForceOutput
{
    std::vector<Vec3<real>> f;
    EnergyTerms             energies;
    Matrix3                 virial; // valid when computed with needVirial
};

/* The short-range kernel: cluster pairs with SIMD in the mixed-precision
 * build, the atom-pair list (double throughout) in the double build. */
using ShortRangeList = std::conditional_t<std::is_same_v<real, float>, ClusterNonbonded, PairList>;

class ForceCalculator
{
public:
    ForceCalculator(const Topology& top, const MdpOptions& mdp, const Box& box, double rlist);
    ~ForceCalculator();

    void compute(const std::vector<Vec3<real>>& x, const Box& box, bool search, bool needVirial, ForceOutput& out);

    /* Energies only on steps that also want the virial (MD computes both on
     * the same steps); otherwise every call computes energies. */
    void setEnergiesOnlyWithVirial(bool on)
    {
        energiesOnlyWithVirial_ = on;
        pairList_.setEnergiesOnlyWithVirial(on);
        nonlocalPairList_.setEnergiesOnlyWithVirial(on);
    }

    /* Frees the pair lists (the end of a run: peak memory); the next
     * compute must be a search step. */
    void releaseWorkspace()
    {
        pairList_.releaseMemory();
        nonlocalPairList_.releaseMemory();
    }

    /* Dynamic pruning of the short-range list (see ClusterNonbonded). */
    void setPruning(double rlistInner, int interval)
    {
        pairList_.setPruning(rlistInner, interval);
        nonlocalPairList_.setPruning(rlistInner, interval);
    }

    /* Threads for the nonbonded kernel and PME spread/gather (one rank). */
    void setNumThreads(int n);
    /* The PME FFT's planning (before prepareFft, which plans). */
    void setFftPlanning(FftPlanning planning);
    /* After setNumThreads and setDomainDecomposition: makes the whole-grid
     * FFT and its plans when PME runs here on one rank (not in the first
     * step); a decomposed run has no use for that grid. */
    void prepareFft();

    /* Domain decomposition: from now on compute() takes the home atoms'
     * coordinates (in the decomposition's home order) and gives their
     * forces; energies and virial are this rank's share, to be summed over
     * ranks. The step: halo coordinates start -> pairs of home atoms ->
     * halo coordinates finish -> the other pairs, exclusion corrections,
     * listed -> PME -> halo forces. PME: with a PmeClient the coordinates go
     * to the separate PME ranks first and their forces are awaited last;
     * otherwise the PP ranks run DistributedPme among themselves (--npme 0)
     * with this transpose algorithm. */
    struct ParallelPme
    {
        TransposeAlgorithm transpose   = TransposeAlgorithm::Alltoallv;
        PmeClient*         client      = nullptr;
        FftPlanning        fftPlanning = FftPlanning::Estimate; // the pencil FFT's plans (--npme 0)
    };
    void setDomainDecomposition(DomainDecomposition* dd, comm::Communicator* comm, const ParallelPme& pme);
    /* The PME process grid with --npme 0 ({0, 0} otherwise). */
    std::array<int, 2> pmeProcessGrid() const;
    /* PME on every rank: the ranks this one sends its atoms to (-1: none). */
    int pmeRedistTargets() const;

    /* Times search, nonbonded, listed and PME into these (may be null). */
    void setTimers(StageTimers* timers) { timers_ = timers; }

    const InteractionConst& interactionConst() const { return ic_; }
    std::array<int, 3>      pmeGrid() const { return pmeGrid_; }
    double                  rlist() const { return rlist_; }
    size_t                  numPairs() const { return pairList_.numPairs(); }
    std::string             kernelName() const { return pairList_.kernelName(); }
    /* The dispersion-correction pressure (bar; 0 unless DispCorr = EnerPres). */
    double dispersionPressure(double volume) const { return dispCorr_.pressure(top_.numAtoms, volume); }

private:
    void addDispersionCorrection(const Box& box, Matrix3* virial, ForceOutput& out) const;
    void computeDecomposed(const std::vector<Vec3<real>>& x, const Box& box, bool needVirial, ForceOutput& out);

    const Topology&      top_;
    DomainDecomposition* dd_   = nullptr;
    comm::Communicator*  comm_ = nullptr;
    long                 partitionSeen_ = -1;
    ShortRangeList       nonlocalPairList_;
    std::vector<Vec3<real>> xLocal_;
    std::vector<double>     homeCharges_;
    ExcludedPairList        localExcluded_; // the local topology's excluded pairs (decomposed)
    std::optional<EwaldCorrection> localSeries_; // mixed build: the kernels' fit of the Ewald correction
    DispCorr             dispCorrMode_;
    InteractionConst     ic_;
    DispersionCorrection dispCorr_;
    ShortRangeList       pairList_;
    std::unique_ptr<Pme> pme_;
    std::unique_ptr<DistributedPme> distributedPme_;
    PmeClient*                      pmeClient_ = nullptr;
    std::array<int, 3>   pmeGrid_{};
    double               rlist_;
    StageTimers*         timers_ = nullptr;
    int                  numThreads_ = 1;
    bool                 energiesOnlyWithVirial_ = false; // setEnergiesOnlyWithVirial
    ThreadedListed       threadedListed_; // one rank: listed forces over the threads
};

} // namespace putmd
