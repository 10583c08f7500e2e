/* tools/simgrid/putmd_replay.cpp — replays a record of putmd_smpi
 * (PUTMD_SMPI_RECORD=DIR; src/comm/smpi_record.h) on simulated ranks: the
 * same messages, collectives and communicators, and each computation burst
 * as a simulated wait of the recorded length. Nothing else runs, so a
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
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <xbt/config.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "replay_record.h"

using namespace putmd::replay;

namespace
{

struct Replayer
{
    Replayer(const Record& r, int worldRank) : rec(r), rank(worldRank) {}

    const Record&            rec;
    int                      rank;
    std::vector<MPI_Comm>    comms{ MPI_COMM_WORLD };
    std::vector<MPI_Request> requests;
    char*                    sendBuf = nullptr;
    char*                    recvBuf = nullptr;
    std::vector<int>         counts, displs, counts2, displs2;
    long                     step = 0; // steps begun (marks passed) in this replay

    std::string where(const Event& e) const { return rec.path + ":" + std::to_string(e.line) + ": "; }
    MPI_Comm comm(long id, const Event& e) const
    {
        if (id < 0 || id >= static_cast<long>(comms.size()) || comms[id] == MPI_COMM_NULL)
        {
            fail(where(e) + "communicator " + std::to_string(id) + " was not made by the record's events before");
        }
        return comms[id];
    }
    void made(long id, MPI_Comm c, const Event& e)
    {
        if (id < 0)
        {
            return;
        }
        if (id != static_cast<long>(comms.size()))
        {
            fail(where(e) + "communicator " + std::to_string(id) + " made where " + std::to_string(comms.size())
                 + " was next (a communicator made in repeated steps: choose steps after it)");
        }
        comms.push_back(c);
    }
    MPI_Request* request(long id, const Event& e)
    {
        if (id < 0)
        {
            fail(where(e) + "request " + std::to_string(id) + " (valid: 0 or more)");
        }
        if (id >= static_cast<long>(requests.size()))
        {
            requests.resize(id + 1, MPI_REQUEST_NULL);
        }
        if (requests[id] != MPI_REQUEST_NULL)
        {
            fail(where(e) + "request " + std::to_string(id) + " begun again before it was waited for");
        }
        return &requests[id];
    }
    void wait(long id, const Event& e)
    {
        if (id == -1)
        {
            return; // a null request
        }
        if (id == -2)
        {
            fail(where(e) + "a wait for a request the record did not see begin (a call the recorder does not follow)");
        }
        if (id < -2)
        {
            fail(where(e) + "request " + std::to_string(id) + " (valid: 0 or more, -1 null, -2 not seen begin)");
        }
        if (id < 0 || id >= static_cast<long>(requests.size()) || requests[id] == MPI_REQUEST_NULL)
        {
            fail(where(e) + "a wait for request " + std::to_string(id)
                 + ", which is not pending: begun before the repeated steps and completed in them (choose other "
                   "steps FROM TO)");
        }
        MPI_Wait(&requests[id], MPI_STATUS_IGNORE);
    }
    // an alltoallv's or gatherv's byte counts from position p, blocks laid
    // one after the other
    void byteCounts(const Event& e, size_t p, long n, std::vector<int>& c, std::vector<int>& d)
    {
        c.assign(n, 0);
        d.assign(n, 0);
        int at = 0;
        for (long i = 0; i < n; i++)
        {
            c[i] = static_cast<int>(e.a[p + i]);
            d[i] = at;
            at += c[i];
        }
    }
    static int count(long v) { return static_cast<int>(v); } // every number fits an int (checked when read)
    // an alltoallv's or (at the root) gatherv's count of ranks is its communicator's
    void ranksOf(MPI_Comm c, long n, const Event& e) const
    {
        int size = 0;
        MPI_Comm_size(c, &size);
        if (n != size)
        {
            fail(where(e) + std::to_string(n) + " counts for a communicator of " + std::to_string(size) + " ranks");
        }
    }

    void run(const Event& e, bool recordedStep)
    {
        const auto& a = e.a;
        switch (e.kind)
        {
            case Kind::Settings: break;
            case Kind::Compute:
                // the burst's recorded length as a wait, not as work: with
                // several ranks on a host the recorded length already holds
                // their sharing of its core, which work would count again
                // (-per-host 2: replayed steps twice the recorded). SMPI
                // leaves bursts under its smpi/cpu-threshold (1 us) out.
                if (e.seconds >= 1e-6)
                {
                    sg_actor_sleep_for(e.seconds);
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
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_split(comm(a[0], e), count(a[1]), count(a[2]), &out);
                made(a[3], out, e);
                break;
            }
            case Kind::SplitType:
            {
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_split_type(comm(a[0], e), count(a[1]), count(a[2]), MPI_INFO_NULL, &out);
                made(a[3], out, e);
                break;
            }
            case Kind::Dup:
            {
                MPI_Comm out = MPI_COMM_NULL;
                MPI_Comm_dup(comm(a[0], e), &out);
                made(a[1], out, e);
                break;
            }
            case Kind::Isend:
                MPI_Isend(sendBuf, count(a[3]), MPI_BYTE, count(a[1]), count(a[2]), comm(a[0], e), request(a[4], e));
                break;
            case Kind::Irecv:
                MPI_Irecv(recvBuf, count(a[3]), MPI_BYTE, count(a[1]), count(a[2]), comm(a[0], e), request(a[4], e));
                break;
            case Kind::Send: MPI_Send(sendBuf, count(a[3]), MPI_BYTE, count(a[1]), count(a[2]), comm(a[0], e)); break;
            case Kind::Recv:
                MPI_Recv(recvBuf, count(a[3]), MPI_BYTE, count(a[1]), count(a[2]), comm(a[0], e), MPI_STATUS_IGNORE);
                break;
            case Kind::SendRecv:
                MPI_Sendrecv(sendBuf, count(a[3]), MPI_BYTE, count(a[1]), count(a[2]), recvBuf, count(a[6]), MPI_BYTE,
                             count(a[4]), count(a[5]), comm(a[0], e), MPI_STATUS_IGNORE);
                break;
            // one MPI_Wait a request, as putmd_smpi itself waits
            case Kind::Wait: wait(a[0], e); break;
            case Kind::Waitall:
                for (size_t i = 1; i < a.size(); i++)
                {
                    wait(a[i], e);
                }
                break;
            case Kind::Allreduce:
            {
                // the recorded count of elements of the recorded size
                const MPI_Datatype t = a[2] == 8 ? MPI_DOUBLE : a[2] == 4 ? MPI_INT : MPI_BYTE;
                const long         n = t == MPI_BYTE ? a[1] * a[2] : a[1];
                MPI_Allreduce(sendBuf, recvBuf, count(n), t, t == MPI_BYTE ? MPI_BOR : MPI_SUM, comm(a[0], e));
                break;
            }
            case Kind::Bcast: MPI_Bcast(recvBuf, count(a[2]), MPI_BYTE, count(a[1]), comm(a[0], e)); break;
            case Kind::Barrier: MPI_Barrier(comm(a[0], e)); break;
            case Kind::Allgather:
                MPI_Allgather(sendBuf, count(a[2]), MPI_BYTE, recvBuf, count(a[3]), MPI_BYTE, comm(a[0], e));
                break;
            case Kind::Alltoall:
                MPI_Alltoall(sendBuf, count(a[2]), MPI_BYTE, recvBuf, count(a[3]), MPI_BYTE, comm(a[0], e));
                break;
            case Kind::Gather:
                MPI_Gather(sendBuf, count(a[2]), MPI_BYTE, recvBuf, count(a[3]), MPI_BYTE, count(a[1]), comm(a[0], e));
                break;
            case Kind::Alltoallv:
                ranksOf(comm(a[0], e), a[1], e);
                byteCounts(e, 2, a[1], counts, displs);
                byteCounts(e, 2 + a[1], a[1], counts2, displs2);
                MPI_Alltoallv(sendBuf, counts.data(), displs.data(), MPI_BYTE, recvBuf, counts2.data(), displs2.data(),
                              MPI_BYTE, comm(a[0], e));
                break;
            case Kind::Gatherv:
            {
                int r = 0;
                MPI_Comm_rank(comm(a[0], e), &r);
                if (r == a[1])
                {
                    ranksOf(comm(a[0], e), a[3], e);
                }
                byteCounts(e, 4, a[3], counts, displs);
                MPI_Gatherv(sendBuf, count(a[2]), MPI_BYTE, recvBuf, counts.data(), displs.data(), MPI_BYTE, count(a[1]),
                            comm(a[0], e));
                break;
            }
        }
    }

    void pendingNone(const char* when) const
    {
        for (size_t q = 0; q < requests.size(); q++)
        {
            if (requests[q] != MPI_REQUEST_NULL)
            {
                fail(rec.path + ": request " + std::to_string(q) + " still pending " + when);
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

// the recorded run's settings that the replay can see: its eager limit
// and the rank's host (the platform file itself it cannot)
void checkSettings(const Record& rec)
{
    const long eager = sg_cfg_get_int("smpi/send-is-detached-thresh");
    if (rec.eagerLimit >= 0 && rec.eagerLimit != eager)
    {
        fail(rec.path + ": recorded with -eager-limit " + std::to_string(rec.eagerLimit) + ", replayed with "
             + std::to_string(eager) + ": replay with the recorded one");
    }
    const std::string host = sg_host_self_get_name();
    if (!rec.host.empty() && rec.host != host)
    {
        fail(rec.path + ": recorded on host " + rec.host + ", replayed on " + host
             + ": replay with the recorded -np and -per-host");
    }
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
    if (rank == size - 1 && std::ifstream(dir + "/rank-" + std::to_string(size) + ".txt"))
    {
        fail(dir + " holds a record of more than " + std::to_string(size) + " ranks: replay it on as many");
    }
    const Record rec = readRecord(dir + "/rank-" + std::to_string(rank) + ".txt");
    checkSettings(rec);
    Replayer p(rec, rank);
    size_t   iFrom = rec.events.size(), iTo = rec.events.size();
    if (argc == 5)
    {
        if (to >= static_cast<long>(rec.marks.size()))
        {
            fail(rec.path + ": step " + std::to_string(to) + " is not in the record (" + std::to_string(rec.marks.size())
                 + " steps marked): choose FROM < TO below that");
        }
        iFrom = rec.marks[from];
        iTo   = rec.marks[to];
    }
    // one pair of buffers for all simulated ranks (their contents do not
    // matter), large enough for every event of this rank's record
    const long bufferBytes = std::max(rec.maxBytes, rec.maxBlock * size);
    p.sendBuf              = static_cast<char*>(SMPI_SHARED_MALLOC(static_cast<size_t>(bufferBytes)));
    p.recvBuf              = static_cast<char*>(SMPI_SHARED_MALLOC(static_cast<size_t>(bufferBytes)));
    const double t0 = MPI_Wtime();
    for (size_t i = 0; i < iFrom; i++)
    {
        p.run(rec.events[i], true);
    }
    const double tWindow0 = MPI_Wtime();
    for (long k = 0; k < repeat && iFrom < iTo; k++)
    {
        for (size_t i = iFrom; i < iTo; i++)
        {
            p.run(rec.events[i], k == 0);
        }
        if (repeat > 1)
        {
            p.pendingNone("at the end of the repeated steps: choose other steps FROM TO");
        }
    }
    const double tWindow1 = MPI_Wtime();
    for (size_t i = iTo; i < rec.events.size(); i++)
    {
        p.run(rec.events[i], repeat == 1);
    }
    p.pendingNone("at the end of the record (a wait the recorder did not follow)");
    const double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
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
