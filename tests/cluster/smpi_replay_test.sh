#!/usr/bin/env bash
# Simgrid.ReplayReproducesRecordedRun (tests/cluster/CMakeLists.txt):
# putmd_smpi_d records water-spce-3k on 8 simulated fat-tree ranks (2 PME
# ranks, p2p, pairwise transposes, 30 steps; PUTMD_SMPI_RECORD), and
# putmd_replay runs the record (tools/simgrid/replay.sh):
#  - as recorded: every rank's record has one mark a step, and the replayed
#    steps 10-30 take 85-102% of the recorded run's simulated time (the
#    replay leaves out what recording itself adds, about 1.2 us a call;
#    docs/scaling.md) and 80-120% of a run without recording;
#  - twice: the same output, byte for byte;
#  - with steps 10-20 three times: 20 steps more, each repetition within 5%
#    of the first;
#  - refusals: steps beyond the record, a record with one-sided calls
#    (--comm rma), and a replay that would simulate its own computation.
# usage: smpi_replay_test.sh BIN_DIR SYSTEM_DIR
set -euo pipefail
bin=${1:?usage: smpi_replay_test.sh BIN_DIR SYSTEM_DIR}
sys=${2:?usage: smpi_replay_test.sh BIN_DIR SYSTEM_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "smpi_replay_test: $*" >&2; exit 1; }
export PUTMD_FFTW_PLAN=estimate PUTMD_REPLAY_BINARY=$bin/putmd_replay
sim=(-platform ib-fattree -np 8 -eager-limit 0)
run=(run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$sys/md.mdp" --npme 2 -dlb no)
mkdir "$work/rec"
PUTMD_SMPI_RECORD=$work/rec "$root/tools/simgrid/smpirun.sh" "${sim[@]}" "$bin/putmd_smpi_d" "${run[@]}" -nsteps 30 \
    --comm p2p --fft-transpose pairwise -deffnm "$work/live" > "$work/live.out" 2>&1 || { cat "$work/live.out"; fail "the recorded run failed"; }
"$root/tools/simgrid/smpirun.sh" "${sim[@]}" "$bin/putmd_smpi_d" "${run[@]}" -nsteps 30 \
    --comm p2p --fft-transpose pairwise -deffnm "$work/plain" > "$work/plain.out" 2>&1 || { cat "$work/plain.out"; fail "the plain run failed"; }
for r in 0 1 2 3 4 5 6 7; do
    [[ -f $work/rec/rank-$r.txt ]] || fail "no record of rank $r"
    marks=$(grep -c '^m ' "$work/rec/rank-$r.txt")
    # PP ranks: steps 0-30; PME ranks: one more (the message that stops them)
    [[ $marks == 31 || $marks == 32 ]] || fail "rank $r's record has $marks step marks, not 31 or 32"
done
[[ ! -e $work/rec/rank-8.txt ]] || fail "a record of a ninth rank"

"$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" > "$work/replay.out" 2>&1 || { cat "$work/replay.out"; fail "the replay failed"; }
"$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" > "$work/replay2.out" 2>&1 || fail "the second replay failed"
cmp -s <(grep '^step\|^replayed' "$work/replay.out") <(grep '^step\|^replayed' "$work/replay2.out") \
    || fail "two replays of one record differ"
# simulated seconds of steps 10-30: replayed, recorded, and the plain run's
# (its log's steady ms a step over the steps after the first 10, 20 of them)
read -r rep rec < <(awk '$1 == "step" && $2 == 10 {a = $3; b = $4} $1 == "step" && $2 == 30 {print $3 - a, $4 - b}' "$work/replay.out")
plain=$(awk '/^Steady state:/ {print $3 * 20 / 1000}' "$work/plain.log")
[[ -n $rep && -n $rec && -n $plain ]] || fail "no step times (replay: $(tail -1 "$work/replay.out"))"
echo "steps 10-30: replayed $rep s, recorded $rec s, a run without recording $plain s"
awk -v a="$rep" -v b="$rec" 'BEGIN {exit !(a >= 0.85 * b && a <= 1.02 * b)}' \
    || fail "the replay's steps 10-30 take $rep s, the recorded run's $rec s (expected 85-102%)"
awk -v a="$rep" -v b="$plain" 'BEGIN {exit !(a >= 0.8 * b && a <= 1.2 * b)}' \
    || fail "the replay's steps 10-30 take $rep s, a run without recording $plain s (expected 80-120%)"

"$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" 10 20 3 > "$work/window.out" 2>&1 || { cat "$work/window.out"; fail "the repeated replay failed"; }
last=$(awk '$1 == "step" {k = $2} END {print k}' "$work/window.out")
[[ $last == 50 ]] || fail "10 steps repeated twice more should end at step 50, not $last"
awk '$1 == "step" {t[$2] = $3} END {
        a = t[20] - t[10]; b = t[30] - t[20]; c = t[40] - t[30]
        printf "steps 10-20 three times: %.6f, %.6f, %.6f s\n", a, b, c
        exit !(b > 0.95 * a && b < 1.05 * a && c > 0.95 * a && c < 1.05 * a)
    }' "$work/window.out" || fail "the repeated steps do not repeat the first pass's time within 5%"

# refusals, each naming what to change
if "$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" 10 40 2 > "$work/beyond.out" 2>&1; then fail "steps beyond the record accepted"; fi
grep -q "step 40 is not in the record" "$work/beyond.out" || { cat "$work/beyond.out"; fail "no message for steps beyond the record"; }
mkdir "$work/rma"
PUTMD_SMPI_RECORD=$work/rma "$root/tools/simgrid/smpirun.sh" "${sim[@]}" "$bin/putmd_smpi_d" "${run[@]}" -nsteps 2 \
    --comm rma --fft-transpose pairwise -deffnm "$work/rma" > "$work/rma.out" 2>&1 || fail "the rma run failed"
if "$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rma" > "$work/rma-replay.out" 2>&1; then fail "a record with one-sided calls replayed"; fi
grep -q "rank-[0-9]*.txt:[0-9]*: the record has MPI_[A-Za-z_]*, which the replay cannot run" "$work/rma-replay.out" \
    || { cat "$work/rma-replay.out"; fail "no message naming the one-sided call"; }
if "$root/tools/simgrid/smpirun.sh" "${sim[@]}" "$bin/putmd_replay" "$work/rec" > "$work/computing.out" 2>&1; then
    fail "a replay simulating its own computation ran"
fi
grep -q "simulate-computation:no" "$work/computing.out" || { cat "$work/computing.out"; fail "no message about smpi/simulate-computation"; }
echo "smpi_replay_test: passed"
