/* pme/npme_model.h — how long a step takes with K separate PME ranks,
 * predicted from arithmetic and from the network's cost per message.
 *
 * Why messages. The first estimate of --npme weighed arithmetic only (pairs
 * against grid points and spline work) plus a fixed share of the PME work
 * per extra rank for communication. On simulated clusters of 1,024 ranks it
 * chose 254 PME ranks in 127 x 2 pencils and ran at 74 ms a step where 64
 * PME ranks run at 7.9 ms and 36 at 5.4 ms (fat tree, water-spce-96k,
 * docs/scaling.md): at a hundred atoms a rank the
 * arithmetic is microseconds and the step is the number of messages in a
 * chain times the network's latency. A pencil grid of Px x Py ranks costs
 * 2 (Px - 1 + Py - 1) dependent transpose messages per step, so 127 x 2
 * pencils pay for 254 of them and 8 x 8 for 28.
 *
 * The model. Per step, in seconds:
 *   compute        pair-equivalents (pairs in the cut-off 1, spline points
 *                  0.57 an atom, grid points 5.1) times kSecondsPerPair;
 *   a chain        of k dependent messages costs k latencies;
 *   a burst        of m messages sent or received together costs one
 *                  latency plus m times the per-message overhead;
 *   bytes          cost their count times the seconds per byte, on a
 *                  shared network the throughput measured with all ranks
 *                  at once split among the ranks that move bytes in the
 *                  stage (the PME ranks alone in the transposes), never
 *                  better than two ranks alone get.
 * and the stages of the step:
 *   halo           coordinates and forces, one chained message per pulse
 *                  and decomposed dimension, the import volume's atoms;
 *   PME grid       the 3D-FFT's four transposes (pairwise: Px - 1 and
 *                  Py - 1 chained messages each way, the local grid's
 *                  complex points), the grid borders (order - 1 planes to
 *                  each decomposed neighbour, spread and gather), the
 *                  redistribution of atoms to the pencils that hold them
 *                  and of forces back (a burst each way to the pencils a
 *                  domain, or a PME rank's run of domains, overlaps);
 *   PP <-> PME     one message each way per PP rank; a PME rank receives a
 *                  burst from each of its PP ranks.
 * npme 0 adds PP and PME on every rank; npme K takes the slower of the PP
 * ranks and the PME ranks (they run side by side).
 *
 * The network. On one machine the constants of comm::NetworkCost,
 * measured here (2 ranks of water-spce-12k through shared memory: the PME
 * traffic's 0.14 ms a step for about 0.9 MB); across machines what
 * probeNetworkCost (comm/link_probe.h) measures at start-up with every
 * rank exchanging at once.
 *
 * What it leaves out: load imbalance (at a hundred atoms a rank the
 * busiest domain has several times the average's pairs), congestion
 * (every burst is as if alone on the network), the energy reductions (the
 * same for every layout) and eager against rendezvous sends. It ranks
 * layouts; `--npme measure` times the best two.
 */
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/link_probe.h"
#include "core/box.h"
#include "domdec/dd_grid.h"

namespace putmd
{

using comm::NetworkCost;

struct NpmeModelInput
{
    int                worldSize    = 1;
    long               numAtoms     = 0;
    double             pairsPerAtom = 0;
    std::array<int, 3> pmeGrid{ 0, 0, 0 };
    int                pmeOrder     = 4;
    Box                box;
    double             haloDistance = 0; // nm, as chooseDdGrid takes it
    std::size_t        bytesPerReal = 4;
    /* The domain grid of numPp PP ranks, or nothing when they cannot cut
     * the box (or may not run beside PME ranks at all). */
    std::function<std::optional<DdGrid>(int numPp)> ddGrid;
};

/* One layout's predicted step. */
struct LayoutPrediction
{
    int    npme          = 0;
    double seconds       = 0; // the step
    double compute       = 0; // of the slower side (npme 0: the whole rank's)
    double communication = 0; // of the same side
    bool   pmeSideSlower = false;
};

/* The step of npme K (0: PME on every rank); nothing when K's PP ranks
 * cannot cut the box. */
std::optional<LayoutPrediction> predictLayout(const NpmeModelInput& in, const NetworkCost& net, int npme);

/* Every usable layout, npme 0 first, then K = 1 .. worldSize / 2. */
std::vector<LayoutPrediction> predictLayouts(const NpmeModelInput& in, const NetworkCost& net);

} // namespace putmd
