#!/usr/bin/env bash
# The PME-layout sweep of docs/validation.md: putmd_dd_force_tests (double
# build) on every system of tests/data/systems that ships with the shared
# inputs, 2-8 ranks; each run checks npme 0, 1, 2 where the PP ranks can cut
# the box, every transpose algorithm and every backend, against one rank
# (1e-9) and bitwise within a layout. Prints one line per layout.
# usage: [SYSTEMS_ROOT=DIR] bench/validation/pme_layouts.sh [BUILD_DIR] [SYSTEMS] [RANKS]
# (water-spce-96k ships without md.mdp in tests/data: SYSTEMS_ROOT=../shared/systems)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
systems=${2:-"water-spce-3k water-spce-12k rnase-amber-cubic water-spce-96k"}
ranks=${3:-"2 3 4 5 6 7 8"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma PUTMD_COMM_TIMEOUT=300
for s in $systems; do
  frames=3
  [ "$s" = water-spce-96k ] && frames=1   # 98k atoms: the input frame only
  for n in $ranks; do
    out=$(PUTMD_DD_TEST_FRAMES=$frames mpirun --oversubscribe -np "$n" "$build/bin/putmd_dd_force_tests" \
          "${SYSTEMS_ROOT:-$here/tests/data/systems}/$s" --pme-layouts 2>&1)
    status=$(echo "$out" | grep -o "all checks passed\|FAILED" | tail -1)
    echo "$out" | grep "^npme" | sed "s/^/$s, $n ranks: /"
    echo "$s, $n ranks: ${status:-no result} ($frames frame(s))"
  done
done
