/* Unit tests of the topology preprocessor. */
#include <gtest/gtest.h>

#include "io/preprocessor.h"
#include "test_helpers.h"

namespace putmd
{
namespace
{

std::vector<std::string> texts(const std::vector<SourceLine>& lines)
{
    std::vector<std::string> t;
    for (const auto& l : lines)
    {
        t.push_back(l.text);
    }
    return t;
}

TEST(Preprocessor, DefinesSubstituteWholeWordsAndConditionalsNest)
{
    test::TempDir d;
    const auto    top = d.write("a.top", "#define gb_1 0.1 1000.0\n"
                                         "#define FLAG\n"
                                         "1 2 2 gb_1 ; comment\n"
                                         "x gb_10 y\n"
                                         "#ifdef FLAG\n"
                                         "#ifndef OTHER\n"
                                         "inner\n"
                                         "#else\n"
                                         "not-here\n"
                                         "#endif\n"
                                         "#else\n"
                                         "nor-here\n"
                                         "#endif\n"
                                         "#undef FLAG\n"
                                         "#ifdef FLAG\n"
                                         "gone\n"
                                         "#endif\n"
                                         "a \\\n"
                                         "  b\n");
    const auto lines = preprocessTopology(top, {});
    const auto t     = texts(lines);
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0], "1 2 2 0.1 1000.0 ");
    EXPECT_EQ(t[1], "x gb_10 y");
    EXPECT_EQ(t[2], "inner");
    EXPECT_EQ(t[3], "a    b");
    EXPECT_EQ(lines[2].where.line, 7);
}

TEST(Preprocessor, IncludeSearchOrder)
{
    test::TempDir d;
    d.write("local/inc.itp", "from-local\n");
    d.write("idir/inc.itp", "from-I\n");
    d.write("idir/only_i.itp", "only-I\n");
    d.write("gmxlib/only_lib.itp", "only-GMXLIB\n");
    d.write("data/only_data.itp", "only-data\n");
    d.write("gmxlib/only_data.itp", "gmxlib-before-data\n");
    const auto top = d.write("local/a.top", "#include \"inc.itp\"\n#include \"only_i.itp\"\n#include <only_lib.itp>\n"
                                            "#include \"only_data.itp\"\n");
    PreprocessorOptions o;
    o.includeDirs = { d.path("idir") };
    o.gmxlibDirs  = { d.path("gmxlib") };
    o.dataDir     = d.path("data");
    const auto t  = texts(preprocessTopology(top, o));
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0], "from-local");
    EXPECT_EQ(t[1], "only-I");
    EXPECT_EQ(t[2], "only-GMXLIB");
    EXPECT_EQ(t[3], "gmxlib-before-data");
}

TEST(Preprocessor, LinesKeepTheirIncludedFile)
{
    test::TempDir d;
    d.write("ff/b.itp", "\n\nline-three\n");
    const auto top   = d.write("a.top", "first\n#include \"ff/b.itp\"\n");
    const auto lines = preprocessTopology(top, {});
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[1].where.file.find("b.itp"), std::string::npos);
    EXPECT_EQ(lines[1].where.line, 3);
}

TEST(Preprocessor, ErrorsNameFileAndLine)
{
    test::TempDir d;
    auto expectError = [&](const std::string& text, const std::string& where, const std::string& what) {
        const auto top = d.write("e.top", text);
        try
        {
            preprocessTopology(top, {});
            ADD_FAILURE() << "no error for: " << text;
        }
        catch (const InputError& e)
        {
            EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    expectError("a\n#ifdef X\nb\n", "e.top:2", "unterminated");
    expectError("#endif\n", "e.top:1", "#endif without");
    expectError("x\n#include \"missing.itp\"\n", "e.top:2", "cannot find included file 'missing.itp'");
    expectError("#if 1\n#endif\n", "e.top:1", "not supported");
    expectError("#pragma once\n", "e.top:1", "unknown preprocessor directive");
    expectError("#include \"e.top\"\n", "e.top:1", "nested more than");
}

TEST(Preprocessor, CommandLineDefines)
{
    test::TempDir       d;
    const auto          top = d.write("a.top", "#ifdef POSRES\nyes VALUE\n#endif\n");
    PreprocessorOptions o;
    o.defines["POSRES"] = "";
    o.defines["VALUE"]  = "42";
    const auto t        = texts(preprocessTopology(top, o));
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0], "yes 42");
}

TEST(Preprocessor, MacroNamesInsideTheKeywordDefineGetTheirOwnValue)
{
    const std::map<std::string, std::string> files{ { "a.top", "#define e 1.5\n#define fin 2\n#define   de\te 3\ne fin de\n" } };
    PreprocessorOptions                      o;
    o.memoryFiles = &files;
    const auto t  = texts(preprocessTopology("a.top", o));
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0], "1.5 2 e 3");
}

TEST(Preprocessor, InMemoryFilesFollowTheSearchOrderAndNeverReachTheFileSystem)
{
    const std::map<std::string, std::string> files{ { "top/a.top", "#include \"ff/b.itp\"\n#include \"c.itp\"\nend\n" },
                                                    { "top/ff/b.itp", "from-b\n" },
                                                    { "idir/c.itp", "from-I\n" } };
    PreprocessorOptions o;
    o.memoryFiles = &files;
    o.includeDirs = { "idir" };
    const auto t  = texts(preprocessTopology("top/a.top", o));
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0], "from-b");
    EXPECT_EQ(t[1], "from-I");
    EXPECT_EQ(t[2], "end");

    // a real file (absolute or relative) is not visible
    const std::map<std::string, std::string> escape{ { "a.top", "#include \"/etc/hostname\"\n" },
                                                     { "b.top", "#include \"../../../../etc/hostname\"\n" } };
    o.memoryFiles = &escape;
    o.includeDirs.clear();
    EXPECT_THROW(preprocessTopology("a.top", o), InputError);
    EXPECT_THROW(preprocessTopology("b.top", o), InputError);
    EXPECT_THROW(preprocessTopology("absent.top", o), InputError);
}

} // namespace
} // namespace putmd
