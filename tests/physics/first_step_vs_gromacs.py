#!/usr/bin/env python3
"""The first step of a run from unconstrained input (continuation = no)
against gmx_d: the start is constrained, and v(-dt/2) is the velocity whose
step back lands on the constraints (as GROMACS's do_constrain_first), so
the step-0 temperature and pressure are GROMACS's: within 1e-3 K and 0.1
bar on SPC/E (SETTLE), TIP4P and TIP5P water (SETTLE and virtual sites).
usage: first_step_vs_gromacs.py PUTMD_D DATA_DIR
"""
import csv
import os
import subprocess
import sys
import tempfile

putmd, data = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
env = dict(os.environ, GMX_MAXBACKUP="-1")
failures = []
MDP = """integrator = md
dt = 0.002
nsteps = 0
continuation = no
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
DispCorr = EnerPres
nstcalcenergy = 1
nstenergy = 1
"""
with tempfile.TemporaryDirectory() as tmp:
    mdp = os.path.join(tmp, "zero.mdp")
    open(mdp, "w").write(MDP)
    for system in ("water-spce-3k", "water-tip4p", "water-tip5p"):
        top, conf = (os.path.join(data, "systems", system, f) for f in ("topol.top", "conf.gro"))
        run = lambda cmd, **kw: subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, **kw)
        a = run([putmd, "run", "-p", top, "-c", conf, "-f", mdp, "-deffnm", "p_" + system, "-nt", "1"])
        b = run(["gmx_d", "grompp", "-f", mdp, "-c", conf, "-p", top, "-o", f"g_{system}.tpr", "-maxwarn", "2"])
        c = run(["gmx_d", "mdrun", "-nt", "1", "-s", f"g_{system}.tpr", "-deffnm", "g_" + system]) if b.returncode == 0 else b
        if a.returncode != 0 or c.returncode != 0:
            failures.append(f"{system}: a run failed: {(a.stderr + b.stderr + c.stderr)[-2000:]}")
            continue
        run(["gmx_d", "energy", "-f", f"g_{system}.edr", "-o", f"g_{system}.xvg"], input="Temperature\nPressure\n\n")
        tg, pg = [[float(v) for v in l.split()[1:3]] for l in open(os.path.join(tmp, f"g_{system}.xvg")) if l[0] not in "#@"][0]
        row = list(csv.DictReader(open(os.path.join(tmp, f"p_{system}.csv"))))[0]
        tp, pp = float(row["Temperature"]), float(row["Pressure"])
        print(f"{system:14s}: T putmd_d {tp:.4f} K, gmx_d {tg:.4f} K; P putmd_d {pp:.3f} bar, gmx_d {pg:.3f} bar")
        if abs(tp - tg) > 1e-3 or abs(pp - pg) > 0.1:
            failures.append(f"{system}: step 0 differs from GROMACS's")
for f in failures:
    print("FAILED: " + f)
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
