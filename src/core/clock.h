/* core/clock.h — the clock of putmd's timings.
 *
 * Every duration putmd reports (the stage table, communication times,
 * ns/day, the start-up measurements that choose transposes and backends)
 * is read from clockNow(). In the normal build it is std::chrono's steady
 * clock. In the SMPI build (PUTMD_SMPI, SimGrid's simulated MPI) it is the
 * simulated clock once MPI is up, read without a simulator event where it
 * can be (comm/smpi_clock.h; MPI_Wtime otherwise): there the wall clock of the
 * simulating process means nothing, while the simulated clock advances by
 * each rank's measured computation (scaled by the platform's host speed)
 * and by the simulated network's transfer times, so the log's table shows
 * the stages of the simulated cluster.
 */
#pragma once

#include <chrono>

namespace putmd
{

std::chrono::steady_clock::time_point clockNow();

/* Seconds on clockNow()'s scale (differences only are meaningful). */
inline double clockSeconds()
{
    return std::chrono::duration<double>(clockNow().time_since_epoch()).count();
}

} // namespace putmd
