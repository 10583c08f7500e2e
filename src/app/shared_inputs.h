/* app/shared_inputs.h — a run's inputs, as each rank holds them.
 *
 * Real ranks each read the input files themselves: every rank needs the
 * whole topology, and reading it in parallel costs no more than reading it
 * once. Under SimGrid's SMPI every simulated rank lives in the one smpirun
 * process, and each would hold its own copy: water-spce-96k's topology and
 * coordinates are about 20 MB, 20 GB for 1,024 simulated ranks, more than
 * this machine has. There rank 0 reads the inputs and the other ranks use
 * its copy, read-only, through its address (one address space; the
 * address goes out by MPI_Bcast, so the others wait for the reading as
 * they would for their own). A failure to read reaches every rank as the
 * same InputError, never a hang.
 */
#pragma once

#include <memory>

#include "run/system_inputs.h"

namespace putmd
{

/* The inputs of this rank: loadSystem(paths), or under SMPI rank 0's copy. */
std::shared_ptr<const SystemInputs> loadSystemForRank(const InputPaths& paths);

} // namespace putmd
