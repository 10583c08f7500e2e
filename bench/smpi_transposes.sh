#!/usr/bin/env bash
# bench/smpi_transposes.sh — the 3D-FFT transposes on a simulated cluster:
# alltoallv (MPI's collective), pairwise (ordered sendrecv rounds) and rma
# (puts), one forward + backward pair of the pencil FFT per repetition, the
# slowest rank's time, median of REPS (bench/fft3d.cpp built for SMPI as
# build/bin/fft3d_bench_smpi, built here on first use); and which of the collective-free two
# `--fft-transpose auto` picks (it times pairwise and rma at start-up).
# usage: bench/smpi_transposes.sh [PLATFORM] [RANKS] [GRIDS] [REPS]
#   defaults: gbe "4 8 16 32 64" 32,64,128 5
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:-gbe}
ranks=${2:-4 8 16 32 64}
grids=${3:-32,64,128}
reps=${4:-5}
bin=$root/build/bin/fft3d_bench_smpi
"$root/tools/simgrid/build_smpi.sh" fft3d_bench_smpi || exit 2
echo "platform $platform; simulated hosts compute as this $(lscpu | sed -n 's/^Model name: *//p') core; ms per forward+backward pair, median of $reps"
printf '| ranks | grid | process grid | alltoallv | pairwise | rma | fastest | auto picks |\n|---|---|---|---|---|---|---|---|\n'
for n in $ranks; do
    out=$("$root/tools/simgrid/smpirun.sh" -platform "$platform" -np "$n" "$bin" --grids "$grids" --reps "$reps" \
          --warmup 1 --auto 2>&1 | grep -E '^(fft3d|auto) ')
    awk -v n="$n" '
        $1 == "fft3d" { t[$5, $6] = $7; pg[$5] = $3 "x" $4; if (!($5 in seen)) { seen[$5] = 1; order[++k] = $5 } }
        $1 == "auto"  { a[$5] = $6 }
        END {
            for (i = 1; i <= k; i++) {
                g = order[i]; best = "alltoallv"
                if (t[g, "pairwise"] < t[g, best]) best = "pairwise"
                if (t[g, "rma"] < t[g, best]) best = "rma"
                printf "| %d | %d^3 | %s | %s | %s | %s | %s | %s |\n", n, g, pg[g], t[g, "alltoallv"], t[g, "pairwise"], t[g, "rma"], best, a[g]
            }
        }' <<< "$out"
done
