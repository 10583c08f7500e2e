#!/usr/bin/env bash
# tools/simgrid/build_smpi.sh — build an SMPI program of putmd in the
# ordinary build tree (BUILD, default build/): putmd_smpi_d, putmd_smpi or
# fft3d_bench_smpi. They exist in a tree configured while SimGrid (Debian
# libsimgrid-dev) was installed and -DPUTMD_SMPI was not turned off; only
# the sources that see MPI are compiled again for them.
#
# usage: tools/simgrid/build_smpi.sh TARGET...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
die() { echo "build_smpi.sh: $*" >&2; exit 2; }
[[ $# -gt 0 ]] || die "no target given; valid: putmd_smpi_d, putmd_smpi, fft3d_bench_smpi"
for t in "$@"; do
    case $t in
        putmd_smpi_d|putmd_smpi|fft3d_bench_smpi) ;;
        *) die "unknown target '$t'; valid: putmd_smpi_d, putmd_smpi, fft3d_bench_smpi" ;;
    esac
done
command -v smpirun >/dev/null || die "smpirun not found; install Debian's libsimgrid-dev (apt-get install libsimgrid-dev)"
[[ -f $build/CMakeCache.txt ]] || die "$build is not configured; run 'make build' (or cmake -S . -B $build) first"
if ! grep -q '^PUTMD_SMPI:BOOL=ON' "$build/CMakeCache.txt" || grep -q '^SIMGRID_LIBRARY:FILEPATH=.*NOTFOUND' "$build/CMakeCache.txt"; then
    cmake -S "$root" -B "$build" -DPUTMD_SMPI=ON > /dev/null ||
        die "configuring $build with -DPUTMD_SMPI=ON failed"
fi
grep -q '^SIMGRID_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt" ||
    die "$build was configured without SimGrid; install libsimgrid-dev and run cmake -S . -B $build -DPUTMD_SMPI=ON"
cmake --build "$build" -j"${JOBS:-2}" --target "$@" > "$build/build_smpi.log" 2>&1 ||
    { tail -20 "$build/build_smpi.log" >&2; die "building $* failed (whole log: $build/build_smpi.log)"; }
