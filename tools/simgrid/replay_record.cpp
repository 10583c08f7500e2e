/* tools/simgrid/replay_record.cpp — see replay_record.h. */
#include "replay_record.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace putmd::replay
{

void fail(const std::string& what)
{
    std::fprintf(stderr, "putmd_replay: %s\n", what.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::exit(2);
}

namespace
{

struct Word
{
    const char* name;
    Kind        kind;
    int         numbers; // how many the line has (at least, for waitall, alltoallv and gatherv;
                         // -1: compute, mark, settings)
};

// the events of src/comm/smpi_record.h
constexpr Word c_words[] = {
    { "settings", Kind::Settings, -1 },  { "c", Kind::Compute, -1 },        { "m", Kind::Mark, -1 },
    { "split", Kind::Split, 4 },         { "splittype", Kind::SplitType, 4 }, { "dup", Kind::Dup, 2 },
    { "isend", Kind::Isend, 5 },         { "irecv", Kind::Irecv, 5 },        { "send", Kind::Send, 4 },
    { "recv", Kind::Recv, 4 },           { "sendrecv", Kind::SendRecv, 7 },  { "wait", Kind::Wait, 1 },
    { "waitall", Kind::Waitall, 1 },     { "allreduce", Kind::Allreduce, 3 }, { "bcast", Kind::Bcast, 4 },
    { "barrier", Kind::Barrier, 4 },     { "allgather", Kind::Allgather, 4 }, { "alltoall", Kind::Alltoall, 4 },
    { "alltoallv", Kind::Alltoallv, 2 }, { "gather", Kind::Gather, 4 },     { "gatherv", Kind::Gatherv, 4 },
};

std::string validWords()
{
    std::string s;
    for (const Word& w : c_words)
    {
        s += s.empty() ? "" : ", ";
        s += w.name;
    }
    return s;
}

// a byte count the replay can pass to MPI (an int)
long bytes(const std::string& where, long v)
{
    if (v < 0 || v > INT_MAX)
    {
        fail(where + "a byte count of " + std::to_string(v) + " (valid: 0 to " + std::to_string(INT_MAX) + ")");
    }
    return v;
}

// the byte counts of an alltoallv or gatherv: count numbers from first on,
// and the line's length checked
long countsTotal(const std::string& where, const Event& e, size_t first, long count)
{
    if (count < 0 || e.a.size() < first + static_cast<size_t>(count))
    {
        fail(where + std::to_string(count) + " counts announced, " + std::to_string(e.a.size() - std::min(first, e.a.size()))
             + " given");
    }
    long total = 0;
    for (long i = 0; i < count; i++)
    {
        total += bytes(where, e.a[first + i]);
    }
    return bytes(where, total);
}

} // namespace

Record readRecord(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        fail(path + ": cannot open (" + std::strerror(errno)
             + "); record with PUTMD_SMPI_RECORD=DIR, and replay on the recorded rank count");
    }
    Record      r;
    r.path = path;
    std::string text;
    long        lineNo = 0;
    while (std::getline(in, text))
    {
        lineNo++;
        std::istringstream ls(text);
        std::string        word;
        ls >> word;
        const std::string where = path + ":" + std::to_string(lineNo) + ": ";
        if (word == "x")
        {
            std::string call;
            ls >> call;
            fail(where + "the record has " + call
                 + ", which the replay cannot run (one-sided communication): record with --comm p2p and "
                   "--fft-transpose pairwise");
        }
        const auto w = std::find_if(std::begin(c_words), std::end(c_words), [&](const Word& x) { return word == x.name; });
        if (w == std::end(c_words))
        {
            fail(where + "unknown event '" + word + "' (valid: " + validWords() + ", x)");
        }
        Event       e{ w->kind, 0, {}, lineNo };
        std::string extra;
        if (e.kind == Kind::Settings)
        {
            if (lineNo != 1 || !(ls >> r.eagerLimit >> r.host) || (ls >> extra))
            {
                fail(where + "'" + text + "': expected 'settings EAGER_LIMIT HOST' on the first line only");
            }
            continue;
        }
        if (e.kind == Kind::Compute || e.kind == Kind::Mark)
        {
            std::string index;
            if (e.kind == Kind::Mark
                && (!(ls >> index) || index != std::to_string(r.marks.size())))
            {
                fail(where + "step mark '" + index + "' where " + std::to_string(r.marks.size()) + " was expected");
            }
            if (!(ls >> e.seconds) || e.seconds < 0 || (e.kind == Kind::Mark && (ls >> extra)))
            {
                fail(where + "'" + text + "': expected a time in seconds, 0 or more");
            }
            if (e.kind == Kind::Mark)
            {
                r.marks.push_back(r.events.size());
            }
            r.events.push_back(std::move(e));
            continue;
        }
        long v = 0;
        while (ls >> v)
        {
            if (v < INT_MIN || v > INT_MAX)
            {
                fail(where + "'" + text + "': " + std::to_string(v) + " does not fit an int (every number of an event "
                     "is one)");
            }
            e.a.push_back(v);
        }
        const bool atLeast = e.kind == Kind::Waitall || e.kind == Kind::Alltoallv || e.kind == Kind::Gatherv;
        const long n       = static_cast<long>(e.a.size());
        if (!ls.eof() || n < w->numbers || (!atLeast && n != w->numbers))
        {
            fail(where + "'" + text + "': expected " + (atLeast ? "at least " : "") + std::to_string(w->numbers)
                 + " whole numbers after '" + word + "'");
        }
        const auto& a = e.a;
        switch (e.kind)
        {
            case Kind::Isend:
            case Kind::Irecv:
            case Kind::Send:
            case Kind::Recv: r.maxBytes = std::max(r.maxBytes, bytes(where, a[3])); break;
            case Kind::SendRecv: r.maxBytes = std::max({ r.maxBytes, bytes(where, a[3]), bytes(where, a[6]) }); break;
            case Kind::Allreduce: r.maxBytes = std::max(r.maxBytes, bytes(where, a[1] * a[2])); break;
            case Kind::Bcast: r.maxBytes = std::max(r.maxBytes, bytes(where, a[2])); break;
            case Kind::Allgather:
            case Kind::Alltoall:
            case Kind::Gather: r.maxBlock = std::max({ r.maxBlock, bytes(where, a[2]), bytes(where, a[3]) }); break;
            case Kind::Alltoallv:
                if (a[1] < 0 || a.size() != 2 + 2 * static_cast<size_t>(a[1]))
                {
                    fail(where + "an alltoallv over " + std::to_string(a[1]) + " ranks needs 2 x that many counts");
                }
                r.maxBytes = std::max({ r.maxBytes, countsTotal(where, e, 2, a[1]), countsTotal(where, e, 2 + a[1], a[1]) });
                break;
            case Kind::Gatherv:
                r.maxBytes = std::max({ r.maxBytes, bytes(where, a[2]), countsTotal(where, e, 4, a[3]) });
                break;
            case Kind::Waitall:
                if (a[0] < 0 || a.size() != 1 + static_cast<size_t>(a[0]))
                {
                    fail(where + "waitall of " + std::to_string(a[0]) + " requests with " + std::to_string(a.size() - 1)
                         + " given");
                }
                break;
            default: break;
        }
        r.events.push_back(std::move(e));
    }
    return r;
}

} // namespace putmd::replay
