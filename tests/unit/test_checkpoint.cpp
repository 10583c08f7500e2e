/* Unit tests of the checkpoint file (io/checkpoint.h): bit-exact round trip,
 * rejection of truncated, corrupted, wrong-magic, wrong-version and padded
 * files, of bodies whose checksum is right but whose counts lie or whose
 * values are not finite (built here by hand from the documented format), and
 * the atomic write: NAME_prev.cpt, and a write that fails (file-size limit)
 * leaving the previous checkpoint intact. */
#include <gtest/gtest.h>

#include <bit>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "io/checkpoint.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

using Bytes = std::vector<std::byte>;

constexpr size_t kHeaderBytes = 20; // magic, version, body length

/* A realistic checkpoint: n atoms with awkward doubles (tiny, huge,
 * negative zero, values that are not short decimals). */
Checkpoint makeCheckpoint(uint64_t n, uint64_t seed = 1)
{
    std::mt19937_64                        rng(seed);
    std::uniform_real_distribution<double> pos(0.0, 5.0), vel(-2.0, 2.0);
    Checkpoint                             c;
    c.precisionBytes      = 4;
    c.version             = "0.1.0-test";
    c.step                = 123456789;
    c.time                = 246.913578;
    c.numAtoms            = n;
    c.topologyFingerprint = 0xfedcba9876543210ull;
    c.systemName          = "protein in water (" + std::to_string(n) + " atoms)";
    c.box(0, 0)           = 5.1234567890123;
    c.box(1, 1)           = 5.2;
    c.box(2, 2)           = 4.9;
    c.box(1, 0)           = 1.1;
    c.box(2, 0)           = -0.3;
    c.box(2, 1)           = 2.0;
    for (uint64_t i = 0; i < n; i++)
    {
        c.x.push_back({ pos(rng), pos(rng), pos(rng) });
        c.v.push_back({ vel(rng), vel(rng), vel(rng) });
    }
    if (n > 2)
    {
        c.x[0] = { std::numeric_limits<double>::denorm_min(), -0.0, 1e-300 };
        c.v[1] = { 1e300, -std::numeric_limits<double>::max(), 0.1 + 0.2 };
    }
    c.thermostatIntegral = -1234.5678;
    c.barostatIntegral   = 9.87654321e-7;
    c.rlist              = 1.0831;
    c.nstlist            = 40;
    c.ldSeed             = 0x1234567890abcdefull;
    c.noseHooverXi       = { 0.01, -0.02, 3.5 };
    c.averageNames       = { "Bond", "Angle", "LJ (SR)", "Coulomb (SR)", "Potential", "Temperature", "Pressure" };
    for (size_t k = 0; k < c.averageNames.size(); k++)
    {
        c.averageSums.push_back(vel(rng) * 1e6);
    }
    c.averageCount       = 5001;
    c.stepOutputsWritten = true;
    c.ranks              = 4;
    c.backend            = "rma";
    c.files              = { { "run/md.log", 123456, 0x1111 }, { "run/md.edr", 98765, 0x2222 }, { "run/md.xtc", 0, 0 } };
    c.fftPlans           = "60 60 60 2 14\n(fftw-3 wisdom)";
    c.nstlistPrune       = 11;
    c.rlistInner         = 1.0010381;
    c.pruneRows          = 2;
    c.boxVelocity(0, 0)  = 1.25e-3;
    c.constraintVirial(1, 2) = -0.0; // (a sign bit the continuation must keep)
    c.constraintVirial(0, 0) = 317.0625;
    c.boxVelocity(2, 1)  = -3.5e-5;
    c.boxRel(1, 1)       = 1.0 / 3.0;
    return c;
}

uint64_t bitsOf(double d)
{
    return std::bit_cast<uint64_t>(d);
}

void expectBitIdentical(const Checkpoint& a, const Checkpoint& b)
{
    EXPECT_EQ(a.precisionBytes, b.precisionBytes);
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(bitsOf(a.time), bitsOf(b.time));
    EXPECT_EQ(a.numAtoms, b.numAtoms);
    EXPECT_EQ(a.topologyFingerprint, b.topologyFingerprint);
    EXPECT_EQ(a.systemName, b.systemName);
    for (int r = 0; r < 3; r++)
    {
        for (int k = 0; k < 3; k++)
        {
            EXPECT_EQ(bitsOf(a.box(r, k)), bitsOf(b.box(r, k))) << "box " << r << k;
        }
    }
    ASSERT_EQ(a.x.size(), b.x.size());
    ASSERT_EQ(a.v.size(), b.v.size());
    for (size_t i = 0; i < a.x.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            ASSERT_EQ(bitsOf(a.x[i][d]), bitsOf(b.x[i][d])) << "x of atom " << i;
        }
    }
    for (size_t i = 0; i < a.v.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            ASSERT_EQ(bitsOf(a.v[i][d]), bitsOf(b.v[i][d])) << "v of atom " << i;
        }
    }
    EXPECT_EQ(bitsOf(a.thermostatIntegral), bitsOf(b.thermostatIntegral));
    EXPECT_EQ(bitsOf(a.barostatIntegral), bitsOf(b.barostatIntegral));
    EXPECT_EQ(bitsOf(a.rlist), bitsOf(b.rlist));
    EXPECT_EQ(a.nstlist, b.nstlist);
    EXPECT_EQ(a.ldSeed, b.ldSeed);
    ASSERT_EQ(a.noseHooverXi.size(), b.noseHooverXi.size());
    for (size_t k = 0; k < a.noseHooverXi.size(); k++)
    {
        EXPECT_EQ(bitsOf(a.noseHooverXi[k]), bitsOf(b.noseHooverXi[k]));
    }
    EXPECT_EQ(a.averageNames, b.averageNames);
    ASSERT_EQ(a.averageSums.size(), b.averageSums.size());
    for (size_t k = 0; k < a.averageSums.size(); k++)
    {
        EXPECT_EQ(bitsOf(a.averageSums[k]), bitsOf(b.averageSums[k]));
    }
    EXPECT_EQ(a.averageCount, b.averageCount);
    EXPECT_EQ(a.stepOutputsWritten, b.stepOutputsWritten);
    EXPECT_EQ(a.ranks, b.ranks);
    EXPECT_EQ(a.backend, b.backend);
    EXPECT_EQ(a.fftPlans, b.fftPlans);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
        {
            EXPECT_EQ(bitsOf(a.boxVelocity(r, k)), bitsOf(b.boxVelocity(r, k)));
            EXPECT_EQ(bitsOf(a.boxRel(r, k)), bitsOf(b.boxRel(r, k)));
        }
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            EXPECT_EQ(bitsOf(a.constraintVirial(r, k)), bitsOf(b.constraintVirial(r, k)));
    EXPECT_EQ(a.pmeRanks, b.pmeRanks);
    EXPECT_EQ(bitsOf(a.ddGroupRadius), bitsOf(b.ddGroupRadius));
    EXPECT_EQ(a.dlbActive, b.dlbActive);
    for (int d = 0; d < 3; d++)
    {
        EXPECT_EQ(a.dlbBounds[d], b.dlbBounds[d]);
    }
    EXPECT_EQ(a.dlbLoads, b.dlbLoads);
    EXPECT_EQ(a.dlbOffForGood, b.dlbOffForGood);
    EXPECT_EQ(bitsOf(a.dlbReferenceSeconds), bitsOf(b.dlbReferenceSeconds));
    EXPECT_EQ(a.dlbReferenceWindows, b.dlbReferenceWindows);
    EXPECT_EQ(a.dlbBalancedSteps, b.dlbBalancedSteps);
    EXPECT_EQ(a.nstlistPrune, b.nstlistPrune);
    EXPECT_EQ(a.pruneRows, b.pruneRows);
    EXPECT_EQ(std::bit_cast<uint64_t>(a.rlistInner), std::bit_cast<uint64_t>(b.rlistInner));
    ASSERT_EQ(a.files.size(), b.files.size());
    for (size_t k = 0; k < a.files.size(); k++)
    {
        EXPECT_EQ(a.files[k].name, b.files[k].name);
        EXPECT_EQ(a.files[k].size, b.files[k].size);
        EXPECT_EQ(a.files[k].tailChecksum, b.files[k].tailChecksum);
    }
}

/* The InputError message of decoding `data` ("" and a test failure when it
 * decodes). */
std::string rejection(const Bytes& data, const std::string& path = "run/state.cpt")
{
    try
    {
        decodeCheckpoint(data, path);
    }
    catch (const InputError& e)
    {
        return e.what();
    }
    ADD_FAILURE() << "a bad checkpoint was accepted";
    return "";
}

#define EXPECT_REJECTED(data, text)                                                                           \
    do                                                                                                        \
    {                                                                                                         \
        const std::string msg_ = rejection(data);                                                             \
        EXPECT_NE(msg_.find("run/state.cpt"), std::string::npos) << msg_;                                     \
        EXPECT_NE(msg_.find("not a usable putmd checkpoint"), std::string::npos) << msg_;                     \
        EXPECT_NE(msg_.find(text), std::string::npos) << "expected '" << (text) << "' in: " << msg_;          \
    } while (0)

/* ---- a body built by hand from the format in io/checkpoint.h ---------- */

struct HandBody
{
    uint32_t            precision = 8;
    std::string         version   = "0.1.0";
    int64_t             versionLengthLie = -1; // when >= 0, the stored length of the version string
    int64_t             step        = 10;
    double              time        = 0.02;
    uint64_t            numAtoms    = 2;
    uint64_t            fingerprint = 77;
    std::string         systemName  = "two atoms";
    double              box[9]      = { 2, 0, 0, 0, 2, 0, 0, 0, 2 };
    std::vector<double> x           = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 };
    uint32_t            velocityFlag = 1;
    std::vector<double> v            = { 1, 2, 3, 4, 5, 6 };
    double              thermostat = 0.5, barostat = 0.25, rlist = 1.0;
    int32_t             nstlist = 10;
    uint64_t            seed    = 5;
    uint32_t            xiCount = 1;
    std::vector<double> xi      = { 0.125 };
    uint32_t            averageCount = 1;
    std::vector<std::pair<std::string, double>> averages = { { "Potential", -5.0 } };
    int64_t                                     samples  = 3;
    uint32_t                                    outputsFlag = 1;
    int32_t                                     ranks       = 2;
    std::string                                 backend     = "p2p";
    uint32_t                                    fileCount   = 1;
    std::vector<CheckpointOutputFile>           files       = { { "md.edr", 100, 42 } };
    std::string                                 fftPlans    = "42 42 42 2 5\n(abc)"; // version 2
    uint32_t                                    formatVersion = kCheckpointVersion;
    double                                      groupRadius   = 0.13;
    int32_t                                     pmeRanks      = 1; // version 5
    double                                      constraintVirialXx = 21.5; // version 6 (the rest zero)
    double                                      dlbReference = 0.012; // version 7: s/step summed over 3 windows
    int32_t                                     dlbRefWindows = 3;
    std::vector<double>                         dlbBalanced  = { 0.005, 0.0045 };
    int32_t                                     prune        = 12; // version 8
    double                                      rlistInner   = 0.95;
    int32_t                                     pruneRows    = 4;
    Bytes                                       extra; // after the last field

    template<typename T>
    static void put(Bytes& b, T v)
    {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        b.insert(b.end(), p, p + sizeof v);
    }
    static void putString(Bytes& b, const std::string& s, int64_t lengthLie = -1)
    {
        put(b, uint32_t(lengthLie >= 0 ? uint64_t(lengthLie) : s.size()));
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        b.insert(b.end(), p, p + s.size());
    }

    Bytes body() const
    {
        Bytes b;
        put(b, precision);
        putString(b, version, versionLengthLie);
        put(b, step);
        put(b, time);
        put(b, numAtoms);
        put(b, fingerprint);
        putString(b, systemName);
        for (double d : box)
        {
            put(b, d);
        }
        for (double d : x)
        {
            put(b, d);
        }
        put(b, velocityFlag);
        for (double d : v)
        {
            put(b, d);
        }
        put(b, thermostat);
        put(b, barostat);
        put(b, rlist);
        put(b, nstlist);
        put(b, seed);
        put(b, xiCount);
        for (double d : xi)
        {
            put(b, d);
        }
        put(b, averageCount);
        for (const auto& [name, sum] : averages)
        {
            putString(b, name);
            put(b, sum);
        }
        put(b, samples);
        put(b, outputsFlag);
        put(b, ranks);
        putString(b, backend);
        put(b, fileCount);
        for (const auto& f : files)
        {
            putString(b, f.name);
            put(b, f.size);
            put(b, f.tailChecksum);
        }
        if (formatVersion >= 2)
        {
            putString(b, fftPlans);
        }
        if (formatVersion >= 3)
        {
            for (int k = 0; k < 18; k++)
            {
                put(b, k == 0 ? 2e-3 : 0.0); // box velocity xx, the rest zero
            }
        }
        if (formatVersion >= 4)
        {
            put(b, groupRadius);
            put(b, uint32_t(1)); // load balancing on
            for (int d = 0; d < 3; d++)
            {
                put(b, uint32_t(d == 0 ? 3 : 2)); // 2 x 1 x 1 domains
                for (double v : d == 0 ? std::vector<double>{ 0, 0.6, 1 } : std::vector<double>{ 0, 1 })
                {
                    put(b, v);
                }
            }
            put(b, uint32_t(3)); // pending loads of 2 ranks and the wall time
            for (double v : { 1.5, 2.5, 8.0 })
            {
                put(b, v);
            }
        }
        if (formatVersion >= 5)
        {
            put(b, pmeRanks);
        }
        if (formatVersion >= 6)
        {
            for (int k = 0; k < 9; k++)
            {
                put(b, k == 0 ? constraintVirialXx : 0.0);
            }
        }
        if (formatVersion >= 7)
        {
            put(b, uint32_t(1)); // turned off for good
            put(b, dlbReference);
            put(b, dlbRefWindows);
            put(b, uint32_t(dlbBalanced.size()));
            for (double v : dlbBalanced)
            {
                put(b, v);
            }
        }
        if (formatVersion >= 8)
        {
            put(b, prune);
            put(b, rlistInner);
            put(b, pruneRows);
        }
        b.insert(b.end(), extra.begin(), extra.end());
        return b;
    }

    /* magic, version, length, body and a checksum that matches */
    Bytes file() const
    {
        const Bytes body = this->body();
        Bytes       f;
        for (char ch : std::string("PUTMDCPT"))
        {
            f.push_back(std::byte(ch));
        }
        put(f, formatVersion);
        put(f, uint64_t(body.size()));
        f.insert(f.end(), body.begin(), body.end());
        put(f, fnv1a64(body));
        return f;
    }
};

/* ---- round trip -------------------------------------------------------- */

TEST(Checkpoint, RoundTripOfARealisticCheckpointIsBitExact)
{
    const Checkpoint c     = makeCheckpoint(300);
    const Bytes      bytes = encodeCheckpoint(c);
    expectBitIdentical(c, decodeCheckpoint(bytes, "a.cpt"));
    EXPECT_EQ(encodeCheckpoint(decodeCheckpoint(bytes, "a.cpt")), bytes);

    test::TempDir d;
    const std::string path = d.path("state.cpt");
    writeCheckpoint(path, c);
    expectBitIdentical(c, readCheckpoint(path));
}

TEST(Checkpoint, NoVelocitiesAndNoAtomsRoundTrip)
{
    Checkpoint c = makeCheckpoint(5);
    c.v.clear();
    expectBitIdentical(c, decodeCheckpoint(encodeCheckpoint(c), "a.cpt"));
    Checkpoint empty;
    empty.precisionBytes = 8;
    empty.rlist          = 1;
    empty.nstlist        = 1;
    expectBitIdentical(empty, decodeCheckpoint(encodeCheckpoint(empty), "a.cpt"));
}

TEST(Checkpoint, HandBuiltBodyMatchesTheEncoderSoTheDocumentedLayoutIsTheFormat)
{
    const HandBody h;
    Checkpoint     c;
    c.precisionBytes      = h.precision;
    c.version             = h.version;
    c.step                = h.step;
    c.time                = h.time;
    c.numAtoms            = h.numAtoms;
    c.topologyFingerprint = h.fingerprint;
    c.systemName          = h.systemName;
    c.box(0, 0) = c.box(1, 1) = c.box(2, 2) = 2;
    c.x                  = { { 0.1, 0.2, 0.3 }, { 0.4, 0.5, 0.6 } };
    c.v                  = { { 1, 2, 3 }, { 4, 5, 6 } };
    c.thermostatIntegral = h.thermostat;
    c.barostatIntegral   = h.barostat;
    c.rlist              = h.rlist;
    c.nstlist            = h.nstlist;
    c.ldSeed             = h.seed;
    c.noseHooverXi       = h.xi;
    c.averageNames       = { "Potential" };
    c.averageSums        = { -5.0 };
    c.averageCount       = h.samples;
    c.stepOutputsWritten = true;
    c.ranks              = h.ranks;
    c.backend            = h.backend;
    c.files              = h.files;
    c.fftPlans           = h.fftPlans;
    c.boxVelocity(0, 0)  = 2e-3;
    c.ddGroupRadius      = h.groupRadius;
    c.dlbActive          = true;
    c.dlbBounds          = { std::vector<double>{ 0, 0.6, 1 }, std::vector<double>{ 0, 1 }, std::vector<double>{ 0, 1 } };
    c.dlbLoads           = { 1.5, 2.5, 8.0 };
    c.pmeRanks           = h.pmeRanks;
    c.constraintVirial(0, 0) = h.constraintVirialXx;
    c.dlbOffForGood          = true;
    c.dlbReferenceSeconds    = h.dlbReference;
    c.dlbReferenceWindows    = 3;
    c.dlbBalancedSteps       = h.dlbBalanced;
    c.nstlistPrune           = h.prune;
    c.rlistInner             = h.rlistInner;
    c.pruneRows              = h.pruneRows;
    EXPECT_EQ(encodeCheckpoint(c), h.file());
    expectBitIdentical(c, decodeCheckpoint(h.file(), "hand.cpt"));
}

TEST(Checkpoint, VersionOneWithoutFftPlansIsStillRead)
{
    HandBody h;
    h.formatVersion = 1;
    const Checkpoint c = decodeCheckpoint(h.file(), "old.cpt");
    EXPECT_EQ(c.step, h.step);
    EXPECT_TRUE(c.fftPlans.empty());
    ASSERT_EQ(c.files.size(), 1u);
    EXPECT_EQ(c.files[0].name, "md.edr");
}

TEST(Checkpoint, VersionTwoWithoutBoxVelocityIsStillRead)
{
    HandBody h;
    h.formatVersion = 2;
    const Checkpoint c = decodeCheckpoint(h.file(), "v2.cpt");
    EXPECT_EQ(c.fftPlans, h.fftPlans);
    EXPECT_EQ(c.boxVelocity(0, 0), 0.0);
}

TEST(Checkpoint, VersionFiveWithoutConstraintVirialIsStillRead)
{
    HandBody h;
    h.formatVersion = 5;
    const Checkpoint c = decodeCheckpoint(h.file(), "v5.cpt");
    EXPECT_EQ(c.pmeRanks, h.pmeRanks);
    EXPECT_EQ(c.constraintVirial(0, 0), 0.0);
}

TEST(Checkpoint, VersionSixWithoutTheBalancingSwitchIsStillRead)
{
    HandBody h;
    h.formatVersion = 6;
    const Checkpoint c = decodeCheckpoint(h.file(), "v6.cpt");
    EXPECT_EQ(c.constraintVirial(0, 0), h.constraintVirialXx);
    EXPECT_TRUE(c.dlbActive);
    EXPECT_FALSE(c.dlbOffForGood); // never turned off: it may, with a reference from the continuation
    EXPECT_EQ(c.dlbReferenceWindows, 0);
    EXPECT_TRUE(c.dlbBalancedSteps.empty());
}

/* Version 7 has no pruning choice: "not recorded", so that the
 * continuation chooses it for the checkpoint's list (md_runner.cpp). */
TEST(Checkpoint, VersionSevenWithoutThePruningChoiceIsStillRead)
{
    HandBody h;
    h.formatVersion = 7;
    const Checkpoint c = decodeCheckpoint(h.file(), "v7.cpt");
    EXPECT_EQ(c.dlbBalancedSteps, h.dlbBalanced);
    EXPECT_EQ(c.nstlistPrune, -1);
    EXPECT_EQ(c.rlistInner, 0.0);
    EXPECT_EQ(c.pruneRows, 0);
}

TEST(Checkpoint, EncoderRefusesArraysThatDoNotMatchTheAtomCount)
{
    Checkpoint c = makeCheckpoint(4);
    c.x.pop_back();
    EXPECT_THROW(encodeCheckpoint(c), InternalError);
    c = makeCheckpoint(4);
    c.averageSums.pop_back();
    EXPECT_THROW(encodeCheckpoint(c), InternalError);
}

/* ---- damaged files ----------------------------------------------------- */

TEST(Checkpoint, EveryTruncationIsRejectedAsTruncated)
{
    const Bytes full = encodeCheckpoint(makeCheckpoint(3));
    for (size_t len = 0; len < full.size(); len++)
    {
        const Bytes       cut(full.begin(), full.begin() + std::ptrdiff_t(len));
        const std::string msg = rejection(cut);
        EXPECT_NE(msg.find("run/state.cpt"), std::string::npos) << msg;
        if (len == 0)
        {
            EXPECT_NE(msg.find("the file is empty"), std::string::npos) << msg;
        }
        else
        {
            EXPECT_NE(msg.find("truncated"), std::string::npos) << "length " << len << ": " << msg;
        }
    }
}

TEST(Checkpoint, TruncationOfALargeCheckpointIsRejected)
{
    const Bytes full = encodeCheckpoint(makeCheckpoint(300));
    for (size_t len : { size_t(20), size_t(21), full.size() / 3, full.size() / 2, full.size() - 9, full.size() - 8,
                        full.size() - 1 })
    {
        EXPECT_REJECTED(Bytes(full.begin(), full.begin() + std::ptrdiff_t(len)), "truncated");
    }
}

TEST(Checkpoint, AFlippedBitAnywhereIsRejected)
{
    const Bytes full = encodeCheckpoint(makeCheckpoint(3));
    for (size_t byte = 0; byte < full.size(); byte++)
    {
        for (int bit = 0; bit < 8; bit++)
        {
            Bytes damaged = full;
            damaged[byte] ^= std::byte(1u << bit);
            const std::string msg = rejection(damaged);
            ASSERT_NE(msg.find("run/state.cpt"), std::string::npos) << msg;
            if (byte >= kHeaderBytes)
            {
                // body or the checksum itself
                ASSERT_NE(msg.find("checksum does not match"), std::string::npos)
                        << "byte " << byte << " bit " << bit << ": " << msg;
            }
        }
    }
}

TEST(Checkpoint, WrongMagicIsRejected)
{
    Bytes f = encodeCheckpoint(makeCheckpoint(3));
    f[3]    = std::byte('X');
    EXPECT_REJECTED(f, "does not start with PUTMDCPT");
    const std::string text = "title\n    3\n";
    EXPECT_REJECTED(Bytes(reinterpret_cast<const std::byte*>(text.data()),
                          reinterpret_cast<const std::byte*>(text.data()) + text.size()),
                    "does not start with PUTMDCPT");
}

TEST(Checkpoint, WrongVersionIsRejectedNamingBothVersions)
{
    Bytes          f       = encodeCheckpoint(makeCheckpoint(3));
    const uint32_t version = kCheckpointVersion + 1;
    std::memcpy(f.data() + 8, &version, 4);
    const std::string msg = rejection(f);
    EXPECT_NE(msg.find("format version " + std::to_string(version)), std::string::npos) << msg;
    EXPECT_NE(msg.find("reads versions 1 to " + std::to_string(kCheckpointVersion)), std::string::npos) << msg;
}

TEST(Checkpoint, TrailingGarbageIsRejected)
{
    Bytes f = encodeCheckpoint(makeCheckpoint(3));
    f.push_back(std::byte(0));
    EXPECT_REJECTED(f, "1 unexpected bytes after the checksum");
    f.resize(f.size() + 4095, std::byte(0x55));
    EXPECT_REJECTED(f, "4096 unexpected bytes after the checksum");
}

/* ---- intact checksum, lying contents ----------------------------------- */

TEST(Checkpoint, HugeCountsWithAValidChecksumAreRejectedWithoutAllocating)
{
    {
        HandBody h;
        h.numAtoms = uint64_t(1) << 40;
        EXPECT_REJECTED(h.file(), "1099511627776 atoms is more than putmd handles");
    }
    {
        HandBody h;
        h.numAtoms = 2000000000; // allowed, but the body holds 2
        EXPECT_REJECTED(h.file(), "ends inside the coordinates of 2000000000 atoms");
    }
    {
        HandBody h;
        h.numAtoms = 3; // coordinates of 2 atoms, then the velocity flag...
        EXPECT_REJECTED(h.file(), "");
    }
    {
        HandBody h;
        h.versionLengthLie = 0xffffffff;
        EXPECT_REJECTED(h.file(), "the version string is 4294967295 bytes long but the body ends before");
    }
    {
        HandBody h;
        h.xiCount = 0xffffffff;
        EXPECT_REJECTED(h.file(), "Nose-Hoover group count 4294967295 is more than the 100000");
    }
    {
        HandBody h;
        h.xiCount = 90000;
        EXPECT_REJECTED(h.file(), "Nose-Hoover group count 90000 needs at least 720000 bytes");
    }
    {
        HandBody h;
        h.averageCount = 10000;
        EXPECT_REJECTED(h.file(), "energy average count 10000 needs at least");
    }
    {
        HandBody h;
        h.averageCount = 2; // one present: the second name's length is read from what follows
        EXPECT_REJECTED(h.file(), "not a usable putmd checkpoint");
    }
    {
        HandBody h;
        h.fileCount = 1001;
        EXPECT_REJECTED(h.file(), "output file count 1001 is more than the 1000");
    }
    {
        HandBody h;
        h.fileCount = 0; // the file entry is then read as the fields after it: refused by one of their checks
        EXPECT_REJECTED(h.file(), "not a usable putmd checkpoint");
    }
    {
        HandBody h;
        h.extra = Bytes(3, std::byte(0));
        EXPECT_REJECTED(h.file(), "the body has bytes after its last field");
    }
}

TEST(Checkpoint, ImpossibleValuesWithAValidChecksumAreRejected)
{
    auto with = [](auto change) {
        HandBody h;
        change(h);
        return h.file();
    };
    EXPECT_REJECTED(with([](HandBody& h) { h.precision = 2; }), "precision 2 bytes per real is neither 4 nor 8");
    EXPECT_REJECTED(with([](HandBody& h) { h.step = -1; }), "step -1 is negative");
    EXPECT_REJECTED(with([](HandBody& h) { h.velocityFlag = 7; }), "the velocity flag is 7, expected 0 or 1");
    EXPECT_REJECTED(with([](HandBody& h) { h.outputsFlag = 2; }), "the outputs flag is 2, expected 0 or 1");
    EXPECT_REJECTED(with([](HandBody& h) { h.rlist = 0; }), "pair-list radius 0 or nstlist 10 is not positive");
    EXPECT_REJECTED(with([](HandBody& h) { h.nstlist = -5; }), "nstlist -5 is not positive");
    EXPECT_REJECTED(with([](HandBody& h) { h.samples = -1; }), "the average count is negative");
    EXPECT_REJECTED(with([](HandBody& h) { h.ranks = 0; }), "rank count 0 is not positive");
    EXPECT_REJECTED(with([](HandBody& h) { h.dlbRefWindows = -2; }),
                    "load-balancing reference window count -2 is negative");
    EXPECT_REJECTED(with([](HandBody& h) { h.prune = -2; }), "pruning interval -2 with inner radius 0.95 nm");
    EXPECT_REJECTED(with([](HandBody& h) { h.rlistInner = 0; }), "pruning interval 12 with inner radius 0 nm");
    EXPECT_REJECTED(with([](HandBody& h) { h.pruneRows = 5; }), "the pruned groups' i-rows are 5, expected 0");
    const Checkpoint none = decodeCheckpoint(with([](HandBody& h) {
                                                 h.prune      = 0;
                                                 h.rlistInner = 0;
                                             }),
                                             "no-pruning.cpt");
    EXPECT_EQ(none.nstlistPrune, 0);
}

TEST(Checkpoint, NonFiniteValuesWithAValidChecksumAreRejectedNamingTheField)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    auto         with = [](auto change) {
        HandBody h;
        change(h);
        return h.file();
    };
    EXPECT_REJECTED(with([&](HandBody& h) { h.time = nan; }), "the time is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.box[4] = inf; }), "the box is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.x[4] = nan; }), "the coordinates of atom 2 are not finite numbers");
    EXPECT_REJECTED(with([&](HandBody& h) { h.v[0] = -inf; }), "the velocities of atom 1 are not finite numbers");
    EXPECT_REJECTED(with([&](HandBody& h) { h.thermostat = nan; }), "the thermostat integral is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.barostat = inf; }), "the barostat integral is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.rlist = nan; }), "the pair-list radius is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.xi[0] = nan; }), "a Nose-Hoover xi is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.averages[0].second = inf; }), "an average's sum is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.dlbReference = nan; }),
                    "the load-balancing reference time is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.dlbBalanced[1] = inf; }), "a load-balancing step time is not a finite number");
    EXPECT_REJECTED(with([&](HandBody& h) { h.rlistInner = nan; }), "the pruned list's radius is not a finite number");
}

/* ---- files on disk ----------------------------------------------------- */

Bytes fileBytes(const std::string& path)
{
    std::ifstream     in(path, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Bytes             b(raw.size());
    std::memcpy(b.data(), raw.data(), raw.size());
    return b;
}

int countFiles(const std::string& dir)
{
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir))
    {
        n++;
    }
    return n;
}

TEST(CheckpointFile, WritingAgainKeepsThePreviousAsPrev)
{
    test::TempDir     d;
    const std::string path = d.path("md.cpt");
    EXPECT_EQ(previousCheckpointPath(path), d.path("md_prev.cpt"));
    const Checkpoint first = makeCheckpoint(50, 1), second = makeCheckpoint(60, 2), third = makeCheckpoint(70, 3);
    writeCheckpoint(path, first);
    EXPECT_FALSE(std::filesystem::exists(d.path("md_prev.cpt")));
    writeCheckpoint(path, second);
    expectBitIdentical(second, readCheckpoint(path));
    expectBitIdentical(first, readCheckpoint(d.path("md_prev.cpt")));
    writeCheckpoint(path, third);
    expectBitIdentical(third, readCheckpoint(path));
    expectBitIdentical(second, readCheckpoint(d.path("md_prev.cpt")));
    EXPECT_EQ(countFiles(d.path()), 2) << "temporary files left behind";
}

TEST(CheckpointFile, AWriteBeyondTheFileSizeLimitFailsAndLeavesThePreviousCheckpoint)
{
    test::TempDir     d;
    const std::string path = d.path("md.cpt");
    writeCheckpoint(path, makeCheckpoint(3, 1));
    writeCheckpoint(path, makeCheckpoint(4, 2));
    const Bytes current = fileBytes(path), previous = fileBytes(d.path("md_prev.cpt"));
    ASSERT_LT(current.size(), 2048u);

    // the child gets a 2 KiB file-size limit (as a full disk, write() fails
    // with EFBIG once SIGXFSZ is ignored) and writes a 300-atom checkpoint
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
    {
        close(fds[0]);
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{ 2048, 2048 };
        setrlimit(RLIMIT_FSIZE, &limit);
        int status = 3;
        try
        {
            writeCheckpoint(path, makeCheckpoint(300, 3));
            status = 1; // no error: a test failure
        }
        catch (const InputError& e)
        {
            const std::string msg = e.what();
            [[maybe_unused]] auto n = write(fds[1], msg.data(), msg.size());
            status = 0;
        }
        catch (...)
        {
            status = 2;
        }
        _exit(status);
    }
    close(fds[1]);
    std::string msg;
    char        buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    {
        msg.append(buf, size_t(n));
    }
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "1: the write did not fail; 2: it failed with another exception";
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot write the checkpoint"), std::string::npos) << msg;
    EXPECT_NE(msg.find("File too large"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the previous checkpoint is unchanged"), std::string::npos) << msg;

    EXPECT_EQ(fileBytes(path), current);
    EXPECT_EQ(fileBytes(d.path("md_prev.cpt")), previous);
    expectBitIdentical(makeCheckpoint(4, 2), readCheckpoint(path));
    EXPECT_EQ(countFiles(d.path()), 2) << "temporary files left behind";
}

TEST(CheckpointFile, AMissingDirectoryIsAnErrorNamingThePath)
{
    test::TempDir     d;
    const std::string path = d.path("no-such-dir/md.cpt");
    try
    {
        writeCheckpoint(path, makeCheckpoint(3));
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
    }
}

TEST(CheckpointFile, ReadingAMissingFileOrADirectoryIsAnErrorNamingIt)
{
    test::TempDir d;
    try
    {
        readCheckpoint(d.path("absent.cpt"));
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("absent.cpt"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cannot open the checkpoint"), std::string::npos) << e.what();
    }
    try
    {
        readCheckpoint(d.path());
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace putmd
