#include "pme/grid_size.h"

#include <string>

#include "core/error.h"
#include "io/mdp.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace putmd
{

namespace
{
constexpr int smallSizes[] = { 6, 8, 10, 12, 14, 16, 20, 24, 25, 28, 32, 36, 40, 42, 44 };
constexpr int baseSizes[]  = { 45, 48, 50, 52, 54, 56, 60, 64, 70, 72, 75, 80, 81, 84 };

int smallestGridAtLeast(int nmin)
{
    for (int s : smallSizes)
    {
        if (s >= nmin)
        {
            return s;
        }
    }
    // a power of two times a base size; GROMACS keeps a factor 4, avoids 140
    // and never tries the first base size
    long fac2 = 1;
    while (fac2 * baseSizes[std::size(baseSizes) - 1] < nmin)
    {
        fac2 *= 2;
    }
    long best = 0;
    for (size_t i = std::size(baseSizes) - 1; i >= 1; i--)
    {
        const long attempt = fac2 * baseSizes[i];
        if (((attempt % 4 == 0 && attempt != 140) || attempt == 90) && attempt >= nmin)
        {
            best = attempt;
        }
    }
    return static_cast<int>(best);
}
} // namespace

PmeGridChoice choosePmeGrid(const Box& box, double spacing, const int explicitN[3], int pmeOrder)
{
    PmeGridChoice choice;
    for (int d = 0; d < 3; d++)
    {
        const double length = norm(box.vectors().row(d));
        if (explicitN[d] > 0)
        {
            choice.n[d] = explicitN[d];
        }
        else
        {
            const int nmin = std::max(static_cast<int>(length / spacing + 0.999), 2 * (pmeOrder - 1));
            choice.n[d]    = smallestGridAtLeast(nmin);
        }
        choice.maxSpacing = std::max(choice.maxSpacing, length / choice.n[d]);
    }
    return choice;
}

PmeGridChoice choosePmeGrid(const Box& box, const MdpOptions& mdp)
{
    constexpr int    maxPerDim = 4096;
    constexpr double maxTotal  = 1.1e9; // points: ~4 GiB of single-precision grid
    const char*      keys[3]   = { "fourier-nx", "fourier-ny", "fourier-nz" };
    const int        minimum   = 2 * (mdp.pmeOrder - 1);
    for (int d = 0; d < 3; d++)
    {
        if (mdp.fourierN[d] > 0 && mdp.fourierN[d] < minimum)
        {
            throw InputError(mdp.where(keys[d]), std::string(keys[d]) + " = " + std::to_string(mdp.fourierN[d])
                                                         + " is too small: with pme-order " + std::to_string(mdp.pmeOrder)
                                                         + " a PME grid dimension needs at least 2*(pme-order - 1) = "
                                                         + std::to_string(minimum) + " points");
        }
        if (mdp.fourierN[d] == 0 && norm(box.vectors().row(d)) / mdp.fourierSpacing > maxPerDim)
        {
            throw InputError(mdp.where("fourierspacing"),
                             "fourierspacing " + std::to_string(mdp.fourierSpacing) + " nm gives more than "
                                     + std::to_string(maxPerDim) + " PME grid points along box vector " + std::to_string(d + 1)
                                     + " (length " + std::to_string(norm(box.vectors().row(d)))
                                     + " nm); use a spacing of 0.1 to 0.16 nm");
        }
    }
    const PmeGridChoice g = choosePmeGrid(box, mdp.fourierSpacing, mdp.fourierN, mdp.pmeOrder);
    if (double(g.n[0]) * g.n[1] * g.n[2] > maxTotal)
    {
        throw InputError(mdp.where(mdp.fourierN[0] > 0 ? "fourier-nx" : "fourierspacing"),
                         "the PME grid " + std::to_string(g.n[0]) + " x " + std::to_string(g.n[1]) + " x "
                                 + std::to_string(g.n[2]) + " is larger than putmd allows (1.1e9 points)");
    }
    return g;
}

} // namespace putmd
