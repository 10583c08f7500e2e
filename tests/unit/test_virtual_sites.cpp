/* Unit tests of virtual-site construction and force spreading, every
 * construction type: the spread forces must be minus the gradient, with
 * respect to the constructing atoms, of a potential that acts on the site
 * only (U = g . x_site), computed here by central differences of the
 * construction itself; the spread must conserve the total force and,
 * with the virial correction, give the virial of the real atoms,
 * -1/2 sum_k x_k (x) f_k. The molecule straddles the faces of a triclinic
 * box, so the nearest-image arithmetic is exercised too. */
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "update/virtual_sites.h"

namespace putmd
{
namespace
{

Box skewedBox()
{
    Matrix3 m;
    m(0, 0) = 2.4;
    m(1, 0) = 0.6;
    m(1, 1) = 2.2;
    m(2, 0) = -0.4;
    m(2, 1) = 0.5;
    m(2, 2) = 2.0;
    return Box(m);
}

struct Case
{
    std::string name;
    VirtualSite site;
};

std::vector<Case> cases()
{
    auto make = [](VirtualSite::Kind k, std::vector<int> from, double a, double b, double c) {
        VirtualSite v;
        v.site = 0;
        v.kind = k;
        v.from = std::move(from);
        v.a    = a;
        v.b    = b;
        v.c    = c;
        return v;
    };
    VirtualSite linear = make(VirtualSite::Kind::Linear, { 1, 2, 3 }, 0, 0, 0);
    linear.weights     = { 0.5, 0.3, 0.2 };
    return {
        { "linear3", linear },
        { "2fd", make(VirtualSite::Kind::Fd2, { 1, 2 }, 0.11, 0, 0) },
        { "3fd", make(VirtualSite::Kind::Fd3, { 1, 2, 3 }, 0.43, -0.1, 0) },
        { "3fad", make(VirtualSite::Kind::Fad3, { 1, 2, 3 }, 0.1 * std::cos(2.0), 0.1 * std::sin(2.0), 0) },
        { "3out", make(VirtualSite::Kind::Out3, { 1, 2, 3 }, -0.3, 0.45, 1.7) },
        { "4fdn", make(VirtualSite::Kind::Fdn4, { 1, 2, 3, 4 }, 1.1, 0.9, 0.109) },
    };
}

class VirtualSiteSpread : public ::testing::TestWithParam<Case>
{
};

/* Atoms 1-4 around a corner of the box (some wrapped to the far side);
 * atom 0 is the site. */
std::vector<Vec3<real>> atoms(const Box& box)
{
    std::vector<DVec> local = { { 0, 0, 0 }, { 0.02, -0.03, 0.01 }, { 0.16, 0.02, -0.04 }, { -0.05, 0.13, 0.06 }, { -0.04, -0.07, 0.14 } };
    std::vector<Vec3<real>> x;
    const Matrix3&          m = box.vectors();
    for (size_t k = 0; k < local.size(); k++)
    {
        DVec p = local[k];
        // put alternate atoms one box vector away: nearest images must be used
        if (k % 2 == 1)
        {
            p += DVec(m(0, 0), m(0, 1), m(0, 2));
        }
        if (k == 4)
        {
            p += DVec(m(2, 0), m(2, 1), m(2, 2));
        }
        x.push_back(Vec3<real>(p));
    }
    return x;
}

TEST_P(VirtualSiteSpread, ForcesAreMinusTheGradientAndTheVirialIsTheAtoms)
{
    const Box   box = skewedBox();
    const auto& v   = GetParam().site;
    const std::vector<VirtualSite> list{ v };
    auto x = atoms(box);
    constructVirtualSites(list, x, box);
    const Pbc  pbc(box);
    const DVec g(0.7, -1.3, 0.4); // U = g . x_site; force on the site -g

    // site position as a function of one coordinate of one atom
    auto siteAt = [&](int atom, int dim, double delta) {
        auto y = x;
        DVec p(y[atom]);
        (dim == 0 ? p.x : dim == 1 ? p.y : p.z) += delta;
        y[atom] = Vec3<real>(p);
        constructVirtualSites(list, y, box);
        return DVec(y[0]);
    };
    std::vector<Vec3<real>> f(x.size());
    f[0] = Vec3<real>(g * -1.0);
    Matrix3 virial;
    // the force routines' virial of the site force: -1/2 x_site (x) f_site
    addVirial(virial, DVec(x[0]), DVec(f[0]));
    spreadVirtualSiteForces(list, x, f, box, &virial);

    const double h = 1e-6;
    DVec         total(0, 0, 0);
    for (int a : v.from)
    {
        DVec fa(f[a]);
        total += fa;
        for (int d = 0; d < 3; d++)
        {
            // the site moves with the atom: differences of nearest images
            const DVec   dp   = pbc.dx(siteAt(a, d, h), siteAt(a, d, -h)) * (1 / (2 * h));
            const double grad = g.x * dp.x + g.y * dp.y + g.z * dp.z;
            const double have = d == 0 ? fa.x : d == 1 ? fa.y : fa.z;
            EXPECT_NEAR(have, -grad, 1e-6 * (1 + std::fabs(grad))) << GetParam().name << " atom " << a << " dim " << d;
        }
    }
    EXPECT_NEAR(DVec(f[0]).x, 0, 0) << "the site keeps no force";
    EXPECT_NEAR(total.x, -g.x, 1e-12);
    EXPECT_NEAR(total.y, -g.y, 1e-12);
    EXPECT_NEAR(total.z, -g.z, 1e-12);

    // the real atoms' virial, with their positions as the nearest images
    // of the first constructing atom (the virial is translation-invariant
    // for forces that sum to the site's)
    Matrix3    expected;
    const DVec x0(x[v.from[0]]);
    for (int a : v.from)
    {
        addVirial(expected, x0 + pbc.dx(DVec(x[a]), x0), DVec(f[a]));
    }
    // the site-force virial above used the site's own image
    Matrix3 siteImage;
    addVirial(siteImage, x0 + pbc.dx(DVec(x[0]), x0) - DVec(x[0]), DVec(g * -1.0));
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_NEAR(virial(r, c) + siteImage(r, c), expected(r, c), 1e-10) << GetParam().name << " virial " << r << c;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, VirtualSiteSpread, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

} // namespace
} // namespace putmd
