#!/usr/bin/env python3
"""Steepest descent on several ranks against one rank (putmd_d).

Runs `putmd run` with integrator steep on SYSTEM's start.gro for STEPS
steps on one rank, then under mpirun with each rank count and backend.
The decomposed runs evaluate forces over the domains and take the
minimiser's decisions on every rank; checks:
  * the accepted steps (rows of NAME.csv) are the same steps as on one rank;
  * each accepted step's Potential and Fmax agree with one rank within TOL
    relative (sums in another order: rounding only);
  * for one rank count, every backend writes a byte-identical NAME.csv.
"""
import argparse
import csv
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--mpirun", required=True)
p.add_argument("--system", required=True)
p.add_argument("--ranks", default="2 3")
p.add_argument("--backends", default="p2p shm")
p.add_argument("--steps", type=int, default=30)
p.add_argument("--tol", type=float, default=1e-9)
args = p.parse_args()
failures = []
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_osc="^rdma")


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg, file=sys.stderr)


def rows(path):
    with open(path) as f:
        return [(int(r["Step"]), float(r["Potential"]), float(r["Fmax"])) for r in csv.DictReader(f)]


work = tempfile.mkdtemp(prefix="putmd-dd-em-")
try:
    with open(os.path.join(work, "em.mdp"), "w") as f:
        f.write("integrator = steep\nnsteps = %d\nemtol = 10\nemstep = 0.01\ncutoff-scheme = Verlet\n"
                "coulombtype = PME\nrcoulomb = 1.0\nrvdw = 1.0\nDispCorr = EnerPres\n" % args.steps)
    base = [args.putmd, "run", "-f", "em.mdp", "-c", os.path.join(args.system, "start.gro"), "-p",
            os.path.join(args.system, "topol.top"), "-nt", "1"]
    r = subprocess.run(base + ["-deffnm", "one"], cwd=work, env=ENV, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail("one rank: exit %d\n%s" % (r.returncode, r.stderr[-2000:]))
        raise SystemExit
    ref = rows(os.path.join(work, "one.csv"))
    print("one rank: %d accepted steps, Potential %.6f -> %.6f" % (len(ref) - 1, ref[0][1], ref[-1][1]))
    for n in args.ranks.split():
        first = None
        for b in args.backends.split():
            name = "np%s-%s" % (n, b)
            cmd = args.mpirun.split() + ["-np", n] + base + ["-deffnm", name, "--comm", b]
            r = subprocess.run(cmd, cwd=work, env=ENV, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                fail("%s: exit %d\n%s" % (name, r.returncode, r.stderr[-2000:]))
                continue
            got = rows(os.path.join(work, name + ".csv"))
            if [g[0] for g in got] != [s[0] for s in ref]:
                fail("%s: accepted steps %s, one rank %s" % (name, [g[0] for g in got], [s[0] for s in ref]))
                continue
            worst = 0.0
            for g, s in zip(got, ref):
                for k in (1, 2):
                    worst = max(worst, abs(g[k] - s[k]) / max(abs(s[k]), 1.0))
            print("%s: %d accepted steps, largest relative difference from one rank %.2e" % (name, len(got) - 1, worst))
            if worst > args.tol:
                fail("%s: Potential/Fmax differ from one rank by %.2e (tolerance %.0e)" % (name, worst, args.tol))
            path = os.path.join(work, name + ".csv")
            if first is None:
                first = path
            elif not filecmp.cmp(first, path, shallow=False):
                fail("%s: NAME.csv differs from %s (backends must give the same bits)" % (name, os.path.basename(first)))
finally:
    shutil.rmtree(work, ignore_errors=True)
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
