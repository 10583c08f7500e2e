#!/usr/bin/env bash
# tools/cluster/mpirun-hosts.sh — run an MPI job on K "hosts" made of Linux
# namespaces on this one machine, and leave nothing behind.
#
# usage: tools/cluster/mpirun-hosts.sh [-k HOSTS] [-n RANKS] [-s SLOTS]
#                                      [-- MPIRUN_ARGS... --] COMMAND [ARGS...]
#   -k HOSTS   namespace hosts to create (default 2, at most 16)
#   -n RANKS   ranks in the job (default HOSTS x SLOTS; -np is the same)
#   -s SLOTS   slots (ranks) per host (default 2); ranks fill host 0 first
#   --keep     keep the hosts after the job and print how to remove them
#              (tools/cluster/mpirun-hosts.sh --down NAME)
#   --down NAME  remove the hosts of an earlier --keep run and exit
#   MPIRUN_ARGS  extra options for mpirun, between "--" and "--"
#
# Each host is a network namespace with its own hostname (UTS namespace) and
# its own /dev/shm (a mount namespace with a tmpfs there), as a real host
# has: Open MPI's shared-memory transport keys its files by hostname and
# keeps them in /dev/shm, so ranks of two hosts sharing them collide. The
# hosts' eth0 are veth pairs joined by a bridge that lives in a namespace of
# its own ("the switch"), so no address, link or route is ever added to the
# machine's own network namespace: the addresses 10.77.0.0/24 exist only
# inside the namespaces made here.
#
# mpirun runs inside host 0 and starts its daemons on the other hosts with
# Open MPI's rsh launcher, whose "remote shell" is tools/cluster/agent.sh:
# it enters the host's namespaces (nsenter on the host's keeper process) and
# runs the daemon command there. No ssh daemon is involved. Ranks on one
# host talk through vader (shared memory), ranks on different hosts through
# TCP over the veths; MPI one-sided operations across hosts use osc/pt2pt,
# which carries puts as messages.
#
# Tear-down (on exit, on error, on SIGINT/SIGTERM/SIGHUP/SIGPIPE): every process in
# each host's namespaces is killed, the keepers too, and the namespaces are
# deleted (which deletes their veths and the bridge).
#
# The environment variable PUTMD_CLUSTER_NAME (default pc<pid>) names the
# namespaces NAME-h0 .. NAME-h<K-1> and NAME-sw; tests use it to check that
# nothing is left. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), iproute2,
# util-linux (unshare, nsenter) and Open MPI.
set -euo pipefail
[[ -n ${PUTMD_CLUSTER_TRACE:-} ]] && { PS4='+ $EPOCHREALTIME '; set -x; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hosts=2 slots=2 ranks="" keep=0
name=${PUTMD_CLUSTER_NAME:-pc$$}
mpirun_extra=()

die() { echo "mpirun-hosts.sh: $*" >&2; exit 2; }

down() { # remove everything named $1-*
    local n=$1 ns pid pids
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${n}-(h[0-9]+|sw)$" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${n}-(h[0-9]+|sw)$" || true); do
        # until the namespace holds no process: a process forked while its
        # parent was being killed is not in the first list (a job's "sleep
        # 60" once outlived the teardown in a loaded CI run)
        for _ in $(seq 50); do
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [[ -n $pids ]] || break
            for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
            sleep 0.05
        done
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "/tmp/$n.cluster"
}

while [[ $# -gt 0 ]]; do
    case $1 in
        -k) hosts=${2:?-k needs a number}; shift 2 ;;
        -s) slots=${2:?-s needs a number}; shift 2 ;;
        -n|-np) ranks=${2:?-n needs a number}; shift 2 ;;
        --keep) keep=1; shift ;;
        --down) down "${2:?--down needs the cluster name}"; exit 0 ;;
        --) shift
            while [[ $# -gt 0 && $1 != -- ]]; do mpirun_extra+=("$1"); shift; done
            [[ $# -gt 0 ]] || die "MPIRUN_ARGS must end with '--' before the command"
            shift; break ;;
        -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
        -*) die "unknown option '$1'; valid: -k HOSTS, -n RANKS, -s SLOTS, --keep, --down NAME, -- MPIRUN_ARGS --" ;;
        *) break ;;
    esac
done
[[ $# -gt 0 ]] || die "no command given (e.g. build/putmd run -c conf.gro -p topol.top -f md.mdp -nt 1)"
[[ $hosts =~ ^[0-9]+$ && $hosts -ge 1 && $hosts -le 16 ]] || die "-k '$hosts' is not a host count; valid: 1..16"
[[ $slots =~ ^[0-9]+$ && $slots -ge 1 ]] || die "-s '$slots' is not a slot count; valid: 1 or more"
ranks=${ranks:-$((hosts * slots))}
[[ $ranks =~ ^[0-9]+$ && $ranks -ge 1 && $ranks -le $((hosts * slots)) ]] \
    || die "-n '$ranks' does not fit; valid: 1..$((hosts * slots)) ($hosts hosts x $slots slots)"
[[ $(id -u) -eq 0 ]] || die "needs root (network and mount namespaces); run it as root"
for tool in ip bridge unshare nsenter mpirun; do
    command -v "$tool" >/dev/null || die "'$tool' not found; install iproute2, util-linux and openmpi-bin"
done
[[ $name =~ ^[A-Za-z0-9_]{1,10}$ ]] || die "PUTMD_CLUSTER_NAME '$name' must be 1-10 letters, digits or _"
if ip netns list 2>/dev/null | awk '{print $1}' | grep -qE "^${name}-"; then
    die "namespaces named ${name}-* exist already; remove them with $0 --down $name"
fi

status=0
cleanup() {
    local rc=$?
    # signals are ignored while tearing down, not reset to their default:
    # a second SIGTERM (timeout(1) signals the child and then its whole
    # process group) would otherwise kill the script half-way and leave the
    # namespaces behind
    trap - EXIT
    trap '' INT TERM HUP PIPE
    if [[ $keep -eq 1 && $rc -eq 0 ]]; then
        echo "mpirun-hosts.sh: hosts kept; remove them with: $0 --down $name" >&2
    else
        down "$name"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

dir=/tmp/$name.cluster
mkdir -p "$dir"
sw=$name-sw
ip netns add "$sw"
ip -n "$sw" link set lo up
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
: > "$dir/hostfile"
: > "$dir/hosts"
for ((h = 0; h < hosts; h++)); do
    ns=$name-h$h
    addr=10.77.0.$((h + 1))
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add eth0 type veth peer name p$h netns "$sw"
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$sw" link set p$h master br0
    ip -n "$sw" link set p$h up
    # the keeper: holds the host's UTS and mount namespaces (hostname,
    # private /dev/shm) for as long as the host lives
    ip netns exec "$ns" unshare --uts --mount --propagation private --fork \
        sh -c "hostname $name-h$h && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && echo \$\$ > $dir/keeper$h && exec sleep 1000000" \
        </dev/null >/dev/null 2>&1 &
    for _ in $(seq 100); do [[ -s $dir/keeper$h ]] && break; sleep 0.05; done
    [[ -s $dir/keeper$h ]] || die "host $h did not start (unshare/mount failed?)"
    echo "$addr slots=$slots" >> "$dir/hostfile"
    echo "$addr $(cat "$dir/keeper$h")" >> "$dir/hosts"
done
sed "s|@HOSTS@|$dir/hosts|" "$here/agent.sh" > "$dir/agent"
chmod +x "$dir/agent"

# wait until every bridge port forwards and every host's eth0 is up
for _ in $(seq 100); do
    ready=1
    [[ $(bridge -n "$sw" link show | grep -c "state forwarding") -eq $hosts ]] || ready=0
    for ((h = 0; h < hosts; h++)); do
        [[ $(ip -n "$name-h$h" -o link show eth0) == *"state UP"* ]] || ready=0
    done
    [[ $ready -eq 1 ]] && break
    sleep 0.05
done
[[ $ready -eq 1 ]] || die "the hosts' links did not come up within 5 s"

# PUTMD_CLUSTER_CUT_HOST=K (tests): pull host K's cable, the bridge port
# going down after the links came up, to check the error below
if [[ -n ${PUTMD_CLUSTER_CUT_HOST:-} ]]; then
    [[ $PUTMD_CLUSTER_CUT_HOST =~ ^[0-9]+$ && $PUTMD_CLUSTER_CUT_HOST -lt $hosts ]] \
        || die "PUTMD_CLUSTER_CUT_HOST '$PUTMD_CLUSTER_CUT_HOST' is not a host; valid: 0..$((hosts - 1))"
    ip -n "$sw" link set "p$PUTMD_CLUSTER_CUT_HOST" down
fi

# every host must answer host 0 (where mpirun runs) over TCP before the job
# starts: a connection to a port nobody listens on is refused at once by a
# host that is reachable, and times out or finds no route otherwise. An
# unreachable host is named here, within seconds, instead of mpirun waiting
# for a daemon that cannot call back.
for ((h = 1; h < hosts; h++)); do
    addr=10.77.0.$((h + 1))
    probe=$(ip netns exec "$name-h0" timeout 3 bash -c "exec 3<>/dev/tcp/$addr/9" 2>&1 || true)
    if [[ $probe != *"refused"* ]]; then
        die "host $name-h$h ($addr) is unreachable from $name-h0, where mpirun runs: ${probe:-no answer within 3 s}; check its link (ip -n $name-h$h link show eth0, bridge -n $sw link show)"
    fi
done

# the ranks get the caller's PATH and putmd's own settings where set
pass_env=(-x PATH)
for v in LD_LIBRARY_PATH OMP_NUM_THREADS $(compgen -e | grep '^PUTMD_' || true); do
    [[ -n ${!v+x} ]] && pass_env+=(-x "$v")
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# more ranks than this machine has cores: every host offers SLOTS slots on
# the same cores, so Open MPI does not know the job is oversubscribed and
# its waits spin for a whole scheduler slice while the rank they wait for
# sits on the same core (water-spce-12k, 4 ranks on 2 hosts of one core
# each: 27 ms a step spinning, 4.2-4.6 ms yielding). Tell it, unless the
# caller chose. The cores are those this script may run on (its affinity:
# taskset limits them), counted without OMP_NUM_THREADS, which nproc obeys.
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
if [[ $ranks -gt $cores && -z ${OMPI_MCA_mpi_yield_when_idle+x} ]]; then
    export OMPI_MCA_mpi_yield_when_idle=1
fi
[[ -n ${OMPI_MCA_mpi_yield_when_idle+x} ]] && pass_env+=(-x OMPI_MCA_mpi_yield_when_idle)
# --bind-to none: every host's daemon sees all of this machine's cores and
# would bind its first rank to core 0, so ranks of different hosts would
# share one core (4 ms per message, a scheduler tick, instead of 20 us).
# mpirun runs in the background and the script waits for it, so that a
# signal to this script is handled at once (bash runs traps only between
# foreground commands) and tears the hosts down, mpirun included.
# orte_startup_timeout 25: Open MPI's own limit on the launch (its default
# is none); it did not fire for a launch agent that hangs, which is what the
# watchdog below is for
nsenter -t "$(cat "$dir/keeper0")" --net --uts --mount -- \
    mpirun --hostfile "$dir/hostfile" -np "$ranks" --map-by slot --bind-to none -wdir "$PWD" \
    --mca plm_rsh_agent "$dir/agent" \
    --mca btl tcp,self,vader --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
    --mca osc pt2pt,sm --mca pml ob1 --mca orte_startup_timeout 25 \
    "${pass_env[@]}" "${mpirun_extra[@]}" "$@" <&0 &
job=$!

# the launch watchdog: the daemon of every other host the job uses must be
# running in that host within 25 s (a launcher that hangs, as ssh can,
# would otherwise keep mpirun waiting for ever)
used=$(((ranks + slots - 1) / slots))
seen=()
for ((t = 0; t < 50; t++)); do
    missing=()
    for ((h = 1; h < used; h++)); do
        if [[ -z ${seen[h]:-} ]]; then
            for pid in $(ip netns pids "$name-h$h" 2>/dev/null); do
                [[ $(cat "/proc/$pid/comm" 2>/dev/null) == orted ]] && { seen[h]=1; break; }
            done
        fi
        [[ -n ${seen[h]:-} ]] || missing+=("$name-h$h (10.77.0.$((h + 1)))")
    done
    [[ ${#missing[@]} -eq 0 ]] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.5
done
if [[ ${#missing[@]} -gt 0 ]] && kill -0 "$job" 2>/dev/null; then
    kill -TERM "$job" 2>/dev/null || true
    die "the MPI daemon did not start within 25 s on: ${missing[*]}; the launch through $dir/agent hangs there"
fi
set +e
wait $job
status=$?
set -e
exit $status
