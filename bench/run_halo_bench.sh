#!/bin/sh
# bench/run_halo_bench.sh — runs bench/halo_bench.cpp for every backend and
# prints a table of microseconds per exchange execution (pack + start +
# finish + unpack) with the ratios rma/p2p, shm/p2p and shmem/p2p.
#
# Usage: bench/run_halo_bench.sh BUILD_DIR [RANKS [RUNS]]
#   BUILD_DIR  a build with the halo_bench target (bin/halo_bench)
#   RANKS      mpirun -np (default 2; more ranks than cores oversubscribes,
#              and then the timings measure the scheduler, not the backend)
#   RUNS       whole-benchmark repetitions (default 3); each cell is the
#              median over runs of the per-run medians
# Extra mpirun options can be given in MPIRUN_ARGS, the one-sided component
# in OMPI_MCA_osc (e.g. OMPI_MCA_osc=^rdma makes rma use osc/sm on a node).
set -e
build=${1:?usage: run_halo_bench.sh BUILD_DIR [RANKS [RUNS]]}
ranks=${2:-2}
runs=${3:-3}
bin=$build/bin/halo_bench
[ -x "$bin" ] || { echo "no $bin: build the halo_bench target first" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

backends="p2p rma shm"
if "$bin" --backend shmem --quick >/dev/null 2>&1; then backends="$backends shmem"; fi

i=1
while [ $i -le "$runs" ]; do
  for b in $backends; do
    osc=${OMPI_MCA_osc:-}
    # OpenSHMEM needs osc/rdma off in Open MPI 4.1 (see src/comm/backend_shmem.cpp).
    [ "$b" = shmem ] && [ -z "$osc" ] && osc="^rdma"
    env ${osc:+OMPI_MCA_osc=$osc} mpirun --oversubscribe $MPIRUN_ARGS -np "$ranks" "$bin" --backend "$b" >>"$tmp/all.txt"
  done
  i=$((i + 1))
done

echo "halo-exchange microbenchmark: $ranks ranks, median of $runs runs (each a median of 15 batches)"
python3 - "$tmp/all.txt" "$backends" <<'EOF'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, links, size, us = line.split()
    rows[(b, int(links), int(size))].append(float(us))
backends = sys.argv[2].split()
med = {k: statistics.median(v) for k, v in rows.items()}
def fmt_size(n):
    return f"{n // 1048576} MiB" if n >= 1048576 else f"{n // 1024} KiB" if n >= 1024 else f"{n} B"
head = "| links | bytes/link | " + " | ".join(f"{b} µs" for b in backends) + " | " + \
       " | ".join(f"{b}/p2p" for b in backends if b != "p2p") + " |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for links in sorted({k[1] for k in med}):
    for size in sorted({k[2] for k in med}):
        t = [med.get((b, links, size)) for b in backends]
        p2p = med.get(("p2p", links, size))
        cells = [f"{x:.2f}" if x is not None else "-" for x in t]
        ratios = [f"{med[(b, links, size)] / p2p:.2f}" for b in backends if b != "p2p"]
        print(f"| {links} | {fmt_size(size)} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
EOF
