/* Unit tests of the constraint solvers (SETTLE, LINCS, SHAKE) on small
 * molecules built with exact bond lengths: a hexane chain with h-bond
 * constraints, a branched all-bond molecule, rigid waters; whole or split
 * over the faces of a triclinic box. The unconstrained step is a random
 * displacement of about 0.01 nm per atom. Every expectation is computed
 * here independently of the solvers (distances, centres of mass, the
 * virial from the displacements) or against a second algorithm. */
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <random>
#include <string>

#include "core/units.h"
#include "update/constraint_set.h"
#include "update/constraints.h"
#include "update/settle.h"
#include "settle_twins.h"

namespace putmd
{
namespace
{

constexpr double massC = 12.011, massH = 1.008, massO = 15.9994, massN = 14.007;
constexpr double waterDoh = 0.1, waterDhh = 0.16330;

Box triclinicBox()
{
    Matrix3 m;
    m(0, 0) = 2.2;
    m(1, 0) = 0.7;
    m(1, 1) = 2.0;
    m(2, 0) = -0.5;
    m(2, 1) = 0.6;
    m(2, 2) = 1.9;
    return Box(m);
}

DVec randomUnit(std::mt19937& rng)
{
    std::normal_distribution<double> g;
    const DVec                       v{ g(rng), g(rng), g(rng) };
    return v * (1 / norm(v));
}

DVec unitPerpendicular(const DVec& ref, std::mt19937& rng)
{
    const DVec p = cross(ref, randomUnit(rng));
    return p * (1 / norm(p));
}

/* Atoms, constraints and settles of a small test system; xWhole keeps every
 * molecule whole, x is the same wrapped into the box. */
struct TestSystem
{
    Topology                      top;
    Box                           box = triclinicBox();
    std::vector<DVec>             xWhole;
    std::vector<RVec>             x;
    std::vector<std::vector<int>> molecules;

    int addAtom(double mass, const DVec& pos, const std::string& name)
    {
        top.mass.push_back(mass);
        top.atomName.push_back(name);
        top.residueName.push_back("MOL");
        top.residueNumber.push_back(int(molecules.size()));
        xWhole.push_back(pos);
        molecules.back().push_back(top.numAtoms);
        return top.numAtoms++;
    }
    std::vector<real> invMass() const
    {
        std::vector<real> im;
        for (double m : top.mass)
        {
            im.push_back(real(1 / m));
        }
        return im;
    }
    void wrap()
    {
        x.clear();
        for (const auto& p : xWhole)
        {
            DVec s = box.toFractional(p);
            for (int d = 0; d < 3; d++)
            {
                s[d] -= std::floor(s[d]);
            }
            x.push_back(RVec(box.fromFractional(s)));
        }
    }
};

/* Atom k bonds to parent[k] (-1 for the root) at length[k]. Bonds leave an
 * atom at 109.5 degrees to its first bond, 120 degrees apart in azimuth. */
struct TreeSpec
{
    std::vector<int>         parent;
    std::vector<double>      mass, length;
    std::vector<bool>        constrained;
    std::vector<std::string> name;

    void add(int p, double m, double len, bool c, const std::string& n)
    {
        parent.push_back(p);
        mass.push_back(m);
        length.push_back(len);
        constrained.push_back(c);
        name.push_back(n);
    }
};

void addTree(TestSystem& s, const TreeSpec& spec, const DVec& origin, std::mt19937& rng)
{
    s.molecules.emplace_back();
    const double      tet = 109.47 * units::deg2rad;
    const size_t      n   = spec.parent.size();
    std::vector<int>  global(n);
    std::vector<DVec> ref(n), perp(n);
    std::vector<int>  placed(n, 0);
    std::uniform_real_distribution<double> u(0, 2 * units::pi);
    std::vector<double> phase(n);
    for (size_t k = 0; k < n; k++)
    {
        phase[k]  = u(rng);
        const int p = spec.parent[k];
        DVec pos = origin;
        if (p >= 0)
        {
            DVec dir;
            if (placed[p] == 0 && spec.parent[p] < 0)
            {
                dir     = randomUnit(rng); // the root's first bond sets its reference
                ref[p]  = dir;
                perp[p] = unitPerpendicular(dir, rng);
            }
            else
            {
                const double phi = phase[p] + (placed[p] - (spec.parent[p] < 0 ? 1 : 0)) * 2 * units::pi / 3;
                const DVec   e2  = cross(ref[p], perp[p]);
                dir = ref[p] * std::cos(tet) + (perp[p] * std::cos(phi) + e2 * std::sin(phi)) * std::sin(tet);
            }
            placed[p]++;
            pos     = s.xWhole[global[p]] + dir * spec.length[k];
            ref[k]  = -dir;
            perp[k] = unitPerpendicular(ref[k], rng);
            if (spec.constrained[k])
            {
                s.top.constraints.push_back({ global[p], int(s.xWhole.size()), spec.length[k] });
            }
        }
        global[k] = s.addAtom(spec.mass[k], pos, spec.name[k]);
    }
}

/* Hexane: C-C bonds free, the 14 C-H bonds constrained (h-bonds). */
TreeSpec hexane()
{
    TreeSpec t;
    t.add(-1, massC, 0, false, "C1");
    for (int c = 1; c < 6; c++)
    {
        t.add(c - 1, massC, 0.153, false, "C" + std::to_string(c + 1));
    }
    for (int c = 0; c < 6; c++)
    {
        for (int h = 0; h < (c == 0 || c == 5 ? 3 : 2); h++)
        {
            t.add(c, massH, 0.109, true, "H" + std::to_string(c + 1) + std::to_string(h + 1));
        }
    }
    return t;
}

/* A valine-like branched molecule with every bond constrained. */
TreeSpec branched()
{
    TreeSpec t;
    t.add(-1, massN, 0, true, "N");
    t.add(0, massH, 0.101, true, "H");
    t.add(0, massC, 0.147, true, "CA");
    t.add(2, massH, 0.109, true, "HA");
    t.add(2, massC, 0.153, true, "CB");
    t.add(2, massC, 0.152, true, "C");
    t.add(5, massO, 0.123, true, "O");
    t.add(4, massH, 0.109, true, "HB");
    t.add(4, massC, 0.153, true, "CG1");
    t.add(4, massC, 0.153, true, "CG2");
    for (int g : { 8, 9 })
    {
        for (int h = 0; h < 3; h++)
        {
            t.add(g, massH, 0.109, true, "HG" + std::to_string(h));
        }
    }
    return t;
}

void addWater(TestSystem& s, const DVec& o, std::mt19937& rng)
{
    s.molecules.emplace_back();
    const DVec   w  = randomUnit(rng);
    const DVec   e  = unitPerpendicular(w, rng);
    const double rc = waterDhh / 2, h = std::sqrt(waterDoh * waterDoh - rc * rc);
    const int    io = s.addAtom(massO, o, "OW");
    const int    h1 = s.addAtom(massH, o + w * h - e * rc, "HW1");
    const int    h2 = s.addAtom(massH, o + w * h + e * rc, "HW2");
    s.top.settles.push_back({ io, h1, h2, waterDoh, waterDhh });
}

/* The molecules near box corners and faces (split) or inside (whole). */
/* The point at box fractions f of the box (f[0] a + f[1] b + f[2] c). */
DVec atFractions(const Box& box, const double (&f)[3])
{
    const Matrix3& b = box.vectors();
    return b.row(0) * f[0] + b.row(1) * f[1] + b.row(2) * f[2];
}

TestSystem makeSystem(bool split, unsigned seed, bool withWaters = true, bool withTrees = true)
{
    std::mt19937 rng(seed);
    TestSystem   s;
    const Matrix3& b = s.box.vectors();
    const DVec     a = b.row(0), bb = b.row(1), c = b.row(2);
    const DVec     centre = (a + bb + c) * 0.5;
    const DVec sites[6] = { { 0.02, 0.03, 0.01 }, a * 0.99 + bb * 0.5, bb * 0.995 + c * 0.3 + a * 0.2,
                            c * 0.99 + a * 0.6 + bb * 0.6, a * 0.98 + bb * 0.02 + c * 0.97, bb + c * 0.01 };
    auto where = [&](int k) { return split ? sites[k % 6] : centre + DVec{ 0.45 * (k % 3) - 0.45, 0.4 * (k % 2), 0.3 * (k % 4) - 0.45 }; };
    int k = 0;
    if (withTrees)
    {
        addTree(s, hexane(), where(k++), rng);
        addTree(s, branched(), where(k++), rng);
    }
    if (withWaters)
    {
        for (int w = 0; w < 4; w++)
        {
            addWater(s, where(k++) + DVec{ 0.01 * w, -0.01 * w, 0.02 }, rng);
        }
    }
    s.wrap();
    return s;
}

std::vector<RVec> perturbed(const std::vector<RVec>& x, double amount, unsigned seed)
{
    std::mt19937                           rng(seed);
    std::uniform_real_distribution<double> u(-amount, amount);
    std::vector<RVec>                      xp = x;
    for (auto& p : xp)
    {
        p += RVec(real(u(rng)), real(u(rng)), real(u(rng)));
    }
    return xp;
}

/* Largest relative deviation, computed here (not by the solver). */
double maxDeviation(const TestSystem& s, const std::vector<RVec>& x)
{
    const Pbc pbc(s.box);
    double    worst = 0;
    auto      check = [&](int i, int j, double d) {
        worst = std::max(worst, std::abs(norm(pbc.dx(x[i], x[j])) - d) / d);
    };
    for (const auto& c : s.top.constraints)
    {
        check(c.i, c.j, c.length);
    }
    for (const auto& w : s.top.settles)
    {
        check(w.o, w.h1, w.doh);
        check(w.o, w.h2, w.doh);
        check(w.h1, w.h2, w.dhh);
    }
    return worst;
}

double maxDifference(const std::vector<RVec>& a, const std::vector<RVec>& b)
{
    double worst = 0;
    for (size_t i = 0; i < a.size(); i++)
    {
        worst = std::max(worst, norm(a[i] - b[i]));
    }
    return worst;
}

ConstraintSettings shake(double tol = 1e-13)
{
    ConstraintSettings s;
    s.algorithm = ConstraintAlgorithm::Shake;
    s.shakeTol  = tol;
    return s;
}

ConstraintSettings lincs(int order, int iter)
{
    ConstraintSettings s;
    s.lincsOrder = order;
    s.lincsIter  = iter;
    return s;
}

struct Result
{
    std::vector<RVec> xp, v;
    Matrix3           virial;
};

constexpr double dt = 0.002;

Result constrain(const TestSystem& s, const ConstraintSettings& set, const std::vector<RVec>& xp)
{
    Constraints cons(s.top, set, s.invMass());
    Result      r;
    r.xp = xp;
    r.v.assign(xp.size(), RVec(0.5, -0.25, 1.0));
    cons.apply(s.x, r.xp, &r.v, dt, s.box, &r.virial);
    return r;
}

struct Algorithm
{
    const char*        name;
    ConstraintSettings settings;
};

const Algorithm algorithms[] = { { "SHAKE", shake() }, { "LINCS 4/1", lincs(4, 1) }, { "LINCS 8/4", lincs(8, 4) } };

TEST(ConstraintSetup, CountsConstraintsAndRejectsBadInput)
{
    const TestSystem s = makeSystem(false, 1);
    Constraints      c(s.top, lincs(4, 1), s.invMass());
    EXPECT_FALSE(c.empty());
    EXPECT_EQ(c.numConstraints(), 3 * 4 + 14 + 15);
    EXPECT_EQ(int(s.top.constraints.size()), 14 + 15);

    Topology none;
    none.numAtoms = 2;
    EXPECT_TRUE(Constraints(none, shake(), { 1, 1 }).empty());
    EXPECT_EQ(Constraints(none, shake(), { 1, 1 }).numConstraints(), 0);

    TestSystem bad = s;
    bad.top.mass[bad.top.settles[0].h2] = 2.0;
    EXPECT_THROW(Constraints(bad.top, shake(), bad.invMass()), ConstraintError);
    bad = s;
    bad.top.constraints.push_back(bad.top.constraints[3]);
    EXPECT_THROW(Constraints(bad.top, shake(), bad.invMass()), ConstraintError);
    bad = s;
    bad.top.constraints[0].j = bad.top.numAtoms;
    EXPECT_THROW(Constraints(bad.top, shake(), bad.invMass()), ConstraintError);
    EXPECT_THROW(Constraints(s.top, lincs(0, 1), s.invMass()), ConstraintError);
}

TEST(Settle, MakesSplitWatersInTriclinicBoxRigid)
{
    const TestSystem s  = makeSystem(true, 2, true, false);
    const auto       xp = perturbed(s.x, 0.01, 3);
    ASSERT_GT(maxDeviation(s, xp), 1e-2);
    const Result r = constrain(s, lincs(4, 1), xp);
    EXPECT_LT(maxDeviation(s, r.xp), 1e-10);
    Constraints c(s.top, lincs(4, 1), s.invMass());
    EXPECT_NEAR(c.maxRelativeDeviation(r.xp, s.box), maxDeviation(s, r.xp), 1e-14);
    EXPECT_NEAR(c.maxRelativeDeviation(xp, s.box), maxDeviation(s, xp), 1e-14);
}

/* Some constraint joins atoms on opposite sides of the box. */
bool isSplit(const TestSystem& s)
{
    for (const auto& c : s.top.constraints)
    {
        if (norm(s.x[c.i] - s.x[c.j]) > 0.5)
        {
            return true;
        }
    }
    return false;
}

TEST(Settle, VectorisedBlocksMatchThePlainTwin)
{
    // 21 waters (two full blocks of 8 and a part block), many split over
    // the faces of the triclinic box, perturbed by 0.01 nm
    std::mt19937 rng(17);
    TestSystem   s;
    std::uniform_real_distribution<double> u(0, 1);
    for (int w = 0; w < 21; w++)
    {
        // near a corner or face for one in three, anywhere otherwise
        const double f[3] = { w % 3 == 0 ? 0.995 : u(rng), w % 3 == 0 ? 0.01 : u(rng), u(rng) };
        addWater(s, atFractions(s.box, f), rng);
    }
    s.wrap();
    const auto xp = perturbed(s.x, 0.01, 5);
    const constraint_detail::AtomNames names(s.top);
    constraint_detail::SettleSet       set(s.top.settles, s.invMass(), s.top.numAtoms, names);
    const Pbc                          pbc(s.box);
    const test::SettleOutcome plain = test::settleOnce(set, false, s.x, xp, dt, pbc, names);
    const test::SettleOutcome fast  = test::settleOnce(set, true, s.x, xp, dt, pbc, names);
    const std::vector<RVec>&  xPlain = plain.x, &vPlain = plain.v, &xFast = fast.x, &vFast = fast.v;
    const Matrix3&            virPlain = plain.virial, &virFast = fast.virial;
    EXPECT_LT(maxDeviation(s, xFast), 1e-10);
    double worstX = 0, worstV = 0, moved = 0;
    for (size_t i = 0; i < xp.size(); i++)
    {
        worstX = std::max(worstX, double(norm(xFast[i] - xPlain[i])));
        worstV = std::max(worstV, double(norm(vFast[i] - vPlain[i])));
        moved  = std::max(moved, double(norm(xPlain[i] - xp[i])));
    }
    ASSERT_GT(moved, 1e-3);
    // the same double arithmetic in another order
    EXPECT_LT(worstX, 1e-12 * 4);
    EXPECT_LT(worstV, 1e-12 * 4 / dt);
    double scale = 0;
    for (int r = 0; r < 3; r++)
    {
        scale = std::max(scale, std::abs(virPlain(r, r)));
    }
    ASSERT_GT(scale, 0);
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_NEAR(virFast(r, c), virPlain(r, c), 1e-9 * scale) << r << c;
        }
    }
}

TEST(Shake, SatisfiesConstraintsOfSplitMoleculesToTolerance)
{
    const TestSystem s = makeSystem(true, 4);
    ASSERT_TRUE(isSplit(s));
    for (unsigned seed : { 5u, 6u, 7u })
    {
        const auto xp = perturbed(s.x, 0.01, seed);
        ASSERT_GT(maxDeviation(s, xp), 1e-2);
        EXPECT_LT(maxDeviation(s, constrain(s, shake(), xp).xp), 1e-10);
        // the tolerance is honoured, not exceeded by much
        const double loose = maxDeviation(s, constrain(s, shake(1e-4), xp).xp);
        EXPECT_LT(loose, 1.1e-4);
        EXPECT_GT(loose, 1e-10);
    }
}

TEST(Lincs, AccuracyFollowsOrderAndIterations)
{
    const TestSystem s = makeSystem(true, 8);
    ASSERT_TRUE(isSplit(s));
    for (unsigned seed : { 9u, 10u, 11u })
    {
        const auto   xp      = perturbed(s.x, 0.01, seed);
        const double dev41   = maxDeviation(s, constrain(s, lincs(4, 1), xp).xp);
        const double dev84   = maxDeviation(s, constrain(s, lincs(8, 4), xp).xp);
        const double dev40   = maxDeviation(s, constrain(s, lincs(4, 0), xp).xp);
        // a step of up to 0.035 nm on 0.1 nm bonds rotates some of them by
        // 15-20 degrees: a harsh test of the rotational correction
        EXPECT_LT(dev41, 1e-3) << "seed " << seed;
        EXPECT_LT(dev84, 1e-7) << "seed " << seed;
        EXPECT_LT(dev84, 1e-3 * dev41) << "seed " << seed;
        EXPECT_LT(dev41, dev40) << "the iteration corrects rotational lengthening";
        // an ordinary MD step (~0.002 nm) with the GROMACS defaults
        EXPECT_LT(maxDeviation(s, constrain(s, lincs(4, 1), perturbed(s.x, 0.002, seed)).xp), 5e-5);
    }
}

/* LINCS by threads (over constraints, and over atoms for the corrections)
 * gives the one-thread result bit for bit: 224 molecules with rigid
 * triangles and shared atoms (3,248 constraints, so that three threads each
 * take a share of at least 1,024), split over the box faces. */
TEST(Lincs, ThreadsGiveTheOneThreadResultBitForBit)
{
    std::mt19937 rng(21);
    TestSystem   s;
    std::uniform_real_distribution<double> u(0, 1);
    for (int m = 0; m < 224; m++)
    {
        const double f[3] = { m % 4 == 0 ? 0.995 : u(rng), u(rng), m % 5 == 0 ? 0.005 : u(rng) };
        addTree(s, m % 2 ? hexane() : branched(), atFractions(s.box, f), rng);
    }
    s.wrap();
    ASSERT_GE(s.top.constraints.size(), 3u * 1024);
    const auto   xp      = perturbed(s.x, 0.01, 23);
    const int    saved   = omp_get_max_threads();
    omp_set_num_threads(1);
    const Result one = constrain(s, lincs(4, 1), xp);
    omp_set_num_threads(3);
    const Result three = constrain(s, lincs(4, 1), xp);
    omp_set_num_threads(saved);
    EXPECT_LT(maxDeviation(s, one.xp), 1e-3);
    ASSERT_GT(maxDifference(one.xp, xp), 1e-3);
    EXPECT_EQ(maxDifference(three.xp, one.xp), 0);
    EXPECT_EQ(maxDifference(three.v, one.v), 0);
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_EQ(three.virial(r, c), one.virial(r, c)) << r << c;
        }
    }
    // two constraints whose atoms coincide at the start, in different
    // threads' shares: the error names the first, as one thread does
    const auto&        cons  = s.top.constraints;
    const size_t       early = 5, late = cons.size() - 5;
    std::vector<RVec> x = s.x;
    x[cons[early].j] = x[cons[early].i];
    x[cons[late].j]  = x[cons[late].i];
    TestSystem broken = s;
    broken.x          = x;
    const constraint_detail::AtomNames names(s.top);
    for (int threads : { 1, 3 })
    {
        omp_set_num_threads(threads);
        try
        {
            constrain(broken, lincs(4, 1), xp);
            ADD_FAILURE() << "no error with " << threads << " threads";
        }
        catch (const ConstraintError& e)
        {
            const std::string what = e.what();
            EXPECT_NE(what.find("coincide"), std::string::npos) << what;
            EXPECT_NE(what.find(names.describe(cons[early].i)), std::string::npos) << what;
            EXPECT_NE(what.find(names.describe(cons[early].j)), std::string::npos) << what;
        }
    }
    omp_set_num_threads(saved);
}

/* A few bond constraints beside many waters: one thread solves the bonds
 * while the others start on the waters (Constraints::setBondsBesideWaters).
 * The same constrained system as SETTLE and then the bonds, to the
 * rounding of SETTLE's blocks of waters (which fall differently among the
 * threads), for LINCS and SHAKE and 2-3 threads; errors of either kind
 * still name their atoms. */
TEST(Constraints, BondsBesideWatersGiveWhatOneAfterTheOtherGives)
{
    std::mt19937                           rng(5);
    std::uniform_real_distribution<double> u(0.05, 0.95);
    TestSystem                             s;
    for (int m = 0; m < 6; m++)
    {
        const double f[3] = { u(rng), u(rng), m % 3 == 0 ? 0.995 : u(rng) };
        addTree(s, m % 2 ? hexane() : branched(), atFractions(s.box, f), rng);
    }
    for (int w = 0; w < 301; w++)
    {
        const double f[3] = { w % 7 == 0 ? 0.999 : u(rng), u(rng), u(rng) };
        addWater(s, atFractions(s.box, f), rng);
    }
    s.wrap();
    ASSERT_GT(s.top.constraints.size(), 20u);
    const auto xp    = perturbed(s.x, 0.01, 29);
    const int  saved = omp_get_max_threads();
    for (const auto& alg : { algorithms[0], algorithms[1] })
    {
        for (int threads : { 2, 3 })
        {
            omp_set_num_threads(threads);
            Result r[2];
            for (int beside : { 0, 1 })
            {
                Constraints cons(s.top, alg.settings, s.invMass());
                cons.setBondsBesideWaters(beside == 1);
                r[beside].xp = xp;
                r[beside].v.assign(xp.size(), RVec(0.5, -0.25, 1.0));
                cons.apply(s.x, r[beside].xp, &r[beside].v, dt, s.box, &r[beside].virial);
            }
            ASSERT_GT(maxDifference(r[0].xp, xp), 1e-3) << alg.name;
            EXPECT_LT(maxDeviation(s, r[1].xp), 1e-3) << alg.name;
            // float positions of about a nanometre: a few roundings
            EXPECT_LT(maxDifference(r[1].xp, r[0].xp), 1e-6) << alg.name << ", " << threads << " threads";
            EXPECT_LT(maxDifference(r[1].v, r[0].v), 1e-6 / dt) << alg.name << ", " << threads << " threads";
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    EXPECT_NEAR(r[1].virial(a, b), r[0].virial(a, b), 1e-5 * std::abs(r[0].virial(a, a)) + 1e-6)
                        << alg.name << ", " << threads << " threads";
                }
            }
        }
    }
    // a bond's atoms coinciding and a water's oxygen on its hydrogen: each
    // named, through the concurrent path
    const constraint_detail::AtomNames names(s.top);
    const auto&                        c0 = s.top.constraints[3];
    const auto&                        w0 = s.top.settles[250];
    for (int which : { 0, 1 })
    {
        TestSystem broken = s;
        if (which == 0)
        {
            broken.x[c0.j] = broken.x[c0.i];
        }
        std::vector<RVec> xpBroken = xp;
        if (which == 1)
        {
            xpBroken[w0.h1] = xpBroken[w0.o];
            xpBroken[w0.h2] = xpBroken[w0.o];
        }
        omp_set_num_threads(2);
        Constraints cons(broken.top, lincs(4, 1), broken.invMass());
        std::vector<RVec> v(xp.size());
        try
        {
            cons.apply(broken.x, xpBroken, &v, dt, broken.box, nullptr);
            ADD_FAILURE() << "no error for the broken " << (which == 0 ? "bond" : "water");
        }
        catch (const ConstraintError& e)
        {
            const std::string what = e.what();
            const int         atom = which == 0 ? c0.i : w0.o;
            EXPECT_NE(what.find(which == 0 ? "coincide" : "SETTLE"), std::string::npos) << what;
            EXPECT_NE(what.find(names.describe(atom)), std::string::npos) << what;
        }
    }
    omp_set_num_threads(saved);
}

TEST(Lincs, AgreesWithShake)
{
    const TestSystem s  = makeSystem(true, 12);
    const auto       xp = perturbed(s.x, 0.01, 13);
    const Result     sh = constrain(s, shake(), xp);
    const Result     l8 = constrain(s, lincs(8, 4), xp);
    const Result     l4 = constrain(s, lincs(4, 1), xp);
    EXPECT_LT(maxDifference(sh.xp, l8.xp), 1e-9);
    EXPECT_LT(maxDifference(sh.xp, l4.xp), 5e-5);
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_NEAR(l8.virial(r, c), sh.virial(r, c), 1e-6 * std::abs(sh.virial(0, 0)) + 1e-9);
        }
    }
}

/* The waters as three SHAKE constraints each must give SETTLE's answer. */
TEST(Settle, AgreesWithShakeOnWaters)
{
    const TestSystem s  = makeSystem(true, 14, true, false);
    TestSystem       asBonds = s;
    asBonds.top.settles.clear();
    for (const auto& w : s.top.settles)
    {
        asBonds.top.constraints.push_back({ w.o, w.h1, w.doh });
        asBonds.top.constraints.push_back({ w.o, w.h2, w.doh });
        asBonds.top.constraints.push_back({ w.h1, w.h2, w.dhh });
    }
    const auto   xp = perturbed(s.x, 0.01, 15);
    const Result st = constrain(s, shake(), xp);
    const Result sh = constrain(asBonds, shake(), xp);
    EXPECT_LT(maxDifference(st.xp, sh.xp), 1e-11);
    EXPECT_LT(maxDifference(st.v, sh.v), 1e-8);
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_NEAR(st.virial(r, c), sh.virial(r, c), 1e-8 * std::abs(sh.virial(0, 0)));
        }
    }
}

TEST(Constraint, ApplyingTwiceChangesNothing)
{
    const TestSystem s  = makeSystem(true, 16);
    const auto       xp = perturbed(s.x, 0.01, 17);
    for (const auto& alg : algorithms)
    {
        const Result once  = constrain(s, alg.settings, xp);
        const Result twice = constrain(s, alg.settings, once.xp);
        const double tol   = std::string(alg.name) == "LINCS 4/1" ? 1e-5 : 1e-10;
        EXPECT_LT(maxDifference(once.xp, twice.xp), tol) << alg.name;
        EXPECT_GT(maxDifference(once.xp, xp), 1e-3) << alg.name;
    }
}

TEST(Constraint, CorrectionKeepsCentreOfMassAndMomentum)
{
    const TestSystem s  = makeSystem(true, 18);
    const auto       xp = perturbed(s.x, 0.01, 19);
    for (const auto& alg : algorithms)
    {
        const Result r = constrain(s, alg.settings, xp);
        for (const auto& mol : s.molecules)
        {
            DVec   dCom, dMomentum;
            double moved = 0;
            for (int a : mol)
            {
                const double m = s.top.mass[a];
                dCom += DVec(r.xp[a] - xp[a]) * m;
                dMomentum += DVec(r.v[a] - RVec(0.5, -0.25, 1.0)) * m;
                moved += m * norm(DVec(r.xp[a] - xp[a]));
            }
            ASSERT_GT(moved, 1e-3);
            EXPECT_LT(norm(dCom), 1e-12 * moved) << alg.name;
            EXPECT_LT(norm(dMomentum), 1e-12 * moved / dt) << alg.name;
        }
    }
}

TEST(Constraint, VelocityCorrectionIsDisplacementOverDt)
{
    const TestSystem s  = makeSystem(true, 20);
    const auto       xp = perturbed(s.x, 0.01, 21);
    for (const auto& alg : algorithms)
    {
        const Result r = constrain(s, alg.settings, xp);
        for (size_t a = 0; a < xp.size(); a++)
        {
            const RVec expected = RVec(0.5, -0.25, 1.0) + (r.xp[a] - xp[a]) * (1 / dt);
            EXPECT_LT(norm(r.v[a] - expected), 1e-10) << alg.name << " atom " << a;
        }
    }
}

/* -0.5 sum_a x_a (x) f_a with whole molecules and f = m dx / dt^2. */
Matrix3 virialFromDisplacements(const TestSystem& s, const std::vector<RVec>& before, const std::vector<RVec>& after)
{
    Matrix3 vir;
    for (int a = 0; a < s.top.numAtoms; a++)
    {
        const DVec f = DVec(after[a] - before[a]) * (s.top.mass[a] / (dt * dt));
        for (int r = 0; r < 3; r++)
        {
            for (int c = 0; c < 3; c++)
            {
                vir(r, c) -= 0.5 * s.xWhole[a][r] * f[c];
            }
        }
    }
    return vir;
}

TEST(Constraint, VirialIsMinusHalfPositionTimesConstraintForce)
{
    const TestSystem s  = makeSystem(true, 22);
    const auto       xp = perturbed(s.x, 0.01, 23);
    for (const auto& alg : algorithms)
    {
        const Result  r        = constrain(s, alg.settings, xp);
        const Matrix3 expected = virialFromDisplacements(s, xp, r.xp);
        const double  scale    = std::abs(expected(0, 0)) + std::abs(expected(1, 1)) + std::abs(expected(2, 2));
        ASSERT_GT(scale, 1);
        for (int i = 0; i < 3; i++)
        {
            for (int j = 0; j < 3; j++)
            {
                EXPECT_NEAR(r.virial(i, j), expected(i, j), 1e-9 * scale) << alg.name << " " << i << j;
                EXPECT_NEAR(r.virial(i, j), r.virial(j, i), 1e-9 * scale) << alg.name;
            }
        }
    }
}

/* A diatomic rotating freely: x' = x + v dt with v perpendicular to the
 * bond. Exactly, the bond shrinks along itself to sqrt(d^2 - w^2), w = |v_rel|
 * dt, so Xi = 0.5 mu_red (1 - sqrt(1 - w^2/d^2)) d^2 / dt^2 rhat (x) rhat. */
TEST(Constraint, VirialOfRotatingDiatomicIsAnalytic)
{
    TestSystem s;
    Matrix3    cubic;
    cubic(0, 0) = cubic(1, 1) = cubic(2, 2) = 3.0;
    s.box = Box(cubic);
    s.molecules.emplace_back();
    const double d = 0.12, m1 = 12.0, m2 = 3.0;
    const DVec   rhat = DVec{ 1, 2, 2 } * (1.0 / 3);
    const DVec   perp = DVec{ 2, 1, -2 } * (1.0 / 3);
    s.addAtom(m1, DVec{ 2.95, 1.0, 0.04 } + rhat * (d * m2 / (m1 + m2)), "A");
    s.addAtom(m2, DVec{ 2.95, 1.0, 0.04 } - rhat * (d * m1 / (m1 + m2)), "B");
    s.top.constraints.push_back({ 0, 1, d });
    s.wrap();
    const double vRel = 2.0; // nm/ps
    auto         xp   = s.x;
    xp[0] += RVec(perp * (vRel * dt * m2 / (m1 + m2)));
    xp[1] -= RVec(perp * (vRel * dt * m1 / (m1 + m2)));
    const double w = vRel * dt, mu = m1 * m2 / (m1 + m2);
    const double xi = 0.5 * mu * (1 - std::sqrt(1 - w * w / (d * d))) * d * d / (dt * dt);
    for (const auto& alg : algorithms)
    {
        const Result r   = constrain(s, alg.settings, xp);
        const double tol = std::string(alg.name) == "LINCS 4/1" ? 2e-3 : 1e-8;
        for (int i = 0; i < 3; i++)
        {
            for (int j = 0; j < 3; j++)
            {
                EXPECT_NEAR(r.virial(i, j), xi * rhat[i] * rhat[j], tol * xi) << alg.name << " " << i << j;
            }
        }
    }
}

TEST(Constraint, ResultDoesNotDependOnPeriodicImages)
{
    const TestSystem s  = makeSystem(true, 24);
    const auto       xp = perturbed(s.x, 0.01, 25);
    std::mt19937     rng(26);
    std::uniform_int_distribution<int> shiftOf(-1, 1);
    std::vector<RVec> lattice(xp.size());
    const Matrix3&    b = s.box.vectors();
    for (auto& l : lattice)
    {
        l = RVec(b.row(0) * double(shiftOf(rng)) + b.row(1) * double(shiftOf(rng)) + b.row(2) * double(shiftOf(rng)));
    }
    auto xpShifted = xp;
    auto xShifted  = s.x;
    for (size_t a = 0; a < xp.size(); a++)
    {
        xpShifted[a] += lattice[a];
        xShifted[(a + 3) % xp.size()] += lattice[a];
    }
    TestSystem sx = s;
    sx.x          = xShifted;
    for (const auto& alg : algorithms)
    {
        const Result plain   = constrain(s, alg.settings, xp);
        Result       shifted = constrain(s, alg.settings, xpShifted);
        for (size_t a = 0; a < xp.size(); a++)
        {
            shifted.xp[a] -= lattice[a];
        }
        EXPECT_LT(maxDifference(plain.xp, shifted.xp), 1e-12) << alg.name;
        EXPECT_LT(maxDifference(plain.xp, constrain(sx, alg.settings, xp).xp), 1e-12) << alg.name;
    }
}

TEST(Constraint, ProjectVelocitiesRemovesRelativeVelocityAlongConstraints)
{
    const TestSystem s = makeSystem(true, 27);
    std::mt19937     rng(28);
    std::normal_distribution<double> g;
    std::vector<RVec> v(s.x.size());
    for (auto& u : v)
    {
        u = RVec(real(g(rng)), real(g(rng)), real(g(rng)));
    }
    const Pbc   pbc(s.box);
    auto        along = [&](const std::vector<RVec>& vel, int i, int j) {
        const RVec r = pbc.dx(s.x[i], s.x[j]);
        return dot(vel[i] - vel[j], r) / norm(r);
    };
    for (const auto& alg : algorithms)
    {
        Constraints c(s.top, alg.settings, s.invMass());
        auto        p = v;
        c.projectVelocities(s.x, p, s.box);
        double worst = 0, before = 0;
        for (const auto& k : s.top.constraints)
        {
            worst  = std::max(worst, std::abs(along(p, k.i, k.j)));
            before = std::max(before, std::abs(along(v, k.i, k.j)));
        }
        for (const auto& w : s.top.settles)
        {
            for (auto [i, j] : { std::pair{ w.o, w.h1 }, std::pair{ w.o, w.h2 }, std::pair{ w.h1, w.h2 } })
            {
                worst = std::max(worst, std::abs(along(p, i, j)));
            }
        }
        EXPECT_GT(before, 0.5);
        EXPECT_LT(worst, 1e-10) << alg.name;
        for (const auto& mol : s.molecules)
        {
            DVec dp;
            for (int a : mol)
            {
                dp += DVec(p[a] - v[a]) * s.top.mass[a];
            }
            EXPECT_LT(norm(dp), 1e-10) << alg.name;
        }
        auto again = p;
        c.projectVelocities(s.x, again, s.box);
        EXPECT_LT(maxDifference(p, again), 1e-10) << alg.name;
    }
}

/* Rigid-body motion (translation plus rotation of each whole molecule)
 * satisfies every constraint and must be left alone. */
TEST(Constraint, ProjectVelocitiesKeepsRigidBodyMotion)
{
    const TestSystem s = makeSystem(true, 29);
    std::mt19937     rng(30);
    std::vector<RVec> v(s.x.size());
    for (const auto& mol : s.molecules)
    {
        const DVec omega = randomUnit(rng) * 3.0, vel = randomUnit(rng);
        for (int a : mol)
        {
            v[a] = RVec(vel + cross(omega, s.xWhole[a] - s.xWhole[mol[0]]));
        }
    }
    Constraints c(s.top, shake(), s.invMass());
    auto        p = v;
    c.projectVelocities(s.x, p, s.box);
    EXPECT_LT(maxDifference(p, v), 1e-12);
}

TEST(Lincs, RotationOverThirtyDegreesThrowsNamingTheAtoms)
{
    TestSystem s;
    s.molecules.emplace_back();
    for (int a = 0; a < 10; a++)
    {
        s.addAtom(a == 3 ? massC : massH, DVec{ 0.3 * a, 1.0, 1.0 }, "X" + std::to_string(a));
    }
    const double d = 0.109;
    s.xWhole[8]    = s.xWhole[3] + DVec{ d, 0, 0 };
    s.top.constraints.push_back({ 3, 8, d });
    s.wrap();
    auto rotated = [&](double degrees) {
        auto         xp = s.x;
        const double t  = degrees * units::deg2rad;
        xp[8]           = xp[3] + RVec(DVec{ d * std::cos(t), d * std::sin(t), 0 });
        return xp;
    };
    EXPECT_NO_THROW(constrain(s, lincs(4, 1), rotated(20)));
    try
    {
        constrain(s, lincs(4, 1), rotated(60));
        FAIL() << "no error";
    }
    catch (const ConstraintError& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("atom 4 (MOL1 X3)"), std::string::npos) << what;
        EXPECT_NE(what.find("atom 9 (MOL1 X8)"), std::string::npos) << what;
        EXPECT_NE(what.find("rotated"), std::string::npos) << what;
        EXPECT_NE(what.find("relative deviation"), std::string::npos) << what;
    }
}

TEST(Shake, RotationBeyondNinetyDegreesThrows)
{
    TestSystem s;
    s.molecules.emplace_back();
    s.addAtom(massC, DVec{ 1, 1, 1 }, "C");
    s.addAtom(massH, DVec{ 1.109, 1, 1 }, "H");
    s.top.constraints.push_back({ 0, 1, 0.109 });
    s.wrap();
    auto xp = s.x;
    xp[1]   = xp[0] + RVec(-0.05, 0.1, 0);
    EXPECT_THROW(constrain(s, shake(), xp), ConstraintError);
    xp[1] = xp[0] + RVec(0.05, 0.1, 0); // 63 degrees: SHAKE still converges
    EXPECT_LT(maxDeviation(s, constrain(s, shake(), xp).xp), 1e-10);
}

TEST(Settle, CollapsedWaterThrowsNamingTheWater)
{
    const TestSystem s  = makeSystem(false, 31, true, false);
    auto             xp = s.x;
    const Settle&    w  = s.top.settles[2];
    xp[w.h1]            = xp[w.o] + RVec(0, 0, 0.4);
    xp[w.h2]            = xp[w.o] + RVec(0, 0, -0.4);
    try
    {
        constrain(s, shake(), xp);
        FAIL() << "no error";
    }
    catch (const ConstraintError& e)
    {
        const std::string what = e.what();
        for (int a : { w.o, w.h1, w.h2 })
        {
            EXPECT_NE(what.find("atom " + std::to_string(a + 1) + " "), std::string::npos) << what;
        }
    }
}

TEST(Constraint, MaxRelativeDeviationReportsTheWorstConstraint)
{
    TestSystem s = makeSystem(false, 32);
    Constraints c(s.top, shake(), s.invMass());
    EXPECT_LT(c.maxRelativeDeviation(s.x, s.box), 1e-12);
    const auto& k = s.top.constraints[5];
    s.x[k.j]      = s.x[k.i] + Pbc(s.box).dx(s.x[k.j], s.x[k.i]) * real(1.05);
    EXPECT_NEAR(c.maxRelativeDeviation(s.x, s.box), 0.05, 1e-12);
}

} // namespace
} // namespace putmd
