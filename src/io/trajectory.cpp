/* io/trajectory.cpp — .xtc, .trr and .gro output, written from the published
 * descriptions of GROMACS's formats.
 *
 * Both binary formats are XDR: big-endian 4-byte integers and IEEE floats
 * (8 bytes for doubles), opaque data padded to a multiple of 4 bytes. A frame
 * is assembled in memory, then written with one fwrite and flushed, so that a
 * run that dies leaves whole frames only.
 *
 * TRR frame: magic 1993; the version string as GROMACS writes strings (the
 * length plus one, then an XDR string: length, bytes, padding); ten block
 * sizes in bytes (ir, e, box, vir, pres, top, sym, x, v, f); natoms; step;
 * nre; t and lambda in the file's precision; then box, x, v, f as present.
 * Readers infer float or double from the block sizes, so the box is always
 * written.
 *
 * XTC frame: magic 1995, natoms, step, time (float), the box (9 floats, one
 * row per box vector), then the compressed coordinates (xdr3dfcoord):
 * natoms again, and for 9 atoms or fewer just 3*natoms floats. Otherwise
 * the coordinates are scaled by the precision and rounded to integers, and
 * written as: precision, min and max integer per dimension, the starting
 * "small" index, a byte count and the packed bits (padded to 4 bytes). In
 * the bit stream each atom is either written in full (offset from the
 * minimum, the three values packed together as one mixed-radix number when
 * the ranges allow, else each in its own bit width) or, when it lies close
 * to the atom before it, as a small difference in a run. Each full atom is
 * followed by a flag bit and, when the run length or the small range
 * changes, a 5-bit code run+change+1 (run counts integers, 3 per atom, at
 * most 24; change is -1, 0 or +1 for the small range of the next step). The
 * small range is magicints[idx] per dimension, whose cube fits in idx bits.
 * When a run starts, the full atom and the first small one are swapped (a
 * water's H1 is written in full and O as a difference), and readers swap
 * them back.
 *
 * .gro: "%5d%-5s%5s%5d" then %8.3f positions and %8.4f velocities; residue
 * and atom numbers wrap at 100000 as in GROMACS; the box line has 3 numbers
 * for a rectangular box or 9 (v1x v2y v3z v1y v1z v2x v2z v3x v3y).
 */
#include "io/trajectory.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/gro.h"

namespace putmd
{

namespace
{

constexpr int32_t kTrrMagic = 1993;
constexpr int32_t kXtcMagic = 1995;

/* The ranges of the small differences; magicints[i]^3 fits in i bits. */
constexpr std::array<int, 73> kMagicInts = {
    0,       0,       0,       0,       0,       0,        0,        0,        0,        8,
    10,      12,      16,      20,      25,      32,       40,       50,       64,       80,
    101,     128,     161,     203,     256,     322,      406,      512,      645,      812,
    1024,    1290,    1625,    2048,    2580,    3250,     4096,     5060,     6501,     8192,
    10321,   13003,   16384,   20642,   26007,   32768,    41285,    52015,    65536,    82570,
    104031,  131072,  165140,  208063,  262144,  330280,   416127,   524287,   660561,   832255,
    1048576, 1321122, 1664510, 2097152, 2642245, 3329021,  4194304,  5284491,  6658042,  8388607,
    10568983, 13316085, 16777216
};
constexpr int kFirstIdx = 9;
constexpr int kLastIdx  = static_cast<int>(kMagicInts.size()); // one past the last usable index
constexpr int kMaxAbs   = INT_MAX - 2;                         // largest scaled coordinate allowed

/* An XDR stream being assembled in memory. */
class XdrBuffer
{
public:
    void putInt(int32_t v) { putBigEndian(static_cast<uint32_t>(v)); }
    void putFloat(float v) { putBigEndian(std::bit_cast<uint32_t>(v)); }
    void putDouble(double v)
    {
        const uint64_t u = std::bit_cast<uint64_t>(v);
        putBigEndian(static_cast<uint32_t>(u >> 32));
        putBigEndian(static_cast<uint32_t>(u));
    }
    void putReal(real v)
    {
        if constexpr (sizeof(real) == sizeof(double))
        {
            putDouble(v);
        }
        else
        {
            putFloat(v);
        }
    }
    /* Opaque bytes: zero-padded to a multiple of 4 (the length is the caller's). */
    void putOpaque(const std::vector<uint8_t>& bytes)
    {
        data_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        data_.append((4 - bytes.size() % 4) % 4, '\0');
    }
    /* A string as GROMACS writes one: length + 1, then the XDR string. */
    void putGromacsString(const std::string& s)
    {
        putInt(static_cast<int32_t>(s.size() + 1));
        putInt(static_cast<int32_t>(s.size()));
        data_ += s;
        data_.append((4 - s.size() % 4) % 4, '\0');
    }
    const std::string& data() const { return data_; }

private:
    void putBigEndian(uint32_t u)
    {
        const char b[4] = { static_cast<char>(u >> 24), static_cast<char>(u >> 16), static_cast<char>(u >> 8),
                            static_cast<char>(u) };
        data_.append(b, 4);
    }

    std::string data_;
};

/* Bits packed most significant first, bytes filled from their high bit. */
class BitWriter
{
public:
    /* The low nbits of value (nbits <= 32). */
    void put(int nbits, uint32_t value)
    {
        for (int b = nbits - 1; b >= 0; b--)
        {
            if (bitPos_ == 0)
            {
                bytes_.push_back(0);
            }
            if ((value >> b) & 1U)
            {
                bytes_.back() |= static_cast<uint8_t>(0x80U >> bitPos_);
            }
            bitPos_ = (bitPos_ + 1) % 8;
        }
    }
    /* A number of nbits bits (up to 96) as the format packs it: whole bytes
     * from the least significant up, then the remaining high bits. */
    void putWide(int nbits, unsigned __int128 value)
    {
        for (int shift = 0; shift < nbits; shift += 8)
        {
            put(std::min(8, nbits - shift), static_cast<uint32_t>(value >> shift) & 0xffU);
        }
    }
    const std::vector<uint8_t>& bytes() const { return bytes_; }

private:
    std::vector<uint8_t> bytes_;
    int                  bitPos_ = 0; // next free bit in bytes_.back(); 0 = start a new byte
};

/* Bits needed to store the unsigned number n (sizeofint in the format). */
int bitsFor(unsigned __int128 n)
{
    int bits = 0;
    while (n != 0)
    {
        bits++;
        n >>= 1;
    }
    return bits;
}

/* Three values below sizes[] as one mixed-radix number: (a*s1 + b)*s2 + c. */
unsigned __int128 mixedRadix(const std::array<uint32_t, 3>& sizes, const int32_t* v)
{
    unsigned __int128 n = static_cast<uint32_t>(v[0]);
    n                   = n * sizes[1] + static_cast<uint32_t>(v[1]);
    return n * sizes[2] + static_cast<uint32_t>(v[2]);
}

bool withinEach(const int32_t* a, const int32_t* b, int limit)
{
    return std::abs(a[0] - b[0]) < limit && std::abs(a[1] - b[1]) < limit && std::abs(a[2] - b[2]) < limit;
}

/* Coordinates times the precision, rounded half away from zero. */
std::vector<int32_t> quantize(const std::vector<Vec3<real>>& x, float precision, const std::string& path)
{
    std::vector<int32_t> q(3 * x.size());
    for (size_t i = 0; i < x.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            const float scaled = static_cast<float>(x[i][d]) * precision;
            if (!(std::fabs(scaled) < static_cast<float>(kMaxAbs)))
            {
                throw InputError(SourceLocation{ path, 0 },
                                 fmt::format("atom {} has coordinate {} nm, which cannot be stored with "
                                             "compressed-x-precision {} (|x * precision| must stay below {})",
                                             i + 1, static_cast<double>(x[i][d]), precision, kMaxAbs));
            }
            q[3 * i + d] = static_cast<int32_t>(scaled >= 0 ? scaled + 0.5F : scaled - 0.5F);
        }
    }
    return q;
}

/* The xdr3dfcoord block for more than 9 atoms, after natoms. */
void putCompressed(XdrBuffer& xdr, std::vector<int32_t> q, float precision, const std::string& path)
{
    const int n = static_cast<int>(q.size() / 3);
    int32_t   minInt[3] = { INT_MAX, INT_MAX, INT_MAX };
    int32_t   maxInt[3] = { INT_MIN, INT_MIN, INT_MIN };
    int64_t   minDiff   = INT64_MAX;
    for (int i = 0; i < n; i++)
    {
        for (int d = 0; d < 3; d++)
        {
            minInt[d] = std::min(minInt[d], q[3 * i + d]);
            maxInt[d] = std::max(maxInt[d], q[3 * i + d]);
        }
        if (i > 0)
        {
            int64_t diff = 0;
            for (int d = 0; d < 3; d++)
            {
                diff += std::abs(int64_t(q[3 * i + d]) - q[3 * i - 3 + d]);
            }
            minDiff = std::min(minDiff, diff);
        }
    }
    std::array<uint32_t, 3> sizes{};
    bool                    packTogether = true;
    for (int d = 0; d < 3; d++)
    {
        if (int64_t(maxInt[d]) - minInt[d] >= kMaxAbs)
        {
            throw InputError(SourceLocation{ path, 0 },
                             fmt::format("the coordinates span more than {} nm in dimension {}; the "
                                         "compressed trajectory cannot store that range at precision {}",
                                         kMaxAbs / precision, "xyz"[d], precision));
        }
        sizes[d] = static_cast<uint32_t>(maxInt[d] - minInt[d] + 1);
        packTogether &= sizes[d] <= 0xffffffU;
    }
    int bitsAll = 0;
    int bitsEach[3] = {};
    if (packTogether)
    {
        bitsAll = bitsFor(static_cast<unsigned __int128>(sizes[0]) * sizes[1] * sizes[2]);
    }
    else
    {
        for (int d = 0; d < 3; d++)
        {
            bitsEach[d] = bitsFor(sizes[d]);
        }
    }

    int idx = kFirstIdx;
    while (idx < kLastIdx - 1 && kMagicInts[idx] < minDiff)
    {
        idx++;
    }
    xdr.putFloat(precision);
    for (int d = 0; d < 3; d++)
    {
        xdr.putInt(minInt[d]);
    }
    for (int d = 0; d < 3; d++)
    {
        xdr.putInt(maxInt[d]);
    }
    xdr.putInt(idx);

    // The small range may move by one step per full atom, within 8 steps
    // above the start (or below the top of the table).
    const int maxIdx = std::min(kLastIdx - 1, idx + 8);
    const int minIdx = std::max(kFirstIdx, maxIdx - 8);
    const int larger = kMagicInts[maxIdx] / 2;

    BitWriter bits;
    int32_t   prev[3]  = {};
    int       prevRun  = -1;
    int       i        = 0;
    int32_t   diffs[24];
    while (i < n)
    {
        int32_t* cur    = &q[3 * i];
        int      change = 0;
        if (idx < maxIdx && i >= 1 && withinEach(cur, prev, larger))
        {
            change = 1;
        }
        else if (idx > minIdx)
        {
            change = -1;
        }
        const int smallNum = kMagicInts[idx] / 2;
        const int smaller  = kMagicInts[idx - 1] / 2;
        bool      small    = i + 1 < n && withinEach(cur, cur + 3, smallNum);
        if (small)
        {
            std::swap_ranges(cur, cur + 3, cur + 3);
        }
        const int32_t offset[3] = { cur[0] - minInt[0], cur[1] - minInt[1], cur[2] - minInt[2] };
        if (packTogether)
        {
            bits.putWide(bitsAll, mixedRadix(sizes, offset));
        }
        else
        {
            for (int d = 0; d < 3; d++)
            {
                bits.put(bitsEach[d], static_cast<uint32_t>(offset[d]));
            }
        }
        std::copy(cur, cur + 3, prev);
        i++;

        int run = 0;
        if (!small && change == -1)
        {
            change = 0;
        }
        while (small && run < 24)
        {
            cur = &q[3 * i];
            int64_t dist2 = 0;
            for (int d = 0; d < 3; d++)
            {
                dist2 += int64_t(cur[d] - prev[d]) * (cur[d] - prev[d]);
                diffs[run++] = cur[d] - prev[d] + smallNum;
            }
            if (change == -1 && dist2 >= int64_t(smaller) * smaller)
            {
                change = 0;
            }
            std::copy(cur, cur + 3, prev);
            i++;
            small = i < n && withinEach(&q[3 * i], prev, smallNum);
        }
        if (run != prevRun || change != 0)
        {
            prevRun = run;
            bits.put(1, 1);
            bits.put(5, static_cast<uint32_t>(run + change + 1));
        }
        else
        {
            bits.put(1, 0);
        }
        const std::array<uint32_t, 3> smallSizes = { uint32_t(kMagicInts[idx]), uint32_t(kMagicInts[idx]),
                                                     uint32_t(kMagicInts[idx]) };
        for (int k = 0; k < run; k += 3)
        {
            bits.putWide(idx, mixedRadix(smallSizes, &diffs[k]));
        }
        idx += change;
    }
    xdr.putInt(static_cast<int32_t>(bits.bytes().size()));
    xdr.putOpaque(bits.bytes());
}

std::FILE* openOutput(const std::string& path, bool append)
{
    if (!append)
    {
        backupExistingFile(path); // an earlier file is kept as #name.N#
    }
    std::FILE* f = std::fopen(path.c_str(), append ? "ab" : "wb");
    if (f == nullptr)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot create the trajectory file: ") + std::strerror(errno));
    }
    return f;
}

/* One whole frame, then a flush, so the file never ends inside a frame that
 * was reported as written. */
void writeFrame(std::FILE* f, const std::string& path, const std::string& frame)
{
    if (std::fwrite(frame.data(), 1, frame.size(), f) != frame.size() || std::fflush(f) != 0)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot write a trajectory frame: ") + std::strerror(errno));
    }
}

void checkCount(const std::vector<Vec3<real>>& v, int numAtoms, const char* what, const std::string& path)
{
    if (v.size() != static_cast<size_t>(numAtoms))
    {
        throw InternalError(fmt::format("{}: a frame with {} {} for a file opened with {} atoms", path, v.size(), what,
                                        numAtoms));
    }
}

/* The step as the formats store it: a 32-bit integer (GROMACS truncates too). */
int32_t step32(long step)
{
    return static_cast<int32_t>(static_cast<uint32_t>(step));
}

void putBox(XdrBuffer& xdr, const Box& box, bool asReal)
{
    for (int r = 0; r < 3; r++)
    {
        for (int c = 0; c < 3; c++)
        {
            if (asReal)
            {
                xdr.putReal(static_cast<real>(box.vectors()(r, c)));
            }
            else
            {
                xdr.putFloat(static_cast<float>(box.vectors()(r, c)));
            }
        }
    }
}

} // namespace

XtcWriter::XtcWriter(const std::string& path, int numAtoms, double precision, bool append) :
    path_(path), numAtoms_(numAtoms), precision_(precision)
{
    if (!(precision > 0))
    {
        throw InputError(SourceLocation{ path, 0 }, fmt::format("the compressed-x-precision must be positive, found {}", precision));
    }
    file_ = openOutput(path, append);
}

XtcWriter::~XtcWriter()
{
    if (file_ != nullptr)
    {
        std::fclose(file_);
    }
}

void XtcWriter::write(long step, double time, const Box& box, const std::vector<Vec3<real>>& x)
{
    checkCount(x, numAtoms_, "positions", path_);
    XdrBuffer xdr;
    xdr.putInt(kXtcMagic);
    xdr.putInt(numAtoms_);
    xdr.putInt(step32(step));
    xdr.putFloat(static_cast<float>(time));
    putBox(xdr, box, false);
    xdr.putInt(numAtoms_);
    if (numAtoms_ <= 9)
    {
        for (const auto& r : x)
        {
            for (int d = 0; d < 3; d++)
            {
                xdr.putFloat(static_cast<float>(r[d]));
            }
        }
    }
    else
    {
        const float precision = static_cast<float>(precision_);
        putCompressed(xdr, quantize(x, precision, path_), precision, path_);
    }
    writeFrame(file_, path_, xdr.data());
}

TrrWriter::TrrWriter(const std::string& path, int numAtoms, bool append) : path_(path), numAtoms_(numAtoms)
{
    file_ = openOutput(path, append);
}

TrrWriter::~TrrWriter()
{
    if (file_ != nullptr)
    {
        std::fclose(file_);
    }
}

void TrrWriter::write(long step, double time, double lambda, const Box& box, const std::vector<Vec3<real>>* x,
                      const std::vector<Vec3<real>>* v, const std::vector<Vec3<real>>* f)
{
    const int32_t arrayBytes = static_cast<int32_t>(3 * sizeof(real)) * numAtoms_;
    const std::vector<Vec3<real>>* arrays[3] = { x, v, f };
    const char* names[3] = { "positions", "velocities", "forces" };
    for (int a = 0; a < 3; a++)
    {
        if (arrays[a] != nullptr)
        {
            checkCount(*arrays[a], numAtoms_, names[a], path_);
        }
    }
    XdrBuffer xdr;
    xdr.putInt(kTrrMagic);
    xdr.putGromacsString("GMX_trn_file");
    const int32_t sizes[10] = { 0, 0, static_cast<int32_t>(9 * sizeof(real)), 0, 0, 0, 0,
                                x ? arrayBytes : 0, v ? arrayBytes : 0, f ? arrayBytes : 0 };
    for (int32_t s : sizes)
    {
        xdr.putInt(s);
    }
    xdr.putInt(numAtoms_);
    xdr.putInt(step32(step));
    xdr.putInt(0); // nre
    xdr.putReal(static_cast<real>(time));
    xdr.putReal(static_cast<real>(lambda));
    putBox(xdr, box, true);
    for (const auto* array : arrays)
    {
        if (array != nullptr)
        {
            for (const auto& r : *array)
            {
                xdr.putReal(r.x);
                xdr.putReal(r.y);
                xdr.putReal(r.z);
            }
        }
    }
    writeFrame(file_, path_, xdr.data());
}

void writeGro(const std::string& path, const std::string& title, const std::vector<GroAtom>& atoms,
              const std::vector<Vec3<real>>& x, const std::vector<Vec3<real>>* v, const Box& box)
{
    checkCount(x, static_cast<int>(atoms.size()), "positions", path);
    if (v != nullptr)
    {
        checkCount(*v, static_cast<int>(atoms.size()), "velocities", path);
    }
    fmt::memory_buffer out;
    fmt::format_to(std::back_inserter(out), "{}\n{:5d}\n", title, atoms.size());
    for (size_t i = 0; i < atoms.size(); i++)
    {
        const GroAtom& a = atoms[i];
        fmt::format_to(std::back_inserter(out), "{:5d}{:<5.5s}{:>5.5s}{:5d}{:8.3f}{:8.3f}{:8.3f}",
                       a.residueNumber % 100000, a.residueName, a.atomName, static_cast<int>((i + 1) % 100000),
                       x[i].x, x[i].y, x[i].z);
        if (v != nullptr)
        {
            fmt::format_to(std::back_inserter(out), "{:8.4f}{:8.4f}{:8.4f}", (*v)[i].x, (*v)[i].y, (*v)[i].z);
        }
        out.push_back('\n');
    }
    const Matrix3& m = box.vectors();
    fmt::format_to(std::back_inserter(out), "{:10.5f}{:10.5f}{:10.5f}", m(0, 0), m(1, 1), m(2, 2));
    if (box.isTriclinic())
    {
        fmt::format_to(std::back_inserter(out), "{:10.5f}{:10.5f}{:10.5f}{:10.5f}{:10.5f}{:10.5f}", m(0, 1), m(0, 2),
                       m(1, 0), m(1, 2), m(2, 0), m(2, 1));
    }
    out.push_back('\n');
    writeFileAtomically(path, fmt::to_string(out));
}

} // namespace putmd
