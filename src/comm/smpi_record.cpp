/* comm/smpi_record.cpp — see smpi_record.h and smpi_record_hooks.h. */
#include "comm/smpi_record.h"

#if !PUTMD_SMPI

namespace putmd::smpi_record
{
void markStep() {}
} // namespace putmd::smpi_record

#else

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/host.h>
#include <xbt/config.h>

#include "comm/smpi_clock.h"
#include "comm/smpi_record_hooks.h"

namespace putmd::smpi_record
{
namespace
{

/* An event as recorded: its word, numbers (ints[at, at + n)) and, for
 * bursts and marks, times. Formatted only at MPI_Finalize: the recorder's
 * work between a burst's end and the MPI call it precedes is computation
 * SMPI simulates, so what it does there must stay well under SMPI's 1 us
 * threshold (formatting each line there put 2.4 us of simulated time on
 * every call of the recorded run, 20% of a step on water-spce-3k). */
struct Event
{
    const char* word;
    const char* call; // x: the MPI call
    double      t0, t1;
    bool        times;
    size_t      at, n;
};

// One per simulated rank (SMPI's privatization of the program's data).
struct Recorder
{
    bool                 on = false;
    std::string          dir, settings;
    std::vector<Event>   events;
    std::vector<long>    ints;
    long                 marks = 0;
    int                  nextComm = 1, nextRequest = 0;
    std::unordered_map<MPI_Comm, int>    comms;
    std::unordered_map<MPI_Request, int> requests;
};
Recorder r;

void add(const char* word, std::initializer_list<long> numbers)
{
    r.events.push_back({ word, nullptr, 0, 0, false, r.ints.size(), numbers.size() });
    r.ints.insert(r.ints.end(), numbers);
}

void addTimes(const char* word, double t0, double t1)
{
    r.events.push_back({ word, nullptr, t0, t1, true, r.ints.size(), 0 });
}

std::string format()
{
    std::string text = r.settings;
    text.reserve(r.events.size() * 24);
    char buf[64];
    for (const Event& e : r.events)
    {
        text += e.word;
        if (e.call != nullptr)
        {
            text += ' ';
            text += e.call;
        }
        if (e.times)
        {
            std::snprintf(buf, sizeof buf, " %.9g %.9f", e.t0, e.t1);
            text += buf;
        }
        for (size_t i = e.at; i < e.at + e.n; i++)
        {
            text += ' ';
            text += std::to_string(r.ints[i]);
        }
        text += '\n';
    }
    return text;
}

int worldRank()
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

long typeBytes(MPI_Datatype t)
{
    int size = 0;
    MPI_Type_size(t, &size);
    return size;
}

// -1 for a communicator made by a call the record does not follow (the
// replay refuses the event)
int commId(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
    {
        return 0;
    }
    const auto it = r.comms.find(c);
    return it == r.comms.end() ? -1 : it->second;
}

int newComm(MPI_Comm c)
{
    if (c == MPI_COMM_NULL)
    {
        return -1;
    }
    const int id = r.nextComm++;
    r.comms[c]   = id;
    return id;
}

int commSize(MPI_Comm c)
{
    int n = 0;
    MPI_Comm_size(c, &n);
    return n;
}

void counts(const int* c, int n, long unit)
{
    for (int i = 0; i < n; i++)
    {
        r.ints.push_back(c[i] * unit);
    }
    r.events.back().n += static_cast<size_t>(n);
}

} // namespace

void start()
{
    const char* dir = std::getenv("PUTMD_SMPI_RECORD");
    if (dir == nullptr || *dir == '\0')
    {
        return;
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
    {
        std::fprintf(stderr, "error: PUTMD_SMPI_RECORD=%s: not a directory and cannot be made one; give a writable "
                             "directory\n", dir);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r.on  = true;
    r.dir = dir;
    r.events.reserve(1 << 14);
    r.ints.reserve(1 << 16);
    // what the replay checks it runs with: the eager limit and the host
    r.settings = "settings " + std::to_string(sg_cfg_get_int("smpi/send-is-detached-thresh")) + ' '
                 + sg_host_self_get_name() + '\n';
}

void stop()
{
    if (!r.on)
    {
        return;
    }
    burst();
    r.on = false;
    const std::string path = r.dir + "/rank-" + std::to_string(worldRank()) + ".txt";
    const std::string tmp  = path + ".tmp";
    FILE*             f    = std::fopen(tmp.c_str(), "w");
    const std::string text = format();
    const bool written = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f == nullptr || std::fclose(f) != 0 || !written || std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        std::fprintf(stderr, "error: PUTMD_SMPI_RECORD=%s: cannot write %s (%s); give an existing, writable directory\n",
                     r.dir.c_str(), path.c_str(), std::strerror(errno));
        std::remove(tmp.c_str());
    }
}

void burst()
{
    if (r.on)
    {
        const double s = smpi_clock::endBurst();
        if (s > 0)
        {
            addTimes("c", s, smpi_clock::lastSynchronised());
        }
    }
}

void unreplayable(const char* name)
{
    if (r.on)
    {
        r.events.push_back({ "x", name, 0, 0, false, r.ints.size(), 0 });
    }
}

void split(MPI_Comm parent, int color, int key, MPI_Comm out)
{
    if (r.on)
    {
        add("split", { commId(parent), color, key, newComm(out) });
    }
}

void splitType(MPI_Comm parent, int type, int key, MPI_Comm out)
{
    if (r.on)
    {
        add("splittype", { commId(parent), type, key, newComm(out) });
    }
}

void dup(MPI_Comm parent, MPI_Comm out)
{
    if (r.on)
    {
        add("dup", { commId(parent), newComm(out) });
    }
}

void pointToPoint(const char* what, MPI_Comm c, int peer, int tag, int n, MPI_Datatype t, const MPI_Request* q)
{
    if (!r.on)
    {
        return;
    }
    if (q == nullptr)
    {
        add(what, { commId(c), peer, tag, n * typeBytes(t) });
        return;
    }
    const int id     = r.nextRequest++;
    r.requests[*q]   = id;
    add(what, { commId(c), peer, tag, n * typeBytes(t), id });
}

void sendRecv(MPI_Comm c, int dst, int stag, int sn, MPI_Datatype st, int src, int rtag, int rn, MPI_Datatype rt)
{
    if (r.on)
    {
        add("sendrecv", { commId(c), dst, stag, sn * typeBytes(st), src, rtag, rn * typeBytes(rt) });
    }
}

void waitOn(int n, const MPI_Request* q)
{
    if (!r.on)
    {
        return;
    }
    if (n == 1)
    {
        add("wait", {});
    }
    else
    {
        add("waitall", { n });
    }
    for (int i = 0; i < n; i++)
    {
        // -1 a null request, -2 one the recorder did not see begin (the
        // replay refuses it)
        int        id = -1;
        const auto it = q[i] == MPI_REQUEST_NULL ? r.requests.end() : r.requests.find(q[i]);
        if (it != r.requests.end())
        {
            id = it->second;
            r.requests.erase(it);
        }
        else if (q[i] != MPI_REQUEST_NULL)
        {
            id = -2;
        }
        r.ints.push_back(id);
        r.events.back().n++;
    }
}

void collective(const char* what, MPI_Comm c, int root, int n, MPI_Datatype t, int n2, MPI_Datatype t2)
{
    if (!r.on)
    {
        return;
    }
    int rank = 0;
    MPI_Comm_rank(c, &rank);
    const bool receives = std::strcmp(what, "gather") != 0 || rank == root;
    add(what, { commId(c), root, n * typeBytes(t), receives && t2 != MPI_DATATYPE_NULL ? n2 * typeBytes(t2) : 0 });
}

void allreduce(MPI_Comm c, int n, MPI_Datatype t)
{
    if (r.on)
    {
        add("allreduce", { commId(c), n, typeBytes(t) });
    }
}

void alltoallv(MPI_Comm c, const int* sc, MPI_Datatype st, const int* rc, MPI_Datatype rt)
{
    if (!r.on)
    {
        return;
    }
    const int n = commSize(c);
    add("alltoallv", { commId(c), n });
    counts(sc, n, typeBytes(st));
    counts(rc, n, typeBytes(rt));
}

void gatherv(MPI_Comm c, int root, int sn, MPI_Datatype st, const int* rc, MPI_Datatype rt)
{
    if (!r.on)
    {
        return;
    }
    int rank = 0;
    MPI_Comm_rank(c, &rank);
    const int n = rank == root ? commSize(c) : 0;
    add("gatherv", { commId(c), root, sn * typeBytes(st), n });
    counts(rc, n, typeBytes(rt));
}

void markStep()
{
    if (!r.on)
    {
        return;
    }
    burst();
    addTimes("m", double(r.marks++), smpi_clock::lastSynchronised());
    smpi_clock::resume();
}

} // namespace putmd::smpi_record

#endif // PUTMD_SMPI
