#!/usr/bin/env python3
"""The standard GROMACS protein-in-water workflow, run unchanged by putmd.

em.mdp, nvt.mdp, npt.mdp and md.mdp in this folder are the tutorial's files
(steepest descent; NVT with define = -DPOSRES, two coupling groups and
generated velocities; NPT with position restraints, Parrinello-Rahman and
refcoord_scaling = com; production MD with Parrinello-Rahman), including
the keys putmd does not need (reported as unknown, as grompp would).
Each stage starts from the previous one's final .gro (coordinates and
velocities), with -r as the tutorial's grompp -r. Steps are shortened with
-nsteps (the mdp files stay as users have them).

Checks: every stage exits 0; the NVT and NPT stages report "Position
Rest."; the restrained atoms' RMSD from their reference after NVT is below
0.05 nm; the NPT and MD stages change the volume (the barostat runs); the
final temperature is within 30 K of 300 K; steep lowers the potential.
With --ranks N > 1 every stage runs under mpirun (domain decomposition;
steep with decomposed force evaluations).
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--system", required=True, help="a protein system folder: topol.top, start.gro, posre.itp")
p.add_argument("--ranks", type=int, default=1)
p.add_argument("--mpirun", default="mpiexec --oversubscribe")
p.add_argument("--steps", type=int, default=200, help="MD steps per stage (steep: the same count)")
args = p.parse_args()
args.putmd = os.path.abspath(args.putmd)
here = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg, file=sys.stderr)


def read_gro(path):
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[1])
    x = [[float(l[20 + 8 * k:28 + 8 * k]) for k in range(3)] for l in lines[2:2 + n]]
    box = [float(v) for v in lines[2 + n].split()[:3]]
    return x, box


def last_row(csv_path):
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    return rows[0], rows[-1], rows


work = tempfile.mkdtemp(prefix="putmd-workflow-")
try:
    sysdir = os.path.abspath(args.system)
    for f in os.listdir(sysdir):
        if f.endswith((".top", ".itp", ".gro")):
            shutil.copy(os.path.join(sysdir, f), work)
    for m in ("em", "nvt", "npt", "md"):
        shutil.copy(os.path.join(here, m + ".mdp"), work)
    stages = [("em", "start.gro", None), ("nvt", "em.gro", "em.gro"), ("npt", "nvt.gro", "nvt.gro"),
              ("md", "npt.gro", None)]
    for name, conf, ref in stages:
        cmd = [args.putmd, "run", "-f", name + ".mdp", "-c", conf, "-p", "topol.top", "-deffnm", name,
               "-nsteps", str(args.steps), "-nt", "1"]
        if ref:
            cmd += ["-r", ref]
        if args.ranks > 1:
            cmd = args.mpirun.split() + ["-np", str(args.ranks)] + cmd
        r = subprocess.run(cmd, cwd=work, env=ENV, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            fail(f"stage {name}: exit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-3000:]}")
            break
        first, last, rows = last_row(os.path.join(work, name + ".csv"))
        print(f"stage {name}: {len(rows)} energy rows, Potential {float(last['Potential']):.1f}", end="")
        if name in ("nvt", "npt"):
            if "Position Rest." not in last:
                fail(f"stage {name}: no Position Rest. term")
            else:
                print(f", Position Rest. {float(last['Position Rest.']):.2f}", end="")
        if name in ("npt", "md"):
            v0, v1 = float(first["Volume"]), float(last["Volume"])
            print(f", volume {v0:.4f} -> {v1:.4f} nm^3", end="")
            if v0 == v1:
                fail(f"stage {name}: the volume did not change: the barostat did not run")
        if name == "em" and not float(last["Potential"]) < float(first["Potential"]):
            fail(f"stage em: the potential did not go down ({first['Potential']} -> {last['Potential']})")
        if name != "em":
            t = float(last["Temperature"])
            print(f", T {t:.1f} K", end="")
            if abs(t - 300) > 30:
                fail(f"stage {name}: temperature {t:.1f} K")
        print()
        if name == "nvt":
            restrained = []
            with open(os.path.join(work, "posre.itp")) as f:
                for line in f:
                    tok = line.split(";")[0].split()
                    if len(tok) >= 5 and tok[0].isdigit():
                        restrained.append(int(tok[0]) - 1)
            x, box = read_gro(os.path.join(work, "nvt.gro"))
            x0, _ = read_gro(os.path.join(work, "em.gro"))
            s = 0.0
            for a in restrained:
                for d in range(3):
                    dx = x[a][d] - x0[a][d]
                    dx -= box[d] * round(dx / box[d])
                    s += dx * dx
            rmsd = math.sqrt(s / len(restrained))
            print(f"  restrained atoms ({len(restrained)}): RMSD from the reference after NVT {rmsd:.4f} nm")
            if rmsd >= 0.05:
                fail(f"restrained atoms' RMSD {rmsd:.4f} nm after NVT (bar 0.05)")
finally:
    if os.environ.get("PUTMD_KEEP"):
        print("kept " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
