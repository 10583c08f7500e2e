#include "nonbonded/reference_kernel.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "nonbonded/cell_grid.h"
#include "nonbonded/exclusion_corrections.h"
#include "nonbonded/pair_kernel.h"

namespace putmd
{

namespace
{

using RVec = Vec3<real>;

/* The reference search visits excluded pairs too; they are skipped here. */
struct SkipExcluded
{
    PairKernel& kernel;
    const Topology& top;

    void operator()(int i, int j, const RVec& d, real r2)
    {
        const int b = top.exclusionStart[i], e = top.exclusionStart[i + 1];
        if (!std::binary_search(top.exclusions.begin() + b, top.exclusions.begin() + e, j))
        {
            kernel(i, j, d, r2);
        }
    }
};

} // namespace

void computeNonbondedReference(const Topology&                top,
                               const InteractionConst&        ic,
                               const Box&                     box,
                               const std::vector<Vec3<real>>& x,
                               std::vector<Vec3<real>>&       f,
                               EnergyTerms&                   energies)
{
    const CellGrid grid(box, x, ic.rmax);
    PairKernel     kernel(top, ic, f);
    SkipExcluded   skip{ kernel, top };
    grid.forEachPair(skip);
    energies.add(EnergyTerm::LJSR, kernel.vlj);
    energies.add(EnergyTerm::CoulombSR, kernel.vcoul + exclusionCorrections(top, ic, Pbc(box), x, f, nullptr));
}

} // namespace putmd
