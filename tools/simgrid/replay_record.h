/* tools/simgrid/replay_record.h — one simulated rank's record of
 * putmd_smpi (src/comm/smpi_record.h has the format), read for
 * putmd_replay. */
#pragma once

#include <string>
#include <vector>

namespace putmd::replay
{

enum class Kind
{
    Settings,
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
    Waitall,
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
    Kind              kind;
    double            seconds = 0; // compute: its length; mark: the recorded time
    std::vector<long> a;           // the line's numbers, in its order
    long              line = 0;    // in the file, from 1
};

struct Record
{
    std::string        path;
    std::vector<Event> events;
    std::vector<size_t> marks; // the event index of each step mark
    long eagerLimit = -1;      // the recorded run's smpi/send-is-detached-thresh
    std::string host;          // the rank's simulated host
    // buffer sizes: the largest message, allreduce or v-collective total,
    // and the largest per-rank block of allgather, alltoall and gather
    // (times the communicator's size when they run)
    long maxBytes = 1, maxBlock = 0;
};

/* Reads PATH; an error (MPI_Abort) names the file, line and what is valid. */
Record readRecord(const std::string& path);

/* The error, then MPI_Abort. */
[[noreturn]] void fail(const std::string& what);

} // namespace putmd::replay
