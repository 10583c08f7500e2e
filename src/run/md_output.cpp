#include "run/md_output.h"

#include "core/clock.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"
#include "io/atomic_file.h"

namespace putmd
{

MdLog::MdLog(const std::string& path, bool append) : path_(path)
{
    if (path.empty())
    {
        return; // a rank that writes no log
    }
    if (!append)
    {
        backupExistingFile(path);
    }
    file_ = std::fopen(path.c_str(), append ? "a" : "w");
    if (!file_)
    {
        throw InputError(SourceLocation{ path, 0 }, std::string("cannot create the log file: ") + std::strerror(errno));
    }
}

MdLog::~MdLog()
{
    if (file_)
    {
        std::fclose(file_);
    }
}

void MdLog::line(const std::string& text)
{
    if (!file_)
    {
        return;
    }
    std::fprintf(file_, "%s\n", text.c_str());
    std::fflush(file_);
}

void MdLog::energies(long step, double time, const StepEnergies& e)
{
    std::string out = fmt::format("           Step           Time\n{:>15}{:>15.5f}\n\n   Energies (kJ/mol)\n", step, time);
    std::vector<std::pair<std::string, double>> items;
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (e.terms.present[t])
        {
            items.emplace_back(energyTermName(static_cast<EnergyTerm>(t)), e.terms.value[t]);
        }
    }
    items.emplace_back("Kinetic En.", e.kinetic);
    items.emplace_back("Total Energy", e.total);
    items.emplace_back("Conserved En.", e.conserved);
    items.emplace_back("Temperature", e.temperature);
    items.emplace_back("Pressure (bar)", e.pressure);
    for (size_t i = 0; i < items.size(); i += 5)
    {
        std::string names, values;
        for (size_t k = i; k < std::min(items.size(), i + 5); k++)
        {
            names += fmt::format("{:>15}", items[k].first);
            values += fmt::format("{:>15.5e}", items[k].second);
        }
        out += names + "\n" + values + "\n";
    }
    line(out);
}

void MdLog::averages(const std::vector<std::string>& names, const std::vector<double>& sums, long count)
{
    if (count == 0)
    {
        return;
    }
    std::string out = fmt::format("   <======  ###############  ==>\n   <====  A V E R A G E S  ====>\n   <==  ###############  ======>\n\n"
                                  "   Averages over {} steps with energies\n",
                                  count);
    for (size_t i = 0; i < names.size(); i += 5)
    {
        std::string n, v;
        for (size_t k = i; k < std::min(names.size(), i + 5); k++)
        {
            n += fmt::format("{:>15}", names[k]);
            v += fmt::format("{:>15.5e}", sums[k] / count);
        }
        out += n + "\n" + v + "\n";
    }
    line(out);
}

std::vector<std::string> energyColumns(const EnergyTerms& present, bool withPressureDC)
{
    std::vector<std::string> c;
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (present.present[t])
        {
            c.push_back(energyTermName(static_cast<EnergyTerm>(t)));
        }
    }
    for (const char* name : { "Kinetic En.", "Total Energy", "Conserved En.", "Temperature" })
    {
        c.push_back(name);
    }
    if (withPressureDC)
    {
        c.push_back("Pres. DC (bar)");
    }
    for (const char* name : { "Pressure", "Box-X", "Box-Y", "Box-Z", "Volume", "Density" })
    {
        c.push_back(name);
    }
    return c;
}

std::vector<double> energyRow(const StepEnergies& e, bool withPressureDC)
{
    std::vector<double> r;
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (e.terms.present[t])
        {
            r.push_back(e.terms.value[t]);
        }
    }
    r.insert(r.end(), { e.kinetic, e.total, e.conserved, e.temperature });
    if (withPressureDC)
    {
        r.push_back(e.pressureDC);
    }
    r.insert(r.end(), { e.pressure, e.box.vectors()(0, 0), e.box.vectors()(1, 1), e.box.vectors()(2, 2), e.box.volume(),
                        e.density });
    return r;
}

Progress::Progress(long nsteps, double dt) :
    nsteps_(nsteps),
    dt_(dt),
    terminal_(isatty(STDERR_FILENO) != 0),
    start_(clockNow()),
    realStart_(std::chrono::steady_clock::now()),
    lastPrint_(realStart_)
{
}

double Progress::elapsedSeconds() const
{
    return std::chrono::duration<double>(clockNow() - start_).count();
}

double Progress::nsPerDay(long stepsDone) const
{
    const double s = elapsedSeconds();
    return s > 0 ? stepsDone * dt_ * 1e-3 * 86400 / s : 0;
}

void Progress::update(long step, bool force)
{
    if (quiet_)
    {
        return;
    }
    const auto   now     = std::chrono::steady_clock::now();
    const double since   = std::chrono::duration<double>(now - lastPrint_).count();
    const int    percent = nsteps_ > 0 ? static_cast<int>(100 * step / nsteps_) : 100;
    if (!force && (terminal_ ? since < 1.0 : (percent / 10 == lastPercent_ / 10 || since < 10.0)))
    {
        return;
    }
    lastPrint_   = now;
    lastPercent_ = percent;
    const double rate = nsPerDay(step);
    const double real = std::chrono::duration<double>(now - realStart_).count();
    const double eta  = step > 0 ? real * double(nsteps_ - step) / double(step) : 0;
    const std::string text = fmt::format("step {} of {}, {:.3f} ps, {:.2f} ns/day, {:.0f} s left", step, nsteps_,
                                         step * dt_, rate, eta);
    if (terminal_)
    {
        std::fprintf(stderr, "\r%-78s", text.c_str());
    }
    else
    {
        std::fprintf(stderr, "%s\n", text.c_str());
    }
    std::fflush(stderr);
}

void Progress::finish()
{
    if (terminal_ && !quiet_)
    {
        std::fprintf(stderr, "\n");
    }
}

} // namespace putmd
