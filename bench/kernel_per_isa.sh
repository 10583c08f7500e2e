#!/usr/bin/env bash
# bench/kernel_per_isa.sh — the nonbonded kernel on every instruction set
# this CPU has, side by side.
#
# usage: bench/kernel_per_isa.sh [SYSTEM_DIR] [REPEATS] [ROUNDS]
#   defaults: tests/data/systems/water-spce-12k 20 5
# Runs build/bin/nonbonded_kernel_bench once per instruction set per round
# (PUTMD_SIMD=avx512, avx2, sse4: those the CPU reports), the sets
# alternating within each round, and prints per set the median over the
# rounds of the cycles per cluster pair and the fraction of the core's peak,
# forces only and forces + energies, with the CPU model and its flags. The
# machine is shared: take the medians, not single runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
system=${1:-$root/tests/data/systems/water-spce-12k}
repeats=${2:-20}
rounds=${3:-5}
bench=${NONBONDED_KERNEL_BENCH:-$root/build/bin/nonbonded_kernel_bench}
[[ -x $bench ]] || { echo "kernel_per_isa.sh: build $bench first (make build)" >&2; exit 2; }
[[ -d $system ]] || { echo "kernel_per_isa.sh: no system directory '$system'" >&2; exit 2; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
sets=()
[[ $flags == *" avx512f "* ]] && sets+=(avx512)
[[ $flags == *" avx2 "* && $flags == *" fma "* ]] && sets+=(avx2)
[[ $flags == *" sse4_1 "* ]] && sets+=(sse4)
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'); instruction sets: ${sets[*]}"
echo "system: $(basename "$system"), $repeats calls per figure, $rounds rounds"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 0; i < rounds; i++)); do
    for s in "${sets[@]}"; do
        PUTMD_SIMD=$s "$bench" "$system" "$repeats" 2>&1 | awk -v s="$s" '
            /^SIMD target/ { t = $3 }
            /^SIMD, forces  / { for (k = 1; k <= NF; k++) if ($k == "cycles/cluster") c = $(k - 1); p = $(NF - 2) }
            /^SIMD, forces \+ energies/ { for (k = 1; k <= NF; k++) if ($k == "cycles/cluster") ce = $(k - 1); pe = $(NF - 2) }
            END { print s, t, c, p, ce, pe }' >> "$out"
    done
done
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
printf '%-8s %-8s %22s %10s %22s %10s\n' PUTMD_SIMD target "forces: cycles/pair" "% of peak" "+ energies: cycles" "% of peak"
for s in "${sets[@]}"; do
    target=$(awk -v s="$s" '$1 == s {print $2; exit}' "$out")
    col() { awk -v s="$s" -v c="$1" '$1 == s {gsub(/%/, "", $c); print $c}' "$out" | median; }
    printf '%-8s %-8s %22s %9s%% %22s %9s%%   (cycles per round: %s)\n' "$s" "$target" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" \
        "$(awk -v s="$s" '$1 == s {printf "%s ", $3}' "$out")"
done
