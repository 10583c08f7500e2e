/* Shared helpers for unit tests: a temporary directory that writes files. */
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace putmd::test
{

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

} // namespace putmd::test
