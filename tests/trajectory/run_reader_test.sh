#!/bin/sh
# run_reader_test.sh CONF.gro CHECK_SCRIPT WRITER... — the reader-compatibility
# test: each writer (mixed and double build of write_test_trajectory) writes
# its files into a fresh temporary directory, then check_readers.py reads them
# with gmx, MDAnalysis and MDTraj under Debian's python3 (the one the
# python3-mdanalysis and python3-mdtraj packages install into).
set -e
conf=$1
script=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/putmd-traj-XXXXXX")
trap 'rm -rf "$dir"' EXIT
for writer in "$@"; do
    "$writer" "$conf" "$dir"
done
/usr/bin/python3 -W ignore::DeprecationWarning "$script" "$conf" "$dir"
