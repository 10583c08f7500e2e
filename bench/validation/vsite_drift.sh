#!/usr/bin/env bash
# Energy conservation at 4 fs with virtual-site hydrogens, against GROMACS:
# the same mdp (bench/validation/nve-4fs-vsites.mdp: NVE, dt 4 fs, 20 ps,
# all-bonds constraints, the pdb2gmx -vsite hydrogens peptide in TIP3P
# water) on the same input, putmd and Debian's gmx (mixed precision), each
# on 2 threads, three starts each. Prints the conserved-energy drift per
# atom of every run (linear fit after the first 2 ps), the medians of their
# magnitudes and the ratio.
# usage: bench/validation/vsite_drift.sh [SYSTEM_DIR]   (default: tests/data/systems/peptide-amber-vsites)
# Bar (issue 19): putmd's drift within 2x of GROMACS's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sys=$(cd "${1:-$here/../../tests/data/systems/peptide-amber-vsites}" && pwd)
putmd=${PUTMD:-$here/../../build/bin/putmd}
mdp=$here/nve-4fs-vsites.mdp
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"; export GMX_MAXBACKUP=-1
simd=$(grep -o 'avx512f' /proc/cpuinfo | head -1 || true)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); ${simd:-avx2}${PUTMD_SIMD:+ (PUTMD_SIMD=$PUTMD_SIMD)}; system $sys"
natoms=$(sed -n 2p "$sys/conf.gro" | tr -d ' ')
# the drift of one 20 ps run is noisy (GROMACS alone gives 1.2e-4 to 3.9e-4
# kJ/mol/ps per atom on this input): three starts with velocities drawn
# at 300 K (gen-seed 1, 2, 3), each engine its own, medians of |drift|
for seed in 1 2 3; do
    { cat "$mdp"; printf 'gen-vel = yes\ngen-temp = 300\ngen-seed = %s\n' "$seed"; } > "nve-$seed.mdp"
    "$putmd" run -nt 2 -p "$sys/topol.top" -c "$sys/conf.gro" -f "nve-$seed.mdp" -deffnm "putmd-$seed" > "putmd-$seed.out" 2>&1
    gmx grompp -f "nve-$seed.mdp" -c "$sys/conf.gro" -p "$sys/topol.top" -o "gmx-$seed.tpr" > "grompp-$seed.log" 2>&1
    gmx mdrun -nt 2 -s "gmx-$seed.tpr" -deffnm "gmx-$seed" > "gmx-$seed.out" 2>&1
    python3 "$here/analyze.py" drift "putmd-$seed.csv" "gmx-$seed.edr" "$natoms" 2 | sed "s/^/seed $seed: /" | tee -a drift.txt
done
python3 - drift.txt <<'PY'
import re, statistics, sys
d = {"putmd": [], "GROMACS": []}
for line in open(sys.argv[1]):
    m = re.match(r"seed \d+: (\w+): drift (\S+)", line)
    if m:
        d[m.group(1)].append(abs(float(m.group(2))))
p, g = statistics.median(d["putmd"]), statistics.median(d["GROMACS"])
print(f"median |drift| kJ/mol/ps per atom: putmd {p:.3e}, GROMACS {g:.3e}; ratio {p / g:.2f} (bar: at most 2)")
PY
