#include "io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

namespace putmd
{

void writeFileAtomically(const std::string& path, const std::string& contents)
{
    std::string tmp = path + ".putmd-tmp-XXXXXX";
    const int   fd  = mkstemp(tmp.data());
    if (fd < 0)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot create an output file beside it: ") + std::strerror(errno));
    }
    auto fail = [&](const char* what) {
        const int err = errno;
        ::close(fd);
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 }, std::string(what) + ": " + std::strerror(err)
                                                            + "; any earlier version of the file is unchanged");
    };
    size_t done = 0;
    while (done < contents.size())
    {
        const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
        if (n < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            fail("cannot write output");
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0)
    {
        fail("cannot flush output to disk");
    }
    ::fchmod(fd, 0644);
    if (::close(fd) != 0)
    {
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot close output: ") + std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        const int err = errno;
        std::remove(tmp.c_str());
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot move output into place: ") + std::strerror(err));
    }
}

std::string backupExistingFile(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec))
    {
        return "";
    }
    const fs::path p(path);
    for (int n = 1; n < 100000; n++)
    {
        const fs::path backup = p.parent_path() / ("#" + p.filename().string() + "." + std::to_string(n) + "#");
        if (!fs::exists(backup, ec))
        {
            fs::rename(p, backup, ec);
            if (ec)
            {
                throw InputError(SourceLocation{ path, 0 }, "cannot back up the existing file to " + backup.string() + ": " + ec.message());
            }
            return backup.string();
        }
    }
    throw InputError(SourceLocation{ path, 0 }, "too many backups (#" + p.filename().string() + ".N#) beside it; remove some");
}

} // namespace putmd
