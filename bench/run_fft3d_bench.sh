#!/bin/sh
# bench/run_fft3d_bench.sh — runs bench/fft3d.cpp (fft3d_bench) for several
# rank counts and prints a markdown table: per cubic grid and rank count the
# time of one forward + backward pair with each transpose algorithm (median
# over repetitions of the slowest rank's time, then the median over RUNS
# whole runs), the transpose share of the fastest, the algorithm
# chooseFastest() picked (auto), and the messages and bytes of one transform
# summed over all ranks (to other ranks only; the same for all algorithms).
#
# Usage: bench/run_fft3d_bench.sh BUILD_DIR [RANKS [GRIDS [RUNS]]]
#   BUILD_DIR  a build with the fft3d_bench target (bin/fft3d_bench)
#   RANKS      rank counts (default "2 3 4 5 6 7 8"); more ranks than cores
#              oversubscribe (marked * in the table): then the timings
#              measure the scheduler as much as the algorithm. With 1 in
#              the list, the serial FFTW 3D transform is timed too.
#   GRIDS      grid sizes, comma-separated (default 32,64,96,128)
#   RUNS       whole-benchmark repetitions (default 3)
# Extra mpirun options can be given in MPIRUN_ARGS, the one-sided component
# in OMPI_MCA_osc (e.g. OMPI_MCA_osc=^rdma makes rma use osc/sm on a node).
set -e
build=${1:?usage: run_fft3d_bench.sh BUILD_DIR [RANKS [GRIDS [RUNS]]]}
ranks=${2:-"2 3 4 5 6 7 8"}
grids=${3:-32,64,96,128}
runs=${4:-3}
bin=$build/bin/fft3d_bench
[ -x "$bin" ] || { echo "no $bin: build the fft3d_bench target first" >&2; exit 1; }
cores=$(getconf _NPROCESSORS_ONLN) # (nproc would obey OMP_NUM_THREADS)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

i=1
while [ $i -le "$runs" ]; do
  for np in $ranks; do
    mpirun --oversubscribe $MPIRUN_ARGS -np "$np" "$bin" --grids "$grids" --auto >>"$tmp/all.txt"
  done
  i=$((i + 1))
done

echo "pencil FFT forward+backward, float, $cores cores, median of $runs runs; ranks marked * oversubscribe the cores"
python3 - "$tmp/all.txt" "$cores" <<'EOF'
import sys, statistics, collections
cores = int(sys.argv[2])
t = collections.defaultdict(list)     # (ranks, n, alg) -> median ms per run
share = collections.defaultdict(list) # (ranks, n, alg) -> comm ms per run
info = {}                             # (ranks, n) -> (px, py, msgs, bytes)
picks = collections.defaultdict(list)
serial = collections.defaultdict(list) # n -> serial FFTW 3D ms per run (1-rank runs)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "fft3d":
        ranks, px, py, n, alg = int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5]
        t[(ranks, n, alg)].append(float(f[6]))
        share[(ranks, n, alg)].append(float(f[8]))
        info[(ranks, n)] = (px, py, float(f[10]), float(f[11]))
    elif f[0] == "auto":
        picks[(int(f[1]), int(f[4]))].append(f[5])
    elif f[0] == "serial":
        serial[int(f[4])].append(float(f[6]))
algs = ["alltoallv", "pairwise", "rma"]
print("| grid | ranks | Px×Py | alltoallv ms | pairwise ms | rma ms | fastest | transpose share | auto picked | msgs/transform | MiB/transform |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for n in sorted({k[1] for k in info}):
    for ranks in sorted({k[0] for k in info if k[1] == n}):
        px, py, msgs, nbytes = info[(ranks, n)]
        med = {a: statistics.median(t[(ranks, n, a)]) for a in algs}
        best = min(algs, key=lambda a: med[a])
        comm = statistics.median(share[(ranks, n, best)]) / med[best]
        p = collections.Counter(picks[(ranks, n)])
        picked = ", ".join(f"{a} {c}/{len(picks[(ranks, n)])}" for a, c in p.most_common())
        r = f"{ranks}*" if ranks > cores else f"{ranks}"
        print(f"| {n}³ | {r} | {px}×{py} | " + " | ".join(f"{med[a]:.2f}" for a in algs) +
              f" | {best} | {100 * comm:.0f}% | {picked} | {msgs:.0f} | {nbytes / 1048576:.2f} |")
if serial:
    print()
    print("serial FFTW 3D r2c+c2r (putmd::Fft3d, 1 rank) for reference: " +
          ", ".join(f"{n}³ {statistics.median(v):.2f} ms" for n, v in sorted(serial.items())))
EOF
