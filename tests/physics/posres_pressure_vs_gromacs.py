#!/usr/bin/env python3
"""The position-restraint virial in the pressure, against gmx_d.

The triclinic peptide with harmonic and flat-bottomed restraints (define =
-DPOSRES -DFLAT_BOTTOM_POSRES) and a reference (-r) in a 3% larger box, so
that refcoord-scaling no, all and com give very different restraint virials
(the pressures span -1000 to +4400 bar): the step-0 pressure of putmd_d and
gmx_d (same state, continuation) agree within 0.1 bar for each.
usage: posres_pressure_vs_gromacs.py PUTMD_D SYSTEM_DIR
"""
import csv
import os
import subprocess
import sys
import tempfile

putmd, system = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
env = dict(os.environ, GMX_MAXBACKUP="-1")
failures = []
top, conf, ref = (os.path.join(system, f) for f in ("topol.top", "conf.gro", "posre-ref-scaled.gro"))
with tempfile.TemporaryDirectory() as tmp:
    for rc in ("no", "all", "com"):
        mdp = os.path.join(tmp, rc + ".mdp")
        with open(mdp, "w") as f:
            f.write(f"""integrator = md
dt = 0.002
nsteps = 0
continuation = yes
constraints = none
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
DispCorr = EnerPres
define = -DPOSRES -DFLAT_BOTTOM_POSRES
refcoord-scaling = {rc}
nstcalcenergy = 1
nstenergy = 1
""")
        run = lambda cmd, **kw: subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, **kw)
        a = run([putmd, "run", "-p", top, "-c", conf, "-r", ref, "-f", mdp, "-deffnm", "p_" + rc, "-nt", "1"])
        b = run(["gmx_d", "grompp", "-f", mdp, "-c", conf, "-r", ref, "-p", top, "-o", f"g_{rc}.tpr", "-maxwarn", "3"])
        c = run(["gmx_d", "mdrun", "-nt", "1", "-s", f"g_{rc}.tpr", "-deffnm", "g_" + rc]) if b.returncode == 0 else b
        if a.returncode != 0 or c.returncode != 0:
            failures.append(f"{rc}: a run failed: {(a.stderr + b.stderr + c.stderr)[-2000:]}")
            continue
        run(["gmx_d", "energy", "-f", f"g_{rc}.edr", "-o", f"g_{rc}.xvg"], input="Pressure\n\n")
        pg = [float(l.split()[1]) for l in open(os.path.join(tmp, f"g_{rc}.xvg")) if l[0] not in "#@"][0]
        pp = float(list(csv.DictReader(open(os.path.join(tmp, f"p_{rc}.csv"))))[0]["Pressure"])
        print(f"refcoord-scaling {rc:3s}: pressure putmd_d {pp:.3f} bar, gmx_d {pg:.3f} bar, difference {pp - pg:+.3f}")
        if abs(pp - pg) > 0.1:
            failures.append(f"{rc}: pressure {pp} against GROMACS's {pg}")
for f in failures:
    print("FAILED: " + f)
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
