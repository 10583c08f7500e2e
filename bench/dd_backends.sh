#!/usr/bin/env bash
# ns/day of putmd on 2 ranks (one thread each) with every communication
# backend, alternating backends, median of N runs each; also one rank and
# GROMACS's gmx_mpi on 2 ranks (1 thread each, no separate PME rank) on the
# same input and mdp for scale.
# usage: bench/dd_backends.sh SYSTEM_DIR MDP [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); n=${3:-3}
putmd=$here/../build/bin/putmd
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma GMX_MAXBACKUP=-1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
gmx grompp -f "$mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o bench.tpr -maxwarn 1 > grompp.log 2>&1
backends="p2p rma shm shmem"
declare -A runs
for i in $(seq "$n"); do
  for b in $backends one gmx; do
    case $b in
      one) "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm r > /dev/null 2>&1 ;;
      gmx) mpirun -np 2 gmx_mpi mdrun -ntomp 1 -npme 0 -pin on -s bench.tpr -deffnm r -g r.log > /dev/null 2>&1 ;;
      *)   mpirun -np 2 --bind-to core "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm r --comm "$b" > /dev/null 2>&1 ;;
    esac
    runs[$b]="${runs[$b]:-} $(awk '/^Performance:/ {print $2}' r.log)"
  done
done
median() { printf "%s\n" $@ | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base=$(median ${runs[p2p]})
for b in $backends one gmx; do
  m=$(median ${runs[$b]})
  awk -v b="$b" -v r="${runs[$b]}" -v m="$m" -v p="$base" 'BEGIN {printf "%-6s ns/day:%s  median %.3f  ratio to p2p %.3f\n", b, r, m, m / p}'
done
