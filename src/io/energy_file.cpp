#include "io/energy_file.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/atomic_file.h"

namespace putmd
{

EnergyFile::EnergyFile(const std::string& path, const std::vector<std::string>& columns, bool append) :
    path_(path), numColumns_(columns.size())
{
    if (!append)
    {
        backupExistingFile(path);
    }
    file_ = std::fopen(path.c_str(), append ? "a" : "w");
    if (!file_)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot create the energy file: ") + std::strerror(errno));
    }
    if (append)
    {
        return;
    }
    std::fprintf(file_, "Time (ps),Step");
    for (const auto& c : columns)
    {
        std::fprintf(file_, ",%s", c.c_str());
    }
    std::fprintf(file_, "\n");
    std::fflush(file_);
}

EnergyFile::~EnergyFile()
{
    if (file_)
    {
        std::fclose(file_);
    }
}

void EnergyFile::write(long step, double time, const std::vector<double>& values)
{
    std::fprintf(file_, "%.6f,%ld", time, step);
    for (size_t i = 0; i < numColumns_ && i < values.size(); i++)
    {
        std::fprintf(file_, ",%.15g", values[i]);
    }
    std::fprintf(file_, "\n");
    if (std::fflush(file_) != 0 || std::ferror(file_))
    {
        throw InputError(SourceLocation{ path_, 0 }, std::string("cannot write energies: ") + std::strerror(errno));
    }
}

} // namespace putmd
