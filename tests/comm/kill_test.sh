#!/bin/sh
# tests/comm/kill_test.sh — a rank dies (kill) or stops taking part (stall)
# in the middle of an exchange; the whole mpirun job must then fail
# (non-zero exit) within LIMIT seconds instead of hanging in the survivors'
# wait loops. For a stall the output must also say "timed out" (the waiting
# ranks give up after PUTMD_COMM_TIMEOUT and name what they waited for).
# Usage: kill_test.sh kill|stall LIMIT program backend mpirun-and-args...
mode=$1; limit=$2; prog=$3; backend=$4; shift 4
out=$(mktemp)
start=$(date +%s)
timeout -k 5 $((limit + 10)) "$@" "$prog" --backend "$backend" --$mode-at 30 >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "$mode test ($backend): mpirun exit code $rc after ${elapsed} s"
grep "putmd comm" "$out" | head -3
status=0
if [ "$rc" -eq 0 ]; then echo "FAIL: job succeeded although a rank failed"; status=1; fi
# 124: timeout stopped it. (mpirun itself exits with 128+9 = 137 when it
# reports the SIGKILLed rank, so 137 alone does not mean a hang: the time
# check below decides.)
if [ "$rc" -eq 124 ]; then echo "FAIL: job hung (stopped by timeout)"; status=1; fi
if [ "$elapsed" -gt "$limit" ]; then echo "FAIL: took longer than ${limit} s"; status=1; fi
if [ "$mode" = stall ] && ! grep -q "timed out" "$out"; then
  echo "FAIL: no 'timed out' message"; tail -20 "$out"; status=1
fi
rm -f "$out"
[ $status -eq 0 ] && echo ok
exit $status
