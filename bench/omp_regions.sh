#!/usr/bin/env bash
# Per OpenMP parallel region: calls, wall, the threads' busy time, the time
# lost to imbalance, fork and join, the serial gap before it, and per thread
# its lateness (fork to start of its body) and slack (end of its body to the
# join: the slacks of equally busy threads show per-call imbalance), for one
# run of a command (bench/omp_regions.c, preloaded). Sorted by lost time;
# regions named by addr2line. The run's own output goes to omp_run.out in
# the current directory.
# usage: bench/omp_regions.sh COMMAND [ARGS...]
#   e.g. PUTMD_SIMD=avx2 taskset -c 0-1 bench/omp_regions.sh build/bin/putmd run -nt 2 \
#        -p tests/data/systems/water-spce-12k/topol.top -c .../conf.gro -f bench/nvt-500.mdp -deffnm r
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gcc -O2 -shared -fPIC -fopenmp -o "$work/omp_regions.so" "$here/omp_regions.c" -ldl
LD_PRELOAD="$work/omp_regions.so" "$@" > omp_run.out 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
grep '^OMPREGION' "$work/err" | sort -k7 -g -r | while read -r tag _ calls _ wall _ lost _ gap rest; do
  file=$(awk '{print $(NF-1)}' <<< "$rest"); off=$(awk '{print $NF}' <<< "$rest")
  busy=$(sed 's/^busy //; s/ at .*//' <<< "$rest") # "T0 T1 ... late L0 L1 ... slack S0 S1 .."
  name=$(addr2line -f -C -e "$file" "$off" 2>/dev/null | head -1 | sed 's/(.*//' | cut -c1-60)
  printf "%-60s calls %6s wall %9s lost %9s gap %9s busy %s\n" "$name" "$calls" "$wall" "$lost" "$gap" "$busy"
done
