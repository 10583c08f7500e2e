/* nonbonded/exclusion_corrections.h — what GROMACS's Verlet kernels add
 * for excluded pairs and for each charge itself.
 *
 * Reciprocal-space Ewald includes every pair, so each excluded pair inside
 * the Coulomb cut-off gets -qq erf(beta r)/r (with its r -> 0 limit
 * -qq 2 beta/sqrt(pi)); with reaction-field or plain cut-off it gets
 * qq (k_rf r^2 - c_rf). Each charge adds its self term, -q^2 beta/sqrt(pi)
 * (Ewald) or -q^2 c_rf / 2. All of it is Coulomb (SR), as in GROMACS.
 */
#pragma once

#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "nonbonded/ewald_correction.h"
#include "nonbonded/interaction_const.h"
#include "topology/topology.h"

namespace putmd
{

/* Returns the energy; adds forces and (if virial is not null) the virial.
 * Self terms for atoms [0, numSelfAtoms) (-1: all; with domain
 * decomposition only the home atoms, whose copies elsewhere add none).
 * Threads take equal ranges of i-atoms; a pair whose other atom lies in a
 * later range has that atom's force added after the threads, in order,
 * and energies and virials are summed in thread order: the result is the
 * same for a given thread count. With Ewald and a series (the SIMD
 * kernels' fit of erf(beta r)/r and its derivative, ewald_correction.h,
 * covering the cut-off) the pairs are computed from it in single precision
 * instead of erf and exp, vectorised; the energy is summed in double.
 * energies false: with the series, the pairs' energy is not computed
 * (steps without energies) and the result holds only the self terms. */
struct ExcludedPairList;
double exclusionCorrections(const Topology& top, const InteractionConst& ic, const Pbc& pbc,
                            const std::vector<Vec3<real>>& x, std::vector<Vec3<real>>& f, Matrix3* virial,
                            int numSelfAtoms = -1, int numThreads = 1, const EwaldCorrection* series = nullptr,
                            const ExcludedPairList* pairs = nullptr, bool energies = true);

/* The excluded pairs (i < j) of a topology with a nonzero charge product,
 * in order of i, made once (the topology's exclusion lists name each pair
 * twice and pairs without charge): given to exclusionCorrections (with
 * numSelfAtoms -1: the list's chargeSquares are the self terms) it
 * replaces the walk over the lists by one over these pairs; the results
 * are the same. */
struct ExcludedPairList
{
    std::vector<int>  i, j;
    std::vector<real> qq;                  // epsfac q_i q_j
    double            chargeSquares = 0;   // sum of q^2 over all atoms
    int               numAtoms      = -1;
    /* Three-atom molecules (rigid waters): atoms a, a + 1, a + 2 that
     * exclude each other and nothing else, with charges on all three pairs.
     * Their pairs are not in i, j, qq but here, computed together
     * (exclusion_triplets_simd.h on steps without energies and virial). */
    std::vector<int>  tripletFirst;        // a, per molecule
    std::vector<real> tripletQQ;           // epsfac q q of (a, a+1), (a, a+2), (a+1, a+2), per molecule

    /* numSelfAtoms: the atoms whose self terms chargeSquares sums (-1: all;
     * a decomposed rank: its home atoms, whose local topology is remade
     * at every repartition). */
    static ExcludedPairList make(const Topology& top, double epsfac, int numSelfAtoms = -1);
};

} // namespace putmd
