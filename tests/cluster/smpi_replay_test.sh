#!/usr/bin/env bash
# Simgrid.ReplayReproducesRecordedRun (tests/cluster/CMakeLists.txt):
# putmd_smpi_d records water-spce-3k on 8 simulated fat-tree ranks (2 PME
# ranks, p2p, pairwise transposes, 30 steps; PUTMD_SMPI_RECORD), and
# putmd_replay runs the record (tools/simgrid/replay.sh):
#  - as recorded: every rank's record has one mark a step (one more on the
#    PME ranks) and no call the replay cannot run, and the replayed steady
#    steps (after the log's first 10) take 85-102% of the recorded run's simulated time (the
#    replay leaves out what recording itself adds, about 1.2 us a call;
#    docs/scaling.md) and 75-125% of a run without recording;
#  - twice: the same output, byte for byte;
#  - recorded and replayed with 2 ranks a host and eager sends: within
#    85-102% too (the bursts replayed as waits, not as work the host's
#    core would share again);
#  - with steps 10-20 three times: 20 steps more, each repetition within 5%
#    of the first;
#  - refusals: steps beyond the record, a record with one-sided calls
#    (--comm rma), a request begun before the repeated steps and waited
#    for in them, an unknown event, another eager limit than the recorded
#    one, and a replay that would simulate its own computation.
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
# 6 PP ranks mark steps 0-30; the 2 PME ranks one more (the message that
# stops them)
pp=0 pme=0
for r in 0 1 2 3 4 5 6 7; do
    [[ -f $work/rec/rank-$r.txt ]] || fail "no record of rank $r"
    marks=$(grep -c '^m ' "$work/rec/rank-$r.txt")
    case $marks in 31) pp=$((pp + 1)) ;; 32) pme=$((pme + 1)) ;; *) fail "rank $r's record has $marks step marks" ;; esac
    ! grep -q -E '^x |^wait -2|^waitall .* -2( |$)' "$work/rec/rank-$r.txt" \
        || fail "rank $r's p2p record has a call the replay cannot run or a request it did not see begin"
done
[[ $pp == 6 && $pme == 2 ]] || fail "$pp PP and $pme PME ranks' records, not 6 and 2"
[[ ! -e $work/rec/rank-8.txt ]] || fail "a record of a ninth rank"

"$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" > "$work/replay.out" 2>&1 || { cat "$work/replay.out"; fail "the replay failed"; }
"$root/tools/simgrid/replay.sh" "${sim[@]}" "$work/rec" > "$work/replay2.out" 2>&1 || fail "the second replay failed"
cmp -s <(grep '^step\|^replayed' "$work/replay.out") <(grep '^step\|^replayed' "$work/replay2.out") \
    || fail "two replays of one record differ"
# simulated seconds of the steps after the first W (the plain run's log:
# its steady ms a step over those steps): replayed, recorded and plain
read -r ms steady warm < <(awk '/^Steady state:/ {print $3, $9, $14}' "$work/plain.log") || true
[[ $warm =~ ^[0-9]+$ && $((warm + steady)) == 30 ]] || fail "the plain run's steady-state line: $(grep '^Steady' "$work/plain.log")"
read -r rep rec < <(awk -v w="$warm" '$1 == "step" && $2 == w {a = $3; b = $4} $1 == "step" && $2 == 30 {print $3 - a, $4 - b}' "$work/replay.out")
plain=$(awk -v m="$ms" -v n="$steady" 'BEGIN {print m * n / 1000}')
[[ -n $rep && -n $rec && -n $plain ]] || fail "no step times (replay: $(tail -1 "$work/replay.out"))"
echo "steps $warm-30: replayed $rep s, recorded $rec s, a run without recording $plain s"
awk -v a="$rep" -v b="$rec" 'BEGIN {exit !(a >= 0.85 * b && a <= 1.02 * b)}' \
    || fail "the replay's steps $warm-30 take $rep s, the recorded run's $rec s (expected 85-102%)"
# (a separate run: its bursts are timed anew, on a machine CI may load)
awk -v a="$rep" -v b="$plain" 'BEGIN {exit !(a >= 0.75 * b && a <= 1.25 * b)}' \
    || fail "the replay's steps $warm-30 take $rep s, a run without recording $plain s (expected 75-125%)"

# two ranks a host (sharing its one core) and eager sends: the recorded
# bursts hold the sharing, which the replay must not count again
mkdir "$work/shared"
shared=(-platform ib-fattree -np 8 -per-host 2 -eager-limit 65536)
PUTMD_SMPI_RECORD=$work/shared "$root/tools/simgrid/smpirun.sh" "${shared[@]}" "$bin/putmd_smpi_d" "${run[@]}" -nsteps 30 \
    --comm p2p --fft-transpose pairwise -deffnm "$work/shared" > "$work/shared.out" 2>&1 || fail "the 2-a-host run failed"
"$root/tools/simgrid/replay.sh" "${shared[@]}" "$work/shared" > "$work/shared-replay.out" 2>&1 \
    || { cat "$work/shared-replay.out"; fail "the 2-a-host replay failed"; }
read -r rep2 rec2 < <(awk -v w="$warm" '$1 == "step" && $2 == w {a = $3; b = $4} $1 == "step" && $2 == 30 {print $3 - a, $4 - b}' "$work/shared-replay.out")
echo "2 ranks a host, eager sends: steps $warm-30 replayed $rep2 s, recorded $rec2 s"
awk -v a="$rep2" -v b="$rec2" 'BEGIN {exit !(a >= 0.85 * b && a <= 1.02 * b)}' \
    || fail "2 ranks a host: the replay's steps take $rep2 s, the recorded run's $rec2 s (expected 85-102%)"

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
# hand-made records of 2 ranks: a request begun before the repeated steps
# and waited for in them; an unknown event; a replay on other settings
mkdir "$work/cross" "$work/bad"
printf 'm 0 0\nisend 0 1 5 8 0\nm 1 0\nwait 0\nm 2 0\n' > "$work/cross/rank-0.txt"
printf 'm 0 0\nirecv 0 0 5 8 0\nm 1 0\nwait 0\nm 2 0\n' > "$work/cross/rank-1.txt"
"$root/tools/simgrid/replay.sh" -platform ib-fattree -np 2 "$work/cross" 0 2 2 > /dev/null 2>&1 \
    || fail "a hand-made record with a window holding its requests did not replay"
if "$root/tools/simgrid/replay.sh" -platform ib-fattree -np 2 "$work/cross" 1 2 2 > "$work/cross.out" 2>&1; then
    fail "a request begun before the repeated steps was accepted"
fi
grep -q "rank-[01].txt:4: a wait for request 0, which is not pending: begun before the repeated steps" "$work/cross.out" \
    || { cat "$work/cross.out"; fail "no message naming the request begun before the repeated steps"; }
cp "$work/cross/rank-1.txt" "$work/bad/rank-1.txt"
printf 'm 0 0\nfrobnicate 1 2\n' > "$work/bad/rank-0.txt"
if "$root/tools/simgrid/replay.sh" -platform ib-fattree -np 2 "$work/bad" > "$work/bad.out" 2>&1; then fail "an unknown event accepted"; fi
grep -q "rank-0.txt:2: unknown event 'frobnicate' (valid: settings, c, m, split" "$work/bad.out" \
    || { cat "$work/bad.out"; fail "no message naming the unknown event, its file and line"; }
if "$root/tools/simgrid/replay.sh" -platform ib-fattree -np 8 -eager-limit 65536 "$work/rec" > "$work/eager.out" 2>&1; then
    fail "a replay with another eager limit than the recorded one ran"
fi
grep -q "recorded with -eager-limit 0, replayed with 65536" "$work/eager.out" || { cat "$work/eager.out"; fail "no message about the eager limit"; }
if "$root/tools/simgrid/smpirun.sh" "${sim[@]}" "$bin/putmd_replay" "$work/rec" > "$work/computing.out" 2>&1; then
    fail "a replay simulating its own computation ran"
fi
grep -q "simulate-computation:no" "$work/computing.out" || { cat "$work/computing.out"; fail "no message about smpi/simulate-computation"; }
echo "smpi_replay_test: passed"
