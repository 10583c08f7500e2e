/* bench/pingpong.cpp — latency and bandwidth between ranks 0 and 1, the
 * two numbers of a SimGrid link (tools/simgrid/this-machine.xml, calibrated
 * by bench/smpi_validate.sh). Prints one line per size: bytes, half the
 * round-trip time in microseconds, and for the largest size the bandwidth
 * implied after the latency. Built with the project (mpirun -np 2). */
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
    {
        if (rank == 0)
        {
            std::fprintf(stderr, "pingpong: run on exactly 2 ranks (mpirun -np 2), not %d\n", size);
        }
        MPI_Finalize();
        return 2;
    }
    double latency = 0;
    for (int bytes : {8, 65536, 1 << 22})
    {
        std::vector<char> buf(static_cast<std::size_t>(bytes), 1);
        const int         reps = bytes < 65536 ? 2000 : bytes < (1 << 22) ? 200 : 20;
        double            t0   = 0;
        for (int r = -reps / 10; r < reps; ++r)
        {
            if (r == 0)
            {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0)
            {
                MPI_Send(buf.data(), bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf.data(), bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            else
            {
                MPI_Recv(buf.data(), bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf.data(), bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        const double half = (MPI_Wtime() - t0) / reps / 2;
        if (bytes == 8)
        {
            latency = half;
        }
        if (rank == 0)
        {
            std::printf("bytes %d half-round-trip-us %.2f", bytes, half * 1e6);
            if (bytes > 8)
            {
                std::printf(" bandwidth-MBps %.0f", bytes / (half - latency) / 1e6);
            }
            std::printf("\n");
        }
    }
    MPI_Finalize();
    return 0;
}
