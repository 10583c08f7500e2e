#!/usr/bin/env bash
# ns/day of putmd with --npme auto, 0 and 1 (and GROMACS's gmx_mpi with
# -npme 0 and 1 for scale) on the same input and rank count, alternating,
# median of N runs each; prints what --npme auto chose and why.
# usage: bench/npme_compare.sh SYSTEM_DIR MDP [RANKS] [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); np=${3:-2}; n=${4:-3}
putmd=$here/../build/bin/putmd
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma GMX_MAXBACKUP=-1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
gmx grompp -f "$mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o bench.tpr -maxwarn 1 > grompp.log 2>&1
variants="auto 0 1 gmx0 gmx1"
declare -A runs
for i in $(seq "$n"); do
  for v in $variants; do
    case $v in
      gmx*) mpirun -np "$np" --oversubscribe gmx_mpi mdrun -ntomp 1 -npme "${v#gmx}" -s bench.tpr -deffnm r -g r.log > /dev/null 2>&1 ;;
      *)    mpirun -np "$np" --oversubscribe "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm r \
                   --npme "$v" > out.txt 2>&1
            [ "$v" = auto ] && grep -m1 '^PME:' out.txt > choice.txt ;;
    esac
    runs[$v]="${runs[$v]:-} $(awk '/^Performance:/ {print $2}' r.log)"
  done
done
median() { printf "%s\n" $@ | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "$np ranks, $(basename "$sys"), $n runs each"
echo "auto chose: $(cat choice.txt)"
for v in $variants; do
  echo "npme $v ns/day:${runs[$v]}  median $(median ${runs[$v]})"
done
