/* core/clock.cpp — see clock.h. */
#include "core/clock.h"

#if PUTMD_SMPI
#include <mpi.h>
#endif

namespace putmd
{

std::chrono::steady_clock::time_point clockNow()
{
#if PUTMD_SMPI
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
