/* io/energy_file.h — the energy time series as CSV.
 *
 * One header line of column names (time and step, then the GROMACS energy
 * term names, Kinetic En., Total Energy, Conserved En., Temperature,
 * Pressure, Box-X/Y/Z, Volume, Density), then one row per nstenergy steps,
 * full precision. Loads directly in pandas (pd.read_csv). An existing file
 * is kept as a #backup#; rows are flushed as they are written.
 */
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace putmd
{

class EnergyFile
{
public:
    /* append: continue an existing file (no header) after a checkpoint restart. */
    EnergyFile(const std::string& path, const std::vector<std::string>& columns, bool append = false);
    ~EnergyFile();
    EnergyFile(const EnergyFile&)            = delete;
    EnergyFile& operator=(const EnergyFile&) = delete;

    void write(long step, double time, const std::vector<double>& values);

private:
    std::FILE*  file_ = nullptr;
    std::string path_;
    size_t      numColumns_;
};

} // namespace putmd
