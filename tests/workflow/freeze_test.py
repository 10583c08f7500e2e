#!/usr/bin/env python3
"""freezegrps / freezedim with an index file (-n), as GROMACS users set them.

The triclinic peptide in water, without constraints, 50 steps with
v-rescale: an index file names "Frozen" (the peptide's first 10 atoms and
the first 20 waters) frozen in x, y and z, and "Rail" (peptide atoms 11-20)
frozen in x only. Checks: every frozen coordinate of the final .gro equals
the starting one (to the .gro files' 3 decimals: 2e-3 nm after a wrap by a box vector), frozen velocity
components are 0, the atoms not frozen moved; the temperature is near 300 K
over the remaining degrees of freedom; an unknown group name is an error
naming the index file's groups.
usage: freeze_test.py --putmd PUTMD --system DIR [--mpirun CMD --ranks N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--system", required=True)
p.add_argument("--ranks", type=int, default=1)
p.add_argument("--mpirun", default="mpiexec --oversubscribe")
args = p.parse_args()
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
sysdir = os.path.abspath(args.system)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg)


def read_gro(path):
    lines = open(path).read().splitlines()
    n = int(lines[1])
    x = [[float(l[20 + 8 * k:28 + 8 * k]) for k in range(3)] for l in lines[2:2 + n]]
    v = [[float(l[44 + 8 * k:52 + 8 * k]) for k in range(3)] if len(l) >= 68 else None for l in lines[2:2 + n]]
    b = [float(t) for t in lines[2 + n].split()]
    b += [0.0] * (9 - len(b))
    box = [[b[0], b[3], b[4]], [b[5], b[1], b[6]], [b[7], b[8], b[2]]]  # rows a, b, c (GROMACS order)
    return x, v, box


def displacement(x1, x0, box):
    """x1 - x0 without whole box vectors (atoms are put in the box at search steps)."""
    d = [x1[k] - x0[k] for k in range(3)]
    for row in (2, 1, 0):  # lower-triangular: c, then b, then a
        s = round(d[row] / box[row][row])
        d = [d[k] - s * box[row][k] for k in range(3)]
    return d


MDP = """integrator = md
dt = 0.001
nsteps = 50
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
coulombtype = PME
nstenergy = 50
nstcalcenergy = 50
continuation = yes
freezegrps = Frozen Rail
freezedim = Y Y Y Y N N
"""
with tempfile.TemporaryDirectory() as work:
    x0, _, box = read_gro(os.path.join(sysdir, "conf.gro"))
    # the peptide: atoms before the first SOL residue
    lines = open(os.path.join(sysdir, "conf.gro")).read().splitlines()[2:2 + len(x0)]
    first_water = next(i for i, l in enumerate(lines) if l[5:10].strip() == "SOL")
    frozen = list(range(10)) + list(range(first_water, first_water + 60))
    rail = list(range(10, 20))
    with open(os.path.join(work, "index.ndx"), "w") as f:
        # (as gmx make_ndx writes it: System first; tc-grps = System needs it)
        f.write("[ System ]\n" + " ".join(str(a + 1) for a in range(len(x0))) + "\n[ Frozen ]\n"
                + " ".join(str(a + 1) for a in frozen) + "\n[ Rail ]\n" + "\n".join(str(a + 1) for a in rail)
                + "\n[ Other ]\n1 2 3\n")
    with open(os.path.join(work, "run.mdp"), "w") as f:
        f.write(MDP)
    cmd = [os.path.abspath(args.putmd), "run", "-p", f"{sysdir}/topol.top", "-c", f"{sysdir}/conf.gro", "-f", "run.mdp",
           "-n", "index.ndx", "-deffnm", "fr", "-nt", "1"]
    if args.ranks > 1:
        cmd = args.mpirun.split() + ["-np", str(args.ranks)] + cmd
    r = subprocess.run(cmd, cwd=work, env=ENV, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail(f"run failed:\n{r.stderr[-3000:]}")
    else:
        x1, v1, _ = read_gro(os.path.join(work, "fr.gro"))
        dx = [displacement(x1[a], x0[a], box) for a in range(len(x0))]
        # exact when the atom was not put back in the box; to the .gro's
        # rounding (2e-3 nm) when it was
        wrapped = [any(abs(x1[a][d] - x0[a][d]) > 1.0 for d in range(3)) for a in range(len(x0))]
        tol = [2e-3 if w else 1e-9 for w in wrapped]
        moved_frozen = [(a, d) for a in frozen for d in range(3) if abs(dx[a][d]) > tol[a]]
        moved_rail = [a for a in rail if abs(dx[a][0]) > tol[a]]
        if moved_frozen:
            fail(f"frozen coordinates moved: {moved_frozen[:5]}")
        if moved_rail:
            fail(f"x of the Rail atoms moved: {moved_rail[:5]}")
        if any(v1[a][d] != 0 for a in frozen for d in range(3)) or any(v1[a][0] != 0 for a in rail):
            fail("a frozen velocity component is not 0")
        rail_yz = sum(abs(dx[a][d]) for a in rail for d in (1, 2))
        free = [a for a in range(20, first_water)]
        free_moved = sum(abs(dx[a][d]) for a in free for d in range(3))
        if rail_yz == 0 or free_moved == 0:
            fail("the atoms not frozen did not move")
        rows = [l.split(",") for l in open(os.path.join(work, "fr.csv"))]
        t = float(rows[-1][rows[0].index("Temperature")])
        print(f"{args.ranks} rank(s): {len(frozen)} atoms frozen in x y z, {len(rail)} in x: unchanged; "
              f"final temperature {t:.1f} K")
        if abs(t - 300) > 40:
            fail(f"temperature {t:.1f} K")
    # an unknown group
    with open(os.path.join(work, "bad.mdp"), "w") as f:
        f.write(MDP.replace("freezegrps = Frozen Rail", "freezegrps = Frozen Rails"))
    bad = cmd[:]
    bad[bad.index("run.mdp")] = "bad.mdp"
    r = subprocess.run(bad, cwd=work, env=ENV, capture_output=True, text=True, timeout=300)
    want = "group 'Rails' is not in the index file index.ndx; its groups: System, Frozen, Rail, Other"
    if r.returncode == 0 or want not in r.stderr:
        fail(f"unknown group: expected '{want}', got:\n{r.stderr[-1500:]}")
    elif "bad.mdp:" not in r.stderr:
        fail("the unknown-group error does not name the mdp line")
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
