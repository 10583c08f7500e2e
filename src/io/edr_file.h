/* io/edr_file.h — energies in GROMACS's energy file format (NAME.edr).
 *
 * Written beside the CSV, with the same terms, so that `gmx energy`,
 * panedr/pyedr and every script a GROMACS user has read putmd's energies.
 * The format is XDR (big-endian), as GROMACS's enxio writes its version 5:
 *
 *   header   int -55555 (magic), int 5 (version), int nre, then per term
 *            two XDR strings: name and unit (u32 length, bytes, padding to
 *            4 bytes);
 *   frame    real -2e10 (marks the new format and the precision), int
 *            -7777777, int 5, double time, int64 step, int nsum (0: no
 *            sums stored), int64 nsteps, double dt, int nre, int 0, int
 *            nblock (0), int e_size (nre * 4 * sizeof(real)), int 0,
 *            int 0, then nre reals: the values.
 *
 * putmd writes reals as doubles (GROMACS's double-precision layout, which
 * the mixed-precision `gmx energy` recognises from e_size and reads), so
 * the values are those of the CSV to the last bit. Averages are left to the
 * reader (nsum 0), as GROMACS does for frames of one step.
 */
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace putmd
{

/* GROMACS's unit of a term by its name ("Temperature" -> "K", ...). */
std::string edrUnitOf(const std::string& term);

class EdrFile
{
public:
    /* append: continue an existing file (no header) after a checkpoint restart. */
    EdrFile(const std::string& path, const std::vector<std::string>& terms, double dt, bool append = false);
    ~EdrFile();
    EdrFile(const EdrFile&)            = delete;
    EdrFile& operator=(const EdrFile&) = delete;

    void write(long step, double time, const std::vector<double>& values);

private:
    void flush();

    std::FILE*             file_ = nullptr;
    std::string            path_;
    size_t                 numTerms_;
    double                 dt_;
    std::vector<uint8_t>   buffer_;
};

} // namespace putmd
