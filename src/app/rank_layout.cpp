#include "app/rank_layout.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h> // mkdtemp, setenv
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "app/command_line.h"
#include "app/commands.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "io/mdp.h"
#include "io/text.h"
#include "run/stop_request.h"

namespace putmd
{

namespace
{

constexpr const char* kReasonVariable = "PUTMD_LAYOUT";
// a trial that has not finished after this long is stopped (a hung launch)
constexpr int kTrialTimeoutSeconds = 600;

std::string g_reason;

struct Layout
{
    int ranks   = 1;
    int threads = 1;
};

std::string layoutName(const Layout& l)
{
    return fmt::format("{} rank{} x {} thread{}", l.ranks, l.ranks == 1 ? "" : "s", l.threads, l.threads == 1 ? "" : "s");
}

int usableCores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
    {
        return std::max(1, CPU_COUNT(&set));
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

std::string selfExecutable()
{
    std::error_code ec;
    const auto      p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
    {
        throw InputError("putmd run: -ntmpi: cannot find this program's path (/proc/self/exe: " + ec.message()
                         + "); start the ranks with mpirun -np N instead");
    }
    return p.string();
}

std::string launcher()
{
    const char* l = std::getenv("MPIEXEC");
    return l != nullptr && *l != '\0' ? l : "mpirun";
}

/* mpirun's arguments for R ranks of T threads on C cores: one core per
 * rank, or T cores per rank, or none bound when the ranks outnumber the
 * cores. */
std::vector<std::string> launchPrefix(const Layout& l, int cores)
{
    std::vector<std::string> a = { launcher(), "-np", std::to_string(l.ranks) };
    if (l.ranks * l.threads > cores)
    {
        a.insert(a.end(), { "--oversubscribe", "--bind-to", "none" });
    }
    else if (l.threads == 1)
    {
        a.insert(a.end(), { "--bind-to", "core" });
    }
    else
    {
        a.insert(a.end(), { "--map-by", "slot:PE=" + std::to_string(l.threads), "--bind-to", "core" });
    }
    return a;
}

/* args without the named options (and their values, as the specs count them). */
std::vector<std::string> withoutOptions(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                                        const std::vector<std::string>& names)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); i++)
    {
        const std::string& a = args[i];
        const auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return "-" + s.name == a; });
        const bool drop = spec != specs.end() && std::find(names.begin(), names.end(), spec->name) != names.end();
        const int  values = spec == specs.end() || spec->valueName.empty() ? 0 : spec->numValues;
        if (!drop)
        {
            out.push_back(a);
        }
        for (int v = 0; v < values && i + 1 < args.size(); v++)
        {
            i++;
            if (!drop)
            {
                out.push_back(args[i]);
            }
        }
    }
    return out;
}

/* Runs argv with stdout and stderr into outFile; the exit status (127: it
 * did not start; 124: stopped after kTrialTimeoutSeconds). */
int runChild(const std::vector<std::string>& argv, const std::string& outFile)
{
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = fork();
    if (pid < 0)
    {
        return 127;
    }
    if (pid == 0)
    {
        const int fd = open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
        {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        unsetenv(kReasonVariable);
        std::vector<char*> c;
        for (const auto& s : argv)
        {
            c.push_back(const_cast<char*>(s.c_str()));
        }
        c.push_back(nullptr);
        execvp(c[0], c.data());
        const std::string msg = "cannot start " + argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!write(2, msg.data(), msg.size());
        _exit(127);
    }
    const auto start = std::chrono::steady_clock::now();
    for (;;)
    {
        int         status = 0;
        const pid_t r      = waitpid(pid, &status, WNOHANG);
        if (r == pid)
        {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (r < 0 && errno != EINTR)
        {
            return 127;
        }
        const bool stop = stopRequestCount() > 0;
        if (stop || std::chrono::steady_clock::now() - start > std::chrono::seconds(kTrialTimeoutSeconds))
        {
            kill(pid, SIGTERM);
            for (int i = 0; i < 250 && waitpid(pid, &status, WNOHANG) == 0; i++)
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (stop)
            {
                // the scratch directory goes with the exception (TrialDir)
                throw InputError("putmd run: stopped by " + stopRequestReason()
                                 + " while timing the layouts (-ntmpi); nothing was written");
            }
            return 124;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

/* The last non-empty line of a file that starts with "error" or names the
 * failure, else its last line (for a failed trial's reason). */
std::string lastError(const std::string& file)
{
    std::ifstream in(file);
    std::string   line, last, error;
    while (std::getline(in, line))
    {
        if (!line.empty())
        {
            last = line;
            if (line.find("rror") != std::string::npos)
            {
                error = line;
            }
        }
    }
    std::string s = error.empty() ? last : error;
    return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

std::optional<double> steadyMsPerStep(const std::string& log)
{
    std::ifstream    in(log);
    std::string      line;
    const std::regex steady(R"(^Steady state: ([0-9.eE+-]+) ms per step)");
    std::smatch      m;
    while (std::getline(in, line))
    {
        if (std::regex_search(line, m, steady))
        {
            return std::stod(m[1].str());
        }
    }
    return std::nullopt;
}

class TrialDir
{
public:
    TrialDir()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "putmd-layout-trial-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr)
        {
            throw InputError("putmd run: -ntmpi auto: cannot create a scratch directory for the layout trials in "
                             + std::filesystem::temp_directory_path().string()
                             + " (set TMPDIR to a writable directory, or give -ntmpi a count)");
        }
        path_ = pattern;
    }
    ~TrialDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TrialDir(const TrialDir&)            = delete;
    TrialDir& operator=(const TrialDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

/* Why the layouts are not timed, or "" when they are. */
std::string reasonNotToMeasure(const ParsedOptions& opt, const std::string& mode, int cores, int numLayouts)
{
    if (cores < 2)
    {
        return "this process may run on 1 core";
    }
    if (opt.has("cpi"))
    {
        return "a continuation (-cpi) runs on the ranks it is given";
    }
    if (opt.has("nt") && opt.get("nt") != "0")
    {
        return "-nt " + opt.get("nt") + " sets the threads";
    }
    if (opt.has("dd"))
    {
        return "-dd sets the domains";
    }
    std::optional<MdpOptions> mdp;
    try
    {
        mdp = readMdp(opt.get("f")).options;
    }
    catch (const std::exception&)
    {
        return "the mdp file could not be read"; // the run reports why
    }
    if (mdp->integrator == Integrator::Steep)
    {
        return "a minimisation runs on one rank unless -ntmpi or mpirun gives more";
    }
    long nsteps = mdp->nsteps;
    if (opt.has("nsteps"))
    {
        const auto n = tryParseInt(opt.get("nsteps"));
        if (!n)
        {
            return "-nsteps is not a number"; // the run reports it
        }
        nsteps = *n;
    }
    const long trialSteps = static_cast<long>(numLayouts) * kLayoutTrialRounds * kLayoutTrialSteps;
    // nsteps -1: no end (as in GROMACS), long enough
    if (mode == "auto" && nsteps >= 0 && nsteps < kStepsPerLayoutTrialStep * trialSteps)
    {
        return fmt::format("a run of {} steps; the layouts are timed from {} steps on ({} times the trials' {} steps; "
                           "-ntmpi measure times them always)",
                           nsteps, kStepsPerLayoutTrialStep * trialSteps, kStepsPerLayoutTrialStep, trialSteps);
    }
    return "";
}

[[noreturn]] void launchRanks(const std::vector<std::string>& runArgs, const Layout& l, int cores, const std::string& why)
{
    std::vector<std::string> argv = launchPrefix(l, cores);
    argv.push_back(selfExecutable());
    argv.push_back("run");
    const auto specs = runCommandOptions();
    const bool ntGiven = std::find(runArgs.begin(), runArgs.end(), "-nt") != runArgs.end();
    for (const auto& a : withoutOptions(runArgs, specs, { "ntmpi" }))
    {
        argv.push_back(a);
    }
    if (!ntGiven)
    {
        argv.insert(argv.end(), { "-nt", std::to_string(l.threads) });
    }
    setenv(kReasonVariable, why.c_str(), 1);
    std::cout << "putmd run: starting " << layoutName(l) << " through " << argv[0] << " (" << why << ")\n";
    std::cout.flush();
    std::vector<char*> c;
    for (const auto& s : argv)
    {
        c.push_back(const_cast<char*>(s.c_str()));
    }
    c.push_back(nullptr);
    execvp(c[0], c.data());
    throw InputError("putmd run: -ntmpi " + std::to_string(l.ranks) + ": cannot start the launcher '" + argv[0]
                     + "': " + std::strerror(errno)
                     + " (install Open MPI's mpirun, set MPIEXEC to the launcher, or use -ntmpi 1)");
}

} // namespace

bool isNtmpiValue(const std::string& value)
{
    if (value == "auto" || value == "measure")
    {
        return true;
    }
    const auto n = tryParseInt(value);
    return n && *n >= 1 && *n <= 1024;
}

std::string rankLayoutReason()
{
    return g_reason;
}

void chooseRankLayout(const std::vector<std::string>& args)
{
    if (comm::Communicator::startedByLauncher())
    {
        const char* r = std::getenv(kReasonVariable);
        g_reason      = r != nullptr ? r : "";
        return;
    }
    const auto           specs = runCommandOptions();
    std::optional<ParsedOptions> parsed;
    try
    {
        parsed = parseOptions("run", specs, args);
    }
    catch (const InputError&)
    {
        return; // the run command reports it
    }
    const ParsedOptions& opt  = *parsed;
    const std::string    mode = opt.get("ntmpi");
    if (opt.has("h"))
    {
        return;
    }
    if (!isNtmpiValue(mode))
    {
        throw InputError("putmd run: -ntmpi '" + mode + "' is not a rank count; valid: auto, measure or 1..1024");
    }
    const int cores = usableCores();
    if (mode != "auto" && mode != "measure")
    {
        const int n = static_cast<int>(*tryParseInt(mode));
        if (n == 1)
        {
            g_reason = "1 rank (-ntmpi 1)";
            return;
        }
        const Layout l{ n, std::max(1, cores / n) };
        if (n > cores)
        {
            std::cerr << "warning: -ntmpi " << n << " starts more ranks than the " << cores
                      << " cores this process may use; they share cores (for tests, not for speed)\n";
        }
        launchRanks(args, l, cores, fmt::format("-ntmpi {}: {} on {} cores", n, layoutName(l), cores));
    }
    std::vector<Layout> layouts;
    for (int r = 1; r <= cores; r++)
    {
        if (cores % r == 0)
        {
            layouts.push_back({ r, cores / r });
        }
    }
    const std::string skip = reasonNotToMeasure(opt, mode, cores, static_cast<int>(layouts.size()));
    if (!skip.empty())
    {
        g_reason = "1 rank with threads, not timed against more ranks (-ntmpi " + mode + "): " + skip;
        return;
    }
    installStopSignalHandlers(); // SIGINT, SIGTERM: stop the trial, remove the scratch directory
    std::cout << "putmd run: -ntmpi " << mode << ": timing " << layouts.size() << " layouts on " << cores
              << " cores, " << kLayoutTrialSteps << " steps each, " << kLayoutTrialRounds << " rounds\n";
    const std::string        self  = selfExecutable();
    const std::vector<std::string> base =
            withoutOptions(args, specs, { "ntmpi", "deffnm", "nsteps", "cpt", "perf", "maxh", "nt" });
    std::vector<double>      best(layouts.size(), -1);
    std::vector<std::string> failed(layouts.size());
    {
        TrialDir dir;
        for (int round = 0; round < kLayoutTrialRounds; round++)
        {
            for (size_t k = 0; k < layouts.size(); k++)
            {
                if (!failed[k].empty())
                {
                    continue;
                }
                const Layout&            l    = layouts[k];
                const std::string        name = fmt::format("{}/r{}x{}", dir.path(), l.ranks, l.threads);
                std::vector<std::string> argv;
                if (l.ranks > 1)
                {
                    argv = launchPrefix(l, cores);
                }
                argv.push_back(self);
                argv.push_back("run");
                argv.insert(argv.end(), base.begin(), base.end());
                argv.insert(argv.end(), { "-deffnm", name, "-nsteps", std::to_string(kLayoutTrialSteps), "-cpt", "-1",
                                          "-nt", std::to_string(l.threads) });
                if (l.ranks == 1)
                {
                    argv.insert(argv.end(), { "-ntmpi", "1" });
                }
                const int  code = runChild(argv, name + ".out");
                const auto ms   = code == 0 ? steadyMsPerStep(name + ".log") : std::nullopt;
                if (!ms)
                {
                    failed[k] = code == 0 ? "no steady time in its log"
                                          : fmt::format("failed (exit {}: {})", code, lastError(name + ".out"));
                    continue;
                }
                best[k] = best[k] < 0 ? *ms : std::min(best[k], *ms);
                std::cout << fmt::format("  {}: {:.3f} ms per step\n", layoutName(l), *ms);
            }
        }
    }
    int chosen = -1;
    for (size_t k = 0; k < layouts.size(); k++)
    {
        if (best[k] > 0 && (chosen < 0 || best[k] < best[size_t(chosen)]))
        {
            chosen = static_cast<int>(k);
        }
    }
    std::string times;
    for (size_t k = 0; k < layouts.size(); k++)
    {
        times += (k ? "; " : "") + layoutName(layouts[k]) + " "
                 + (failed[k].empty() ? fmt::format("{:.3f} ms", best[k]) : failed[k]);
    }
    const std::string measured = fmt::format("-ntmpi {}: steady time per step of {}-step trials, best of {} rounds: {}",
                                             mode, kLayoutTrialSteps, kLayoutTrialRounds, times);
    if (chosen < 0)
    {
        g_reason = "1 rank with threads: no layout's trial gave a time (" + measured + ")";
        std::cout << "putmd run: " << g_reason << "\n";
        return;
    }
    const Layout& l = layouts[size_t(chosen)];
    const std::string why = layoutName(l) + ", the fastest measured (" + measured + ")";
    std::cout << "putmd run: " << why << "\n";
    if (l.ranks == 1)
    {
        g_reason = why;
        return;
    }
    launchRanks(args, l, cores, why);
}

} // namespace putmd
