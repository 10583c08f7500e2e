#!/usr/bin/env bash
# Side by side speed and memory of putmd and GROMACS (Debian's gmx) on the
# same input and mdp, alternating, median of N runs each, on the same cores.
# usage: bench/compare_gromacs.sh SYSTEM_DIR MDP THREADS [N]
# Each engine runs as one process with THREADS threads (putmd -nt, gmx
# mdrun -nt: GROMACS then picks its own rank/thread split within them),
# pinned to the first THREADS cores. Prints ns/day of each run, the medians,
# the ratio putmd/GROMACS, and the median peak resident size of each
# (/usr/bin/time), also per atom.
# PUTMD_RUN_ARGS adds options to putmd run; GMX_RUN_ARGS to gmx mdrun.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); nt=$3; n=${4:-3}
putmd=${PUTMD:-$here/../build/bin/putmd}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"; export GMX_MAXBACKUP=-1
cores=0-$((nt - 1))
gmx grompp -f "$mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o bench.tpr -maxwarn 1 > grompp.log 2>&1
natoms=$(sed -n 2p "$sys/conf.gro" | tr -d ' ')
p=(); g=(); pm=(); gm=()
rss() { awk '/Maximum resident set size/ {print $6}' "$1"; }
for i in $(seq "$n"); do
  /usr/bin/time -v taskset -c "$cores" "$putmd" run -nt "$nt" ${PUTMD_RUN_ARGS:-} -p "$sys/topol.top" -c "$sys/conf.gro" \
      -f "$mdp" -deffnm putmd > putmd.out 2> putmd.time
  p+=("$(awk '/^Performance:/ {print $2}' putmd.log)"); pm+=("$(rss putmd.time)")
  /usr/bin/time -v taskset -c "$cores" gmx mdrun -nt "$nt" ${GMX_RUN_ARGS:-} -s bench.tpr -deffnm gmx > gmx.out 2> gmx.time
  g+=("$(awk '/^Performance:/ {print $2}' gmx.log)"); gm+=("$(rss gmx.time)")
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(median "${p[@]}"); mg=$(median "${g[@]}"); rp=$(median "${pm[@]}"); rg=$(median "${gm[@]}")
echo "system: $sys ($natoms atoms), $nt threads, mdp $mdp"
echo "putmd   ns/day: ${p[*]} (median $mp); $(grep -m1 '^nonbonded kernel' putmd.log || true)"
echo "GROMACS ns/day: ${g[*]} (median $mg); $(grep -m1 -E '^Using [0-9]+ MPI' gmx.log || true) $(grep -m1 -E '^Using [0-9]+ OpenMP' gmx.log || true)"
awk -v a="$mp" -v b="$mg" 'BEGIN {printf "ratio putmd/GROMACS: %.3f\n", a / b}'
awk -v a="$rp" -v b="$rg" -v n="$natoms" 'BEGIN {printf "peak RSS: putmd %.1f MiB (%.2f KiB/atom), GROMACS %.1f MiB (%.2f KiB/atom), ratio %.2f\n", a/1024, a/n, b/1024, b/n, a/b}'
