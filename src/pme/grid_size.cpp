#include "pme/grid_size.h"

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

} // namespace putmd
