/* comm/smpi_record.h — a simulated run's communication and computation,
 * recorded for replay (SMPI build; the other builds have only markStep,
 * which does nothing there).
 *
 * A simulated 1,024-rank step of putmd costs the simulator 1.85-2 s of real
 * time, two to three times what SimGrid needs for the same messages alone
 * (docs/scaling.md): every simulated rank resumes with its code and data
 * evicted by the ranks run in between. A replay (0.8 s a step there) runs the same messages and
 * the same computation bursts (as simulated waits) in a program that holds
 * nothing else, so each rank holds only its list of events.
 *
 * With PUTMD_SMPI_RECORD=DIR, every simulated rank of putmd_smpi writes
 * DIR/rank-R.txt at MPI_Finalize (R its world rank; kept in memory until
 * then, since anything the recorder does between a burst's end and the
 * call is simulated computation), one event a line:
 *   settings EAGER HOST       the run's eager limit and the rank's host
 *                             (the replay checks them)
 *   c SECONDS AT              a computation burst as SMPI simulated it
 *                             (smpi_clock::endBurst) and the simulated time
 *                             at its end
 *   m INDEX SECONDS           the start of the rank's INDEX-th step and its
 *                             simulated time then (PP ranks at each MD step,
 *                             PME ranks at each step's coordinates)
 *   split|splittype|dup ...   a new communicator (its number; 0 is world)
 *   isend|irecv COMM PEER TAG BYTES REQUEST, send, recv, sendrecv
 *   wait REQUEST, waitall N REQUEST... (-1 a null request, -2 one the
 *                             recorder did not see begin)
 *   allreduce COMM COUNT SIZE, bcast, barrier, allgather, alltoall,
 *   alltoallv, gather, gatherv (bytes per rank)
 *   x NAME                    a call the replay cannot run (one-sided
 *                             communication: record with --comm p2p and
 *                             --fft-transpose pairwise)
 * Byte counts, not datatypes: the replay sends bytes (an allreduce keeps
 * its element size). tools/simgrid/putmd_replay.cpp runs such a record, as
 * recorded or with a window of steps repeated (docs/scaling.md, "Sampled
 * runs").
 */
#pragma once

namespace putmd::smpi_record
{

/* The start of this rank's next step, in the record (nothing when not
 * recording, and in builds other than SMPI's). */
void markStep();

} // namespace putmd::smpi_record
