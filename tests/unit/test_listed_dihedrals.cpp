/* Periodic dihedrals (functions 1, 4 and 9) against the cosine series written
 * out: energy sum_n k (1 + cos(n phi - phi0)) with phi from atan2, and
 * forces against the central differences of that energy. The kernel takes
 * cos(n phi) and sin(n phi) from the geometry by rotations and the phase by
 * the angle-difference formulas (no atan2, no sincos), so the phases here
 * are not only 0 and 180 degrees (the shipped force fields' phases). */
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/units.h"
#include "listed/listed.h"

namespace putmd
{
namespace
{

struct Term
{
    double phi0Deg, k;
    int    mult;
};

/* The IUPAC dihedral of x0-x1-x2-x3 in double, written independently. */
double dihedral(const std::vector<RVec>& x)
{
    const DVec b1 = DVec(x[1]) - DVec(x[0]), b2 = DVec(x[2]) - DVec(x[1]), b3 = DVec(x[3]) - DVec(x[2]);
    const DVec n1 = cross(b1, b2), n2 = cross(b2, b3);
    return std::atan2(norm(b2) * dot(b1, n2), dot(n1, n2));
}

double seriesEnergy(const std::vector<RVec>& x, const std::vector<Term>& terms)
{
    const double phi = dihedral(x);
    double       v   = 0;
    for (const Term& t : terms)
    {
        v += t.k * (1 + std::cos(t.mult * phi - t.phi0Deg * units::pi / 180));
    }
    return v;
}

TEST(PeriodicDihedrals, MatchTheCosineSeriesAndItsGradient)
{
    // one quadruplet with several terms (type 9), phases off 0 and 180
    const std::vector<Term> terms = { { 0, 1.3, 3 },    { 180, 0.7, 2 },  { 37.5, 2.1, 1 }, { -120, 0.4, 4 },
                                      { 90, 0.9, 6 },   { 15, 0.5, 0 },   { 180, 1.1, 5 } };
    ListedInteractions l;
    for (const Term& t : terms)
    {
        l.properDihedrals.push_back({ 0, 1, 2, 3, t.phi0Deg * units::pi / 180, t.k, t.mult });
    }
    Matrix3 b;
    b(0, 0) = b(1, 1) = b(2, 2) = 10.0;
    const Box box(b);
    const Pbc pbc(box);
    ListedSettings settings;
    std::mt19937                           rng(2026);
    std::uniform_real_distribution<double> u(-0.15, 0.15);
    for (int trial = 0; trial < 50; trial++)
    {
        // a chain around the box centre, bonds ~0.15 nm in random directions
        std::vector<RVec> x(4);
        x[0] = RVec(5, 5, 5);
        for (int a = 1; a < 4; a++)
        {
            x[a] = x[a - 1] + RVec(u(rng), u(rng), u(rng));
        }
        std::vector<RVec> f(4);
        EnergyTerms       e;
        computeListed(l, settings, x, pbc, f, e, nullptr);
        const double v = seriesEnergy(x, terms);
        EXPECT_NEAR(e.value[static_cast<int>(EnergyTerm::ProperDih)], v, 1e-10 * (std::abs(v) + 1)) << trial;
        // forces: minus the central differences of the series
        const double h = 1e-6;
        double       fmax = 0;
        std::vector<DVec> ref(4);
        for (int a = 0; a < 4; a++)
        {
            for (int d = 0; d < 3; d++)
            {
                std::vector<RVec> xp = x, xm = x;
                xp[a][d] += h;
                xm[a][d] -= h;
                ref[a][d] = -(seriesEnergy(xp, terms) - seriesEnergy(xm, terms)) / (2 * h);
                fmax      = std::max(fmax, std::abs(ref[a][d]));
            }
        }
        for (int a = 0; a < 4; a++)
        {
            for (int d = 0; d < 3; d++)
            {
                EXPECT_NEAR(f[a][d], ref[a][d], 1e-5 * (fmax + 1)) << "trial " << trial << " atom " << a << " dim " << d;
            }
        }
    }
}

} // namespace
} // namespace putmd
