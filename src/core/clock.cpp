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
    // before MPI_Init, after MPI_Finalize, or in a program linked without
    // smpi_clock's wrappers: SMPI's own clock, one computation burst a read
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
