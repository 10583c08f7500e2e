/* comm/grid_reduction.h — element-wise sum of a large array over all ranks
 * (replicated PME's charge grid), in place. One MPI_Allreduce, counted as a
 * collective of the phase; the identity on one rank. Every rank runs the
 * same reduction on the same data whatever the exchange backend, so results
 * stay bitwise identical across backends. Goes away with separate PME ranks.
 */
#pragma once

#include <span>

#include "comm/communicator.h"

namespace putmd::comm
{

void sumOverRanks(Communicator& comm, Phase phase, std::span<float> values);
void sumOverRanks(Communicator& comm, Phase phase, std::span<double> values);

} // namespace putmd::comm
