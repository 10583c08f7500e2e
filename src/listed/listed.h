/* listed/listed.h — bonded interactions and 1-4 pairs.
 *
 * Plain loops over the interaction lists of the global topology, one function
 * per functional form, each adding its energy to the term GROMACS reports it
 * under and its forces to f. Geometry uses the minimum image (Pbc), so
 * molecules need not be whole. Dihedral angles follow the IUPAC convention
 * (trans = 180 degrees), with GROMACS's force distribution over four atoms.
 */
#pragma once

#include <exception>
#include <utility>
#include <vector>

#include "core/box.h"
#include "core/energy_terms.h"
#include "core/real.h"
#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

using RVec = Vec3<real>;

struct ListedSettings
{
    double epsfac = 0; // ONE_4PI_EPS0 / epsilon-r, for Coulomb-14
};

void computeListed(const ListedInteractions& listed,
                   const ListedSettings&     settings,
                   const std::vector<RVec>&  x,
                   const Pbc&                pbc,
                   std::vector<RVec>&        f,
                   EnergyTerms&              energies,
                   Matrix3*                  virial = nullptr); // -0.5 sum r (x) f added when not null

/* Listed forces on several threads (one rank): every interaction list is
 * cut into equal shares once, thread t computes its share into its own
 * force buffer (thread 0 straight into f); the buffers, energies and
 * virials are summed in thread order, so a run is reproducible for a given
 * thread count. The lists are split for the first ListedInteractions
 * object seen; it must not change afterwards (the one-rank topology). */
class ThreadedListed
{
public:
    void compute(const ListedInteractions& listed, const ListedSettings& settings, const std::vector<RVec>& x,
                 const Pbc& pbc, std::vector<RVec>& f, EnergyTerms& e, Matrix3* virial, int numThreads);

private:
    const ListedInteractions*       splitOf_ = nullptr;
    std::vector<ListedInteractions> parts_;
    std::vector<std::vector<RVec>>  forces_;
    std::vector<EnergyTerms>        energies_;
    std::vector<Matrix3>            virials_;
    std::vector<std::exception_ptr> failures_;
    std::pair<int, int>             range_{ 0, -1 }; // atoms the interactions name (listedAtomRange)
};

} // namespace putmd
