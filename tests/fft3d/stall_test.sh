#!/bin/sh
# tests/fft3d/stall_test.sh — one rank stops taking part in the rma (or,
# with STALL_ALG=shm, the shm) transposes of the pencil FFT; the job must fail (non-zero exit) within
# LIMIT seconds, and the waiting ranks must say "timed out" and what they
# waited for (after PUTMD_COMM_TIMEOUT), instead of hanging.
# Usage: stall_test.sh LIMIT program mpirun-and-args...
limit=$1; prog=$2; shift 2
out=$(mktemp)
start=$(date +%s)
timeout -k 5 $((limit + 10)) "$@" "$prog" --stall-at 3 --stall-alg "${STALL_ALG:-rma}" >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "fft stall test: mpirun exit code $rc after ${elapsed} s"
grep "putmd comm" "$out" | head -3
status=0
if [ "$rc" -eq 0 ]; then echo "FAIL: job succeeded although a rank stalled"; status=1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: job hung (stopped by timeout)"; status=1; fi
if [ "$elapsed" -gt "$limit" ]; then echo "FAIL: took longer than ${limit} s"; status=1; fi
if ! grep -q "timed out" "$out"; then echo "FAIL: no 'timed out' message"; tail -20 "$out"; status=1; fi
rm -f "$out"
[ $status -eq 0 ] && echo ok
exit $status
