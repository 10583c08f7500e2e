#!/usr/bin/env bash
# GROMACS side of the dynamics validation (docs/validation.md): runs Debian's
# gmx (mixed precision, 1 thread) on the same inputs and mdp files as putmd.
# usage: bench/validation/run_gromacs.sh SYSTEM_DIR MDP OUTDIR [MAXWARN]
set -euo pipefail
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); out=$3; mw=${4:-0}
mkdir -p "$out"; cd "$out"
export GMX_MAXBACKUP=-1
name=$(basename "$mdp" .mdp)
conf=$sys/conf.gro; [ "$name" = em ] && conf=$sys/start.gro
gmx grompp -f "$mdp" -c "$conf" -p "$sys/topol.top" -o "$name.tpr" -maxwarn "$mw" > "$name.grompp.log" 2>&1
gmx mdrun -nt 1 -pin on -s "$name.tpr" -deffnm "$name" > "$name.mdrun.log" 2>&1
echo "done: $out/$name.edr"
