/* Unit tests of atomic output writing. */
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

std::string slurp(const std::string& path)
{
    std::ifstream      in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporaryFiles)
{
    test::TempDir d;
    const auto    path = d.write("out.json", "old");
    writeFileAtomically(path, "new contents\n");
    EXPECT_EQ(slurp(path), "new contents\n");
    int files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(d.path()))
    {
        files++;
    }
    EXPECT_EQ(files, 1);
}

TEST(AtomicFile, UnwritableDirectoryIsAnErrorNamingThePath)
{
    test::TempDir d;
    const std::string path = d.path("no-such-dir/out.json");
    try
    {
        writeFileAtomically(path, "x");
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("no-such-dir/out.json"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace putmd
