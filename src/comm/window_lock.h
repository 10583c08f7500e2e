/* comm/window_lock.h — the node-wide lock around MPI window creation on
 * communicators that are not the whole world.
 *
 * Open MPI 4.1's osc/rdma (the default one-sided component) names a
 * temporary file in /dev/shm after the window communicator's context id,
 * which disjoint groups made by one split (PP and PME ranks) can share: two
 * groups creating a window at the same moment then break each other's
 * window (open/unlink errors, or worse, one group mapping the other's
 * segment). So a group that is not the whole world creates windows only
 * while it holds, on each of its nodes, an exclusive flock() on the per-user
 * file $TMPDIR/putmd-window-creation-UID.lock (default /tmp): the group's
 * first rank on each node tries the lock without blocking, the group agrees
 * (MPI_Allreduce) whether all of them got it, and otherwise releases it and
 * retries after a random nap, so groups spanning several nodes cannot
 * deadlock. The wait is a Waiter (waiter.h): it gives up after
 * PUTMD_COMM_TIMEOUT. The file is opened once per process; if it cannot be
 * opened, creation is not serialised and a warning says so. It is shared by
 * every putmd job of the user on the node, which only serialises their
 * (rare, short) window creations, harmlessly. The world never takes the
 * lock: every rank takes part, so nobody else can create a window. Nor does
 * the SMPI build (no Open MPI there; all simulated ranks in one process).
 *
 * Used by the arenas of the one-sided backends (arena.cpp) and by the rma
 * transposes of the pencil FFT (src/fft/transpose.cpp).
 */
#pragma once

#include <mpi.h>

#include <functional>

namespace putmd::comm
{

/* The lock for one group; keeps the group's node communicator (made at the
 * first run()) for later creations. */
class WindowCreationLock
{
public:
    /* Windows on `comm`; world: comm's group is the whole world in world
     * order (then run() only calls create()). */
    WindowCreationLock(MPI_Comm comm, bool world) : comm_(comm), world_(world) {}
    ~WindowCreationLock(); // frees the node communicator (unless MPI is finalised)
    WindowCreationLock(const WindowCreationLock&)            = delete;
    WindowCreationLock& operator=(const WindowCreationLock&) = delete;

    /* Collective over comm: call create() while the group holds the lock
     * (released afterwards, also if create() throws). Returns the number of
     * collective MPI calls the locking made (0 on the world), for statistics. */
    long run(const std::function<void()>& create);

private:
    MPI_Comm comm_;
    bool     world_;
    MPI_Comm node_       = MPI_COMM_NULL; // this group's ranks on this node
    bool     nodeLeader_ = false;         // first of them: takes the lock
};

/* Collective over comm: one creation under the lock (world: decided by
 * MPI_Comm_compare with MPI_COMM_WORLD, identical or congruent). */
void withWindowCreationLock(MPI_Comm comm, const std::function<void()>& create);

} // namespace putmd::comm
