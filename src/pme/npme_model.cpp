/* pme/npme_model.cpp — the predicted step of each --npme layout (see
 * npme_model.h). */
#include "pme/npme_model.h"

#include <algorithm>
#include <cmath>

#include "fft/pencil_fft.h"

namespace putmd
{

namespace
{
// Pair-equivalents of the PME work (measured on the cluster kernels, see
// docs/pme-parallel.md) and the time of one pair interaction.
constexpr double kSpreadGatherPerPoint = 0.57; // per atom and spline point
constexpr double kFftSolvePerGridPoint = 5.1;  // per grid point, both FFTs and the solve
constexpr double kSecondsPerPair       = 2e-9;

double pairWork(const NpmeModelInput& in)
{
    return double(in.numAtoms) * in.pairsPerAtom;
}

double pmeWork(const NpmeModelInput& in)
{
    const double p          = in.pmeOrder;
    const double gridPoints = double(in.pmeGrid[0]) * in.pmeGrid[1] * in.pmeGrid[2];
    return double(in.numAtoms) * kSpreadGatherPerPoint * p * p * p + gridPoints * kFftSolvePerGridPoint;
}

/* A chain of dependent messages and a burst of concurrent ones. */
double chain(const NetworkCost& net, double messages)
{
    return messages * net.latency;
}
double burst(const NetworkCost& net, double messages)
{
    return messages > 0 ? net.latency + (messages - 1) * net.perMessage : 0.0;
}

/* Coordinates and forces of the halo of a PP rank. */
double haloSeconds(const NpmeModelInput& in, const NetworkCost& net, const DdGrid& dd, int active)
{
    int pulses = 0;
    for (int d = 0; d < 3; d++)
    {
        pulses += dd.n[d] > 1 ? dd.pulses[d] : 0;
    }
    if (pulses == 0)
    {
        return 0;
    }
    const double density = double(in.numAtoms) / in.box.volume();
    const double atoms   = ddHaloVolume(in.box, dd.n, in.haloDistance) * density;
    return chain(net, 2.0 * pulses) + 2.0 * atoms * 3 * double(in.bytesPerReal) * net.perByteWith(active);
}

/* The pencils of a domain region overlapping, along one dimension: a
 * region of `fraction` of the box against pencils of 1 / pencils of it. */
double overlapping(double fraction, int pencils)
{
    return std::min(double(pencils), fraction * pencils + 1.0);
}

/* The PME grid's own traffic on nPme ranks in pencils pg: transposes,
 * borders and the redistribution of `atoms` atoms a rank to `peers`
 * pencils and back. */
double pmeGridSeconds(const NpmeModelInput& in, const NetworkCost& net, int nPme, const std::array<int, 2>& pg,
                      double atoms, double peers)
{
    if (nPme < 2)
    {
        return 0;
    }
    const double             real  = double(in.bytesPerReal);
    const double complexPoints     = double(in.pmeGrid[0]) * in.pmeGrid[1] * (in.pmeGrid[2] / 2 + 1) / nPme;
    const double transposeMessages = 2.0 * ((pg[0] - 1) + (pg[1] - 1));
    const double perByte           = net.perByteWith(nPme); // only the PME ranks move these bytes
    double       t = chain(net, transposeMessages) + 4 * complexPoints * 2 * real * perByte;
    // borders: order - 1 planes to the next pencil in each cut dimension,
    // folded after the spread and unfolded before the gather
    const double planes = in.pmeOrder - 1;
    for (int d = 0; d < 2; d++)
    {
        if (pg[d] > 1)
        {
            const double face = double(in.pmeGrid[1 - d]) / pg[1 - d] * in.pmeGrid[2];
            t += chain(net, 2) + 2 * planes * face * real * perByte;
        }
    }
    // coordinates and charges out, forces back
    t += 2 * burst(net, peers) + atoms * (6 * real + sizeof(double)) * perByte;
    return t;
}
} // namespace

std::optional<LayoutPrediction> predictLayout(const NpmeModelInput& in, const NetworkCost& net, int npme)
{
    const int numPp = in.worldSize - npme;
    if (npme < 0 || numPp < 1 || (npme > 0 && npme > in.worldSize / 2))
    {
        return std::nullopt;
    }
    const std::optional<DdGrid> dd = in.ddGrid(numPp);
    if (!dd)
    {
        return std::nullopt;
    }
    const double pp   = pairWork(in) * kSecondsPerPair;
    const double pme  = pmeWork(in) * kSecondsPerPair;
    const double halo = haloSeconds(in, net, *dd, numPp);
    LayoutPrediction p;
    p.npme = npme;
    if (npme == 0)
    {
        const int                P  = in.worldSize;
        const std::array<int, 2> pg = choosePencilGrid(P, in.pmeGrid);
        const double peers = P < 2 ? 0.0
                                   : overlapping(1.0 / dd->n[0], pg[0]) * overlapping(1.0 / dd->n[1], pg[1]);
        p.compute       = (pp + pme) / P;
        p.communication = halo + pmeGridSeconds(in, net, P, pg, double(in.numAtoms) / P, peers);
        p.seconds       = p.compute + p.communication;
        return p;
    }
    const double real = double(in.bytesPerReal);
    // PP side: its pairs, its halo, coordinates out and forces back
    const double ppAtoms   = double(in.numAtoms) / numPp;
    const double ppCompute = pp / numPp;
    const double ppComm    = halo + chain(net, 2) + ppAtoms * (6 * real + sizeof(double)) * net.perByteWith(numPp);
    // PME side: a burst from each of its PP ranks each way, then the grid;
    // its atoms come from a run of consecutive domains (x fastest)
    const double served  = double(numPp) / npme;
    const double runX    = std::min(served, double(dd->n[0])) / dd->n[0];
    const double runY    = std::min(std::ceil(served / dd->n[0]), double(dd->n[1])) / dd->n[1];
    const std::array<int, 2> pg = choosePencilGrid(npme, in.pmeGrid);
    const double peers   = npme < 2 ? 0.0 : overlapping(runX, pg[0]) * overlapping(runY, pg[1]);
    const double pmeAtoms   = double(in.numAtoms) / npme;
    const double pmeCompute = pme / npme;
    const double pmeComm    = 2 * burst(net, served) + pmeGridSeconds(in, net, npme, pg, pmeAtoms, peers);
    p.pmeSideSlower = pmeCompute + pmeComm > ppCompute + ppComm;
    p.compute       = p.pmeSideSlower ? pmeCompute : ppCompute;
    p.communication = p.pmeSideSlower ? pmeComm : ppComm;
    p.seconds       = p.compute + p.communication;
    return p;
}

std::vector<LayoutPrediction> predictLayouts(const NpmeModelInput& in, const NetworkCost& net)
{
    std::vector<LayoutPrediction> out;
    for (int k = 0; k <= in.worldSize / 2; k++)
    {
        if (auto p = predictLayout(in, net, k))
        {
            out.push_back(*p);
        }
    }
    return out;
}

} // namespace putmd
