#!/usr/bin/env bash
# tools/simgrid/smpirun.sh — run putmd_smpi on a simulated cluster.
#
# usage: tools/simgrid/smpirun.sh -platform NAME|FILE -np N [-per-host K]
#                                 [-eager-limit BYTES]
#                                 [-- SMPIRUN_OPTIONS... --] PROGRAM ARGS...
#   -platform  gbe, 10gbe, ib-fattree, torus (files in tools/simgrid/), or a
#              platform file
#   -np N      simulated ranks (at most 1024 on the shipped platforms)
#   -per-host K  ranks per simulated host (default 1)
#   -eager-limit BYTES  sends below BYTES complete without waiting for the
#              receiver, as MPI's eager protocol (default 65536, SimGrid's
#              smpi/send-is-detached-thresh); 0: every send waits for its
#              receive (rendezvous). Use 0 from about 512 ranks: SimGrid 3.32
#              keeps all eager messages in flight in one list that it scans
#              at each completion, and 1,024 ranks stall in it
#              (docs/scaling.md measures what the choice changes).
#   PROGRAM    build/bin/putmd_smpi_d (built with putmd when SimGrid is
#              installed) or build/bin/putmd_smpi (tools/simgrid/
#              build_smpi.sh putmd_smpi), then its arguments as for putmd
#
# The hosts' speed is set so that one second of computation measured on
# this machine is one simulated second (--cfg=smpi/host-speed equal to the
# platforms' 1 Gf): the simulated cluster has this machine's cores, with the
# network of the platform (docs/scaling.md explains the calibration).
# MPI_Test and MPI_Iprobe cost 1 us of simulated time each (SMPI's default,
# 100 us, would add a tenth of a millisecond to every poll of a wait loop).
# Collectives use the algorithms Open MPI would choose (smpi/coll-selector:
# ompi), as the real runs here use Open MPI. SMPI's default selector sends
# an allgather as P - 1 messages from every rank and waits for them one
# by one: at 128 simulated ranks the energy sums alone took two thirds of
# the simulation's own time (145 s -> 60 s for 40 steps of water-spce-96k).
# Broadcasts are binomial trees, as Open MPI's are for small messages (the
# ompi selector's SMP-aware broadcast makes SMPI rebuild each new
# communicator's host map with a ring allgather: at 256 simulated ranks two
# MPI_Comm_dup took 3.1 s of simulated time, 21 ms with the binomial tree).
# SMPI's messages about unimplemented calls it does not need
# (MPI_Win_sync, a no-op in one address space) are hidden.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
platform="" np="" per=1 eager=65536 extra=()
die() { echo "smpirun.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
    case $1 in
        -platform) platform=${2:?}; shift 2 ;;
        -np) np=${2:?}; shift 2 ;;
        -per-host) per=${2:?}; shift 2 ;;
        -eager-limit) eager=${2:?}; shift 2 ;;
        --) shift; while [[ $# -gt 0 && $1 != -- ]]; do extra+=("$1"); shift; done
            [[ $# -gt 0 ]] || die "SMPIRUN_OPTIONS must end with '--'"; shift; break ;;
        -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
        -*) die "unknown option '$1'; valid: -platform, -np, -per-host, -eager-limit, -- SMPIRUN_OPTIONS --" ;;
        *) break ;;
    esac
done
[[ -n $platform ]] || die "-platform is required (gbe, 10gbe, ib-fattree, torus or a file)"
[[ $np =~ ^[0-9]+$ && $np -ge 1 ]] || die "-np '$np' is not a rank count; valid: 1 or more"
[[ $per =~ ^[0-9]+$ && $per -ge 1 ]] || die "-per-host '$per' is not a count; valid: 1 or more"
[[ $eager =~ ^[0-9]+$ ]] || die "-eager-limit '$eager' is not a byte count; valid: 0 or more (default 65536)"
[[ $# -gt 0 ]] || die "no program given (build/bin/putmd_smpi_d run ...)"
file=$platform
[[ -f $file ]] || file=$here/$platform.xml
[[ -f $file ]] || die "platform '$platform' not found; valid: gbe, 10gbe, ib-fattree, torus, or a file"
# SimGrid aborts on a bad platform; say first which file, line and host
python3 "$here/check_platform.py" "$file" $(((np + per - 1) / per)) || exit 2
command -v smpirun >/dev/null || die "smpirun not found; install Debian's libsimgrid-dev"
hosts=$(mktemp)
errlog=$(mktemp)
trap 'rm -f "$hosts" "$errlog"' EXIT
for ((r = 0; r < np; r++)); do echo "node-$((r / per))"; done > "$hosts"
# SimGrid 3.32's smpirun exits with 0 when a rank calls MPI_Abort (as
# putmd does on an input error on one of several ranks: the others wait
# forever, and SimGrid ends the simulation as a deadlock): its messages
# are kept and turned into a failure here
set +e
{ smpirun -np "$np" -platform "$file" -hostfile "$hosts" --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/coll-selector:ompi --cfg=smpi/bcast:binomial_tree \
    --cfg=smpi/test:1e-6 --cfg=smpi/iprobe:1e-6 --cfg=smpi/send-is-detached-thresh:"$eager" \
    --log=smpi_mpi.thresh:error --log=xbt_cfg.thresh:warning --log=smpi_config.thresh:warning \
    "${extra[@]}" "$@" 2>&1 1>&3 3>&- | tee "$errlog" >&2 3>&-; rc=${PIPESTATUS[0]}; } 3>&1
set -e
if [[ $rc -eq 0 ]] && grep -q -E "MPI_Abort was called|Deadlock detected" "$errlog"; then
    echo "smpirun.sh: a simulated rank called MPI_Abort or the simulation deadlocked (messages above); failing" >&2
    rc=1
fi
exit $rc
