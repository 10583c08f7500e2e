/* io/checkpoint.cpp — encoding, decoding, atomic writing and reading of the
 * checkpoint file (format in io/checkpoint.h). The decoder trusts nothing:
 * every length and count is checked against the bytes that are left before
 * anything is allocated, every real must be finite and every flag 0 or 1, so
 * a damaged or hostile file is an InputError naming the file and the byte,
 * never a crash or a huge allocation.
 */
#include "io/checkpoint.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

namespace
{

constexpr char     kMagic[8]      = { 'P', 'U', 'T', 'M', 'D', 'C', 'P', 'T' };
constexpr uint64_t kTailBytes     = 1 << 20;
constexpr uint64_t kMaxAtoms      = 2000000000ull;

class Writer
{
public:
    template<typename T>
    void put(T v)
    {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        out.insert(out.end(), p, p + sizeof v);
    }
    void str(const std::string& s)
    {
        put(uint32_t(s.size()));
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        out.insert(out.end(), p, p + s.size());
    }
    void vecs(const std::vector<DVec>& v)
    {
        for (const auto& a : v)
        {
            put(a.x);
            put(a.y);
            put(a.z);
        }
    }
    std::vector<std::byte> out;
};

class Reader
{
public:
    Reader(std::span<const std::byte> d, const std::string& path, size_t base) : data_(d), path_(path), base_(base) {}

    [[noreturn]] void fail(const std::string& what) const
    {
        throw InputError(SourceLocation{ path_, 0 },
                         fmt::format("not a usable putmd checkpoint: {} (at byte {})", what, base_ + pos_));
    }
    template<typename T>
    T get(const char* what)
    {
        if (data_.size() - pos_ < sizeof(T))
        {
            fail(std::string("the body ends inside ") + what);
        }
        T v;
        std::memcpy(&v, data_.data() + pos_, sizeof v);
        pos_ += sizeof v;
        return v;
    }
    std::string str(const char* what)
    {
        const uint32_t n = get<uint32_t>(what);
        if (data_.size() - pos_ < n)
        {
            fail(fmt::format("{} is {} bytes long but the body ends before", what, n));
        }
        std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
        pos_ += n;
        return s;
    }
    /* A count of entries of at least minBytes each: at most limit, and no
     * more than the bytes left can hold. */
    uint32_t count(const char* what, uint64_t limit, uint64_t minBytes)
    {
        const uint32_t n = get<uint32_t>(what);
        if (n > limit)
        {
            fail(fmt::format("{} count {} is more than the {} a checkpoint can hold", what, n, limit));
        }
        if (uint64_t(n) * minBytes > data_.size() - pos_)
        {
            fail(fmt::format("{} count {} needs at least {} bytes but only {} are left", what, n, uint64_t(n) * minBytes,
                             data_.size() - pos_));
        }
        return n;
    }
    bool flag(const char* what)
    {
        const uint32_t f = get<uint32_t>(what);
        if (f > 1)
        {
            fail(fmt::format("{} is {}, expected 0 or 1", what, f));
        }
        return f == 1;
    }
    double finite(const char* what)
    {
        const double v = get<double>(what);
        if (!std::isfinite(v))
        {
            fail(fmt::format("{} is not a finite number ({})", what, v));
        }
        return v;
    }
    std::vector<DVec> vecs(uint64_t n, const char* what)
    {
        if (n * 24 > data_.size() - pos_)
        {
            fail(fmt::format("the body ends inside the {} of {} atoms ({} bytes needed, {} left)", what, n, n * 24,
                             data_.size() - pos_));
        }
        std::vector<DVec> v(n);
        for (uint64_t i = 0; i < n; i++)
        {
            v[i].x = get<double>(what);
            v[i].y = get<double>(what);
            v[i].z = get<double>(what);
            if (!std::isfinite(v[i].x) || !std::isfinite(v[i].y) || !std::isfinite(v[i].z))
            {
                pos_ -= 24;
                fail(fmt::format("the {} of atom {} are not finite numbers ({}, {}, {})", what, i + 1, v[i].x, v[i].y,
                                 v[i].z));
            }
        }
        return v;
    }
    bool atEnd() const { return pos_ == data_.size(); }

private:
    std::span<const std::byte> data_;
    std::string                path_;
    size_t                     base_;
    size_t                     pos_ = 0;
};

} // namespace

uint64_t fnv1a64(std::span<const std::byte> data, uint64_t hash)
{
    for (std::byte b : data)
    {
        hash ^= uint64_t(b);
        hash *= 1099511628211ull;
    }
    return hash;
}

std::vector<std::byte> encodeCheckpoint(const Checkpoint& c)
{
    if (c.x.size() != c.numAtoms || (!c.v.empty() && c.v.size() != c.numAtoms)
        || c.averageSums.size() != c.averageNames.size())
    {
        throw InternalError(fmt::format("encodeCheckpoint: {} atoms but {} coordinates and {} velocities, {} average "
                                        "names but {} sums",
                                        c.numAtoms, c.x.size(), c.v.size(), c.averageNames.size(), c.averageSums.size()));
    }
    Writer b;
    // room for the whole body at once (no growth by doubling: peak memory)
    b.out.reserve(4096 + 2 * sizeof(DVec) * c.x.size() + 64 * c.averageNames.size() + 256 * c.files.size());
    b.put(c.precisionBytes);
    b.str(c.version);
    b.put(c.step);
    b.put(c.time);
    b.put(c.numAtoms);
    b.put(c.topologyFingerprint);
    b.str(c.systemName);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            b.put(c.box(r, k));
    b.vecs(c.x);
    b.put(uint32_t(c.v.empty() ? 0 : 1));
    b.vecs(c.v);
    b.put(c.thermostatIntegral);
    b.put(c.barostatIntegral);
    b.put(c.rlist);
    b.put(c.nstlist);
    b.put(c.ldSeed);
    b.put(uint32_t(c.noseHooverXi.size()));
    for (double xi : c.noseHooverXi)
    {
        b.put(xi);
    }
    b.put(uint32_t(c.averageNames.size()));
    for (size_t k = 0; k < c.averageNames.size(); k++)
    {
        b.str(c.averageNames[k]);
        b.put(c.averageSums[k]);
    }
    b.put(c.averageCount);
    b.put(uint32_t(c.stepOutputsWritten ? 1 : 0));
    b.put(c.ranks);
    b.str(c.backend);
    b.put(uint32_t(c.files.size()));
    for (const auto& f : c.files)
    {
        b.str(f.name);
        b.put(f.size);
        b.put(f.tailChecksum);
    }
    b.str(c.fftPlans);
    for (const Matrix3* m : { &c.boxVelocity, &c.boxRel })
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                b.put((*m)(r, k));
    b.put(c.ddGroupRadius);
    b.put(uint32_t(c.dlbActive ? 1 : 0));
    for (const auto* v : { &c.dlbBounds[0], &c.dlbBounds[1], &c.dlbBounds[2], &c.dlbLoads })
    {
        b.put(uint32_t(v->size()));
        for (double value : *v)
        {
            b.put(value);
        }
    }
    b.put(c.pmeRanks);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            b.put(c.constraintVirial(r, k));
    b.put(uint32_t(c.dlbOffForGood ? 1 : 0));
    b.put(c.dlbReferenceSeconds);
    b.put(c.dlbReferenceWindows);
    b.put(uint32_t(c.dlbBalancedSteps.size()));
    for (double t : c.dlbBalancedSteps)
    {
        b.put(t);
    }
    b.put(c.nstlistPrune);
    b.put(c.rlistInner);
    b.put(c.pruneRows);
    Writer w;
    w.out.reserve(b.out.size() + 32);
    w.out.insert(w.out.end(), reinterpret_cast<const std::byte*>(kMagic), reinterpret_cast<const std::byte*>(kMagic) + 8);
    w.put(kCheckpointVersion);
    w.put(uint64_t(b.out.size()));
    w.out.insert(w.out.end(), b.out.begin(), b.out.end());
    w.put(fnv1a64(b.out));
    return w.out;
}

Checkpoint decodeCheckpoint(std::span<const std::byte> data, const std::string& path)
{
    Reader head(data, path, 0);
    if (data.empty())
    {
        head.fail("the file is empty");
    }
    if (std::memcmp(data.data(), kMagic, std::min<size_t>(data.size(), 8)) != 0)
    {
        head.fail("it does not start with PUTMDCPT (is this a checkpoint file?)");
    }
    if (data.size() < 20)
    {
        head.fail(fmt::format("the file is truncated: {} bytes, shorter than the 20-byte header", data.size()));
    }
    head.get<std::array<char, 8>>("the magic");
    const uint32_t version = head.get<uint32_t>("the version");
    if (version < 1 || version > kCheckpointVersion)
    {
        head.fail(fmt::format("it has format version {}, this putmd reads versions 1 to {}", version, kCheckpointVersion));
    }
    const uint64_t length = head.get<uint64_t>("the body length");
    const size_t   start  = 20;
    if (length > data.size() - start || data.size() - start - length < 8)
    {
        head.fail(fmt::format("the file is truncated: the header announces a {}-byte body plus an 8-byte checksum, "
                              "the file has {} bytes after the header",
                              length, data.size() - start));
    }
    if (data.size() - start - length > 8)
    {
        head.fail(fmt::format("{} unexpected bytes after the checksum (data appended to the file, or a damaged "
                              "body length {})",
                              data.size() - start - length - 8, length));
    }
    const auto body = data.subspan(start, length);
    uint64_t   stored;
    std::memcpy(&stored, data.data() + start + length, 8);
    if (fnv1a64(body) != stored)
    {
        head.fail("the checksum does not match its contents (the file is corrupted)");
    }
    Reader     r(body, path, start);
    Checkpoint c;
    c.precisionBytes = r.get<uint32_t>("the precision");
    if (c.precisionBytes != 4 && c.precisionBytes != 8)
    {
        r.fail(fmt::format("precision {} bytes per real is neither 4 nor 8", c.precisionBytes));
    }
    c.version = r.str("the version string");
    c.step    = r.get<int64_t>("the step");
    if (c.step < 0)
    {
        r.fail(fmt::format("step {} is negative", c.step));
    }
    c.time     = r.finite("the time");
    c.numAtoms = r.get<uint64_t>("the number of atoms");
    if (c.numAtoms > kMaxAtoms)
    {
        r.fail(fmt::format("{} atoms is more than putmd handles (at most {})", c.numAtoms, kMaxAtoms));
    }
    c.topologyFingerprint = r.get<uint64_t>("the topology fingerprint");
    c.systemName          = r.str("the system name");
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++)
            c.box(a, k) = r.finite("the box");
    c.x = r.vecs(c.numAtoms, "coordinates");
    if (r.flag("the velocity flag"))
    {
        c.v = r.vecs(c.numAtoms, "velocities");
    }
    c.thermostatIntegral = r.finite("the thermostat integral");
    c.barostatIntegral   = r.finite("the barostat integral");
    c.rlist              = r.finite("the pair-list radius");
    c.nstlist            = r.get<int32_t>("nstlist");
    if (c.rlist <= 0 || c.nstlist <= 0)
    {
        r.fail(fmt::format("pair-list radius {} or nstlist {} is not positive", c.rlist, c.nstlist));
    }
    c.ldSeed = r.get<uint64_t>("the seed");
    const uint32_t nh    = r.count("Nose-Hoover group", 100000, 8);
    for (uint32_t g = 0; g < nh; g++)
    {
        c.noseHooverXi.push_back(r.finite("a Nose-Hoover xi"));
    }
    const uint32_t na = r.count("energy average", 10000, 12);
    for (uint32_t k = 0; k < na; k++)
    {
        c.averageNames.push_back(r.str("an average's name"));
        c.averageSums.push_back(r.finite("an average's sum"));
    }
    c.averageCount = r.get<int64_t>("the average count");
    if (c.averageCount < 0)
    {
        r.fail("the average count is negative");
    }
    c.stepOutputsWritten = r.flag("the outputs flag");
    c.ranks              = r.get<int32_t>("the rank count");
    if (c.ranks < 1)
    {
        r.fail(fmt::format("rank count {} is not positive", c.ranks));
    }
    c.backend         = r.str("the backend");
    const uint32_t nf = r.count("output file", 1000, 20);
    for (uint32_t k = 0; k < nf; k++)
    {
        CheckpointOutputFile f;
        f.name         = r.str("an output file name");
        f.size         = r.get<uint64_t>("an output file size");
        f.tailChecksum = r.get<uint64_t>("an output file checksum");
        c.files.push_back(f);
    }
    if (version >= 2)
    {
        c.fftPlans = r.str("the FFT plans");
    }
    if (version >= 3)
    {
        for (Matrix3* m : { &c.boxVelocity, &c.boxRel })
            for (int row = 0; row < 3; row++)
                for (int k = 0; k < 3; k++)
                    (*m)(row, k) = r.finite("the box velocity");
    }
    if (version >= 4)
    {
        c.ddGroupRadius = r.finite("the update-group radius");
        c.dlbActive     = r.flag("the load-balancing flag");
        for (auto* v : { &c.dlbBounds[0], &c.dlbBounds[1], &c.dlbBounds[2], &c.dlbLoads })
        {
            const uint32_t n = r.count("load-balancing value", 1u << 20, 8);
            for (uint32_t k = 0; k < n; k++)
            {
                v->push_back(r.finite("a domain boundary or load"));
            }
        }
    }
    if (version >= 5)
    {
        c.pmeRanks = r.get<int32_t>("the PME rank count");
        if (c.pmeRanks < -1)
        {
            r.fail(fmt::format("PME rank count {} is negative", c.pmeRanks));
        }
    }
    if (version >= 6)
    {
        for (int row = 0; row < 3; row++)
            for (int k = 0; k < 3; k++)
                c.constraintVirial(row, k) = r.finite("the constraint virial");
    }
    if (version >= 7)
    {
        c.dlbOffForGood       = r.flag("the load-balancing switch's off flag");
        c.dlbReferenceSeconds = r.finite("the load-balancing reference time");
        c.dlbReferenceWindows = r.get<int32_t>("the load-balancing reference window count");
        if (c.dlbReferenceWindows < 0)
        {
            r.fail(fmt::format("load-balancing reference window count {} is negative", c.dlbReferenceWindows));
        }
        const uint32_t n = r.count("load-balancing step time", 64, 8);
        for (uint32_t k = 0; k < n; k++)
        {
            c.dlbBalancedSteps.push_back(r.finite("a load-balancing step time"));
        }
    }
    if (version >= 8)
    {
        c.nstlistPrune = r.get<int32_t>("the pruning interval");
        c.rlistInner   = r.finite("the pruned list's radius");
        c.pruneRows    = r.get<int32_t>("the pruned groups' i-rows");
        if (c.nstlistPrune < -1 || (c.nstlistPrune > 0 && c.rlistInner <= 0))
        {
            r.fail(fmt::format("pruning interval {} with inner radius {} nm: the interval must be -1 (not recorded), "
                               "0 (no pruning) or positive with a positive radius",
                               c.nstlistPrune, c.rlistInner));
        }
        if (c.pruneRows < 0 || c.pruneRows > 4)
        {
            r.fail(fmt::format("the pruned groups' i-rows are {}, expected 0 (not recorded) to 4", c.pruneRows));
        }
    }
    if (!r.atEnd())
    {
        r.fail("the body has bytes after its last field");
    }
    return c;
}

std::string previousCheckpointPath(const std::string& path)
{
    const std::string stem = path.size() > 4 && path.substr(path.size() - 4) == ".cpt" ? path.substr(0, path.size() - 4) : path;
    return stem + "_prev.cpt";
}

void writeCheckpoint(const std::string& path, const Checkpoint& c)
{
    const auto  bytes = encodeCheckpoint(c);
    std::string tmp   = path + ".putmd-tmp-XXXXXX";
    const int   fd    = mkstemp(tmp.data());
    if (fd < 0)
    {
        throw InputError(SourceLocation{ path, 0 },
                         std::string("cannot write the checkpoint: cannot create a file beside it: ") + std::strerror(errno));
    }
    auto fail = [&](const char* what, int err) {
        ::close(fd);
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 },
                         std::string("cannot write the checkpoint: ") + what + ": " + std::strerror(err)
                                 + "; the previous checkpoint is unchanged");
    };
    size_t done = 0;
    while (done < bytes.size())
    {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            fail("writing", errno);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0)
    {
        fail("flushing to disk", errno);
    }
    ::fchmod(fd, 0644); // mkstemp's 0600 would hide the checkpoint from the user's group
    if (::close(fd) != 0)
    {
        const int err = errno;
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot write the checkpoint: closing: ") + std::strerror(err)
                                                            + "; the previous checkpoint is unchanged");
    }
    // keep the last one as NAME_prev.cpt (a hard link: NAME.cpt is always complete)
    std::error_code ec;
    if (std::filesystem::exists(path, ec))
    {
        const std::string prev = previousCheckpointPath(path);
        std::filesystem::remove(prev, ec);
        if (::link(path.c_str(), prev.c_str()) != 0)
        {
            std::filesystem::copy_file(path, prev, std::filesystem::copy_options::overwrite_existing, ec);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        const int err = errno;
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot write the checkpoint: renaming: ") + std::strerror(err)
                                                            + "; the previous checkpoint is unchanged");
    }
    const std::string dir = std::filesystem::path(path).parent_path().string();
    const int         dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0)
    {
        ::fsync(dfd);
        ::close(dfd);
    }
}

Checkpoint readCheckpoint(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
    {
        throw InputError(SourceLocation{ path, 0 }, "cannot read the checkpoint: it is a directory");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot open the checkpoint: ") + std::strerror(errno));
    }
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return decodeCheckpoint(std::as_bytes(std::span<const char>(raw)), path);
}

uint64_t topologyFingerprint(const Topology& top)
{
    uint64_t h = fnv1a64(std::as_bytes(std::span<const int>(&top.numAtoms, 1)));
    for (int i = 0; i < top.numAtoms; i++)
    {
        h = fnv1a64(std::as_bytes(std::span<const double>(&top.mass[i], 1)), h);
        h = fnv1a64(std::as_bytes(std::span<const double>(&top.charge[i], 1)), h);
        h = fnv1a64(std::as_bytes(std::span<const int>(&top.ljType[i], 1)), h);
        h = fnv1a64(std::as_bytes(std::span<const char>(top.atomName[i].data(), top.atomName[i].size())), h);
        h = fnv1a64(std::as_bytes(std::span<const char>(top.residueName[i].data(), top.residueName[i].size())), h);
    }
    return h;
}

uint64_t fileTailChecksum(const std::string& path, uint64_t size)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw InputError(SourceLocation{ path, 0 }, "the run's output file is missing (the checkpoint lists it)");
    }
    in.seekg(0, std::ios::end);
    const uint64_t actual = uint64_t(in.tellg());
    if (actual < size)
    {
        throw InputError(SourceLocation{ path, 0 },
                         fmt::format("the output file has {} bytes, fewer than the {} the checkpoint recorded; it is "
                                     "not the file this run wrote",
                                     actual, size));
    }
    const uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
    in.seekg(std::streamoff(from));
    // in pieces of 64 KiB (the hash is incremental): no tail-sized buffer
    uint64_t          hash = fnv1a64({});
    std::vector<char> buf(64 * 1024);
    for (uint64_t left = size - from; left > 0;)
    {
        const size_t n = size_t(std::min<uint64_t>(left, buf.size()));
        in.read(buf.data(), std::streamsize(n));
        hash = fnv1a64(std::as_bytes(std::span<const char>(buf.data(), n)), hash);
        left -= n;
    }
    return hash;
}

} // namespace putmd
