/* Numerical unit tests: pair search, PME, forces as energy derivatives,
 * and the GROMACS conventions for the PME grid and Ewald coefficient. */
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <set>

#include "core/units.h"
#include "nonbonded/cell_grid.h"
#include "nonbonded/interaction_const.h"
#include "pme/grid_size.h"
#include "pme/pme.h"
#include "run/single_point.h"
#include "run/system_inputs.h"

namespace putmd
{
namespace
{

Box triclinicBox()
{
    Matrix3 m;
    m(0, 0) = 3.2;
    m(1, 0) = 0.9;
    m(1, 1) = 3.0;
    m(2, 0) = -1.2;
    m(2, 1) = 1.1;
    m(2, 2) = 2.9;
    return Box(m);
}

std::vector<Vec3<real>> randomPositions(int n, double spread, unsigned seed)
{
    std::mt19937                           rng(seed);
    std::uniform_real_distribution<double> u(-spread, 2 * spread); // some outside the box
    std::vector<Vec3<real>>                x(n);
    for (auto& v : x)
    {
        v = Vec3<real>(u(rng), u(rng), u(rng));
    }
    return x;
}

TEST(CellGrid, FindsExactlyThePairsOfABruteForceImageSearch)
{
    for (const Box& box : { Box([] {
                                Matrix3 m;
                                m(0, 0) = 3.1;
                                m(1, 1) = 2.6;
                                m(2, 2) = 4.0;
                                return m;
                            }()),
                            triclinicBox() })
    {
        const double rc = 1.0;
        ASSERT_LT(rc, 0.5 * box.minPerpendicularWidth());
        const auto x = randomPositions(300, 1.2, 7);
        std::set<std::pair<int, int>> fromGrid;
        int                           visits = 0;
        CellGrid(box, x, rc).forEachPair([&](int i, int j, const Vec3<real>& d, real r2) {
            EXPECT_LT(i, j);
            EXPECT_NEAR(double(norm2(d)), double(r2), 1e-12);
            fromGrid.insert({ i, j });
            visits++;
        });
        EXPECT_EQ(visits, static_cast<int>(fromGrid.size())) << "a pair was visited twice";
        // brute force over images -2..2 of every pair
        std::set<std::pair<int, int>> brute;
        const Matrix3&                b = box.vectors();
        for (int i = 0; i < 300; i++)
        {
            for (int j = i + 1; j < 300; j++)
            {
                int within = 0;
                for (int s0 = -3; s0 <= 3; s0++)
                    for (int s1 = -3; s1 <= 3; s1++)
                        for (int s2 = -3; s2 <= 3; s2++)
                        {
                            DVec d = DVec(x[i]) - DVec(x[j]);
                            for (int c = 0; c < 3; c++)
                            {
                                d[c] += s0 * b(0, c) + s1 * b(1, c) + s2 * b(2, c);
                            }
                            within += norm2(d) < rc * rc;
                        }
                EXPECT_LE(within, 1);
                if (within)
                {
                    brute.insert({ i, j });
                }
            }
        }
        EXPECT_EQ(fromGrid, brute);
        EXPECT_GT(brute.size(), 1000u);
    }
}

TEST(CellGrid, TinyCutoffUsesAFewCellsAndStaysExact)
{
    // a cut-off far below the atom spacing must not create a huge grid
    const Box  box = triclinicBox();
    const auto x   = randomPositions(200, 1.2, 5);
    int        n   = 0;
    CellGrid(box, x, 1e-4).forEachPair([&](int, int, const Vec3<real>&, real) { n++; });
    EXPECT_EQ(n, 0);
    std::set<std::pair<int, int>> coarse, fine;
    CellGrid(box, x, 0.3).forEachPair([&](int i, int j, const Vec3<real>&, real) { coarse.insert({ i, j }); });
    for (int i = 0; i < 200; i++)
    {
        for (int j = i + 1; j < 200; j++)
        {
            if (norm2(DVec(Pbc(box).dx(x[i], x[j]))) < 0.09)
            {
                fine.insert({ i, j });
            }
        }
    }
    EXPECT_EQ(coarse, fine);
}

TEST(Pbc, MinimumImageInTriclinicBox)
{
    const Box  box = triclinicBox();
    const Pbc  pbc(box);
    const auto x   = randomPositions(50, 1.2, 3);
    for (int i = 1; i < 50; i++)
    {
        const DVec d  = DVec(pbc.dx(x[i], x[0]));
        double     best = 1e30;
        for (int s0 = -3; s0 <= 3; s0++)
            for (int s1 = -3; s1 <= 3; s1++)
                for (int s2 = -3; s2 <= 3; s2++)
                {
                    DVec t = DVec(x[i]) - DVec(x[0]);
                    for (int c = 0; c < 3; c++)
                    {
                        t[c] += s0 * box.vectors()(0, c) + s1 * box.vectors()(1, c) + s2 * box.vectors()(2, c);
                    }
                    best = std::min(best, norm2(t));
                }
        EXPECT_NEAR(norm2(d), best, 1e-10);
    }
}

/* Reciprocal Ewald energy by direct summation over m (the exact value PME
 * approximates), with the same background term for a net charge. */
double ewaldReciprocal(const Box& box, const std::vector<Vec3<real>>& x, const std::vector<double>& q, double beta, int kmax)
{
    const Matrix3& inv    = box.inverse();
    double         energy = 0;
    for (int a = -kmax; a <= kmax; a++)
        for (int b = -kmax; b <= kmax; b++)
            for (int c = -kmax; c <= kmax; c++)
            {
                if (a == 0 && b == 0 && c == 0)
                {
                    continue;
                }
                DVec m;
                for (int e = 0; e < 3; e++)
                {
                    m[e] = a * inv(e, 0) + b * inv(e, 1) + c * inv(e, 2);
                }
                const double         m2 = norm2(m);
                std::complex<double> s  = 0;
                for (size_t j = 0; j < x.size(); j++)
                {
                    s += q[j] * std::exp(std::complex<double>(0, 2 * units::pi * dot(m, DVec(x[j]))));
                }
                energy += std::exp(-units::pi * units::pi * m2 / (beta * beta)) / m2 * std::norm(s);
            }
    double qsum = 0;
    for (double v : q)
    {
        qsum += v;
    }
    return units::one4PiEps0 * (energy / (2 * units::pi * box.volume())
                                - units::pi * qsum * qsum / (2 * box.volume() * beta * beta));
}

TEST(Pme, MatchesDirectEwaldSumForRectangularAndTriclinicBoxes)
{
    Matrix3 rect;
    rect(0, 0) = 2.0;
    rect(1, 1) = 2.2;
    rect(2, 2) = 1.9;
    for (const Box& box : { Box(rect), triclinicBox() })
    {
        const auto          x = randomPositions(24, 1.5, 11);
        std::vector<double> q(x.size());
        for (size_t i = 0; i < q.size(); i++)
        {
            q[i] = (i % 2 ? 0.7 : -0.6) + 0.01 * i; // not neutral
        }
        const double  beta = 3.12;
        PmeParameters p;
        p.order      = 8;
        p.ewaldCoeff = beta;
        p.epsfac     = units::one4PiEps0;
        for (int d = 0; d < 3; d++)
        {
            p.gridSize[d] = 48;
        }
        Pme                     pme(p);
        std::vector<Vec3<real>> f(x.size());
        const double            e     = pme.compute(box, x, q, f);
        const double            exact = ewaldReciprocal(box, x, q, beta, 14);
        EXPECT_NEAR(e, exact, 1e-6 * std::abs(exact)) << "PME " << e << " Ewald " << exact;

        // forces are minus the derivative of the PME energy
        const double h = 1e-6;
        for (int i : { 0, 5, 17 })
        {
            for (int d = 0; d < 3; d++)
            {
                auto xp = x, xm = x;
                xp[i][d] += h;
                xm[i][d] -= h;
                std::vector<Vec3<real>> tmp(x.size());
                const double            dE = (pme.compute(box, xp, q, tmp) - pme.compute(box, xm, q, tmp)) / (2 * h);
                EXPECT_NEAR(f[i][d], -dE, 1e-5 * (1 + std::abs(dE)));
            }
        }
    }
}

TEST(Pme, BsplineModuliOfOrderFourHaveNoZeros)
{
    const auto mod = bsplineModuli(28, 4);
    EXPECT_NEAR(mod[0], 1.0, 1e-14); // the B-spline sums to one
    for (double m : mod)
    {
        EXPECT_GT(m, 0.0);
    }
}

TEST(PmeGrid, ChosenAsGromacsChoosesIt)
{
    auto cube = [](double l) {
        Matrix3 m;
        m(0, 0) = m(1, 1) = m(2, 2) = l;
        return Box(m);
    };
    const int noN[3] = { 0, 0, 0 };
    // GROMACS 2022's choices for the reference systems (0.12 nm spacing)
    EXPECT_EQ(choosePmeGrid(cube(3.1), 0.12, noN, 4).n[0], 28);
    EXPECT_EQ(choosePmeGrid(cube(5.0), 0.12, noN, 4).n[0], 42);
    EXPECT_EQ(choosePmeGrid(cube(7.0), 0.12, noN, 4).n[0], 60);
    EXPECT_EQ(choosePmeGrid(cube(10.0), 0.12, noN, 4).n[0], 84);
    EXPECT_EQ(choosePmeGrid(cube(3.56091), 0.12, noN, 4).n[0], 32);
    // above 84: a factor 4 is kept and 140 is avoided
    EXPECT_EQ(choosePmeGrid(cube(10.3), 0.12, noN, 4).n[0], 96);
    EXPECT_EQ(choosePmeGrid(cube(16.2), 0.12, noN, 4).n[0], 144);
    // triclinic: the length of each box vector counts
    EXPECT_EQ(choosePmeGrid(triclinicBox(), 0.12, noN, 4).n[2], 28); // |c| = 3.32
    const int explicitN[3] = { 36, 40, 45 };
    EXPECT_EQ(choosePmeGrid(cube(3.0), 0.12, explicitN, 6).n[2], 45);
}

TEST(Ewald, CoefficientMatchesTolerance)
{
    const double beta = ewaldCoefficient(1.0, 1e-5);
    EXPECT_NEAR(std::erfc(beta * 1.0), 1e-5, 1e-12);
    EXPECT_NEAR(beta, 3.12341, 1e-5); // GROMACS prints 1/beta = 0.320163 nm
}

/* Total potential of the tiny system, and forces against its derivative,
 * for each electrostatics and LJ modifier. */
class ForceDerivativeTest : public ::testing::TestWithParam<std::string>
{
};

TEST_P(ForceDerivativeTest, ForcesAreMinusTheEnergyGradient)
{
    const std::string data = PUTMD_TEST_DATA;
    InputPaths        paths;
    paths.topology    = data + "/tiny/topol.top";
    paths.coordinates = data + "/tiny/conf.gro";
    paths.mdp         = data + "/tiny/grompp.mdp";
    SystemInputs      in = loadSystem(paths);
    const auto        extra = parseMdp(GetParam(), "param.mdp").options;
    in.mdp.coulombType      = extra.coulombType;
    in.mdp.vdwModifier      = extra.vdwModifier;
    in.mdp.rvdwSwitch       = extra.rvdwSwitch;
    in.mdp.epsilonRf        = extra.epsilonRf;
    // bring two molecules close so that every term is active
    in.coordinates.x[4] = DVec(1.20, 1.35, 1.30);
    in.coordinates.x[5] = DVec(1.30, 1.35, 1.30);
    in.coordinates.x[6] = DVec(1.17, 1.44, 1.30);
    const auto r = computeSinglePoint(in.topology, in.mdp, in.coordinates.box, in.coordinates.x);
    const double h = 1e-5;
    for (int i = 0; i < in.topology.numAtoms; i++)
    {
        for (int d = 0; d < 3; d++)
        {
            auto xp = in.coordinates.x, xm = in.coordinates.x;
            xp[i][d] += h;
            xm[i][d] -= h;
            const double ep = computeSinglePoint(in.topology, in.mdp, in.coordinates.box, xp).energies[EnergyTerm::Potential];
            const double em = computeSinglePoint(in.topology, in.mdp, in.coordinates.box, xm).energies[EnergyTerm::Potential];
            const double dE = (ep - em) / (2 * h);
            EXPECT_NEAR(r.forces[i][d], -dE, 2e-4 * (1 + std::abs(dE))) << "atom " << i << " dim " << d;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Modifiers, ForceDerivativeTest,
                         ::testing::Values("coulombtype = PME\n", "coulombtype = Reaction-Field\nepsilon-rf = 62\n",
                                           "coulombtype = Cut-off\n",
                                           "coulombtype = PME\nvdw-modifier = Force-switch\nrvdw-switch = 0.8\n",
                                           "coulombtype = PME\nvdw-modifier = None\n"));

} // namespace
} // namespace putmd
