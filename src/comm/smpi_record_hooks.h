/* comm/smpi_record_hooks.h — what the SMPI program's MPI wrappers
 * (smpi_clock.cpp) and dupComm tell the recorder (smpi_record.h). SMPI
 * build only. Every hook does nothing unless PUTMD_SMPI_RECORD is set. */
#pragma once

#include <mpi.h>

namespace putmd::smpi_record
{

/* After MPI_Init_thread's wrapper started the clock; before MPI_Finalize
 * (writes the record). */
void start();
void stop();

/* At every wrapper's entry: the computation since the last call or mark,
 * simulated there (smpi_clock::endBurst) and recorded. */
void burst();

/* A call the replay cannot run (one-sided communication, probes). */
void unreplayable(const char* name);

void split(MPI_Comm parent, int color, int key, MPI_Comm out);
void splitType(MPI_Comm parent, int type, int key, MPI_Comm out);
void dup(MPI_Comm parent, MPI_Comm out);
/* isend, irecv (q: the new request), send, recv (q null) */
void pointToPoint(const char* what, MPI_Comm c, int peer, int tag, int n, MPI_Datatype t, const MPI_Request* q);
void sendRecv(MPI_Comm c, int dst, int stag, int sn, MPI_Datatype st, int src, int rtag, int rn, MPI_Datatype rt);
/* before MPI_Wait (n = 1) or MPI_Waitall */
void waitOn(int n, const MPI_Request* q);
/* barrier, bcast, allgather, alltoall, gather: what a rank sends (n of t),
 * and (allgather, alltoall, gather at the root) receives from each (n2 of
 * t2; ignored elsewhere) */
void collective(const char* what, MPI_Comm c, int root, int n, MPI_Datatype t, int n2, MPI_Datatype t2);
void allreduce(MPI_Comm c, int n, MPI_Datatype t);
void alltoallv(MPI_Comm c, const int* sc, MPI_Datatype st, const int* rc, MPI_Datatype rt);
void gatherv(MPI_Comm c, int root, int sn, MPI_Datatype st, const int* rc, MPI_Datatype rt);

} // namespace putmd::smpi_record
