/* Unit tests of trajectory output: .trr frames parsed back byte by byte,
 * .xtc frames decoded by a small independent decoder written here from the
 * format description, and .gro files read back with parseGro. That GROMACS,
 * MDAnalysis and MDTraj read the files is checked by tests/trajectory.
 */
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.h"
#include "io/gro.h"
#include "io/trajectory.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

std::string slurpBinary(const std::string& path)
{
    std::ifstream      in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/* Reads XDR items from a byte string. */
class XdrReader
{
public:
    explicit XdrReader(std::string data) : data_(std::move(data)) {}
    uint32_t getUint()
    {
        EXPECT_LE(pos_ + 4, data_.size());
        uint32_t u = 0;
        for (int k = 0; k < 4; k++)
        {
            u = (u << 8) | static_cast<uint8_t>(data_[pos_++]);
        }
        return u;
    }
    int32_t getInt() { return static_cast<int32_t>(getUint()); }
    float   getFloat() { return std::bit_cast<float>(getUint()); }
    double  getDouble()
    {
        const uint64_t hi = getUint();
        return std::bit_cast<double>((hi << 32) | getUint());
    }
    std::string getBytes(size_t n)
    {
        std::string s = data_.substr(pos_, n);
        pos_ += (n + 3) / 4 * 4;
        return s;
    }
    bool atEnd() const { return pos_ == data_.size(); }

private:
    std::string data_;
    size_t      pos_ = 0;
};

/* ---- an independent XTC decoder (reads what a GROMACS reader reads) ---- */

constexpr int kMagic[] = { 0,       0,       0,       0,       0,        0,        0,        0,       0,
                           8,       10,      12,      16,      20,       25,       32,       40,      50,
                           64,      80,      101,     128,     161,      203,      256,      322,     406,
                           512,     645,     812,     1024,    1290,     1625,     2048,     2580,    3250,
                           4096,    5060,    6501,    8192,    10321,    13003,    16384,    20642,   26007,
                           32768,   41285,   52015,   65536,   82570,    104031,   131072,   165140,  208063,
                           262144,  330280,  416127,  524287,  660561,   832255,   1048576,  1321122, 1664510,
                           2097152, 2642245, 3329021, 4194304, 5284491,  6658042,  8388607,  10568983,
                           13316085, 16777216 };

class BitReader
{
public:
    explicit BitReader(std::string bytes) : bytes_(std::move(bytes)) {}
    uint32_t bits(int n)
    {
        uint32_t v = 0;
        for (int k = 0; k < n; k++)
        {
            const auto byte = static_cast<uint8_t>(bytes_.at(pos_ / 8));
            v               = (v << 1) | ((byte >> (7 - pos_ % 8)) & 1U);
            pos_++;
        }
        return v;
    }
    /* nbits bits holding a number low byte first; split into 3 by sizes. */
    void ints(int nbits, const uint32_t sizes[3], int32_t out[3])
    {
        unsigned __int128 n = 0;
        for (int shift = 0; shift < nbits; shift += 8)
        {
            n |= static_cast<unsigned __int128>(bits(std::min(8, nbits - shift))) << shift;
        }
        out[2] = static_cast<int32_t>(n % sizes[2]);
        n /= sizes[2];
        out[1] = static_cast<int32_t>(n % sizes[1]);
        out[0] = static_cast<int32_t>(n / sizes[1]);
    }

private:
    std::string bytes_;
    size_t      pos_ = 0;
};

struct XtcFrame
{
    int               natoms = 0, step = 0;
    float             time = 0, precision = 0;
    float             box[9] = {};
    std::vector<DVec> x;
};

std::vector<DVec> decodeCompressed(XdrReader& r, int n, float& precision)
{
    precision = r.getFloat();
    int32_t minInt[3], maxInt[3];
    for (auto& m : minInt)
    {
        m = r.getInt();
    }
    for (auto& m : maxInt)
    {
        m = r.getInt();
    }
    uint32_t sizes[3];
    bool     large = false;
    for (int d = 0; d < 3; d++)
    {
        sizes[d] = static_cast<uint32_t>(maxInt[d] - minInt[d] + 1);
        large |= sizes[d] > 0xffffff;
    }
    auto bitLength = [](unsigned __int128 v) {
        int b = 0;
        for (; v != 0; v >>= 1)
        {
            b++;
        }
        return b;
    };
    const int allBits = bitLength(static_cast<unsigned __int128>(sizes[0]) * sizes[1] * sizes[2]);
    int       idx     = r.getInt();
    const int nbytes  = r.getInt();
    BitReader bits(r.getBytes(nbytes));

    std::vector<DVec> x;
    auto emit = [&](const int32_t* c) {
        x.push_back({ c[0] / precision, c[1] / precision, c[2] / precision });
    };
    int run = 0;
    while (static_cast<int>(x.size()) < n)
    {
        int32_t full[3];
        if (large)
        {
            for (int d = 0; d < 3; d++)
            {
                full[d] = static_cast<int32_t>(bits.bits(bitLength(sizes[d])));
            }
        }
        else
        {
            bits.ints(allBits, sizes, full);
        }
        for (int d = 0; d < 3; d++)
        {
            full[d] += minInt[d];
        }
        int change = 0;
        if (bits.bits(1))
        {
            run    = static_cast<int>(bits.bits(5));
            change = run % 3 - 1;
            run -= run % 3;
        }
        int32_t prev[3] = { full[0], full[1], full[2] };
        if (run == 0)
        {
            emit(full);
        }
        const uint32_t smallSizes[3] = { uint32_t(kMagic[idx]), uint32_t(kMagic[idx]), uint32_t(kMagic[idx]) };
        for (int k = 0; k < run; k += 3)
        {
            int32_t d[3], cur[3];
            bits.ints(idx, smallSizes, d);
            for (int c = 0; c < 3; c++)
            {
                cur[c] = prev[c] + d[c] - kMagic[idx] / 2;
            }
            emit(cur);
            if (k == 0)
            {
                emit(full); // the writer swapped these two
            }
            std::copy(cur, cur + 3, prev);
        }
        idx += change;
    }
    return x;
}

std::vector<XtcFrame> decodeXtc(const std::string& path)
{
    const std::string     data = slurpBinary(path);
    XdrReader             r(data);
    std::vector<XtcFrame> frames;
    while (!r.atEnd())
    {
        XtcFrame f;
        EXPECT_EQ(r.getInt(), 1995);
        f.natoms = r.getInt();
        f.step   = r.getInt();
        f.time   = r.getFloat();
        for (float& b : f.box)
        {
            b = r.getFloat();
        }
        EXPECT_EQ(r.getInt(), f.natoms);
        if (f.natoms <= 9)
        {
            for (int i = 0; i < f.natoms; i++)
            {
                const float a = r.getFloat(), b = r.getFloat(), c = r.getFloat();
                f.x.push_back({ a, b, c });
            }
        }
        else
        {
            f.x = decodeCompressed(r, f.natoms, f.precision);
        }
        frames.push_back(f);
    }
    return frames;
}

Box cubicBox(double l)
{
    Matrix3 m;
    m(0, 0) = m(1, 1) = m(2, 2) = l;
    return Box(m);
}

Box triclinicBox()
{
    Matrix3 m;
    m(0, 0) = 3.5;
    m(1, 0) = 1.2;
    m(1, 1) = 3.1;
    m(2, 0) = -0.7;
    m(2, 1) = 1.4;
    m(2, 2) = 2.9;
    return Box(m);
}

std::vector<Vec3<real>> toReal(const std::vector<DVec>& x)
{
    return std::vector<Vec3<real>>(x.begin(), x.end());
}

std::vector<Vec3<real>> waterPositions()
{
    return toReal(readGro(std::string(PUTMD_TEST_DATA) + "/systems/water-spce-3k/conf.gro").x);
}

void expectXtcRoundTrip(const std::vector<Vec3<real>>& x, double precision, const Box& box)
{
    test::TempDir d;
    const std::string path = d.path("t.xtc");
    {
        XtcWriter w(path, static_cast<int>(x.size()), precision);
        w.write(100, 0.2, box, x);
        w.write(200, 0.4, box, x);
    }
    const auto frames = decodeXtc(path);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[1].step, 200);
    EXPECT_FLOAT_EQ(frames[1].time, 0.4F);
    EXPECT_FLOAT_EQ(frames[0].box[3], static_cast<float>(box.vectors()(1, 0)));
    EXPECT_FLOAT_EQ(frames[0].box[8], static_cast<float>(box.vectors()(2, 2)));
    ASSERT_EQ(frames[0].x.size(), x.size());
    // rounding to the nearest 1/precision, plus float rounding of large values
    for (size_t i = 0; i < x.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            const double tol = 0.5 / precision + 4e-7 * std::abs(x[i][d]);
            ASSERT_NEAR(frames[0].x[i][d], x[i][d], tol) << "atom " << i << " dim " << d;
        }
    }
}

TEST(XtcWriter, WaterRoundTripsWithinPrecision)
{
    expectXtcRoundTrip(waterPositions(), 1000, cubicBox(3.1));
}

TEST(XtcWriter, RandomCoordinatesAndHigherPrecisionRoundTrip)
{
    std::mt19937                           gen(7);
    std::uniform_real_distribution<double> u(-2.0, 5.0);
    std::vector<Vec3<real>>                x(500);
    for (auto& r : x)
    {
        r = Vec3<real>(u(gen), u(gen), u(gen));
    }
    expectXtcRoundTrip(x, 1000, triclinicBox());
    expectXtcRoundTrip(x, 100000, triclinicBox());
}

TEST(XtcWriter, ClustersAndJumpsExerciseRunsAndRangeChanges)
{
    // groups of close atoms separated by large and small jumps, so that runs
    // start and stop and the small range grows and shrinks
    std::mt19937                           gen(11);
    std::uniform_real_distribution<double> near(-0.02, 0.02);
    std::uniform_real_distribution<double> far(0.0, 8.0);
    std::vector<Vec3<real>>                x;
    for (int group = 0; group < 200; group++)
    {
        const DVec c     = { far(gen), far(gen), far(gen) };
        const int  size  = 1 + group % 13;
        const double scale = group % 3 == 0 ? 0.05 : 1.0;
        for (int k = 0; k < size; k++)
        {
            x.emplace_back(c.x + scale * near(gen) * k, c.y + scale * near(gen), c.z + scale * near(gen));
        }
    }
    expectXtcRoundTrip(x, 1000, cubicBox(8));
}

TEST(XtcWriter, RangeTooWideForOneNumberIsPackedPerDimension)
{
    // more than 2^24 steps of 1/precision: each dimension gets its own bits
    std::vector<Vec3<real>> x;
    for (int i = 0; i < 40; i++)
    {
        x.emplace_back(-9000.0 + 600.0 * i, 0.5 * i, 1.0 + 0.01 * i);
    }
    expectXtcRoundTrip(x, 1000, cubicBox(20000));
}

TEST(XtcWriter, NineAtomsOrFewerAreStoredAsFloats)
{
    const std::vector<Vec3<real>> x = { { 0.1234567F, 1.0F, 2.0F }, { -3.0F, 4.5F, 0.0F }, { 7.0F, 8.0F, 9.0F } };
    test::TempDir                 d;
    const std::string             path = d.path("small.xtc");
    {
        XtcWriter w(path, 3, 1000);
        w.write(0, 0, cubicBox(10), x);
    }
    EXPECT_EQ(slurpBinary(path).size(), 4u * (4 + 9 + 1 + 9));
    const auto frames = decodeXtc(path);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].x[0].x, static_cast<float>(x[0].x));
}

TEST(XtcWriter, CoordinateTooLargeForPrecisionIsAnErrorNamingTheFile)
{
    test::TempDir d;
    std::vector<Vec3<real>> x(20, Vec3<real>(1, 1, 1));
    x[5].y = 5e6;
    XtcWriter w(d.path("big.xtc"), 20, 1000);
    try
    {
        w.write(0, 0, cubicBox(3), x);
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("big.xtc"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("atom 6"), std::string::npos) << e.what();
    }
}

TEST(XtcWriter, UncreatableFileIsAnErrorNamingIt)
{
    test::TempDir d;
    try
    {
        XtcWriter w(d.path("missing-dir/t.xtc"), 10, 1000);
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("missing-dir/t.xtc"), std::string::npos) << e.what();
    }
}

TEST(TrrWriter, FramesParseBackExactly)
{
    const int               n = 4;
    std::vector<Vec3<real>> x(n), v(n), f(n);
    for (int i = 0; i < n; i++)
    {
        x[i] = { 0.1 * i, 0.2 * i + 0.01, -0.3 * i };
        v[i] = { 1.5 * i, -0.25, 0.125 * i };
        f[i] = { -100.0 * i, 3.3, 1e3 / (i + 1) };
    }
    const Box     box = triclinicBox();
    test::TempDir d;
    const std::string path = d.path("t.trr");
    {
        TrrWriter w(path, n);
        w.write(10, 0.02, 0.5, box, &x, &v, &f);
        w.write(20, 0.04, 0.0, box, &x, nullptr, nullptr);
    }
    XdrReader r(slurpBinary(path));
    for (int frame = 0; frame < 2; frame++)
    {
        EXPECT_EQ(r.getInt(), 1993);
        EXPECT_EQ(r.getInt(), 13);
        EXPECT_EQ(r.getInt(), 12);
        EXPECT_EQ(r.getBytes(12), "GMX_trn_file");
        const int32_t arrayBytes = n * 3 * sizeof(real);
        const int32_t expect[10] = { 0, 0, 9 * sizeof(real), 0, 0, 0, 0, arrayBytes,
                                     frame == 0 ? arrayBytes : 0, frame == 0 ? arrayBytes : 0 };
        for (int32_t s : expect)
        {
            EXPECT_EQ(r.getInt(), s);
        }
        EXPECT_EQ(r.getInt(), n);
        EXPECT_EQ(r.getInt(), frame == 0 ? 10 : 20);
        EXPECT_EQ(r.getInt(), 0);
        EXPECT_EQ(r.getDouble(), frame == 0 ? 0.02 : 0.04);
        EXPECT_EQ(r.getDouble(), frame == 0 ? 0.5 : 0.0);
        for (int i = 0; i < 9; i++)
        {
            EXPECT_EQ(r.getDouble(), box.vectors()(i / 3, i % 3));
        }
        for (const auto* a : { &x, &v, &f })
        {
            if (frame == 1 && a != &x)
            {
                continue;
            }
            for (int i = 0; i < n; i++)
            {
                for (int c = 0; c < 3; c++)
                {
                    EXPECT_EQ(r.getDouble(), (*a)[i][c]);
                }
            }
        }
    }
    EXPECT_TRUE(r.atEnd());
}

TEST(TrrWriter, WrongArraySizeIsAnInternalError)
{
    test::TempDir           d;
    TrrWriter               w(d.path("t.trr"), 3);
    std::vector<Vec3<real>> x(2);
    EXPECT_THROW(w.write(0, 0, 0, cubicBox(1), &x, nullptr, nullptr), InternalError);
}

std::vector<GroAtom> waterAtoms(int n)
{
    std::vector<GroAtom> atoms(n);
    const char*          names[] = { "OW", "HW1", "HW2" };
    for (int i = 0; i < n; i++)
    {
        atoms[i] = { i / 3 + 1, "SOL", names[i % 3] };
    }
    return atoms;
}

TEST(WriteGro, RoundTripsPositionsVelocitiesAndTriclinicBox)
{
    std::vector<Vec3<real>> x = { { 1.0, 2.0, 3.0 }, { -0.1234, 0.5, 9.999 }, { 0, 0, 0 } };
    std::vector<Vec3<real>> v = { { 0.1, -0.2, 0.3 }, { 1.23456, 0, -4.5 }, { 0, 0, 0 } };
    test::TempDir           d;
    const std::string       path = d.path("out.gro");
    writeGro(path, "final frame", waterAtoms(3), x, &v, triclinicBox());
    const std::string text = slurpBinary(path);
    EXPECT_NE(text.find("    1SOL    HW1    2  -0.123   0.500   9.999  1.2346  0.0000 -4.5000\n"), std::string::npos)
            << text;
    const GroFile g = parseGro(text, path);
    EXPECT_EQ(g.title, "final frame");
    ASSERT_EQ(g.x.size(), 3u);
    EXPECT_EQ(g.atoms[2].atomName, "HW2");
    EXPECT_EQ(g.atoms[2].residueName, "SOL");
    EXPECT_NEAR(g.x[1].x, -0.1234, 0.0005);
    ASSERT_EQ(g.v.size(), 3u);
    EXPECT_NEAR(g.v[1].x, 1.23456, 0.00005);
    ASSERT_TRUE(g.box.isTriclinic());
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            EXPECT_NEAR(g.box.vectors()(r, c), triclinicBox().vectors()(r, c), 1e-9);
        }
    }
    // GROMACS order: v1x v2y v3z v1y v1z v2x v2z v3x v3y
    EXPECT_NE(text.find("   3.50000   3.10000   2.90000   0.00000   0.00000   1.20000   0.00000  -0.70000   1.40000\n"),
              std::string::npos)
            << text;
}

TEST(WriteGro, RectangularBoxHasThreeNumbersAndNoVelocitiesWhenNotGiven)
{
    test::TempDir           d;
    const std::string       path = d.path("out.gro");
    std::vector<Vec3<real>> x    = { { 1, 2, 3 } };
    writeGro(path, "t", waterAtoms(1), x, nullptr, cubicBox(3.1));
    EXPECT_EQ(slurpBinary(path), "t\n    1\n    1SOL     OW    1   1.000   2.000   3.000\n   3.10000   3.10000   3.10000\n");
}

TEST(WriteGro, NumbersWrapAt100000AndFileReadsBack)
{
    const int               n = 100005;
    std::vector<Vec3<real>> x(n);
    for (int i = 0; i < n; i++)
    {
        x[i] = { 0.001 * (i % 1000), 0.5, 1.0 };
    }
    std::vector<GroAtom> atoms(n);
    for (int i = 0; i < n; i++)
    {
        atoms[i] = { i + 1, "AR", "AR" };
    }
    test::TempDir     d;
    const std::string path = d.path("big.gro");
    writeGro(path, "argon", atoms, x, nullptr, cubicBox(50));
    const std::string text = slurpBinary(path);
    EXPECT_NE(text.find("\n99999AR      AR99999"), std::string::npos);
    EXPECT_NE(text.find("\n    0AR      AR    0"), std::string::npos);
    EXPECT_NE(text.find("\n    5AR      AR    5   0.004"), std::string::npos);
    const GroFile g = parseGro(text, path);
    ASSERT_EQ(g.x.size(), static_cast<size_t>(n));
    EXPECT_EQ(g.atoms[99999].residueNumber, 0);
    EXPECT_EQ(g.atoms[100004].residueNumber, 5);
    EXPECT_NEAR(g.x[100004].x, 0.004, 1e-9);
}

TEST(WriteGro, LongNamesAreCutToTheirColumns)
{
    test::TempDir           d;
    const std::string       path = d.path("out.gro");
    std::vector<Vec3<real>> x    = { { 1, 2, 3 } };
    writeGro(path, "t", { GroAtom{ 7, "LONGRES", "LONGATOM" } }, x, nullptr, cubicBox(3));
    const GroFile g = parseGro(slurpBinary(path), path);
    EXPECT_EQ(g.atoms[0].residueName, "LONGR");
    EXPECT_EQ(g.atoms[0].atomName, "LONGA");
    EXPECT_DOUBLE_EQ(g.x[0].z, 3.0);
}

} // namespace
} // namespace putmd
