#!/usr/bin/env bash
# The PME-rank estimate (--npme estimate/auto) predicts each layout with the
# PP grid and halo the run will use: the grid and halo it names for its
# choice must be the run's own "Domain decomposition" line. Before, it took
# the cut-off plus 0.1 nm for the pair-list radius, where the run's Verlet
# buffer (nstlist raised to 100) is 1.156 nm for rnase-amber-cubic, and on
# 1,024 simulated ranks it chose 975 PP ranks that cannot cut the box.
# usage: npme_estimate_grid_test.sh "MPIRUN ARGS" SYSTEM_DIR WORKDIR PUTMD...
set -u
mpirun=$1 system=$2 work=$3
shift 3
mkdir -p "$work"
status=0
for putmd in "$@"; do
    name=$work/estimate-grid-$(basename "$putmd")
    $mpirun -np 4 "$putmd" run -p "$system/topol.top" -c "$system/conf.gro" -f "$system/md.mdp" -nsteps 0 -nt 1 \
        --npme estimate --comm p2p -deffnm "$name" > "$name.out" 2>&1 \
        || { echo "FAILED: $(basename "$putmd") did not run:"; tail -5 "$name.out"; status=1; continue; }
    run=$(sed -n 's/^Domain decomposition: [0-9]* ranks, grid \(.*\), halo \([0-9.]*\) nm,.*/grid \1, halo \2 nm/p' "$name.log")
    predicted=$(sed -n 's/.*gives the shortest predicted step (PP ranks: \(grid .*, halo [0-9.]* nm\)).*/\1/p' "$name.log")
    echo "$(basename "$putmd"): the run: '$run'; the estimate: '$predicted'"
    if [[ -z $run || $run != "$predicted" ]]; then
        echo "FAILED: the estimate's PP grid and halo are not the run's"
        status=1
    fi
done
exit $status
