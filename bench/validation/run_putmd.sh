#!/usr/bin/env bash
# putmd side of the dynamics validation (docs/validation.md): the same inputs
# and mdp files as run_gromacs.sh, one thread.
# usage: bench/validation/run_putmd.sh SYSTEM_DIR MDP OUTDIR [BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); out=$3
bin=${4:-$here/../../build/bin/putmd}
mkdir -p "$out"; cd "$out"
name=$(basename "$mdp" .mdp)
conf=$sys/conf.gro; [ "$name" = em ] && conf=$sys/start.gro
"$bin" run -nt 1 -p "$sys/topol.top" -c "$conf" -f "$mdp" -deffnm "$name" > "$name.out" 2>&1
echo "done: $out/$name.csv"
