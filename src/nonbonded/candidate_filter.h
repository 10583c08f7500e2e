/* nonbonded/candidate_filter.h — the innermost loop of the pair searches:
 * which atoms of a run of cells are partners of atom i.
 *
 * The decomposed search (DomainDecomposition::searchPairs) visits, for each
 * local atom i, the rows of cells within rlist; the periodic cell grid of
 * one rank (CellGrid, the double build's list) the 5 x 5 x 5 cells around
 * i's. Both keep the atoms j of a run of cells with
 *   j > i, (zone_j & zone_i) == 0 (decomposed: a pair of two halo zones
 *   that no rank computes is skipped; zone 0 elsewhere) and
 *   |x_i - x_j|^2 < rlist^2,
 * in the order of the run. Most candidates fail (half by the index, most
 * of the rest by the distance), so this loop was half of a decomposed
 * force evaluation's time in the double build. Two twins with the same
 * result:
 *   - filterCandidatesReference: the plain loop (no branch per candidate);
 *   - filterCandidatesSimd (Highway, chosen at run time): W candidates per
 *     register and a compressed store of the kept indices.
 * The distance is computed as the plain loop computes it (the differences,
 * then dx dx + dy dy + dz dz left to right, no fused multiply-add: the
 * SIMD file is compiled without contraction), so both keep the same atoms
 * whatever the instruction set.
 */
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/real.h"

namespace putmd
{

/* Indices and zone masks as integers of the coordinates' width, so that a
 * register of them has as many lanes as one of coordinates. */
using CandidateIndex = std::conditional_t<sizeof(real) == 8, int64_t, int32_t>;

/* The row's atoms in cell order, structure of arrays. */
struct CandidateRow
{
    const real*    x    = nullptr;
    const real*    y    = nullptr;
    const real*    z    = nullptr;
    const CandidateIndex* atom = nullptr; // local index of each
    const CandidateIndex* zone = nullptr; // zone mask of each
};

struct CandidateQuery
{
    real           xi = 0, yi = 0, zi = 0;
    CandidateIndex i = 0, zone = 0;
    real           rlist2 = 0;
};

/* Writes the kept k in [begin, end) (positions in the row's arrays) to
 * out[0..) in order and returns how many; out needs room for end - begin entries plus
 * c_candidateSlack, and the row's arrays must be readable (any values)
 * c_candidateSlack entries past end: the SIMD twin loads and stores whole
 * registers. */
int filterCandidatesReference(const CandidateRow& row, const CandidateQuery& q, int begin, int end, CandidateIndex* out);
int filterCandidatesSimd(const CandidateRow& row, const CandidateQuery& q, int begin, int end, CandidateIndex* out);

/* Entries filterCandidatesSimd may read past a row and write past the kept
 * entries (a register of the widest instruction set). */
constexpr int c_candidateSlack = 16;

} // namespace putmd
