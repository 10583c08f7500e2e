#!/usr/bin/env bash
# The performance report's own checks (docs/performance.md): (1) how much of
# the wall time the named rows cover (Rest as % of the total; the rows add up
# to the total within 2% when Rest < 2%) on SYSTEM for 1, 2 and 4 ranks with
# --npme 0 and with one separate PME rank, writing a -perf JSON per run and
# the figures of tools/plot_perf.py; (2) the cost of the accounting:
# PUTMD_TIMING=minimal against the default, alternating, median of N runs.
# usage: [NSTEPS=S] [SKIP_COST=1] bench/perf_accounting.sh SYSTEM_DIR MDP OUT_DIR [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "$1" && pwd); mdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); out=$3; n=${4:-5}
mkdir -p "$out"; out=$(cd "$out" && pwd)
putmd=$here/../build/bin/putmd
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma
name=$(basename "$sys")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
run() { # ranks npme json
  if [ "$1" = 1 ]; then
    "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm r ${NSTEPS:+-nsteps $NSTEPS} -perf "$3" > /dev/null 2>&1
  else
    mpirun --oversubscribe -np "$1" "$putmd" run -nt 1 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm r ${NSTEPS:+-nsteps $NSTEPS} \
      --npme "$2" -perf "$3" > /dev/null 2>&1
  fi
}
echo "$name: rows against the total"
for layout in 1:0 2:0 2:1 4:0 4:1; do
  r=${layout%:*}; k=${layout#*:}
  json="$out/$name-np$r-pme$k.json"
  run "$r" "$k" "$json"
  $py - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
top = sum(s["seconds_avg"] for s in d["stages"] if s["parent"] is None)
print(f"  {d['ranks']['pp']} PP + {d['ranks']['pme']} PME ranks: named top-level rows {top:.3f} s of {d['wall_seconds']:.3f} s "
      f"(Rest {100 * d['rest_seconds'] / d['wall_seconds']:.2f}%), {d['performance']['ns_per_day']:.3f} ns/day")
PY
done
$py "$here/../tools/plot_perf.py" -o "$out" --prefix "$name" "$out/$name"-np*.json > /dev/null
[ -n "${SKIP_COST:-}" ] && exit 0
echo "$name: accounting cost, 1 rank, $n runs each (ns/day)"
full=""; minimal=""
for i in $(seq "$n"); do
  run 1 0 "$work/f.json"; full="$full $(awk '/^Performance:/ {print $2}' r.log)"
  PUTMD_TIMING=minimal run 1 0 "$work/m.json"; minimal="$minimal $(awk '/^Performance:/ {print $2}' r.log)"
done
median() { printf "%s\n" $@ | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mf=$(median $full); mm=$(median $minimal)
echo "  default:$full  median $mf"
echo "  minimal:$minimal  median $mm"
awk -v f="$mf" -v m="$mm" 'BEGIN {printf "  cost of the default accounting: %.2f%% of run time\n", 100 * (m - f) / m}'
