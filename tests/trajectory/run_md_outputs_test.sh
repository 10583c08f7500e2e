#!/bin/sh
# run_md_outputs_test.sh PUTMD DATA_DIR — the outputs of a real `putmd run`
# load in the tools users analyse them with: the energy CSV in pandas, and the
# XTC and TRR in gmx check, MDAnalysis and MDTraj (Debian's python3).
set -e
putmd=$1
data=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/putmd-mdout-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cat > "$dir/md.mdp" <<MDP
integrator = md
dt = 0.002
nsteps = 20
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
ld-seed = 5
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
DispCorr = EnerPres
nstenergy = 5
nstxout-compressed = 5
nstxout = 10
nstvout = 10
nstfout = 10
MDP
"$putmd" run -p "$data/systems/water-spce-3k/topol.top" -c "$data/systems/water-spce-3k/conf.gro" \
    -f "$dir/md.mdp" -deffnm "$dir/md" > "$dir/run.out" 2>&1
/usr/bin/python3 -W ignore::DeprecationWarning - "$dir" <<'PY'
import subprocess, sys
import pandas as pd
import MDAnalysis as mda
import mdtraj
d = sys.argv[1]
ok = True
def check(cond, what):
    global ok
    print(("ok     " if cond else "FAILED ") + what)
    ok = ok and cond
e = pd.read_csv(f"{d}/md.csv")
check(len(e) == 5, f"pandas reads 5 energy rows (steps 0..20 every 5): {len(e)}")
for col in ("Time (ps)", "Step", "LJ (SR)", "Coulomb (SR)", "Coul. recip.", "Potential", "Kinetic En.", "Total Energy",
            "Conserved En.", "Temperature", "Pressure", "Box-X", "Volume", "Density"):
    check(col in e.columns, f"column {col!r}")
check(abs(e["Temperature"].mean() - 300) < 30, f"mean temperature near 300 K: {e['Temperature'].mean():.1f}")
check(list(e["Step"]) == [0, 5, 10, 15, 20], "steps 0, 5, 10, 15, 20")
u = mda.Universe(f"{d}/md.gro", f"{d}/md.xtc")
check(len(u.trajectory) == 5 and len(u.atoms) == 2931, f"MDAnalysis: xtc has 5 frames of 2931 atoms ({len(u.trajectory)})")
t = mdtraj.load(f"{d}/md.xtc", top=f"{d}/md.gro")
check(t.n_frames == 5 and t.n_atoms == 2931, f"MDTraj: xtc has 5 frames of 2931 atoms ({t.n_frames})")
r = mda.Universe(f"{d}/md.gro", f"{d}/md.trr")
check(len(r.trajectory) == 3, f"MDAnalysis: trr has 3 frames ({len(r.trajectory)})")
out = subprocess.run(["gmx", "check", "-f", f"{d}/md.xtc"], capture_output=True, text=True)
check("Coords" in out.stderr + out.stdout, "gmx check reads the xtc")
sys.exit(0 if ok else 1)
PY
