#!/usr/bin/env bash
# Parrinello-Rahman NPT against GROMACS: the same mdp (bench/validation/
# npt-pr.mdp: 22 ps, tau-p 1 ps, v-rescale) on the same input, putmd and
# Debian's gmx (mixed precision), each on 2 threads. Drops the first 2 ps and
# prints, for each engine, the mean density, the volume's standard
# deviation and the isothermal compressibility from the volume fluctuations,
# kappa = <dV^2> / (kB T <V>), and the ratios putmd / GROMACS.
# usage: bench/validation/parrinello_rahman.sh [SYSTEM_DIR]   (default: tests/data/systems/water-spce-12k)
# Bars (issue 19): density within 0.5 %, volume fluctuations within 15 %.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "${1:-$here/../../tests/data/systems/water-spce-12k}" && pwd)
putmd=${PUTMD:-$here/../../build/bin/putmd}
mdp=$here/npt-pr.mdp
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"; export GMX_MAXBACKUP=-1
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); system $sys"
"$putmd" run -nt 2 -p "$sys/topol.top" -c "$sys/conf.gro" -f "$mdp" -deffnm putmd > putmd.out 2>&1
gmx grompp -f "$mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o gmx.tpr -maxwarn 1 > grompp.log 2>&1
gmx mdrun -nt 2 -s gmx.tpr -deffnm gmx > gmx.out 2>&1
printf 'Volume\nDensity\n' | gmx energy -f gmx.edr -o gmx.xvg > energy.log 2>&1
python3 - putmd.csv gmx.xvg <<'PY'
import csv, statistics, sys
kB, T = 1.380649e-23, 300.0
def stats(t, v, d):
    keep = [i for i, x in enumerate(t) if x >= 2.0]
    v = [v[i] for i in keep]; d = [d[i] for i in keep]
    mv = statistics.fmean(v); var = statistics.pvariance(v)
    kappa = var * 1e-27 / (kB * T * mv) * 1e5  # nm^6 -> m^3 over m^3: 1/Pa, then 1/bar
    return statistics.fmean(d), var ** 0.5, kappa, len(v)
rows = list(csv.DictReader(open(sys.argv[1])))
p = stats([float(r["Time (ps)"]) for r in rows], [float(r["Volume"]) for r in rows], [float(r["Density"]) for r in rows])
t, v, d = [], [], []
for line in open(sys.argv[2]):
    if line[0] in "#@":
        continue
    a = line.split(); t.append(float(a[0])); v.append(float(a[1])); d.append(float(a[2]))
g = stats(t, v, d)
for name, s in (("putmd", p), ("GROMACS", g)):
    print(f"{name:8s} density {s[0]:.2f} kg/m^3, volume sd {s[1]:.4f} nm^3, kappa {s[2]:.3e} /bar ({s[3]} frames)")
print(f"density ratio {p[0] / g[0]:.4f} (bar: within 0.5 %), volume-fluctuation ratio {p[1] / g[1]:.3f} (bar: within 15 %)")
PY
