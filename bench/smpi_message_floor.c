/* bench/smpi_message_floor.c — what SimGrid's SMPI costs per message, with
 * putmd's halo pattern and nothing else: the floor under a simulated
 * putmd step (docs/scaling.md, "What sampling could save at 1,024 ranks").
 *
 *   smpicc -O2 bench/smpi_message_floor.c -o floor
 *   smpirun -np 1024 -platform tools/simgrid/ib-fattree.xml -hostfile H \
 *       --cfg=smpi/host-speed:1Gf --cfg=smpi/send-is-detached-thresh:0 \
 *       ./floor STEPS BYTES PULSES [MEMORY_BYTES [TOUCHED_BYTES]]
 *
 * Each rank of a periodic 3D grid (MPI_Dims_create) sends PULSES messages
 * of BYTES forward a step (pulse k along dimension k mod 3) and as many
 * back, as a staged halo sends coordinates and returns forces: an
 * MPI_Irecv, an MPI_Isend and one MPI_Wait for each, a short computation
 * after every pulse and a longer one after each half (computation bursts,
 * which SMPI times and simulates, as between putmd's calls). MEMORY_BYTES:
 * a block each rank allocates and writes at start (a simulated putmd rank
 * holds megabytes); TOUCHED_BYTES: how much of it the computations read
 * per step. Time it from the outside (`date` around smpirun): inside, the
 * clock is the simulated one. Rank 0 prints the message count.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double g_sink;
static double*         g_block;
static long            g_blockDoubles, g_touchPerBurst;

static void compute(int iterations)
{
    double s = 0;
    for (int i = 0; i < iterations; i++)
    {
        s += i * 1e-9;
    }
    for (long i = 0; i < g_touchPerBurst; i += 8) /* one double per cache line */
    {
        s += g_block[i];
    }
    g_sink = s;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4)
    {
        if (rank == 0)
        {
            fprintf(stderr, "usage: %s STEPS BYTES PULSES [MEMORY_BYTES [TOUCHED_BYTES]]\n", argv[0]);
        }
        MPI_Finalize();
        return 2;
    }
    const int steps = atoi(argv[1]), bytes = atoi(argv[2]), pulses = atoi(argv[3]);
    if (steps < 0 || bytes < 1 || pulses < 1 || pulses > 32)
    {
        if (rank == 0)
        {
            fprintf(stderr, "STEPS >= 0, BYTES >= 1 and PULSES 1 to 32, not %s %s %s\n", argv[1], argv[2], argv[3]);
        }
        MPI_Finalize();
        return 2;
    }
    g_blockDoubles = argc > 4 ? atol(argv[4]) / 8 : 0;
    const long touched = argc > 5 ? atol(argv[5]) / 8 : 0;
    if (touched > g_blockDoubles)
    {
        if (rank == 0)
        {
            fprintf(stderr, "TOUCHED_BYTES (%s) is more than MEMORY_BYTES (%s)\n", argv[5], argv[4]);
        }
        MPI_Finalize();
        return 2;
    }
    g_touchPerBurst = touched / (2 * pulses + 2); /* bursts per step */
    if (g_blockDoubles > 0)
    {
        g_block = malloc(sizeof(double) * g_blockDoubles);
        for (long i = 0; i < g_blockDoubles; i++)
        {
            g_block[i] = (double)i;
        }
    }
    int      dims[3] = { 0, 0, 0 }, periodic[3] = { 1, 1, 1 };
    MPI_Comm grid;
    MPI_Dims_create(size, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periodic, 0, &grid);
    char* out = calloc((size_t)bytes, (size_t)pulses);
    char* in  = calloc((size_t)bytes, (size_t)pulses);
    for (int s = 0; s < steps; s++)
    {
        for (int half = 0; half < 2; half++) /* forward, then back */
        {
            for (int k = 0; k < pulses; k++)
            {
                int         from = 0, to = 0;
                MPI_Request recv, send;
                MPI_Cart_shift(grid, k % 3, half == 0 ? 1 : -1, &from, &to);
                MPI_Irecv(in + (size_t)k * bytes, bytes, MPI_CHAR, from, k, grid, &recv);
                MPI_Isend(out + (size_t)k * bytes, bytes, MPI_CHAR, to, k, grid, &send);
                MPI_Wait(&recv, MPI_STATUS_IGNORE);
                MPI_Wait(&send, MPI_STATUS_IGNORE);
                compute(2000);
            }
            compute(20000);
        }
    }
    MPI_Barrier(grid);
    if (rank == 0)
    {
        printf("%d ranks (%d x %d x %d), %d steps of %d pulses each way, %d bytes: %ld messages\n", size, dims[0],
               dims[1], dims[2], steps, pulses, bytes, (long)size * steps * 2 * pulses);
    }
    free(in);
    free(out);
    free(g_block);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
