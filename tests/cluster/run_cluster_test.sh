#!/usr/bin/env bash
# The namespace hosts of tools/cluster/mpirun-hosts.sh in make test:
#  1. water-spce-3k on 2 hosts x 2 ranks with every backend that works
#     across hosts (p2p, rma, shm+p2p, shm+rma, auto): energies within 1e-9
#     of one rank in putmd_d, bitwise identical across backends, and the
#     auto log naming shm within the hosts and p2p or rma between them
#     (run_dd_md_test.py);
#  2. --comm shm across hosts is refused with advice, and so is --comm
#     shmem (Open MPI's one-sided components there: see backend_shmem.cpp);
#  3. nothing is left behind: after normal runs, after a failing command and
#     after SIGTERM to the launcher mid-run, no namespace, no keeper process
#     and no work directory of the cluster remain, also when a second
#     SIGTERM comes during the teardown;
#  4. an unreachable host is named within 30 s;
#  5. with more ranks than cores the ranks are told to yield (2c).
# usage: run_cluster_test.sh PUTMD_D SYSTEM_DIR
set -u
putmd=$1
system=$2
here=$(cd "$(dirname "$0")" && pwd)
hosts=$here/../../tools/cluster/mpirun-hosts.sh
export PUTMD_CLUSTER_NAME=pct$$
failed=0
fail() { echo "FAILED: $*" >&2; failed=1; }

leftovers() {
    local what=""
    ip netns list 2>/dev/null | grep -q "^$PUTMD_CLUSTER_NAME-" && what+=" namespaces($(ip netns list | grep "^$PUTMD_CLUSTER_NAME-" | awk '{print $1}' | tr '\n' ' '))"
    pgrep -f "$PUTMD_CLUSTER_NAME.cluster|hostname $PUTMD_CLUSTER_NAME-h" >/dev/null && what+=" processes($(pgrep -af "$PUTMD_CLUSTER_NAME.cluster|hostname $PUTMD_CLUSTER_NAME-h" | head -3 | tr '\n' ';'))"
    [[ -e /tmp/$PUTMD_CLUSTER_NAME.cluster ]] && what+=" /tmp/$PUTMD_CLUSTER_NAME.cluster"
    echo "$what"
}
# whatever happens, this test leaves nothing either
trap '"$hosts" --down "$PUTMD_CLUSTER_NAME"' EXIT

# 1. every backend across 2 hosts against one rank
python3 "$here/../domdec/run_dd_md_test.py" --putmd "$putmd" --mpirun "$hosts -k 2 -s 2" --system "$system" \
    --ranks 4 --steps 10 --backends "p2p rma shm+p2p shm+rma auto" \
    --expect-log 'auto=shm\+(p2p|rma) backend \(automatic: 4 ranks on 2 machines \(2, 2\): shm between ranks of one machine, (p2p|rma) between machines' \
    || fail "4 ranks on 2 hosts differ from one rank or between backends (above)"
left=$(leftovers); [[ -z $left ]] || fail "left behind after the runs:$left"

# 2. shm cannot span hosts: a clear refusal, not a hang or a crash
work=$(mktemp -d)
out=$("$hosts" -k 2 -s 1 "$putmd" run -p "$system/topol.top" -c "$system/conf.gro" -f "$system/md.mdp" \
      -nsteps 2 -nt 1 --comm shm -deffnm "$work/shm" 2>&1)
rc=$?
rm -rf "$work"
if [[ $rc -eq 0 ]] || ! grep -q "the shm backend needs every rank on one node" <<<"$out"; then
    fail "--comm shm across hosts was not refused with a message (exit $rc): ${out: -600}"
fi
left=$(leftovers); [[ -z $left ]] || fail "left behind after a refused run:$left"

# 2b. shmem on the namespace hosts (osc pt2pt there) is refused at start-up
#     with advice: Open MPI crashes in MPI_Finalize after OpenSHMEM without
#     osc/ucx
work=$(mktemp -d)
out=$("$hosts" -k 2 -s 1 "$putmd" run -p "$system/topol.top" -c "$system/conf.gro" -f "$system/md.mdp" \
      -nsteps 2 -nt 1 --comm shmem -deffnm "$work/shmem" 2>&1)
rc=$?
rm -rf "$work"
if [[ $rc -eq 0 ]] || ! grep -q "the shmem backend needs Open MPI's one-sided components set so" <<<"$out" \
        || grep -qi "segmentation" <<<"$out"; then
    fail "--comm shmem on the namespace hosts was not refused with a message (exit $rc): ${out: -600}"
fi
left=$(leftovers); [[ -z $left ]] || fail "left behind after a refused shmem run:$left"

# 2c. more ranks than cores: Open MPI is told to yield while it waits
#     (it cannot see that hosts sharing the cores oversubscribe them);
#     on one core (taskset) 2 ranks always are more, whatever the machine;
#     OMP_NUM_THREADS (which nproc obeys) must not change the count
out=$(OMP_NUM_THREADS=64 taskset -c 0 "$hosts" -k 2 -s 1 sh -c 'echo "yield=$OMPI_MCA_mpi_yield_when_idle"' 2>&1)
[[ $(grep -c "^yield=1\$" <<<"$out") -eq 2 ]] \
    || fail "2 ranks on one core: the ranks should see OMPI_MCA_mpi_yield_when_idle=1: ${out: -300}"
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
if [[ $cores -ge 2 ]]; then
    out=$(OMP_NUM_THREADS=1 "$hosts" -k 2 -s 1 sh -c 'echo "yield=$OMPI_MCA_mpi_yield_when_idle"' 2>&1)
    [[ $(grep -c "^yield=\$" <<<"$out") -eq 2 ]] \
        || fail "2 ranks on $cores cores: the ranks should not be told to yield: ${out: -300}"
fi
left=$(leftovers); [[ -z $left ]] || fail "left behind after the yield checks:$left"

# 3a. a failing command
"$hosts" -k 2 -s 1 false >/dev/null 2>&1 && fail "a failing command did not fail the launcher"
left=$(leftovers); [[ -z $left ]] || fail "left behind after a failing command:$left"

# a job of "sleep 60" on both hosts, in the background: $launcher
start_sleep_job() {
    "$hosts" -k 2 -s 1 sleep 60 >/dev/null 2>&1 &
    launcher=$!
    for _ in $(seq 100); do
        [[ $(pgrep -fc "^sleep 60") -ge 2 ]] && return
        sleep 0.1
    done
    fail "the job of the signal test did not start on both hosts"
}

# 3b. SIGTERM while the job runs
start_sleep_job
kill -TERM "$launcher"
wait "$launcher"
rc=$?
[[ $rc -ne 0 ]] || fail "the launcher exited 0 after SIGTERM"
left=$(leftovers); [[ -z $left ]] || fail "left behind after SIGTERM:$left"
pgrep -f "^sleep 60" >/dev/null && fail "the job's processes survived SIGTERM: $(pgrep -af '^sleep 60')"

# 3c. a second SIGTERM during the teardown (timeout(1) signals the
#     launcher and then its whole process group; mpirun may pass one on)
start_sleep_job
kill -TERM "$launcher"
sleep 0.1
kill -TERM "$launcher" 2>/dev/null
wait "$launcher"
for _ in $(seq 20); do pgrep -f "^sleep 60" >/dev/null || break; sleep 0.1; done
left=$(leftovers); [[ -z $left ]] || fail "left behind after two SIGTERMs:$left"
pgrep -f "^sleep 60" >/dev/null && fail "the job's processes survived two SIGTERMs: $(pgrep -af '^sleep 60')"

# 4. an unreachable host (its cable pulled after the links came up) is named
#    within 30 s, and nothing is left
start=$SECONDS
out=$(PUTMD_CLUSTER_CUT_HOST=1 timeout 60 "$hosts" -k 2 -s 1 true 2>&1)
rc=$?
took=$((SECONDS - start))
if [[ $rc -eq 0 || $rc -eq 124 ]] || ! grep -q "host $PUTMD_CLUSTER_NAME-h1 (10.77.0.2) is unreachable" <<<"$out" || [[ $took -gt 30 ]]; then
    fail "an unreachable host was not named within 30 s (exit $rc after $took s): $out"
fi
left=$(leftovers); [[ -z $left ]] || fail "left behind after an unreachable host:$left"

if [[ $failed -eq 0 ]]; then echo passed; else echo FAILED; fi
exit $failed
