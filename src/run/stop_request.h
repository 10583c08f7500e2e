/* run/stop_request.h — asking a run to stop cleanly.
 *
 * SIGTERM and SIGINT (and -maxh) do not kill a run: as in GROMACS, the
 * first request stops it at the next pair-search step and the second at
 * the next step; either way the run writes its final outputs (NAME.gro,
 * the last energies, the log with the reason) and exits with status 0.
 * The signal handler only increments an atomic counter.
 */
#pragma once

#include <string>

namespace putmd
{

void installStopSignalHandlers();
int  stopRequestCount();
/* The signal behind the first request ("SIGTERM", "SIGINT") or "". */
std::string stopRequestReason();
void requestStop(int signalNumber);
void resetStopRequests(); // for tests

} // namespace putmd
