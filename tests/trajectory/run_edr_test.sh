#!/bin/sh
# A short MD run (water-spce-3k with NPT, and the triclinic peptide with
# position restraints) and check_edr.py on its NAME.edr against NAME.csv.
# usage: run_edr_test.sh PUTMD TEST_DATA
set -eu
putmd=$1; data=$2; here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
cat > md.mdp <<'MDP'
integrator = md
dt = 0.002
nsteps = 40
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
pcoupl = Parrinello-Rahman
tau-p = 2
ref-p = 1
compressibility = 4.5e-5
coulombtype = PME
DispCorr = EnerPres
nstcalcenergy = 10
nstenergy = 10
continuation = yes
MDP
"$putmd" run -p "$data/systems/water-spce-3k/topol.top" -c "$data/systems/water-spce-3k/conf.gro" -f md.mdp -deffnm water > water.out 2>&1
python3 "$here/check_edr.py" water.edr water.csv
printf 'define = -DPOSRES -DFLAT_BOTTOM_POSRES\nrefcoord-scaling = com\n' >> md.mdp
"$putmd" run -p "$data/systems/peptide-amber-triclinic/topol.top" -c "$data/systems/peptide-amber-triclinic/conf.gro" \
    -r "$data/systems/peptide-amber-triclinic/posre-ref-scaled.gro" -f md.mdp -deffnm peptide > peptide.out 2>&1
python3 "$here/check_edr.py" peptide.edr peptide.csv
