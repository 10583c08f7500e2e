/* comm/smpi_bell.h — how a simulated rank waits for a one-sided write
 * (SMPI build only).
 *
 * On real hardware a rank that waits for a flag a peer puts into its
 * memory polls the word with loads, and sees the flag the moment it lands.
 * Under SimGrid's SMPI (SimGrid 3.32) the same poll was a fetch-and-op on
 * the rank's own window plus a flush of itself: two or three simulator
 * calls per poll, each under a mutex of the window that the senders'
 * flushes of the same window take too. A polling rank then spent the
 * simulation's real time on polls (hundreds per wait at 0.5 us of
 * simulated time each) and held back the very senders it waited for: on
 * 128 simulated ranks the rma backend's step was 8.1 ms against 4.9-6.5
 * with the scheme below, and the polls were most of the simulation's time.
 *
 * The scheme: all simulated ranks share one address space, and SMPI writes
 * a put's bytes into the target's memory when the transfer completes, so
 * the waiting rank reads the word with an acquire load (loadAcquire,
 * comm/shared_flag.h). When the word
 * is not there yet it sleeps on its bell, a SimGrid semaphore, one per
 * rank and group; the writer rings the target's bell right after the flush
 * that completed the write (its MPI_Win_flush of that target returns when
 * the put has landed). So the rank wakes at the simulated moment the flag
 * landed, as a hardware poll would see it, up to the writer's flushes of
 * the targets it completed before (one flush per target, in the order of
 * its writes). A ring that finds nobody waiting is kept (the semaphore
 * counts) and costs the next wait one more look at its words; a ring is
 * never lost, since a rank looks at its words before every sleep.
 * PUTMD_COMM_TIMEOUT (simulated seconds) still ends a wait that nobody
 * ends.
 *
 * Users: the rma backend (backend_rma.cpp) and the rma transposes of the
 * pencil FFT (src/fft/transpose.cpp).
 */
#pragma once

#if PUTMD_SMPI

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace putmd::comm
{

class SmpiBells
{
public:
    /* Collective over comm: this rank's bell, and every member's. */
    explicit SmpiBells(MPI_Comm comm);
    /* Destroy only after a collective that follows every ring of this
     * group (the owners free their windows first: MPI_Win_free's
     * barriers). */
    ~SmpiBells();
    SmpiBells(const SmpiBells&)            = delete;
    SmpiBells& operator=(const SmpiBells&) = delete;

    /* Wakes the member `rank` (its rank in comm). */
    void ring(int rank);

    /* Sleeps until a member rings this rank's bell. If PUTMD_COMM_TIMEOUT
     * simulated seconds have passed since `since` (a clockSeconds() value,
     * the start of the whole wait) it stops the job with describe(). */
    void wait(double since, const std::function<std::string()>& describe);

private:
    void*              own_ = nullptr; // sg_sem_t
    std::vector<void*> all_;           // every member's, by rank
};

} // namespace putmd::comm

#endif // PUTMD_SMPI

#include <mpi.h>

#include <cstdint>

namespace putmd::comm
{

/* Writes the flag or acknowledgement word *value into target's window at
 * disp (bytes), completed by the caller's next flush: an atomic
 * MPI_Accumulate(MPI_REPLACE), or under SimGrid an MPI_Put. SMPI 3.32
 * completes every MPI_Accumulate before it returns (smpi_win.cpp flushes
 * the target after each, a workaround for accumulate ordering it does not
 * implement), so flags to L peers would cost L round trips one after the
 * other where an RMA library overlaps them; SMPI copies a put whole when
 * it completes, and the reads are loads (above), so a put is as atomic
 * there. The data and the results are the same either way. *value must
 * live until the flush. */
inline void putFlagWord(const std::uint64_t* value, int target, MPI_Aint disp, MPI_Win win)
{
#if PUTMD_SMPI
    MPI_Put(value, 1, MPI_UINT64_T, target, disp, 1, MPI_UINT64_T, win);
#else
    MPI_Accumulate(value, 1, MPI_UINT64_T, target, disp, 1, MPI_UINT64_T, MPI_REPLACE, win);
#endif
}

} // namespace putmd::comm
