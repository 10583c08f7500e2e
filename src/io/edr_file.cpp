#include "io/edr_file.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/atomic_file.h"

namespace putmd
{

namespace
{

void putU32(std::vector<uint8_t>& b, uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8)
    {
        b.push_back(static_cast<uint8_t>(v >> s));
    }
}

void putI32(std::vector<uint8_t>& b, int32_t v)
{
    putU32(b, static_cast<uint32_t>(v));
}

void putI64(std::vector<uint8_t>& b, int64_t v)
{
    putU32(b, static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
    putU32(b, static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

void putDouble(std::vector<uint8_t>& b, double v)
{
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    putU32(b, static_cast<uint32_t>(bits >> 32));
    putU32(b, static_cast<uint32_t>(bits));
}

/* XDR string: length, bytes, zero padding to a multiple of 4. */
void putString(std::vector<uint8_t>& b, const std::string& s)
{
    putU32(b, static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
    while (b.size() % 4 != 0)
    {
        b.push_back(0);
    }
}

constexpr int32_t kHeaderMagic = -55555;
constexpr int32_t kFrameMagic  = -7777777;
constexpr int32_t kVersion     = 5;

} // namespace

std::string edrUnitOf(const std::string& term)
{
    if (term == "Temperature")
    {
        return "K";
    }
    if (term == "Pressure" || term == "Pres. DC (bar)")
    {
        return "bar";
    }
    if (term.rfind("Box-", 0) == 0)
    {
        return "nm";
    }
    if (term == "Volume")
    {
        return "nm^3";
    }
    if (term == "Density")
    {
        return "kg/m^3";
    }
    return "kJ/mol";
}

EdrFile::EdrFile(const std::string& path, const std::vector<std::string>& terms, double dt, bool append) :
    path_(path), numTerms_(terms.size()), dt_(dt)
{
    if (!append)
    {
        backupExistingFile(path);
    }
    file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
    if (!file_)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot create the energy file: ") + std::strerror(errno));
    }
    if (append)
    {
        return;
    }
    putI32(buffer_, kHeaderMagic);
    putI32(buffer_, kVersion);
    putI32(buffer_, static_cast<int32_t>(terms.size()));
    for (const auto& t : terms)
    {
        putString(buffer_, t);
        putString(buffer_, edrUnitOf(t));
    }
    flush();
}

EdrFile::~EdrFile()
{
    if (file_)
    {
        std::fclose(file_);
    }
}

void EdrFile::write(long step, double time, const std::vector<double>& values)
{
    const auto nre = static_cast<int32_t>(numTerms_);
    putDouble(buffer_, -2e10); // the first "real": the new format, in double precision
    putI32(buffer_, kFrameMagic);
    putI32(buffer_, kVersion);
    putDouble(buffer_, time);
    putI64(buffer_, step);
    putI32(buffer_, 0); // nsum: no sums stored
    putI64(buffer_, 0); // nsteps covered by sums
    putDouble(buffer_, dt_);
    putI32(buffer_, nre);
    putI32(buffer_, 0); // reserved
    putI32(buffer_, 0); // no blocks
    putI32(buffer_, nre * 4 * 8); // e_size: how readers tell the precision
    putI32(buffer_, 0); // reserved
    putI32(buffer_, 0); // compatibility int
    for (size_t i = 0; i < numTerms_; i++)
    {
        putDouble(buffer_, i < values.size() ? values[i] : 0.0);
    }
    flush();
}

void EdrFile::flush()
{
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size() || std::fflush(file_) != 0)
    {
        throw InputError(SourceLocation{ path_, 0 }, std::string("cannot write energies: ") + std::strerror(errno));
    }
    buffer_.clear();
}

} // namespace putmd
