/* tools/simgrid/putmd_replay.cpp — replays a record of putmd_smpi
 * (PUTMD_SMPI_RECORD=DIR; src/comm/smpi_record.h) on simulated ranks: the
 * same messages, collectives and communicators, and each computation burst
 * as a simulated delay of the recorded length. Nothing else runs, so a
 * simulated rank holds its list of events and two message buffers shared
 * by all ranks, and SimGrid's cost per message is what remains.
 *
 *   tools/simgrid/replay.sh -platform P -np N DIR [FROM TO REPEAT]
 *
 * (smpirun with --cfg=smpi/simulate-computation:no, which the program
 * checks.) N must be the recorded rank count, on
 * the same platform and hosts for a replay that reproduces the recorded run.
 * With FROM TO REPEAT the events between step marks FROM and TO (each
 * rank's FROM-th and TO-th step) run REPEAT times in all, so the run has
 * (TO - FROM) (REPEAT - 1) steps more than the record: sampling, for steps
 * that repeat the recorded ones (between pair searches, say). Rank 0 prints
 * one line a step, "step K SIMULATED RECORDED" (the recorded time where
 * the step is the recorded one), then a summary.
 */
#include <mpi.h>
#include <xbt/config.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

enum class Kind
{
    Compute,
    Mark,
    Split,
    SplitType,
    Dup,
    Isend,
    Irecv,
    Send,
    Recv,
    SendRecv,
    Wait,
    Allreduce,
    Bcast,
    Barrier,
    Allgather,
    Alltoall,
    Alltoallv,
    Gather,
    Gatherv
};

struct Event
{
    Kind                kind;
    double              seconds = 0; // compute; mark: the recorded time
    std::vector<long>   a;           // the numbers of the line, in its order
};

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "putmd_replay: %s\n", what.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::exit(2);
}

struct Record
{
    std::vector<Event> events;
    std::vector<size_t> marks; // event index of each step mark
    long maxBytes = 1;
};

Record readRecord(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        fail(path + ": cannot open (" + std::strerror(errno) + "); record with PUTMD_SMPI_RECORD=DIR and the same rank count");
    }
    static const std::pair<const char*, Kind> names[] = {
        { "c", Kind::Compute },       { "m", Kind::Mark },           { "split", Kind::Split },
        { "splittype", Kind::SplitType }, { "dup", Kind::Dup },      { "isend", Kind::Isend },
        { "irecv", Kind::Irecv },     { "send", Kind::Send },        { "recv", Kind::Recv },
        { "sendrecv", Kind::SendRecv }, { "wait", Kind::Wait },      { "waitall", Kind::Wait },
        { "allreduce", Kind::Allreduce }, { "bcast", Kind::Bcast },  { "barrier", Kind::Barrier },
        { "allgather", Kind::Allgather }, { "alltoall", Kind::Alltoall }, { "alltoallv", Kind::Alltoallv },
        { "gather", Kind::Gather },   { "gatherv", Kind::Gatherv },
    };
    Record      r;
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
        Event e{};
        bool  known = false;
        for (const auto& [name, kind] : names)
        {
            if (word == name)
            {
                e.kind = kind;
                known  = true;
            }
        }
        if (!known)
        {
            fail(where + "unknown event '" + word + "' (valid: c, m, split, splittype, dup, isend, irecv, send, recv, "
                 "sendrecv, wait, waitall, allreduce, bcast, barrier, allgather, alltoall, alltoallv, gather, gatherv)");
        }
        if (e.kind == Kind::Compute || e.kind == Kind::Mark)
        {
            long index = 0;
            if (e.kind == Kind::Mark && !(ls >> index))
            {
                fail(where + "a step mark without its index");
            }
            if (!(ls >> e.seconds) || e.seconds < 0)
            {
                fail(where + "'" + text + "': expected a time in seconds, 0 or more");
            }
            if (e.kind == Kind::Mark)
            {
                if (index != static_cast<long>(r.marks.size()))
                {
                    fail(where + "step mark " + std::to_string(index) + " where " + std::to_string(r.marks.size())
                         + " was expected");
                }
                r.marks.push_back(r.events.size());
            }
        }
        else
        {
            long v = 0;
            while (ls >> v)
            {
                e.a.push_back(v);
            }
            if (!ls.eof())
            {
                fail(where + "'" + text + "': expected whole numbers after '" + word + "'");
            }
            for (long x : e.a)
            {
                r.maxBytes = std::max(r.maxBytes, x);
            }
        }
        r.events.push_back(std::move(e));
    }
    return r;
}

struct Replayer
{
    int                      rank = 0;
    std::vector<MPI_Comm>    comms{ MPI_COMM_WORLD };
    std::vector<MPI_Request> requests;
    char*                    sendBuf = nullptr;
    char*                    recvBuf = nullptr;
    std::vector<int>         counts, displs, counts2, displs2;
    long                     step = 0; // steps begun (marks passed) in this replay
    std::string              path;

    MPI_Comm comm(long id, size_t at)
    {
        if (id < 0 || id >= static_cast<long>(comms.size()) || comms[id] == MPI_COMM_NULL)
        {
            fail(path + ": event " + std::to_string(at) + " uses communicator " + std::to_string(id)
                 + ", which the record did not make");
        }
        return comms[id];
    }
    void made(long id, MPI_Comm c)
    {
        if (id < 0)
        {
            return;
        }
        if (id != static_cast<long>(comms.size()))
        {
            fail(path + ": communicator " + std::to_string(id) + " out of order");
        }
        comms.push_back(c);
    }
    MPI_Request* request(long id)
    {
        if (id >= static_cast<long>(requests.size()))
        {
            requests.resize(id + 1, MPI_REQUEST_NULL);
        }
        return &requests[id];
    }
    // the byte counts of an alltoallv or gatherv line from position p
    void vector(const Event& e, size_t p, int n, std::vector<int>& c, std::vector<int>& d)
    {
        c.assign(n, 0);
        d.assign(n, 0);
        for (int i = 0; i < n; i++)
        {
            c[i] = static_cast<int>(e.a.at(p + i));
            d[i] = 0; // every peer's block at the start of the one buffer: only the sizes matter
        }
    }

    void run(const Event& e, size_t at, bool recordedStep)
    {
        const auto& a = e.a;
        auto need = [&](size_t n) {
            if (a.size() < n)
            {
                fail(path + ": event " + std::to_string(at) + " has " + std::to_string(a.size()) + " numbers, needs "
                     + std::to_string(n));
            }
        };
        switch (e.kind)
        {
            case Kind::Compute:
                // SMPI leaves bursts under its smpi/cpu-threshold (1 us) out
                if (e.seconds >= 1e-6)
                {
                    smpi_execute(e.seconds);
                }
                break;
            case Kind::Mark:
                if (rank == 0)
                {
                    if (recordedStep)
                    {
                        std::printf("step %ld %.9f %.9f\n", step, MPI_Wtime(), e.seconds);
                    }
                    else
                    {
                        std::printf("step %ld %.9f -\n", step, MPI_Wtime());
                    }
                }
                step++;
                break;
            case Kind::Split:
            {
                need(4);
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_split(comm(a[0], at), static_cast<int>(a[1]), static_cast<int>(a[2]), &out);
                made(a[3], out);
                break;
            }
            case Kind::SplitType:
            {
                need(4);
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_split_type(comm(a[0], at), static_cast<int>(a[1]), static_cast<int>(a[2]), MPI_INFO_NULL, &out);
                made(a[3], out);
                break;
            }
            case Kind::Dup:
            {
                need(2);
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_dup(comm(a[0], at), &out);
                made(a[1], out);
                break;
            }
            case Kind::Isend:
                need(5);
                MPI_Isend(sendBuf, static_cast<int>(a[3]), MPI_BYTE, static_cast<int>(a[1]), static_cast<int>(a[2]),
                          comm(a[0], at), request(a[4]));
                break;
            case Kind::Irecv:
                need(5);
                MPI_Irecv(recvBuf, static_cast<int>(a[3]), MPI_BYTE, static_cast<int>(a[1]), static_cast<int>(a[2]),
                          comm(a[0], at), request(a[4]));
                break;
            case Kind::Send:
                need(4);
                MPI_Send(sendBuf, static_cast<int>(a[3]), MPI_BYTE, static_cast<int>(a[1]), static_cast<int>(a[2]),
                         comm(a[0], at));
                break;
            case Kind::Recv:
                need(4);
                MPI_Recv(recvBuf, static_cast<int>(a[3]), MPI_BYTE, static_cast<int>(a[1]), static_cast<int>(a[2]),
                         comm(a[0], at), MPI_STATUS_IGNORE);
                break;
            case Kind::SendRecv:
                need(7);
                MPI_Sendrecv(sendBuf, static_cast<int>(a[3]), MPI_BYTE, static_cast<int>(a[1]), static_cast<int>(a[2]),
                             recvBuf, static_cast<int>(a[6]), MPI_BYTE, static_cast<int>(a[4]), static_cast<int>(a[5]),
                             comm(a[0], at), MPI_STATUS_IGNORE);
                break;
            case Kind::Wait:
            {
                // "wait R" or "waitall N R...": one MPI_Wait each, as putmd_smpi
                // itself waits
                const size_t first = a.size() == 1 ? 0 : 1;
                for (size_t i = first; i < a.size(); i++)
                {
                    if (a[i] < 0)
                    {
                        continue; // a request the record did not follow (null)
                    }
                    if (a[i] >= static_cast<long>(requests.size()) || requests[a[i]] == MPI_REQUEST_NULL)
                    {
                        fail(path + ": event " + std::to_string(at) + " waits for request " + std::to_string(a[i])
                             + ", which is not pending: a request made before the repeated steps and completed in "
                               "them (choose other steps FROM TO)");
                    }
                    MPI_Wait(&requests[a[i]], MPI_STATUS_IGNORE);
                }
                break;
            }
            case Kind::Allreduce:
            {
                need(3);
                // the recorded count of elements of the recorded size
                const long   n    = a[1], size = a[2];
                MPI_Datatype t    = size == 8 ? MPI_DOUBLE : size == 4 ? MPI_INT : MPI_BYTE;
                const long   cnt  = t == MPI_BYTE ? n * size : n;
                MPI_Allreduce(sendBuf, recvBuf, static_cast<int>(cnt), t, t == MPI_BYTE ? MPI_BOR : MPI_SUM,
                              comm(a[0], at));
                break;
            }
            case Kind::Bcast:
                need(3);
                MPI_Bcast(recvBuf, static_cast<int>(a[2]), MPI_BYTE, static_cast<int>(a[1]), comm(a[0], at));
                break;
            case Kind::Barrier:
                need(1);
                MPI_Barrier(comm(a[0], at));
                break;
            case Kind::Allgather:
                need(4);
                MPI_Allgather(sendBuf, static_cast<int>(a[2]), MPI_BYTE, recvBuf, static_cast<int>(a[3]), MPI_BYTE,
                              comm(a[0], at));
                break;
            case Kind::Alltoall:
                need(4);
                MPI_Alltoall(sendBuf, static_cast<int>(a[2]), MPI_BYTE, recvBuf, static_cast<int>(a[3]), MPI_BYTE,
                             comm(a[0], at));
                break;
            case Kind::Gather:
                need(4);
                MPI_Gather(sendBuf, static_cast<int>(a[2]), MPI_BYTE, recvBuf, static_cast<int>(a[3]), MPI_BYTE,
                           static_cast<int>(a[1]), comm(a[0], at));
                break;
            case Kind::Alltoallv:
            {
                need(2);
                const int n = static_cast<int>(a[1]);
                need(2 + 2 * static_cast<size_t>(n));
                vector(e, 2, n, counts, displs);
                vector(e, 2 + n, n, counts2, displs2);
                MPI_Alltoallv(sendBuf, counts.data(), displs.data(), MPI_BYTE, recvBuf, counts2.data(), displs2.data(),
                              MPI_BYTE, comm(a[0], at));
                break;
            }
            case Kind::Gatherv:
            {
                need(4);
                const int n = static_cast<int>(a[3]);
                need(4 + static_cast<size_t>(n));
                vector(e, 4, n, counts, displs);
                MPI_Gatherv(sendBuf, static_cast<int>(a[2]), MPI_BYTE, recvBuf, counts.data(), displs.data(), MPI_BYTE,
                            static_cast<int>(a[1]), comm(a[0], at));
                break;
            }
        }
    }
};

long number(const char* text, const char* what)
{
    char*      end = nullptr;
    const long v   = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 0)
    {
        fail(std::string(what) + " '" + text + "' is not a whole number, 0 or more");
    }
    return v;
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    Replayer p;
    int      size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 && argc != 5)
    {
        fail("usage: putmd_replay DIR [FROM TO REPEAT] (DIR: a record of putmd_smpi, PUTMD_SMPI_RECORD=DIR)");
    }
    if (sg_cfg_get_boolean("smpi/simulate-computation") != 0)
    {
        fail("run with --cfg=smpi/simulate-computation:no (tools/simgrid/replay.sh does): the record holds the "
             "computation, and the replay's own would be simulated too");
    }
    const std::string dir = argv[1];
    long from = 0, to = 0, repeat = 1;
    if (argc == 5)
    {
        from   = number(argv[2], "FROM");
        to     = number(argv[3], "TO");
        repeat = number(argv[4], "REPEAT");
        if (to <= from || repeat < 1)
        {
            fail("FROM " + std::string(argv[2]) + " TO " + argv[3] + " REPEAT " + argv[4]
                 + ": need FROM < TO and REPEAT 1 or more");
        }
    }
    p.path = dir + "/rank-" + std::to_string(p.rank) + ".txt";
    if (p.rank == size - 1)
    {
        std::ifstream more(dir + "/rank-" + std::to_string(size) + ".txt");
        if (more)
        {
            fail(dir + " holds a record of more than " + std::to_string(size) + " ranks: replay it on as many");
        }
    }
    const Record rec = readRecord(p.path);
    size_t       iFrom = rec.events.size(), iTo = rec.events.size();
    if (argc == 5)
    {
        if (to >= static_cast<long>(rec.marks.size()))
        {
            fail(p.path + ": step " + std::to_string(to) + " is not in the record (" + std::to_string(rec.marks.size())
                 + " steps marked): choose FROM < TO below that");
        }
        iFrom = rec.marks[from];
        iTo   = rec.marks[to];
    }
    // one pair of buffers for all simulated ranks (their contents do not matter)
    p.sendBuf = static_cast<char*>(SMPI_SHARED_MALLOC(static_cast<size_t>(rec.maxBytes)));
    p.recvBuf = static_cast<char*>(SMPI_SHARED_MALLOC(static_cast<size_t>(rec.maxBytes)));
    const double t0 = MPI_Wtime();
    for (size_t i = 0; i < iFrom; i++)
    {
        p.run(rec.events[i], i, true);
    }
    const double tWindow0 = MPI_Wtime();
    for (long k = 0; k < repeat && iFrom < iTo; k++)
    {
        for (size_t i = iFrom; i < iTo; i++)
        {
            p.run(rec.events[i], i, k == 0);
        }
        for (size_t q = 0; q < p.requests.size(); q++)
        {
            if (p.requests[q] != MPI_REQUEST_NULL)
            {
                fail(p.path + ": request " + std::to_string(q) + " of the repeated steps is still pending at their end: "
                     "choose other steps FROM TO");
            }
        }
    }
    const double tWindow1 = MPI_Wtime();
    for (size_t i = iTo; i < rec.events.size(); i++)
    {
        p.run(rec.events[i], i, repeat == 1);
    }
    const double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    if (p.rank == 0)
    {
        std::printf("replayed %s on %d ranks: %zu events on rank 0, %.6f s simulated", dir.c_str(), size,
                    rec.events.size(), t1 - t0);
        if (argc == 5)
        {
            std::printf("; steps %ld to %ld %ld times: %.6f s, %.6f ms a step", from, to, repeat, tWindow1 - tWindow0,
                        1e3 * (tWindow1 - tWindow0) / double((to - from) * repeat));
        }
        std::printf("\n");
    }
    SMPI_SHARED_FREE(p.sendBuf);
    SMPI_SHARED_FREE(p.recvBuf);
    MPI_Finalize();
    return 0;
}
