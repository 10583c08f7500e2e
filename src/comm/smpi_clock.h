/* comm/smpi_clock.h — the simulated clock, read without a simulator event
 * (SMPI build only).
 *
 * Under SimGrid's SMPI every simulated rank's computation is measured in
 * real CPU time and injected into the simulation at its next MPI call:
 * SMPI stops a per-rank CPU timer on entry to each MPI call ("bench end"),
 * runs the elapsed time as a computation burst on the simulated host, and
 * restarts the timer on return ("bench begin"). MPI_Wtime is such a call,
 * so every read of the simulated clock used to end a burst: one simulator
 * activity, two context switches and a max-min update per read. putmd reads
 * its clock at every stage boundary and around every communication wait
 * (the log's stage and communication tables), several dozen times a step a
 * rank: at 1,024 simulated ranks those reads were a third of the
 * simulation's real time per step (4.0 -> 2.7 s a step of water-spce-96k;
 * docs/scaling.md).
 *
 * This clock reads the same time without the burst. Between two MPI calls
 * a rank's simulated time is the engine's clock at the return of the last
 * call plus the CPU time spent since, scaled as SMPI scales it (the
 * platform's host speed against smpi/host-speed; measured at MPI_Init,
 * the smaller of two 1 ms measurements). putmd_smpi is linked with
 * `-Wl,--wrap` for each MPI function that ends and restarts SMPI's timer
 * (in SimGrid 3.32: point-to-point,
 * one-sided, collective, split, init and finalize calls: the
 * PUTMD_SMPI_WRAP lines of smpi_clock.cpp, which CMakeLists.txt reads), and
 * each wrapper records (engine clock, CPU time) after the real call
 * returns. The other MPI functions
 * putmd calls (communicator and group queries, MPI_Comm_dup, ...) do not
 * touch SMPI's timer and are left alone. A read whose engine clock differs
 * from the recorded one (the rank was suspended somewhere else) falls back
 * to MPI_Wtime. The result is monotonic per rank.
 *
 * PUTMD_SMPI_CLOCK in the environment:
 *   fast   (default) as above;
 *   flush  every read is MPI_Wtime (the old clock: one burst per read);
 *   check  every read is computed both ways and MPI_Wtime's value returned;
 *          at MPI_Finalize each rank prints the reads, how many went through
 *          the simulator, and the largest difference (the test
 *          Simgrid.ClockMatchesFlushedReads).
 */
#pragma once

namespace putmd::smpi_clock
{

/* True between MPI_Init_thread's and MPI_Finalize's wrappers. */
bool active();

/* This simulated rank's simulated time, s (requires active()). */
double now();

/* Ends this rank's computation burst here: SMPI simulates it (as at the
 * start of any MPI call) and the clock restarts; returns the burst's
 * simulated length, s, as SMPI charged it (the recorder, smpi_record.h:
 * the rank's CPU time measured around it misses SMPI's own share, 3 us a
 * burst on water-spce-3k). An MPI call (its wrapper) or resume() must
 * follow before the clock is read again. */
double endBurst();

/* The simulated time at the last MPI call's return or endBurst(). */
double lastSynchronised();

/* After endBurst() when no MPI call follows: the clock restarts here. */
void resume();

} // namespace putmd::smpi_clock
