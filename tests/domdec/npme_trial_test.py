#!/usr/bin/env python3
"""--npme auto|measure|estimate (src/app/npme_trial.h) on 2 ranks.

Checks:
  * --npme measure times npme 0 and npme 1 at start-up, names both times
    in the log and takes the faster one;
  * the trials' steps are thrown away: the run's energies and trajectory
    are byte-identical to a run given the chosen count;
  * the trials leave nothing in TMPDIR (their scratch directories);
  * --npme auto on a short run takes the estimate and says why it did not
    measure;
  * a continuation (-cpi) with --npme auto on as many ranks keeps the
    layout of the run it continues (here npme 1, which the estimate would
    not choose on 2 ranks of this system).
Exit status 0 when everything holds.
"""
import argparse
import filecmp
import os
import re
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--mpirun", required=True)
p.add_argument("--system", required=True)
args = p.parse_args()

failures = []


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg, file=sys.stderr)


work = tempfile.mkdtemp(prefix="npme-trial-")
scratch = os.path.join(work, "tmp")
os.mkdir(scratch)
mdp = os.path.join(work, "run.mdp")
with open(os.path.join(args.system, "md.mdp")) as f:
    lines = [l for l in f if l.split(";")[0].split("=")[0].strip().lower().replace("_", "-")
             not in ("nstenergy", "nstcalcenergy", "nstxout", "nstvout", "gen-vel", "continuation", "ld-seed")]
lines += ["nstenergy = 5\n", "nstcalcenergy = 5\n", "nstxout = 10\n", "nstvout = 10\n", "gen-vel = no\n",
          "continuation = yes\n", "ld-seed = 2718\n"]
with open(mdp, "w") as f:
    f.writelines(lines)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_osc="^rdma", PUTMD_FFTW_PLAN="estimate",
           TMPDIR=scratch)


def run(name, *extra, steps=20):
    out = os.path.join(work, name)
    cmd = args.mpirun.split() + ["-np", "2", args.putmd, "run", "-p", os.path.join(args.system, "topol.top"),
                                 "-c", os.path.join(args.system, "conf.gro"), "-f", mdp, "-deffnm", out,
                                 "-nsteps", str(steps), "-nt", "1", "--comm", "p2p", "--fft-transpose", "pairwise",
                                 "-dlb", "no"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}\n{' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return None, ""
    with open(out + ".log") as f:
        return out, f.read()


def layout(log):
    # the last run's (an appending continuation's log holds both runs')
    found = re.findall(r"PME: (on every rank \(--npme 0\)|(\d+) separate PME ranks? \(--npme \d+\))", log)
    if not found:
        return None
    return 0 if not found[-1][1] else int(found[-1][1])


# measured
out, log = run("measured", "--npme", "measure")
if out:
    m = re.search(r"measured at start-up: 40 steps of MD \(after a warm-up\) with npme 0 took ([0-9.]+) ms per "
                  r"step, with npme 1 ([0-9.]+) ms", log)
    if not m:
        fail("the log of --npme measure does not give the two trials' times:\n"
             + "\n".join(l for l in log.splitlines() if l.startswith("PME")))
    else:
        t0, t1 = float(m.group(1)), float(m.group(2))
        chosen = layout(log)
        expected = 1 if t1 < t0 else 0
        print(f"trials: npme 0 {t0} ms, npme 1 {t1} ms per step; chosen npme {chosen}")
        if t0 <= 0 or t1 <= 0:
            fail(f"a trial time is not positive: {t0}, {t1}")
        if chosen != expected:
            fail(f"--npme measure chose npme {chosen}, the faster trial was npme {expected}")
        # the same run given the chosen count: the trials left no trace
        ref, _ = run("given", "--npme", str(chosen))
        if ref:
            for ext in (".csv", ".trr"):
                if not filecmp.cmp(out + ext, ref + ext, shallow=False):
                    fail(f"{ext}: the measured run differs from the run with --npme {chosen}")
    left = os.listdir(scratch)
    if left:
        fail(f"the trials left {left} in TMPDIR")

# auto on a short run: the estimate, and why
out, log = run("short", "--npme", "auto")
if out and not re.search(r"not measured: the run's 20 steps are fewer than 20 times the trials' 100", log):
    fail("--npme auto on 20 steps does not say why it kept the estimate:\n"
         + "\n".join(l for l in log.splitlines() if l.startswith("PME")))
if out and layout(log) != 0:
    fail(f"the estimate chose npme {layout(log)} on 2 ranks of this system; the continuation check below needs 0")

# continuation keeps the layout of the run it continues
first, log = run("first", "--npme", "1", "-cpt", "0")
if first:
    cont, log = run("first", "--npme", "auto", "-cpi", first + ".cpt", steps=40)
    if cont:
        if layout(log) != 1:
            fail(f"the continuation with --npme auto runs npme {layout(log)}, the run it continues had 1")
        if "the layout of the run" not in log or "continues (1 PP and 1 PME ranks)" not in log:
            fail("the continuation's log does not say it kept the layout of the run it continues")

if failures:
    print(f"{len(failures)} check(s) failed; outputs in {work}", file=sys.stderr)
    sys.exit(1)
print("all --npme mode checks passed")
