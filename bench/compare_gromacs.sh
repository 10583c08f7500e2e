#!/usr/bin/env bash
# Side-by-side speed of putmd and GROMACS (Debian's gmx) on the same input and
# mdp, alternating, median of N runs each, for a given thread count.
# usage: bench/compare_gromacs.sh SYSTEM_DIR MDP THREADS [N]
# prints ns/day of each run, the medians and the ratio putmd/GROMACS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); nt=$3; n=${4:-3}
putmd=$here/../build/bin/putmd
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"; export GMX_MAXBACKUP=-1
gmx grompp -f "$mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o bench.tpr -maxwarn 1 > grompp.log 2>&1
p=(); g=()
for i in $(seq "$n"); do
  "$putmd" run -nt "$nt" -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm putmd > /dev/null 2>&1
  p+=("$(awk '/^Performance:/ {print $2}' putmd.log)")
  gmx mdrun -nt "$nt" -pin on -s bench.tpr -deffnm gmx > /dev/null 2>&1
  g+=("$(awk '/^Performance:/ {print $2}' gmx.log)")
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(median "${p[@]}"); mg=$(median "${g[@]}")
echo "putmd   ns/day: ${p[*]} (median $mp)"
echo "GROMACS ns/day: ${g[*]} (median $mg)"
awk -v a="$mp" -v b="$mg" 'BEGIN {printf "ratio putmd/GROMACS: %.3f\n", a / b}'
