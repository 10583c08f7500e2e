#!/usr/bin/env bash
# bench/smpi_validate.sh — how far SimGrid's simulation of putmd is from
# real runs on this machine (issue 17's validation, docs/scaling.md).
#
# 1. Calibrates the platform of this machine (tools/simgrid/this-machine.xml):
#    latency and bandwidth of the link between two namespace hosts
#    (tools/cluster, TCP over veths) and of one host's loopback (Open MPI's
#    shared memory), from bench/pingpong (medians of 3). The host speed is
#    1:1 (tools/simgrid/smpirun.sh): a measured second is a simulated one.
# 2. Runs the same MD real and simulated, alternating, REPEATS times each:
#      1 rank; 2 ranks on one host; 2 ranks on 2 namespace hosts;
#      4 ranks on 2 namespace hosts of one core each (this machine has 2
#      cores: host h's two ranks are pinned to core h, and the simulated
#      hosts have one core, which SimGrid shares between their two ranks)
#    (mixed precision, -nt 1, --comm p2p, --npme 0, pairwise transposes).
# 3. Prints, per layout, the median wall time per step of each stage in
#    both and their ratio (simulated / real), and the steady step (the
#    log's "Steady state" line).
#
# usage: [LAYOUTS="..."] bench/smpi_validate.sh [SYSTEM_DIR] [STEPS] [REPEATS]
#   defaults: tests/data/systems/water-spce-12k 300 3, all four layouts
# needs: build/bin/putmd and build/bin/pingpong (make build), build/bin/
# putmd_smpi (built here on first use: tools/simgrid/build_smpi.sh), root for
# the namespace hosts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
system=${1:-$root/tests/data/systems/water-spce-12k}
steps=${2:-300}
repeats=${3:-3}
# LAYOUTS: a subset of the layouts below, in this order
layouts=${LAYOUTS:-1rank 2ranks1host 2hosts 4ranks2hosts}
for l in $layouts; do
    [[ $l =~ ^(1rank|2ranks1host|2hosts|4ranks2hosts)$ ]] \
        || { echo "smpi_validate.sh: LAYOUTS has '$l'; valid: 1rank 2ranks1host 2hosts 4ranks2hosts" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PUTMD_FFTW_PLAN=estimate
putmd=$root/build/bin/putmd
smpi=$root/build/bin/putmd_smpi
"$root/tools/simgrid/build_smpi.sh" putmd_smpi || exit 2
for f in "$putmd" "$smpi" "$root/build/bin/pingpong"; do
    [[ -x $f ]] || { echo "smpi_validate.sh: $f is missing (see the usage comment)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, kernel instruction set: $(grep -o 'avx512f' /proc/cpuinfo | head -1 | sed 's/avx512f/AVX-512/;t;s/.*/AVX2/')${PUTMD_SIMD:+ (PUTMD_SIMD=$PUTMD_SIMD)}"
echo "system: $(basename "$system"), $steps steps, medians of $repeats"

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# 1. calibration
for i in $(seq 3); do
    "$root/tools/cluster/mpirun-hosts.sh" -k 2 -s 1 "$root/build/bin/pingpong" >> "$work/pp-net"
    mpirun -np 2 "$root/build/bin/pingpong" >> "$work/pp-loop"
done
lat_net=$(awk '$2 == 8 {print $4}' "$work/pp-net" | median)
bw_net=$(awk '$2 == 4194304 {print $6}' "$work/pp-net" | median)
lat_loop=$(awk '$2 == 8 {print $4}' "$work/pp-loop" | median)
bw_loop=$(awk '$2 == 4194304 {print $6}' "$work/pp-loop" | median)
echo "links: between namespace hosts ${lat_net} us, ${bw_net} MB/s; within a host ${lat_loop} us, ${bw_loop} MB/s"
sed -e "s/@BW@/${bw_net}MBps/; s/@LAT@/${lat_net}us/; s/@LBW@/${bw_loop}MBps/; s/@LLAT@/${lat_loop}us/" \
    "$root/tools/simgrid/this-machine.xml" > "$work/platform.xml"
sed -e 's/core="2"/core="1"/' "$work/platform.xml" > "$work/platform-1core.xml"
# host h's ranks on core h (mpirun-hosts.sh fills host 0 first, -s 2)
printf '#!/bin/sh\nexec taskset -c $((OMPI_COMM_WORLD_RANK / 2)) "$@"\n' > "$work/pin"
chmod +x "$work/pin"

grep -v -i -E "^ *(nstcalcenergy|nstenergy|nstlog|nstxout|nstvout|nstfout|nstxout-compressed|ld-seed) *=" \
    "$system/md.mdp" > "$work/run.mdp"
printf 'nstcalcenergy = 100\nnstenergy = 100\nnstlog = 0\nnstxout-compressed = 0\nld-seed = 2718\n' >> "$work/run.mdp"
args=(run -p "$system/topol.top" -c "$system/conf.gro" -f "$work/run.mdp" -nsteps "$steps" -nt 1
      --comm p2p --npme 0 --fft-transpose pairwise)

# the measured latency and bandwidth are what MPI achieves: no size factors
plain=(-- --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --)

# 2. runs, alternating real and simulated
run_layout() { # name kind(real|smpi) -> log
    local name=$1 kind=$2 out=$work/$1-$2-$3
    case $name-$kind in
        1rank-real) "$putmd" "${args[@]}" -deffnm "$out" ;;
        1rank-smpi) "$root/tools/simgrid/smpirun.sh" -platform "$work/platform.xml" -np 1 "${plain[@]}" "$smpi" "${args[@]}" -deffnm "$out" ;;
        2ranks1host-real) mpirun -np 2 "$putmd" "${args[@]}" -deffnm "$out" ;;
        2ranks1host-smpi) "$root/tools/simgrid/smpirun.sh" -platform "$work/platform.xml" -np 2 -per-host 2 "${plain[@]}" "$smpi" "${args[@]}" -deffnm "$out" ;;
        2hosts-real) "$root/tools/cluster/mpirun-hosts.sh" -k 2 -s 1 "$putmd" "${args[@]}" -deffnm "$out" ;;
        2hosts-smpi) "$root/tools/simgrid/smpirun.sh" -platform "$work/platform.xml" -np 2 "${plain[@]}" "$smpi" "${args[@]}" -deffnm "$out" ;;
        4ranks2hosts-real) "$root/tools/cluster/mpirun-hosts.sh" -k 2 -s 2 "$work/pin" "$putmd" "${args[@]}" -deffnm "$out" ;;
        4ranks2hosts-smpi) "$root/tools/simgrid/smpirun.sh" -platform "$work/platform-1core.xml" -np 4 -per-host 2 "${plain[@]}" "$smpi" "${args[@]}" -deffnm "$out" ;;
    esac > "$out.out" 2>&1 || { echo "failed: $name $kind (see below)"; tail -20 "$out.out"; exit 1; }
}
for i in $(seq "$repeats"); do
    for layout in $layouts; do
        run_layout $layout real "$i"
        run_layout $layout smpi "$i"
    done
done

# 3. per-stage medians (ms per step) and ratios
stages=("Force" "Nonbonded" "Pair search" "PME mesh" "PME 3D-FFT comm." "PME grid comm." "Wait comm. coord." "Wait comm. force" "Total")
stage_ms() { # log stage -> ms per step (Wall t column / steps)
    awk -v s="$2" -v n="$steps" '{
        line = $0; sub(/^ +/, "", line)
        if (index(line, s " ") == 1 && (substr(line, length(s) + 1) ~ /^ +[0-9]/ || s == "Total")) {
            k = split(substr(line, length(s) + 1), f, " ")
            w = (s == "Total") ? f[1] : f[4]
            printf "%.3f\n", w * 1000 / n; exit
        }
    }' "$1"
}
steady_ms() { awk '/^Steady state:/ {print $3; exit}' "$1"; }
for layout in $layouts; do
    echo
    echo "$layout (ms per step; ratio simulated / real)"
    printf '  %-20s %10s %10s %7s\n' stage real simulated ratio
    for s in "${stages[@]}"; do
        r=$(for i in $(seq "$repeats"); do stage_ms "$work/$layout-real-$i.log" "$s"; done | median)
        m=$(for i in $(seq "$repeats"); do stage_ms "$work/$layout-smpi-$i.log" "$s"; done | median)
        [[ -n $r && -n $m ]] || continue
        printf '  %-20s %10.3f %10.3f %7s\n' "$s" "$r" "$m" "$(awk -v a="$m" -v b="$r" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
    done
    # where ranks share a core, which of them waits and which computes is
    # the scheduler's choice (Linux: one rank for a slice of milliseconds;
    # SimGrid: both at half speed), so the nonbonded work and the waits
    # for it are compared together too
    both() { echo "$(stage_ms "$1" "Nonbonded") $(stage_ms "$1" "Wait comm. coord.") $(stage_ms "$1" "Wait comm. force")" | awk '{print $1 + $2 + $3}'; }
    r=$(for i in $(seq "$repeats"); do both "$work/$layout-real-$i.log"; done | median)
    m=$(for i in $(seq "$repeats"); do both "$work/$layout-smpi-$i.log"; done | median)
    printf '  %-20s %10.3f %10.3f %7s\n' "Nonbonded + waits" "$r" "$m" "$(awk -v a="$m" -v b="$r" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
    r=$(for i in $(seq "$repeats"); do steady_ms "$work/$layout-real-$i.log"; done | median)
    m=$(for i in $(seq "$repeats"); do steady_ms "$work/$layout-smpi-$i.log"; done | median)
    printf '  %-20s %10.3f %10.3f %7s\n' "Steady step" "$r" "$m" "$(awk -v a="$m" -v b="$r" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
done
