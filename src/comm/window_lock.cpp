/* comm/window_lock.cpp — the node-wide window-creation lock (described in
 * window_lock.h). */
#include "comm/window_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "comm/communicator.h"
#include "comm/waiter.h"

namespace putmd::comm
{

namespace
{

const std::string& lockPath()
{
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/putmd-window-creation-"
               + std::to_string(static_cast<long>(getuid())) + ".lock";
    }();
    return path;
}

/* Opened once per process; -1 if it cannot be opened (with a warning). */
int lockFd()
{
    static const int fd = [] {
        const int f = open(lockPath().c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (f < 0)
        {
            std::fprintf(stderr,
                         "putmd comm (rank %d): warning: cannot open %s (%s); window creation in "
                         "sub-communicators is not serialised (see src/comm/window_lock.h)\n",
                         Communicator::worldRank(), lockPath().c_str(), std::strerror(errno));
        }
        return f;
    }();
    return fd;
}

} // namespace

WindowCreationLock::~WindowCreationLock()
{
    int finalized = 1;
    if (node_ != MPI_COMM_NULL && (MPI_Finalized(&finalized), !finalized))
    {
        MPI_Comm_free(&node_);
    }
}

long WindowCreationLock::run(const std::function<void()>& create)
{
    // The world needs no lock; nor does SimGrid's SMPI, whose windows are
    // not Open MPI's (and whose ranks share one process, where the file
    // lock would be taken by one simulated rank against the others)
    if (world_ || PUTMD_SMPI)
    {
        create();
        return 0;
    }
    long collectives = 0;
    if (node_ == MPI_COMM_NULL)
    {
        int rank = 0;
        MPI_Comm_rank(comm_, &rank);
        MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_);
        int nodeRank = 0;
        MPI_Comm_rank(node_, &nodeRank);
        nodeLeader_ = nodeRank == 0;
        ++collectives;
    }
    const int        fd = nodeLeader_ ? lockFd() : -1;
    std::minstd_rand rng(static_cast<unsigned>(Communicator::worldRank() * 7919 + 17));
    Waiter           waiter([&] {
        return "waiting for the node-wide window-creation lock " + lockPath()
               + " (another group of ranks is creating an MPI window; see src/comm/window_lock.h)";
    });
    while (true)
    {
        int got = 1;
        if (fd >= 0)
        {
            got = flock(fd, LOCK_EX | LOCK_NB) == 0 ? 1 : 0;
        }
        int all = 0;
        MPI_Allreduce(&got, &all, 1, MPI_INT, MPI_LAND, comm_);
        ++collectives;
        if (all)
        {
            break;
        }
        if (fd >= 0 && got)
        {
            flock(fd, LOCK_UN); // all or nothing: a group spanning nodes must not hold some locks while waiting
        }
        timespec nap{0, static_cast<long>(20'000 + rng() % 400'000)};
        nanosleep(&nap, nullptr);
        waiter.poll();
    }
    struct Unlock
    {
        int fd;
        ~Unlock()
        {
            if (fd >= 0)
            {
                flock(fd, LOCK_UN);
            }
        }
    } unlock{fd};
    create();
    return collectives;
}

void withWindowCreationLock(MPI_Comm comm, const std::function<void()>& create)
{
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
    WindowCreationLock lock(comm, cmp == MPI_IDENT || cmp == MPI_CONGRUENT);
    lock.run(create);
}

} // namespace putmd::comm
