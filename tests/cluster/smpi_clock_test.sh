#!/usr/bin/env bash
# The SMPI program's clock (src/comm/smpi_clock.h) against SMPI's own,
# read by read: putmd_smpi_d on 4 simulated GbE ranks, 20 steps of
# water-spce-3k, p2p and rma, with PUTMD_SMPI_CLOCK=check (every read of the
# clock computed without the simulator, then flushed through MPI_Wtime and
# compared). Every rank must report; its mean difference must be within
# 2 us (the reads' own cost, a system call or two, is what SMPI counts and
# this clock does not: about -0.5 us a read here), fewer than 1% of its
# reads may differ by more than 10 us (the operating system's interruptions
# that land between SMPI's timer and this clock's: 0.02-0.16% here), and
# the measured scale of CPU time must be 1 (the platforms' hosts compute as
# fast as smpi/host-speed says). Then tools/simgrid/check_clock_wraps.sh:
# every MPI function the program imports is wrapped or known to leave SMPI's
# timer alone. And PUTMD_SMPI_CLOCK=bogus fails with a message naming the
# valid values.
# usage: smpi_clock_test.sh BIN_DIR SYSTEM_DIR
set -u
bin=${1:?usage: smpi_clock_test.sh BIN_DIR SYSTEM_DIR}
system=${2:?usage: smpi_clock_test.sh BIN_DIR SYSTEM_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PUTMD_FFTW_PLAN=estimate
status=0
bash "$root/tools/simgrid/check_clock_wraps.sh" "$bin/putmd_smpi_d" || status=1
for comm in p2p rma; do
    PUTMD_SMPI_CLOCK=check "$root/tools/simgrid/smpirun.sh" -platform gbe -np 4 "$bin/putmd_smpi_d" run \
        -p "$system/topol.top" -c "$system/conf.gro" -f "$system/md.mdp" -nsteps 20 --npme 0 \
        --comm "$comm" -deffnm "$work/$comm" > "$work/$comm.out" 2>&1 || { echo "FAILED: $comm run" >&2; tail -5 "$work/$comm.out" >&2; status=1; continue; }
    grep 'putmd_smpi clock check' "$work/$comm.out" | sed "s/^/$comm: /"
    python3 - "$work/$comm.out" "$comm" <<'PY' || status=1
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("putmd_smpi clock check")]
pat = re.compile(r"rank (\d+): (\d+) reads, (\d+) compared with MPI_Wtime, (\d+) differ by more than 10 us, "
                 r"mean difference (-?[\d.]+) us, .* scale ([\d.]+)")
ranks, bad = set(), []
for l in lines:
    m = pat.search(l)
    if not m:
        bad.append("unreadable line: " + l.strip()); continue
    rank, reads, compared, over, mean, scale = (int(m[1]), int(m[2]), int(m[3]), int(m[4]), float(m[5]), float(m[6]))
    ranks.add(rank)
    if compared < 100: bad.append(f"rank {rank}: only {compared} reads compared")
    if abs(mean) > 2.0: bad.append(f"rank {rank}: mean difference {mean} us (limit 2)")
    if over > 0.01 * compared: bad.append(f"rank {rank}: {over} of {compared} reads differ by more than 10 us (limit 1%)")
    if scale != 1.0: bad.append(f"rank {rank}: scale {scale}, expected 1")
if ranks != {0, 1, 2, 3}: bad.append(f"ranks reporting: {sorted(ranks)}, expected 0-3")
for b in bad: print(f"FAILED ({sys.argv[2]}): {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
# a value it does not know is an error naming the variable and the valid values
PUTMD_SMPI_CLOCK=bogus "$root/tools/simgrid/smpirun.sh" -platform gbe -np 2 "$bin/putmd_smpi_d" run \
    -p "$system/topol.top" -c "$system/conf.gro" -f "$system/md.mdp" -nsteps 2 -deffnm "$work/bad" > "$work/bad.out" 2>&1 \
    && { echo "FAILED: PUTMD_SMPI_CLOCK=bogus ran" >&2; status=1; }
grep -q 'PUTMD_SMPI_CLOCK=bogus: valid values are fast (the default), flush and check' "$work/bad.out" \
    || { echo "FAILED: PUTMD_SMPI_CLOCK=bogus: no error naming the valid values" >&2; tail -3 "$work/bad.out" >&2; status=1; }
exit $status
