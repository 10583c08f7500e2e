#!/bin/sh
# A putmd run on 2 ranks whose rank 1 is killed (SIGKILL) mid-run must stop
# as a whole within seconds, with a message naming the dead rank, never hang.
# usage: kill_rank_test.sh PUTMD_D SYSTEM_DIR BACKEND MPIRUN...
set -u
putmd=$1; system=$2; backend=$3; shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat "$system/md.mdp" > "$work/run.mdp"
"$@" -np 2 "$putmd" run -p "$system/topol.top" -c "$system/conf.gro" -f "$work/run.mdp" \
    -deffnm "$work/md" -nsteps 100000 -nt 1 --comm "$backend" > "$work/out" 2>&1 &
launcher=$!
# wait until both ranks are running steps (rank 0 writes the log header first)
i=0
while [ $i -lt 120 ] && ! grep -q "^command:" "$work/md.log" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
sleep 2
victim=$(pgrep -f "deffnm $work/md" | while read p; do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = "$(basename "$putmd" | cut -c1-15)" ] && echo "$p"; done | tail -1)
if [ -z "$victim" ]; then echo "FAILED: no putmd rank found"; cat "$work/out"; kill $launcher; exit 1; fi
start=$(date +%s)
kill -9 "$victim"
# the job must end by itself within 30 s
i=0
while kill -0 $launcher 2>/dev/null && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
if kill -0 $launcher 2>/dev/null; then
    echo "FAILED: the job still runs 30 s after a rank was killed"; pkill -9 -f "deffnm $work/md"; exit 1
fi
wait $launcher; status=$?
elapsed=$(( $(date +%s) - start ))
if [ $status -eq 0 ]; then echo "FAILED: the job exited with status 0 after losing a rank"; cat "$work/out"; exit 1; fi
if ! grep -qi "signal 9\|killed\|exited on signal" "$work/out"; then
    echo "FAILED: no message about the killed rank:"; cat "$work/out"; exit 1
fi
echo "the job stopped ${elapsed} s after rank pid $victim was killed (exit status $status)"
