/* The accounting table's columns stay in place whatever the numbers: a
 * long run on many ranks sums millions of giga-cycles (1,024 simulated ranks
 * gave 1.2 million in the PME row), which ran into the next column and
 * broke the scripts that read the table by fields (bench/smpi_scaling.sh). */
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "timing/perf_report.h"

namespace putmd
{
namespace
{

std::vector<std::string> fields(const std::string& line)
{
    std::istringstream       in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
    {
        out.push_back(w);
    }
    return out;
}

/* The table's line for a top-level stage name ("Force", "Rest", ...). */
std::string lineOf(const std::string& text, const std::string& name)
{
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
    {
        if (line.rfind(" " + name + " ", 0) == 0)
        {
            return line;
        }
    }
    return {};
}

PerfInputs inputsWithForceCycles(double forceCycles)
{
    PerfInputs in;
    for (int r = 0; r < 2; ++r)
    {
        StageTimers t;
        t.set(Stage::Force, 0.5, 40, forceCycles);
        t.set(Stage::Update, 0.1, 40, 1e8);
        in.ppRanks.push_back(t);
        in.ppWallSeconds.push_back(0.7);
    }
    in.steps = 40;
    in.dtPs  = 0.002;
    in.atoms = 1000;
    return in;
}

TEST(PerfReport, GigaCyclesStayInTheirColumn)
{
    const std::string header = lineOf(perfLogText(inputsWithForceCycles(2e9)), "Activity");
    ASSERT_FALSE(header.empty());
    for (double cycles : { 2e9, 6e14, 4e18 })
    {
        const std::string text  = perfLogText(inputsWithForceCycles(cycles));
        const std::string force = lineOf(text, "Force");
        ASSERT_FALSE(force.empty()) << text;
        const auto f = fields(force);
        // Force, ranks, threads, calls, wall, G-cycles, %, min, max, imbalance
        ASSERT_EQ(f.size(), 10u) << "cycles " << cycles << ":\n" << force;
        EXPECT_DOUBLE_EQ(std::stod(f[4]), 0.5);
        EXPECT_NEAR(std::stod(f[5]), 2 * cycles * 1e-9, 2 * cycles * 1e-9 * 1e-6 + 1e-3) << force;
        if (cycles < 1e17) // up to a hundred million G-cycles the row keeps the header's width
        {
            EXPECT_EQ(force.size(), header.size()) << force << "\n" << header;
        }
        for (const char* name : { "Rest", "Total" })
        {
            const auto g = fields(lineOf(text, name));
            ASSERT_EQ(g.size(), 4u) << name << ": " << lineOf(text, name);
        }
    }
}

} // namespace
} // namespace putmd
