#!/usr/bin/env bash
# tools/simgrid/replay.sh — replay a record of putmd_smpi on simulated ranks
# (sampled runs: docs/scaling.md, "Sampled runs: record once, replay").
#
# usage: tools/simgrid/replay.sh -platform NAME|FILE -np N [-per-host K]
#                                [-eager-limit BYTES] DIR [FROM TO REPEAT]
#   DIR    a record: PUTMD_SMPI_RECORD=DIR tools/simgrid/smpirun.sh ...
#          build/bin/putmd_smpi run ... --comm p2p --fft-transpose pairwise
#          (one file a simulated rank, written at the run's end)
#   FROM TO REPEAT  the steps from FROM to TO (step marks: the PP ranks'
#          MD steps from the run's first, the PME ranks' steps) run REPEAT
#          times in all: the run gets (TO - FROM) (REPEAT - 1) steps more
#          than were recorded
# The platform, -np, -per-host and -eager-limit must be the recorded run's
# for the replay to be that run. Rank 0 prints "step K SIMULATED RECORDED"
# for every step (RECORDED: the recorded run's time, "-" for repeated
# steps), then "replayed ...: T s simulated; steps FROM to TO REPEAT times:
# X ms a step". Computation is only what the record says (the replay runs
# with smpi/simulate-computation off, so its own reading and bookkeeping
# cost no simulated time).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
opts=()
while [[ $# -gt 0 && $1 == -* ]]; do
    case $1 in
        -platform|-np|-per-host|-eager-limit) opts+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
        -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
        *) echo "replay.sh: unknown option '$1'; valid: -platform, -np, -per-host, -eager-limit" >&2; exit 2 ;;
    esac
done
[[ $# -eq 1 || $# -eq 4 ]] || { echo "replay.sh: give DIR, or DIR FROM TO REPEAT (see --help)" >&2; exit 2; }
[[ -d $1 ]] || { echo "replay.sh: record directory '$1' not found; record one with PUTMD_SMPI_RECORD=DIR" >&2; exit 2; }
bin=${PUTMD_REPLAY_BINARY:-$here/../../build/bin/putmd_replay}
[[ -f $bin ]] || { echo "replay.sh: $bin not found; build it (cmake --build build --target putmd_replay)" >&2; exit 2; }
exec "$here/smpirun.sh" "${opts[@]}" -- --cfg=smpi/simulate-computation:no -- "$bin" "$@"
