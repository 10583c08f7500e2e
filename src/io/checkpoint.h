/* io/checkpoint.h — the checkpoint file (NAME.cpt): everything a run needs
 * to continue exactly where it was, and the state of its output files.
 *
 * Format (version 1, little-endian, documented in docs/file-formats.md):
 *   "PUTMDCPT"            8 bytes
 *   version               u32
 *   body length           u64
 *   body                  the fields below, in order
 *   checksum              u64, FNV-1a 64 over the body
 * Body: precision of the writer (u32 bytes per real), putmd version
 * (string = u32 length + bytes), step (i64), time (f64), number of atoms
 * (u64), topology fingerprint (u64), system name (string), box (9 f64),
 * coordinates (numAtoms x 3 f64, in topology order), whether velocities
 * follow (u32 0 or 1) and the velocities (numAtoms x 3 f64 when they do),
 * thermostat and barostat integrals (f64, f64), the pair-list radius (f64),
 * nstlist (i32) and the thermostat/barostat seed (u64) the run chose, Nose-Hoover xi per group
 * (u32 count + f64 each), energy averages (u32 count, names, f64 sums,
 * i64 count), whether the outputs of `step` are already written (u32 0/1),
 * ranks and backend of the writer (i32, string: information only), and the
 * output files (u32 count; per file: name, size u64, FNV-1a 64 of its last
 * min(size, 1 MiB) bytes); version 2 adds the FFT plans the run measured
 * (string, see fft3d.h), so that a continuation transforms as it did;
 * version 3 adds the Parrinello-Rahman box velocity and the box-shape
 * ratios the barostat keeps (9 f64 each; zero without it); version 4 the
 * load balancing (below); version 5 the writer's separate PME ranks (i32),
 * so that `--npme auto` continues with the run's layout; version 6 the
 * constraint virial, 7 the balancing switch, 8 the dynamic pruning
 * interval and inner radius the run chose (i32: -1 not recorded, 0 none;
 * f64 nm) and the i-rows per pruned group of the kernel it was chosen for
 * (i32: 2 on AVX2, 4 otherwise; 0 not recorded).
 *
 * Nothing random is stored: thermostat and barostat noise comes from a
 * counter-based generator keyed by seed and step. Values are stored as
 * doubles, so a mixed-precision state round-trips exactly.
 *
 * Writing is atomic (temporary file, fsync, rename) and keeps the previous
 * checkpoint as NAME_prev.cpt. Reading checks magic, version, length and
 * checksum and throws InputError naming the file and what is wrong.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <array>
#include <string>
#include <vector>

#include "core/vec.h"
#include "topology/topology.h"

namespace putmd
{

constexpr uint32_t kCheckpointVersion = 8; // versions 1 (no FFT plans), 2 (no box velocity), 3 (no load balancing), 4 (no PME ranks), 5 (no constraint virial), 6 (no balancing switch) and 7 (no pruning choice) are still read

struct CheckpointOutputFile
{
    std::string name;         // file name as the run wrote it (path)
    uint64_t    size         = 0;
    uint64_t    tailChecksum = 0; // FNV-1a 64 of the last min(size, 1 MiB) bytes
};

struct Checkpoint
{
    uint32_t            precisionBytes = 0;
    std::string         version;
    int64_t             step = 0;
    double              time = 0;
    uint64_t            numAtoms = 0;
    uint64_t            topologyFingerprint = 0;
    std::string         systemName;
    Matrix3             box;
    std::vector<DVec>   x, v;
    double              thermostatIntegral = 0, barostatIntegral = 0;
    double              rlist   = 0; // the run's choices, kept so a continuation makes the same
    int32_t             nstlist = 0;
    uint64_t            ldSeed  = 0;
    std::vector<double> noseHooverXi;
    std::vector<std::string> averageNames;
    std::vector<double>      averageSums;
    int64_t                  averageCount = 0;
    bool                     stepOutputsWritten = false;
    int32_t                  ranks = 1;
    std::string              backend;
    std::vector<CheckpointOutputFile> files;
    std::string                       fftPlans; // version 2: the measured FFT plans (chosenFftPlans)
    Matrix3                           boxVelocity; // version 3: Parrinello-Rahman (nm/ps)
    Matrix3                           boxRel;      // version 3: box-shape ratios P-R preserves
    /* version 4: dynamic load balancing (domdec/load_balance.h): whether it
     * is on, the domain boundaries per dimension (empty: uniform / one
     * rank), and the loads of the window that ended at this step (every
     * rank's, then the wall time; empty: none), which the continuation's
     * first balance uses as the uninterrupted run did. */
    bool                              dlbActive = false;
    std::array<std::vector<double>, 3> dlbBounds;
    std::vector<double>               dlbLoads;
    double                            ddGroupRadius = -1; // version 4: the update groups' radius (nm; -1: one rank)
    int32_t                           pmeRanks = -1; // version 5: the writer's separate PME ranks (-1: not recorded)
    /* version 6: velocity Verlet (md-vv) reports a step's pressure with the
     * constraint virial of the drift before it: that virial, summed over
     * the ranks (zero for leap-frog, which computes it within the step). */
    Matrix3 constraintVirial;
    /* version 7: -dlb auto's switch (domdec/dlb_switch.h): turned off for
     * the rest of the run, the reference windows' summed wall time per
     * step and their count, and the last windows' with balancing. */
    bool                dlbOffForGood       = false;
    double              dlbReferenceSeconds = 0;
    int32_t             dlbReferenceWindows = 0;
    std::vector<double> dlbBalancedSteps;
    /* version 8: the dynamic pruning the run chose (md_setup.h:
     * choosePruning): its interval (0: none; -1: not recorded, an older
     * checkpoint), inner list radius (nm) and the i-rows per pruned group
     * of the kernel it was sized for (clusterKernelPruneRows(): 2 on AVX2,
     * 4 otherwise; 0: not recorded), so that a continuation with the same
     * kernel prunes as the uninterrupted run does whatever its box is by
     * then. */
    int32_t nstlistPrune = -1;
    double  rlistInner   = 0;
    int32_t pruneRows    = 0;
};

std::vector<std::byte> encodeCheckpoint(const Checkpoint& c);
/* Throws InputError (path, byte offset, what is wrong) for anything that is
 * not a complete, intact checkpoint of a version this build reads. */
Checkpoint decodeCheckpoint(std::span<const std::byte> data, const std::string& path);

/* Atomic write; an existing path is first kept as NAME_prev.cpt. Throws
 * InputError naming the file and the system's reason (disk full, ...);
 * the previous checkpoint is then left as it was. */
void       writeCheckpoint(const std::string& path, const Checkpoint& c);
Checkpoint readCheckpoint(const std::string& path);

/* NAME_prev.cpt for NAME.cpt */
std::string previousCheckpointPath(const std::string& path);

/* A fingerprint of what makes a system this system (atom count, masses,
 * charges, atom and residue names, LJ types): a checkpoint of another system
 * is refused. */
uint64_t topologyFingerprint(const Topology& top);

/* FNV-1a 64 of bytes [max(0, size - 1 MiB), size) of the file (0 for an
 * empty range); throws InputError if the file is shorter than size. */
uint64_t fileTailChecksum(const std::string& path, uint64_t size);

uint64_t fnv1a64(std::span<const std::byte> data, uint64_t hash = 14695981039346656037ull);

} // namespace putmd
