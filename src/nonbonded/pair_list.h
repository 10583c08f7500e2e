/* nonbonded/pair_list.h — a buffered Verlet pair list for dynamics.
 *
 * Built at search steps from the cell grid with radius rlist (the longest
 * cut-off plus a buffer), it holds every non-excluded pair whose images are
 * within rlist, each with the lattice shift of its image, so the list stays
 * valid while atoms move until the next search: between searches the
 * kernel recomputes every distance and applies the cut-offs. Stored as one
 * j-list per i (CSR); each pair names its kind of lattice shift (integers
 * per box vector; the list's distinct kinds are few).
 */
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/ewald_table.h"
#include "nonbonded/interaction_const.h"
#include "nonbonded/pair_kernel.h"
#include "topology/topology.h"

namespace putmd
{

class PairList
{
public:
    void build(const Topology& top, const Box& box, const std::vector<Vec3<real>>& x, double rlist);

    /* A list made elsewhere (domain decomposition: its atoms are explicit
     * images, so every shift is zero): j of atom i in j[start[i], start[i+1]). */
    void setPairs(std::vector<int> start, std::vector<int> j, double rlist);

    /* Whether compute() adds the excluded-pair and self corrections (on by
     * default; the domain decomposition adds them once itself). */
    void setExclusionCorrections(bool on) { exclusionCorrections_ = on; }

    size_t numPairs() const { return j_.size(); }
    double rlist() const { return rlist_; }

    /* Short-range energies into LJ (SR) / Coulomb (SR) (exclusion
     * corrections included), forces into f, virial added if not null.
     * With several threads each works on its own share of the i-atoms
     * (equal numbers of pairs) into its own force buffer; buffers, energies
     * and virials are summed in thread order, so the result is the same
     * for the same number of threads. */
    void compute(const Topology& top, const InteractionConst& ic, const Box& box, const std::vector<Vec3<real>>& x,
                 std::vector<Vec3<real>>& f, EnergyTerms& energies, Matrix3* virial);

    void setNumThreads(int n) { numThreads_ = n > 0 ? n : 1; }
    /* The atom-pair list computes energies on every call (the interface of
     * ClusterNonbonded, which can skip them). */
    void setEnergiesOnlyWithVirial(bool) {}
    void releaseMemory()
    {
        std::vector<int>().swap(j_);
        std::vector<int>().swap(shift_);
        std::vector<std::vector<Vec3<real>>>().swap(threadForces_);
    }
    /* No dynamic pruning for the atom-pair list (exact pairs already). */
    void setPruning(double, int) {}
    std::string kernelName() const { return "plain atom-pair list (double precision build)"; }

private:
    void setCounts(const std::vector<int>& count);
    /* The pairs of atoms [begin, end) into kernel-owned sums. */
    template<typename Kernel>
    void computeRange(int begin, int end, const Box& box, const std::vector<Vec3<real>>& x, Kernel& kernel,
                      real rmax2) const;

    int                              numThreads_ = 1;
    bool                             exclusionCorrections_ = true;
    EwaldTable                       ewaldTable_;
    PairParameters                   parameters_;
    double                           ewaldTableBeta_ = 0, ewaldTableRange_ = 0;
    std::vector<int>                 threadStart_; // first i of each thread's share
    std::vector<std::vector<Vec3<real>>> threadForces_;
    struct alignas(4 * sizeof(real)) Packed
    {
        real v[4]; // x, y, z, scaled charge
    };
    std::vector<Packed>              packed_; // per atom, made by compute()
    double                           rlist_ = 0;
    /* j-list of atom i: j_[begin_[i] + k] for k < cumulative_[i + 1] -
     * cumulative_[i] (the lists of a build are stored cell by cell, those
     * of setPairs in atom order); cumulative_ also splits the work among
     * threads. */
    std::vector<int>                 begin_;      // per i
    std::vector<int>                 cumulative_; // numAtoms + 1: pairs of the atoms before i
    std::vector<int>                 j_;
    std::vector<int>                 shift_;      // per pair: its kind of lattice shift
    std::vector<std::array<int, 3>>  shiftKinds_{ { 0, 0, 0 } }; // kind 0: no shift
};

} // namespace putmd
