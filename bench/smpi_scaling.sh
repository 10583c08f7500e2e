#!/usr/bin/env bash
# bench/smpi_scaling.sh — whole MD steps on simulated clusters (SimGrid SMPI).
#
# usage: bench/smpi_scaling.sh [PLATFORMS] [RANKS] [SYSTEM_DIR] [STEPS] [BACKENDS]
#   defaults: "gbe ib-fattree" "16 64" tests/data/systems/water-spce-96k 30 "p2p rma"
# (rma simulates at about half p2p's speed: each put is a message pair in
# SMPI; its waits sleep until the flag's writer wakes them, smpi_bell.h)
# For every platform, rank count, --npme (LAYOUTS, default "0 estimate measure":
# PME on every rank, the estimate's choice, and the faster of npme 0 and the
# estimate's best K > 0 timed at start-up) and backend (p2p, rma)
# it runs build/bin/putmd_smpi through tools/simgrid/smpirun.sh (one
# rank per simulated host, host speed 1:1 with this machine) and prints the
# simulated ms per step in the steady state (the log's "Steady state": the
# steps after the first pair-list window, searches included, the set-up of
# the first window left out), the main stages and the share of the run
# spent in communication (waits for the halo and PME traffic, FFT
# transposes, grid borders, PP<->PME traffic, energy reductions; these three
# over the whole run, per step), the parallel efficiency of the steady step
# against the smallest rank count of the same platform, layout and backend,
# and the seconds of the pair search (mostly step 0's set-up).
# EAGER_LIMIT (bytes, default 65536) is smpirun.sh's -eager-limit: 0 makes
# every send wait for its receive, which 1,024 simulated ranks need (SimGrid
# 3.32 slows down with many eager messages in flight); compare rank counts
# at one setting (docs/scaling.md measures both).
# PUTMD_SMPI_BINARY runs another build of putmd_smpi (default
# build/bin/putmd_smpi, built here on first use); KEEP=DIR keeps every run's log there
# (PLATFORM-RANKS-NPME-COMM.log) for its timing table.
# CSV=FILE appends each run's row to FILE in the columns of
# bench/results/smpi-steps.csv (system, platform, ranks, the PME ranks the
# run had, backend, ms per steady step, communication share, this CPU's
# model number, the date), which tools/plot_scaling.py draws.
# SMPIRUN_OPTIONS adds options to smpirun itself (e.g.
# "--cfg=network/crosstraffic:0").
# EXTRA_ARGS adds options to every run (e.g. "--fft-transpose pairwise",
# which at 256 simulated ranks skips a start-up spent creating the windows
# that time the rma transposes).
# Memory: all simulated ranks live in this one process; they share rank
# 0's copy of the inputs (src/app/shared_inputs.h): water-spce-96k takes
# about 1.5 GB at 128 ranks and 2.8 GB at 256 (docs/scaling.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platforms=${1:-gbe ib-fattree}
counts=${2:-16 64}
system=${3:-$root/tests/data/systems/water-spce-96k}
steps=${4:-30}
backends=${5:-p2p rma}
smpi=${PUTMD_SMPI_BINARY:-$root/build/bin/putmd_smpi}
if [[ -z ${PUTMD_SMPI_BINARY:-} ]]; then
    "$root/tools/simgrid/build_smpi.sh" putmd_smpi || exit 2
fi
[[ -f $smpi ]] || { echo "smpi_scaling.sh: $smpi not found" >&2; exit 2; }
export PUTMD_FFTW_PLAN=estimate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the water systems share one md.mdp (water-spce-96k ships none)
mdp=$system/md.mdp
[[ -f $mdp ]] || mdp=$root/tests/data/systems/water-spce-12k/md.mdp
grep -v -i -E "^ *(nstcalcenergy|nstenergy|nstlog|nstxout-compressed|ld-seed) *=" "$mdp" > "$work/run.mdp"
printf 'nstcalcenergy = 100\nnstenergy = 100\nnstlog = 0\nnstxout-compressed = 0\nld-seed = 2718\n' >> "$work/run.mdp"
echo "CPU (simulated hosts compute as this one): $(lscpu | sed -n 's/^Model name: *//p'), kernel instruction set: $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
echo "system: $(basename "$system"), $steps steps, eager limit ${EAGER_LIMIT:-65536} bytes; SimGrid $(smpirun -version 2>/dev/null | head -1 | awk '{print $NF}')"
stage() { # log stage -> ms per step
    awk -v s="$2" -v n="$steps" '{ line = $0; sub(/^ +/, "", line)
        if (index(line, s " ") == 1 && substr(line, length(s) + 1) ~ /^ +[0-9]/) {
            split(substr(line, length(s) + 1), f, " "); printf "%.3f", f[4] * 1000 / n; found = 1; exit }
    } END { if (!found) printf "0" }' "$1"
}
printf '%-11s %5s %5s %4s %9s %8s %8s %8s %6s %8s %s\n' platform ranks npme comm "ms/step" Force PME "comm%" "eff" "search s" "layout"
declare -A base
for p in $platforms; do
  for n in $counts; do
    for npme in ${LAYOUTS:-0 estimate measure}; do
      for comm in $backends; do
        out=$work/$p-$n-$npme-$comm
        # (smpirun may exit 0 when a rank stopped with an error: no log then)
        if ! "$root/tools/simgrid/smpirun.sh" -platform "$p" -np "$n" -eager-limit "${EAGER_LIMIT:-65536}" \
               ${SMPIRUN_OPTIONS:+-- $SMPIRUN_OPTIONS --} "$smpi" run -p "$system/topol.top" \
               -c "$system/conf.gro" -f "$work/run.mdp" -nsteps "$steps" --npme "$npme" --comm "$comm" \
               -deffnm "$out" ${EXTRA_ARGS:-} > "$out.out" 2>&1 || [[ ! -f $out.log ]]; then
            printf '%-11s %5s %5s %4s  failed: %s\n' "$p" "$n" "$npme" "$comm" "$(grep -m1 -E '^error|timed out' "$out.out" | cut -c1-200)"
            continue
        fi
        # pair search: with --npme 0 step 0's also sets up the PME
        # redistribution (0.2-0.5 s per rank on 16-64 simulated ranks,
        # 0.01-0.03 s with separate PME ranks), shown in seconds
        [[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP"; cp "$out.log" "$KEEP/"; }
        search=$(stage "$out.log" "Pair search")
        wall=$(awk -v n="$steps" '/^Wall time/ {printf "%.3f", $3 * 1000 / n}' "$out.log")
        # the steady state: the steps after the first pair-list window
        # (searches included; the first window's set-up left out)
        total=$(awk '/^Steady state:/ {printf "%.3f", $3}' "$out.log")
        comm_ms=0
        for s in "Wait comm. coord." "Wait comm. force" "PME 3D-FFT comm." "PME grid comm." "PME redist. X" "PME redist. F" "PP->PME send X" "Wait PME F" "Energy reduction"; do
            comm_ms=$(awk -v a="$comm_ms" -v b="$(stage "$out.log" "$s")" 'BEGIN {print a + b}')
        done
        key=$p-$npme-$comm
        [[ -n ${base[$key]:-} ]] || base[$key]="$n $total"
        read -r n0 t0 <<< "${base[$key]}"
        layout=$(grep -o 'PME: [^(]*' "$out.log" | head -2 | tail -1 | sed 's/PME: //; s/ *$//')
        trial=$(grep -o 'with npme 0 took [0-9.]* ms per step, with npme [0-9]* [0-9.]* ms' "$out.log" | head -1 \
                | awk '{printf "; trials: npme 0 %s ms, npme %s %s ms", $5, $11, $12}' || true)
        layout="$layout$trial"
        printf '%-11s %5s %5s %4s %9s %8s %8s %7.0f%% %6.2f %8.3f %s\n' "$p" "$n" "$npme" "$comm" "$total" \
            "$(stage "$out.log" Force)" \
            "$(stage "$out.log" "PME mesh")" \
            "$(awk -v a="$comm_ms" -v b="$wall" 'BEGIN {print 100 * a / b}')" \
            "$(awk -v a="$t0" -v b="$total" -v m="$n0" -v k="$n" 'BEGIN {printf "%.2f", a * m / (b * k)}')" \
            "$(awk -v s="$search" -v n="$steps" 'BEGIN {printf "%.3f", s * n / 1000}')" "$layout"
        if [[ -n ${CSV:-} ]]; then
            [[ -s $CSV ]] || echo "system,platform,ranks,npme,comm,ms_per_step,comm_share,cpu,source" > "$CSV"
            pme_ranks=$(grep -m1 -oE '^On [0-9]+ PP ranks? and [0-9]+ PME rank' "$out.log" | awk '{print $6}' || true)
            printf '%s,%s,%s,%s,%s,%s,%s,%s,"bench/smpi_scaling.sh %s, --npme %s, %s steps, eager limit %s%s"\n' \
                "$(basename "$system")" "$p" "$n" "${pme_ranks:-0}" "$comm" "$total" \
                "$(awk -v a="$comm_ms" -v b="$wall" 'BEGIN {printf "%.2f", a / b}')" \
                "$(awk '/^model[ \t]*:/ {print $3; exit}' /proc/cpuinfo)" "$(date +%F)" "$npme" "$steps" \
                "${EAGER_LIMIT:-65536}" "${EXTRA_ARGS:+, $EXTRA_ARGS}" >> "$CSV"
        fi
      done
    done
  done
done
