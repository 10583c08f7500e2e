#!/usr/bin/env bash
# Dynamic load balancing on an inhomogeneous system.
# usage: bench/dlb.sh [SYSTEM_DIR [N [NSTEPS]]]
#   SYSTEM_DIR  default tests/data/systems/water-slab-12k (half the box at a
#               tenth of the density); its md.mdp
#   N           runs of each timed variant, alternating (median of N; 3)
#   NSTEPS      steps of the timed runs (3000; 1000 for the oversubscribed)
#
# Timed on 2 cores: 2 ranks x 1 thread, -dd 2 1 1, --npme 0, with -dlb no,
# auto and yes (putmd), and gmx_mpi mdrun with the same three on the same
# input (GROMACS's own balancing, for comparison); for -dlb auto, what it
# did (turned on, and off again when not faster: domdec/dlb_switch.h). Printed per variant:
# ns/day of each run and the median, the log's "time lost to load
# imbalance" (median), and for putmd the balancing's own cost (its stage's
# share of the wall time) and the slab widths at the end.
# Then 4 (2 x 2 x 1) and 8 (2 x 2 x 2) ranks, oversubscribed (correctness of
# the figures, not timing): the lost time with -dlb no and -dlb yes, once.
# The CPU model and the instruction sets are printed; PUTMD_SIMD=avx2 runs
# putmd's AVX2 path on an AVX-512 machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "${1:-$here/../tests/data/systems/water-slab-12k}" && pwd)
n=${2:-3}; nsteps=${3:-3000}
putmd=${PUTMD:-$here/../build/bin/putmd}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GMX_MAXBACKUP=-1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
sed "s/^nsteps.*/nsteps = $nsteps/" "$sys/md.mdp" > bench.mdp
grep -q '^nsteps' bench.mdp || echo "nsteps = $nsteps" >> bench.mdp
gmx grompp -f bench.mdp -c "$sys/conf.gro" -p "$sys/topol.top" -o bench.tpr -maxwarn 1 > grompp.log 2>&1
perf() { awk '/^Performance:/ {print $2}' "$1"; }
lost() { grep -m1 -oE 'Load imbalance: [0-9.]+%' "$1" | grep -oE '[0-9.]+' || echo "?"; }
# GROMACS: "Part of the total run time spent waiting due to load imbalance: X %"
gmxlost() { grep -m1 -oE 'waiting due to load imbalance: *[0-9.]+' "$1" | grep -oE '[0-9.]+$' || echo "?"; }
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A rate loss cost
putmd_run() { # name ranks dlb nsteps [putmd options]
  local name=$1 ranks=$2 dlb=$3 steps=$4; shift 4
  local bind=(--oversubscribe); [[ $ranks -le 2 ]] && bind=(--bind-to core)
  mpirun -np "$ranks" "${bind[@]}" "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" \
      -f bench.mdp -nsteps "$steps" --npme 0 -dlb "$dlb" -deffnm "$name" "$@" > "$name.out" 2>&1 \
      || { echo "putmd $name failed:"; tail -5 "$name.out"; exit 1; }
}
for i in $(seq "$n"); do
  for dlb in no auto yes; do
    putmd_run "p-$dlb" 2 "$dlb" "$nsteps" -dd 2 1 1
    rate[p-$dlb]="${rate[p-$dlb]:-} $(perf p-$dlb.log)"
    loss[p-$dlb]="${loss[p-$dlb]:-} $(lost p-$dlb.log)"
    cost[p-$dlb]="${cost[p-$dlb]:-} $(awk '/^ Load balancing/ {print $8}' p-$dlb.log)"
    mpirun -np 2 --bind-to core gmx_mpi mdrun -ntomp 1 -npme 0 -dd 2 1 1 -dlb "$dlb" -pin on -s bench.tpr \
        -deffnm "g-$dlb" > "g-$dlb.out" 2>&1 || { echo "gmx_mpi -dlb $dlb failed"; tail -5 "g-$dlb.out"; exit 1; }
    rate[g-$dlb]="${rate[g-$dlb]:-} $(perf g-$dlb.log)"
    loss[g-$dlb]="${loss[g-$dlb]:-} $(gmxlost g-$dlb.log)"
  done
done
echo "system: $sys, $nsteps steps, $n runs each, alternating; 2 ranks x 1 thread, -dd 2 1 1, npme 0"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); instruction sets: $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "putmd $(grep -m1 '^nonbonded kernel' p-yes.log || true)"
for k in p-no p-auto p-yes g-no g-auto g-yes; do
  printf "%-6s ns/day:%s  median %s; lost to imbalance (%%):%s  median %s\n" "$k" "${rate[$k]}" \
      "$(median ${rate[$k]})" "${loss[$k]}" "$(median ${loss[$k]})"
done
echo "putmd -dlb auto (the last run): $(grep -m1 -o 'Dynamic load balancing (-dlb auto): [^;]*\(; turned off[^;]*\)\?' p-auto.log || echo '?')"
echo "putmd -dlb yes: balancing's own cost (% of the wall time):${cost[p-yes]}"
echo "putmd -dlb yes: $(grep -m1 -o 'slab widths (nm) at the start.*' p-yes.log)"
awk -v a="$(median ${rate[p-no]})" -v b="$(median ${rate[p-yes]})" -v g="$(median ${rate[g-yes]})" -v h="$(median ${rate[g-no]})" \
    'BEGIN { printf "ns/day ratio -dlb yes / no: putmd %.3f, gmx_mpi %.3f; putmd / gmx_mpi with -dlb yes: %.3f\n", b / a, g / h, b / g }'
echo "oversubscribed (not timed; 1000 steps):"
for ranks in 4 8; do
  for dlb in no yes; do
    putmd_run "o$ranks-$dlb" "$ranks" "$dlb" 1000
    printf "  %d ranks (%s), -dlb %-3s: lost to imbalance %s%%\n" "$ranks" \
        "$(grep -m1 -oE 'ranks, grid [0-9]+ x [0-9]+ x [0-9]+' o$ranks-$dlb.log | cut -d' ' -f3-)" "$dlb" "$(lost o$ranks-$dlb.log)"
  done
done
