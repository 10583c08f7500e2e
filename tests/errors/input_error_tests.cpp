/* Input-error tests: every malformed input in tests/data/bad/cases.txt must
 * make `putmd_d energy` exit with status 1 and an error message naming the
 * file and line and saying what is wrong — never a crash (a signal, or the
 * internal-error status 3), never success, and never an output file.
 *
 * cases.txt has one case per line:
 *   name | option | file | expected location | expected text
 * option is p, c or f (which input the bad file replaces; the others come
 * from tests/data/tiny); file is relative to tests/data/bad; the location
 * (e.g. "truncated.gro:5") and the text must both appear in the message.
 */
#include <gtest/gtest.h>

#include "../test_names.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace
{

namespace fs = std::filesystem;

struct ErrorCase
{
    std::string name, option, file, location, text;
};

std::string trimmed(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<ErrorCase> loadCases()
{
    std::vector<ErrorCase> cases;
    std::ifstream          in(std::string(PUTMD_TEST_DATA) + "/bad/cases.txt");
    std::string            line;
    while (std::getline(in, line))
    {
        if (trimmed(line).empty() || trimmed(line)[0] == '#')
        {
            continue;
        }
        std::vector<std::string> f;
        std::stringstream        ss(line);
        std::string              part;
        while (std::getline(ss, part, '|'))
        {
            f.push_back(trimmed(part));
        }
        if (f.size() == 5)
        {
            cases.push_back({ f[0], f[1], f[2], f[3], f[4] });
        }
        else
        {
            cases.push_back({ "malformed_manifest_line", "", "", "", line });
        }
    }
    return cases;
}

std::string quote(const std::string& s)
{
    return "'" + s + "'";
}

struct RunResult
{
    int         exitStatus = -1; // -1: killed by a signal
    std::string stdoutText, stderrText;
};

RunResult runPutmd(const std::string& args, const fs::path& workDir)
{
    const fs::path out = workDir / "stdout.txt", err = workDir / "stderr.txt";
    const std::string cmd = std::string(PUTMD_BINARY) + " " + args + " >" + quote(out) + " 2>" + quote(err);
    const int status = std::system(cmd.c_str());
    RunResult r;
    if (WIFEXITED(status))
    {
        r.exitStatus = WEXITSTATUS(status);
    }
    auto slurp = [](const fs::path& p) {
        std::ifstream      in(p);
        std::ostringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    r.stdoutText = slurp(out);
    r.stderrText = slurp(err);
    return r;
}

class InputErrorTest : public ::testing::TestWithParam<ErrorCase>
{
};

TEST_P(InputErrorTest, FailsWithLocatedMessage)
{
    const ErrorCase& c = GetParam();
    ASSERT_NE(c.name, "malformed_manifest_line") << "bad line in cases.txt: " << c.text;
    const std::string data = PUTMD_TEST_DATA;
    std::string       top = data + "/tiny/topol.top", gro = data + "/tiny/conf.gro", mdp = data + "/tiny/grompp.mdp";
    const std::string bad = data + "/bad/" + c.file;
    ASSERT_TRUE(fs::exists(bad)) << bad;
    if (c.option == "p") top = bad;
    else if (c.option == "c") gro = bad;
    else if (c.option == "f") mdp = bad;
    else FAIL() << "option must be p, c or f, found " << c.option;

    const fs::path work = fs::temp_directory_path() / ("putmd-errtest-" + c.name);
    fs::remove_all(work);
    fs::create_directories(work);
    const fs::path json = work / "out.json";
    const RunResult r = runPutmd("energy -p " + quote(top) + " -c " + quote(gro) + " -f " + quote(mdp) + " -o " + quote(json), work);
    EXPECT_EQ(r.exitStatus, 1) << "expected exit status 1 (input error); stderr:\n" << r.stderrText;
    EXPECT_NE(r.stderrText.find("error: "), std::string::npos) << r.stderrText;
    EXPECT_NE(r.stderrText.find(c.location), std::string::npos)
            << "message does not name '" << c.location << "':\n" << r.stderrText;
    EXPECT_NE(r.stderrText.find(c.text), std::string::npos) << "message does not say '" << c.text << "':\n" << r.stderrText;
    EXPECT_FALSE(fs::exists(json)) << "an output file was written despite the error";
    fs::remove_all(work);
}

std::string caseName(const ::testing::TestParamInfo<ErrorCase>& info)
{
    return putmd::test::sanitizedTestName(info.param.name);
}

INSTANTIATE_TEST_SUITE_P(BadInputs, InputErrorTest, ::testing::ValuesIn(loadCases()), caseName);

TEST(InputErrorManifest, HasAtLeastThirtyCases)
{
    EXPECT_GE(loadCases().size(), 30u);
}

TEST(CommandLine, UnknownOptionIsAnError)
{
    const fs::path work = fs::temp_directory_path() / "putmd-errtest-cli";
    fs::create_directories(work);
    const RunResult r = runPutmd("energy -q nothing", work);
    EXPECT_EQ(r.exitStatus, 1);
    EXPECT_NE(r.stderrText.find("unknown option '-q'"), std::string::npos) << r.stderrText;
    fs::remove_all(work);
}

TEST(CommandLine, ErrorLeavesAnEarlierOutputFileUntouched)
{
    const std::string data = PUTMD_TEST_DATA;
    const fs::path    work = fs::temp_directory_path() / "putmd-errtest-keep";
    fs::create_directories(work);
    const fs::path json = work / "out.json";
    std::ofstream(json) << "earlier results";
    const RunResult r = runPutmd("energy -p " + quote(data + "/tiny/topol.top") + " -c " + quote(data + "/bad/gro/truncated.gro")
                                         + " -f " + quote(data + "/tiny/grompp.mdp") + " -o " + quote(json),
                                 work);
    EXPECT_EQ(r.exitStatus, 1);
    std::ifstream in(json);
    std::string   content;
    std::getline(in, content);
    EXPECT_EQ(content, "earlier results");
    fs::remove_all(work);
}

TEST(CommandLine, SigtermStopsARunCleanly)
{
    // a run far too long to finish gets SIGTERM after a second: it must stop
    // at the next pair-search step, write NAME.gro and its log, and exit 0
    const std::string data = PUTMD_TEST_DATA;
    const fs::path    work = fs::temp_directory_path() / "putmd-sigterm";
    fs::remove_all(work);
    fs::create_directories(work);
    std::ofstream(work / "md.mdp") << "integrator = md\nnsteps = 100000000\ndt = 0.001\ncoulombtype = PME\nrcoulomb = 1.0\n"
                                      "rvdw = 1.0\nnstenergy = 100\n";
    const std::string run = std::string(PUTMD_BINARY) + " run -nt 1 -p " + quote(data + "/tiny/topol.top") + " -c "
                            + quote(data + "/tiny/conf.gro") + " -f " + quote((work / "md.mdp").string()) + " -deffnm "
                            + quote((work / "md").string());
    const std::string cmd = "cd " + quote(work.string()) + " && (" + run + " >out.txt 2>err.txt & pid=$!; sleep 1; kill -TERM $pid; "
                            "wait $pid; echo $? > status.txt)";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream statusFile(work / "status.txt");
    int           status = -1;
    statusFile >> status;
    EXPECT_EQ(status, 0);
    std::ifstream      log(work / "md.log");
    std::stringstream text;
    text << log.rdbuf();
    EXPECT_NE(text.str().find("received SIGTERM: stopped at the next pair-search step"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("Performance:"), std::string::npos);
    EXPECT_TRUE(fs::exists(work / "md.gro"));
    fs::remove_all(work);
}

TEST(CommandLine, GoodTinyInputSucceeds)
{
    const std::string data = PUTMD_TEST_DATA;
    const fs::path    work = fs::temp_directory_path() / "putmd-errtest-good";
    fs::create_directories(work);
    const fs::path  json = work / "out.json";
    const RunResult r    = runPutmd("energy -p " + quote(data + "/tiny/topol.top") + " -c " + quote(data + "/tiny/conf.gro")
                                         + " -f " + quote(data + "/tiny/grompp.mdp") + " -o " + quote(json),
                                 work);
    EXPECT_EQ(r.exitStatus, 0) << r.stderrText;
    EXPECT_NE(r.stdoutText.find("Potential"), std::string::npos);
    // the JSON has the documented shape: natoms, named terms, one force per atom
    std::ifstream      in(json);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string j = text.str();
    EXPECT_NE(j.find("\"natoms\": 13"), std::string::npos) << j.substr(0, 200);
    for (const char* term : { "\"Bond\"", "\"Angle\"", "\"Proper Dih.\"", "\"LJ-14\"", "\"Coulomb-14\"", "\"LJ (SR)\"",
                              "\"Disper. corr.\"", "\"Coulomb (SR)\"", "\"Coul. recip.\"", "\"Potential\"", "\"forces\"",
                              "\"pme_grid\"" })
    {
        EXPECT_NE(j.find(term), std::string::npos) << "no " << term << " in the JSON";
    }
    fs::remove_all(work);
}

} // namespace
