/* io/atomic_file.h — write an output file so that it is either complete or
 * absent: the data go to a temporary file beside the target, are flushed to
 * disk, and the temporary file is renamed over the target. A user's earlier
 * file is never left half-written.
 */
#pragma once

#include <string>

namespace putmd
{

/* Throws InputError naming the path and the system's reason on failure. */
void writeFileAtomically(const std::string& path, const std::string& contents);

/* For files written progressively (trajectories, energies, logs): if path
 * exists, rename it to #name.N# beside it (GROMACS's convention, first free
 * N) and return the new name; "" when there was nothing to keep. */
std::string backupExistingFile(const std::string& path);

} // namespace putmd
