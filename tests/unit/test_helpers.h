/* Shared helpers for unit tests: a temporary directory that writes files,
 * and one of the shipped systems loaded with its reference mdp. */
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"
#include "run/system_inputs.h"

namespace putmd::test
{

/* A cubic box of the given edge (nm). */
inline Box cubicBox(double edge)
{
    Matrix3 m;
    m(0, 0) = m(1, 1) = m(2, 2) = edge;
    return Box(m);
}

class TempDir
{
public:
    TempDir()
    {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() / ("putmd-unit-" + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    std::string write(const std::string& name, const std::string& text) const
    {
        const auto p = path_ / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p.string();
    }
    std::string path(const std::string& name = "") const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

/* tests/data/systems/NAME: topol.top, conf.gro and ref/ref.mdp, with the
 * coordinates in the build's precision. */
struct TestSystem
{
    SystemInputs            in;
    std::vector<Vec3<real>> x;
};

inline TestSystem loadTestSystem(const std::string& name)
{
    const std::string dir = std::string(PUTMD_TEST_DATA) + "/systems/" + name;
    InputPaths        paths;
    paths.topology    = dir + "/topol.top";
    paths.coordinates = dir + "/conf.gro";
    paths.mdp         = dir + "/ref/ref.mdp";
    TestSystem s{ loadSystem(paths), {} };
    for (const auto& p : s.in.coordinates.x)
    {
        s.x.push_back(Vec3<real>(p));
    }
    return s;
}

} // namespace putmd::test
