/* core/clock.cpp — see clock.h. */
#include "core/clock.h"

#if PUTMD_SMPI
#include <mpi.h>

#include "comm/smpi_clock.h"
#endif

namespace putmd
{

std::chrono::steady_clock::time_point clockNow()
{
#if PUTMD_SMPI
    if (smpi_clock::active())
    {
        return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(smpi_clock::now())));
    }
    // before MPI_Init's wrapper and after MPI_Finalize's: SMPI's own clock
    // (one computation burst a read) once MPI is up, the wall clock before
    int up = 0, down = 0;
    MPI_Initialized(&up);
    if (up)
    {
        MPI_Finalized(&down);
    }
    if (up && !down)
    {
        return std::chrono::steady_clock::time_point(
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(MPI_Wtime())));
    }
#endif
    return std::chrono::steady_clock::now();
}

} // namespace putmd
