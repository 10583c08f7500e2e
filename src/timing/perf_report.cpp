#include "timing/perf_report.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace putmd
{

const char* stageKey(Stage s)
{
    switch (s)
    {
        case Stage::DomainDecomp: return "domain_decomposition";
        case Stage::LoadBalancing: return "load_balancing";
        case Stage::Force: return "force";
        case Stage::Search: return "pair_search";
        case Stage::Nonbonded: return "nonbonded";
        case Stage::Listed: return "listed";
        case Stage::PmeMesh: return "pme_mesh";
        case Stage::PmeRedistX: return "pme_redist_x";
        case Stage::PmeSpread: return "pme_spread";
        case Stage::PmeBorder: return "pme_grid_comm";
        case Stage::PmeFft: return "pme_fft";
        case Stage::PmeFftComm: return "pme_fft_comm";
        case Stage::PmeSolve: return "pme_solve";
        case Stage::PmeGather: return "pme_gather";
        case Stage::PmeRedistF: return "pme_redist_f";
        case Stage::PmeSendX: return "pp_pme_send_x";
        case Stage::PmeWaitF: return "wait_pme_f";
        case Stage::HaloCoordinates: return "halo_coordinates";
        case Stage::HaloForces: return "halo_forces";
        case Stage::HaloCoordinatesWait: return "halo_coordinates_wait";
        case Stage::HaloForcesWait: return "halo_forces_wait";
        case Stage::TrajectoryOutput: return "trajectory_output";
        case Stage::Coupling: return "coupling";
        case Stage::Update: return "update";
        case Stage::Constraints: return "constraints";
        case Stage::EnergyOutput: return "energy_output";
        case Stage::Checkpoint: return "checkpoint";
        case Stage::EnergyReduction: return "energy_reduction";
        case Stage::Count: break;
    }
    return "unknown";
}

namespace
{

constexpr int kPhases     = static_cast<int>(comm::Phase::Count);
constexpr int kPhaseItems = 9 + comm::MessageSizes::kBins + 1;

/* The communication table's header and one row per phase; seconds per
 * rank averaged over nRanks. */
std::string commTableText(const PhaseTable& table, int nRanks)
{
    std::string out = fmt::format(" {:<10}{:>9}{:>13}{:>9}{:>10}", "Phase", "Messages", "Bytes", "Mean B", "Largest B");
    for (int b = 0; b < comm::MessageSizes::kBins; b++)
    {
        out += fmt::format("{:>9}", comm::MessageSizes::binLabel(b));
    }
    out += fmt::format("{:>11}{:>10}{:>7}{:>8}{:>7}\n", "Transfer s", "Wait s", "Coll.", "Syncs", "Grow");
    for (int p = 0; p < kPhases; p++)
    {
        const comm::PhaseStats& st = table[p];
        out += fmt::format(" {:<10}{:>9}{:>13}{:>9}{:>10}", comm::phaseName(static_cast<comm::Phase>(p)), st.messages,
                           st.bytes, st.messages > 0 ? st.bytes / st.messages : 0, st.sizes.largest);
        for (long b : st.sizes.bins)
        {
            out += fmt::format("{:>9}", b);
        }
        out += fmt::format("{:>11.4f}{:>10.4f}{:>7}{:>8}{:>7}\n", st.transferSeconds / std::max(1, nRanks),
                           st.waitSeconds / std::max(1, nRanks), st.collectives, st.oneSidedSyncs, st.arenaGrowths);
    }
    return out;
}

/* The JSON's phases array of a table (seconds per rank over nRanks). */
nlohmann::json phasesJson(const PhaseTable& table, int nRanks)
{
    nlohmann::json phases = nlohmann::json::array();
    for (int p = 0; p < kPhases; p++)
    {
        const comm::PhaseStats& st = table[p];
        phases.push_back({ { "phase", comm::phaseName(static_cast<comm::Phase>(p)) },
                           { "messages", st.messages },
                           { "bytes", st.bytes },
                           { "mean_message_bytes", st.messages > 0 ? double(st.bytes) / double(st.messages) : 0.0 },
                           { "largest_message_bytes", st.sizes.largest },
                           { "histogram", st.sizes.bins },
                           { "transfer_seconds_per_rank", st.transferSeconds / std::max(1, nRanks) },
                           { "wait_seconds_per_rank", st.waitSeconds / std::max(1, nRanks) },
                           { "collectives", st.collectives },
                           { "barriers", st.barriers },
                           { "one_sided_syncs", st.oneSidedSyncs },
                           { "arena_growths", st.arenaGrowths },
                           { "plans", st.plans } });
    }
    return phases;
}

/* One row of the accounting over ranks. */
struct Row
{
    Stage               stage;
    int                 ranks   = 0;
    long                calls   = 0; // the most calls on one rank
    double              avg     = 0, min = 0, max = 0;
    double              gcycles = 0; // summed over ranks
    std::vector<double> perRank;
};

int depthOf(Stage s)
{
    int d = 0;
    while (parentStage(s) != s)
    {
        s = parentStage(s);
        d++;
    }
    return d;
}

std::vector<Row> rowsOf(const std::vector<StageTimers>& ranks)
{
    std::vector<Row> rows;
    for (int i = 0; i < StageTimers::kStages; i++)
    {
        const Stage s = static_cast<Stage>(i);
        Row         r;
        r.stage = s;
        r.ranks = static_cast<int>(ranks.size());
        bool any = false;
        for (const StageTimers& t : ranks)
        {
            any = any || t.calls(s) > 0;
            r.calls = std::max(r.calls, t.calls(s));
            r.perRank.push_back(t.seconds(s));
            r.gcycles += t.cycles(s) * 1e-9;
        }
        if (!any)
        {
            continue;
        }
        r.min = *std::min_element(r.perRank.begin(), r.perRank.end());
        r.max = *std::max_element(r.perRank.begin(), r.perRank.end());
        for (double v : r.perRank)
        {
            r.avg += v / double(r.perRank.size());
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

double mean(const std::vector<double>& v)
{
    double m = 0;
    for (double x : v)
    {
        m += x / double(v.size());
    }
    return m;
}

/* Cycles per second measured over the top-level stages (0 without a counter). */
double cycleRate(const std::vector<Row>& rows)
{
    double c = 0, t = 0;
    for (const Row& r : rows)
    {
        if (!isSubStage(r.stage))
        {
            c += r.gcycles * 1e9;
            t += r.avg * r.ranks;
        }
    }
    return t > 0 ? c / t : 0;
}

struct Summary
{
    std::vector<Row> rows;
    double           total = 0, rest = 0, rate = 0;
    double           lostPercent = 0;
    int              worst       = -1; // index in rows of the work stage losing most to imbalance
    std::vector<Row> pmeRows;
    double           pmeRest = 0;
};

Summary summarize(const PerfInputs& in)
{
    Summary s;
    s.rows  = rowsOf(in.ppRanks);
    s.total = mean(in.ppWallSeconds);
    s.rest  = s.total;
    double lost = 0, worstLost = -1;
    for (std::size_t i = 0; i < s.rows.size(); i++)
    {
        const Row& r = s.rows[i];
        if (!isSubStage(r.stage))
        {
            s.rest -= r.avg;
        }
        if (isWorkStage(r.stage))
        {
            lost += r.max - r.avg;
            if (r.max - r.avg > worstLost)
            {
                worstLost = r.max - r.avg;
                s.worst   = static_cast<int>(i);
            }
        }
    }
    s.rate        = cycleRate(s.rows);
    for (Row& r : s.rows)
    {
        if (r.gcycles == 0 && r.avg > 0)
        {
            r.gcycles = r.avg * r.ranks * s.rate * 1e-9; // timed by the clock only (PME 3D-FFT comm.)
        }
    }
    s.lostPercent = s.total > 0 ? 100 * lost / s.total : 0;
    if (in.pmeRank)
    {
        s.pmeRows = rowsOf({ *in.pmeRank });
        s.pmeRest = s.total;
        for (Row& r : s.pmeRows)
        {
            r.ranks = in.numPmeRanks;
            // the PME rank's outermost rows (PME mesh) are its work
            const bool outermost = std::none_of(s.pmeRows.begin(), s.pmeRows.end(), [&](const Row& o) {
                return o.stage == parentStage(r.stage) && o.stage != r.stage;
            });
            if (outermost)
            {
                s.pmeRest -= r.avg;
            }
        }
    }
    return s;
}

double imbalancePercent(const Row& r)
{
    return r.avg > 0 ? 100 * (r.max / r.avg - 1) : 0;
}

/* The G-Cycles column: three decimals, none from a million on (long runs on
 * many ranks), so that the number never runs into the next column. */
std::string gcyclesField(double g)
{
    return g < 1e6 ? fmt::format(" {:>10.3f}", g) : fmt::format(" {:>10.0f}", g);
}

std::string rowLine(const std::string& name, const Row& r, int threads, double total)
{
    return fmt::format(" {:<28}{:>6}{:>8}{:>9}{:>12.3f}{}{:>7.1f}{:>10.3f}{:>10.3f}{:>8.1f}\n", name, r.ranks, threads,
                       r.calls, r.avg, gcyclesField(r.gcycles), total > 0 ? 100 * r.avg / total : 0.0, r.min, r.max,
                       imbalancePercent(r));
}

std::string plainLine(const std::string& name, double seconds, double gcycles, double total)
{
    return fmt::format(" {:<28}{:>6}{:>8}{:>9}{:>12.3f}{}{:>7.1f}\n", name, "", "", "", seconds, gcyclesField(gcycles),
                       total > 0 ? 100 * seconds / total : 0.0);
}

std::string hintText(const Summary& s)
{
    if (s.worst < 0)
    {
        return "";
    }
    const Row& w = s.rows[std::size_t(s.worst)];
    return fmt::format("Note: {:.1f}% of the run time is lost to load imbalance (more than {:.0f}%), most of it in "
                       "\"{}\" (max {:.3f} s against an average of {:.3f} s over the ranks). Try -dlb yes (dynamic "
                       "load balancing, unless it ran), -dd with other counts, --npme (separate PME ranks, or another "
                       "count of them), or fewer ranks (more atoms per rank).",
                       s.lostPercent, kImbalanceHintPercent, stageName(w.stage), w.max, w.avg);
}

nlohmann::json rowJson(const Row& r, int threads, double total)
{
    nlohmann::json j;
    j["key"]               = stageKey(r.stage);
    j["name"]              = stageName(r.stage);
    j["parent"]            = isSubStage(r.stage) ? nlohmann::json(stageKey(parentStage(r.stage))) : nlohmann::json();
    j["ranks"]             = r.ranks;
    j["threads"]           = threads;
    j["calls"]             = r.calls;
    j["seconds_avg"]       = r.avg;
    j["seconds_min"]       = r.min;
    j["seconds_max"]       = r.max;
    j["gcycles"]           = r.gcycles;
    j["percent"]           = total > 0 ? 100 * r.avg / total : 0.0;
    j["imbalance_percent"] = imbalancePercent(r);
    j["work"]              = isWorkStage(r.stage);
    j["per_rank_seconds"]  = r.perRank;
    return j;
}

} // namespace

PhaseTable phaseTableOf(const comm::Communicator& comm, const comm::Communicator* alsoCounted)
{
    PhaseTable t{};
    for (int p = 0; p < kPhases; p++)
    {
        t[p] = comm.stats(static_cast<comm::Phase>(p));
    }
    if (alsoCounted && alsoCounted != &comm)
    {
        addPhaseTable(t, phaseTableOf(*alsoCounted));
    }
    return t;
}

void addPhaseTable(PhaseTable& sum, const PhaseTable& x)
{
    for (int p = 0; p < kPhases; p++)
    {
        comm::PhaseStats&       s = sum[p];
        const comm::PhaseStats& a = x[p];
        s.messages += a.messages;
        s.bytes += a.bytes;
        s.transferSeconds += a.transferSeconds;
        s.waitSeconds += a.waitSeconds;
        s.collectives += a.collectives;
        s.barriers += a.barriers;
        s.arenaGrowths += a.arenaGrowths;
        s.plans += a.plans;
        s.oneSidedSyncs += a.oneSidedSyncs;
        s.sizes.merge(a.sizes);
    }
}

std::vector<double> serializePhaseTable(const PhaseTable& t)
{
    std::vector<double> out;
    out.reserve(serializedPhaseTableSize());
    for (const comm::PhaseStats& s : t)
    {
        for (double v : { double(s.messages), double(s.bytes), s.transferSeconds, s.waitSeconds, double(s.collectives),
                          double(s.barriers), double(s.arenaGrowths), double(s.plans), double(s.oneSidedSyncs) })
        {
            out.push_back(v);
        }
        for (long b : s.sizes.bins)
        {
            out.push_back(double(b));
        }
        out.push_back(double(s.sizes.largest));
    }
    return out;
}

void addSerializedPhases(PhaseTable& sum, const double* d)
{
    PhaseTable one{};
    for (int p = 0; p < kPhases; p++, d += kPhaseItems)
    {
        comm::PhaseStats& s = one[p];
        s.messages        = long(d[0]);
        s.bytes           = long(d[1]);
        s.transferSeconds = d[2];
        s.waitSeconds     = d[3];
        s.collectives     = long(d[4]);
        s.barriers        = long(d[5]);
        s.arenaGrowths    = long(d[6]);
        s.plans           = long(d[7]);
        s.oneSidedSyncs   = long(d[8]);
        for (int b = 0; b < comm::MessageSizes::kBins; b++)
        {
            s.sizes.bins[b] = long(d[9 + b]);
        }
        s.sizes.largest = long(d[9 + comm::MessageSizes::kBins]);
    }
    addPhaseTable(sum, one);
}

std::size_t serializedPhaseTableSize()
{
    return std::size_t(kPhases * kPhaseItems);
}

PerfInputs gatherPerfInputs(comm::Communicator* comm, const StageTimers& mine, double wallSeconds,
                            const comm::Communicator* alsoCounted)
{
    PerfInputs in;
    const auto serializePhases = [&](const comm::Communicator& c) {
        return serializePhaseTable(phaseTableOf(c, alsoCounted));
    };
    if (!comm || comm->size() == 1)
    {
        in.ppRanks       = { mine };
        in.ppWallSeconds = { wallSeconds };
        if (comm)
        {
            addSerializedPhases(in.comm, serializePhases(*comm).data());
        }
        return in;
    }
    std::vector<double> buf = mine.serialize();
    buf.push_back(wallSeconds);
    const std::vector<double> phases = serializePhases(*comm);
    buf.insert(buf.end(), phases.begin(), phases.end());
    const std::vector<std::byte> all = comm->gatherToRoot(comm::Phase::Setup, std::as_bytes(std::span(buf)));
    if (comm->rank() != 0)
    {
        return in;
    }
    const std::size_t per = buf.size();
    std::vector<double> d(all.size() / sizeof(double));
    std::memcpy(d.data(), all.data(), d.size() * sizeof(double));
    for (std::size_t r = 0; r + per <= d.size(); r += per)
    {
        const double* p = d.data() + r;
        in.ppRanks.push_back(StageTimers::deserialize(std::span(p, StageTimers::kSerialSize)));
        in.ppWallSeconds.push_back(p[StageTimers::kSerialSize]);
        addSerializedPhases(in.comm, p + StageTimers::kSerialSize + 1);
    }
    return in;
}

std::string performanceLine(const PerfInputs& in)
{
    const double wall     = in.ppWallSeconds.empty() ? 0 : in.ppWallSeconds[0];
    const double nsPerDay = wall > 0 ? double(in.steps) * in.dtPs * 1e-3 / wall * 86400 : 0;
    return fmt::format("Performance: {:.3f} ns/day {:.3f} hour/ns {:.4g} atom-steps/s", nsPerDay,
                       nsPerDay > 0 ? 24 / nsPerDay : 0, wall > 0 ? double(in.atoms) * double(in.steps) / wall : 0.0);
}

std::string perfLogText(const PerfInputs& in)
{
    const Summary s       = summarize(in);
    const int     nPp     = static_cast<int>(in.ppRanks.size());
    std::string   out     = "     R E A L   C Y C L E   A N D   T I M E   A C C O U N T I N G\n\n";
    out += fmt::format("On {} PP rank{}{}, {} thread{} each{}\n\n", nPp, nPp == 1 ? "" : "s",
                       in.numPmeRanks > 0 ? fmt::format(" and {} PME rank{}", in.numPmeRanks, in.numPmeRanks == 1 ? "" : "s") : "",
                       in.threads, in.threads == 1 ? "" : "s",
                       stageTimingEnabled() ? "" : " (PUTMD_TIMING=minimal: stages not timed)");
    out += fmt::format(" {:<28}{:>6}{:>8}{:>9}{:>12}{:>11}{:>7}{:>10}{:>10}{:>8}\n", "Activity", "Ranks", "Threads",
                       "Calls", "Wall t (s)", "G-Cycles", "%", "Min (s)", "Max (s)", "Imbal%");
    const std::string rule = " " + std::string(109, '-') + "\n";
    out += rule;
    for (const Row& r : s.rows)
    {
        out += rowLine(std::string(2 * std::size_t(depthOf(r.stage)), ' ') + stageName(r.stage), r, in.threads, s.total);
    }
    out += plainLine("Rest", s.rest, s.rest * s.rate * nPp * 1e-9, s.total);
    out += rule;
    out += plainLine("Total", s.total, s.total * s.rate * nPp * 1e-9, s.total);
    out += rule;
    if (!s.pmeRows.empty())
    {
        out += "\n [PME] rows: the first PME rank (runs beside the PP ranks; not part of the total above;\n"
               " its Rest is waiting for the PP ranks' coordinates)\n";
        for (const Row& r : s.pmeRows)
        {
            out += rowLine("[PME] " + std::string(2 * std::size_t(std::max(0, depthOf(r.stage) - 1)), ' ')
                                   + stageName(r.stage),
                           r, 1, s.total);
        }
        out += plainLine("[PME] Rest", s.pmeRest, 0, s.total);
        out += rule;
    }
    out += fmt::format("\nLoad imbalance: {:.1f}% of the wall time lost (sum over computation stages of max - "
                       "average over {} PP rank{}, divided by the total)\n",
                       s.lostPercent, nPp, nPp == 1 ? "" : "s");
    if (nPp > 1 && s.lostPercent > kImbalanceHintPercent)
    {
        out += hintText(s) + "\n";
    }
    if (in.hasComm)
    {
        out += "\n     C O M M U N I C A T I O N   (sum over PP ranks; seconds are per-rank averages)\n\n";
        out += commTableText(in.comm, nPp);
    }
    if (in.hasComm && in.pmeRanksComm)
    {
        out += fmt::format("\n     C O M M U N I C A T I O N   O F   T H E   P M E   R A N K S   (sum over {} PME "
                           "rank{}; seconds are per-rank averages)\n     among themselves, and their forces to the "
                           "PP ranks\n\n",
                           in.numPmeRanks, in.numPmeRanks == 1 ? "" : "s");
        out += commTableText(*in.pmeRanksComm, in.numPmeRanks);
    }
    return out;
}

nlohmann::json perfJson(const PerfInputs& in)
{
    const Summary  s   = summarize(in);
    const int      nPp = static_cast<int>(in.ppRanks.size());
    nlohmann::json j;
    j["format"]       = "putmd-perf";
    j["format_version"] = 1;
    j["putmd_version"] = PUTMD_VERSION;
    j["command_line"] = in.commandLine;
    j["timing"]       = stageTimingEnabled() ? "full" : "minimal";
    j["ranks"]        = { { "pp", nPp }, { "pme", in.numPmeRanks }, { "threads_per_rank", in.threads } };
    j["backend"]      = in.backend;
    j["atoms"]        = in.atoms;
    j["steps"]        = in.steps;
    j["dt_ps"]        = in.dtPs;
    j["wall_seconds"] = s.total;
    j["wall_seconds_per_rank"] = in.ppWallSeconds;
    const double wall     = in.ppWallSeconds.empty() ? 0 : in.ppWallSeconds[0];
    const double nsPerDay = wall > 0 ? double(in.steps) * in.dtPs * 1e-3 / wall * 86400 : 0;
    j["performance"]      = { { "ns_per_day", nsPerDay },
                              { "hours_per_ns", nsPerDay > 0 ? 24 / nsPerDay : 0.0 },
                              { "atom_steps_per_second", wall > 0 ? double(in.atoms) * double(in.steps) / wall : 0.0 } };
    j["cycles_per_second"] = s.rate;
    j["stages"]            = nlohmann::json::array();
    for (const Row& r : s.rows)
    {
        j["stages"].push_back(rowJson(r, in.threads, s.total));
    }
    j["rest_seconds"]     = s.rest;
    j["pme_rank_stages"]  = nlohmann::json::array();
    for (const Row& r : s.pmeRows)
    {
        j["pme_rank_stages"].push_back(rowJson(r, 1, s.total));
    }
    j["pme_rank_rest_seconds"] = in.pmeRank ? nlohmann::json(s.pmeRest) : nlohmann::json();
    const bool hint            = nPp > 1 && s.lostPercent > kImbalanceHintPercent;
    j["imbalance"]             = { { "lost_percent", s.lostPercent },
                                   { "threshold_percent", kImbalanceHintPercent },
                                   { "worst_stage", s.worst >= 0 ? nlohmann::json(stageKey(s.rows[std::size_t(s.worst)].stage)) : nlohmann::json() },
                                   { "hint", hint ? nlohmann::json(hintText(s)) : nlohmann::json() } };
    nlohmann::json c;
    c["scope"] = "sum over PP ranks";
    c["histogram_bins"] = nlohmann::json::array();
    for (int b = 0; b < comm::MessageSizes::kBins; b++)
    {
        c["histogram_bins"].push_back(comm::MessageSizes::binLabel(b));
    }
    c["phases"] = in.hasComm ? phasesJson(in.comm, nPp) : nlohmann::json::array();
    c["pme_ranks"] = nlohmann::json(nullptr);
    if (in.hasComm && in.pmeRanksComm)
    {
        c["pme_ranks"] = { { "scope", "sum over the separate PME ranks (among themselves, and their forces to the PP "
                                      "ranks)" },
                           { "ranks", in.numPmeRanks },
                           { "phases", phasesJson(*in.pmeRanksComm, in.numPmeRanks) } };
    }
    if (in.hasComm)
    {
        c["normal_step_collectives"] = { { "pp_rank", in.normalStepCollectives },
                                         { "pme_rank", in.pmeRankNormalStepCollectives >= 0
                                                               ? nlohmann::json(in.pmeRankNormalStepCollectives)
                                                               : nlohmann::json(nullptr) } };
    }
    j["communication"] = c;
    return j;
}

} // namespace putmd
