#!/usr/bin/env python3
"""-ntmpi (src/app/rank_layout.h): putmd started without mpirun starts its
ranks itself, and by default picks ranks or threads from measured times.

Checks:
  * -ntmpi measure times every layout of this process's cores (1 rank x C
    threads, ..., C ranks x 1 thread), names each layout's time in the log
    and runs the fastest: the log's layout line, its threads line and its
    domain decomposition (or none) agree with the smallest time;
  * the trials leave nothing in TMPDIR;
  * -ntmpi 2 gives a run byte-identical (energies, trajectory) to
    `mpirun -np 2 putmd run -nt 1` with the same arguments, and its log
    says how its ranks were chosen;
  * -ntmpi auto on a short run is one rank with threads and says why it
    did not measure; on a long one (stopped early by -maxh) it measures;
  * SIGINT while the layouts are timed stops them and leaves nothing in
    TMPDIR;
  * bad values, -ntmpi under mpirun, and a launcher that does not exist
    stop with a message naming what to change.
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


work = tempfile.mkdtemp(prefix="ntmpi-")
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
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_osc="^rdma",
           PUTMD_FFTW_PLAN="estimate", TMPDIR=scratch)
env.pop("PUTMD_LAYOUT", None)
inputs = ["-p", os.path.join(args.system, "topol.top"), "-c", os.path.join(args.system, "conf.gro"), "-f", mdp]
fixed = ["--comm", "p2p", "--fft-transpose", "pairwise", "-dlb", "no", "--npme", "0"]
cores = len(os.sched_getaffinity(0))


def run(name, extra, steps=20, mpirun=None, expect_fail=False, extra_env=None):
    out = os.path.join(work, name)
    cmd = (mpirun or []) + [args.putmd, "run"] + inputs + ["-deffnm", out, "-nsteps", str(steps)] + fixed + extra
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(env, **(extra_env or {})), timeout=600)
    if expect_fail:
        if r.returncode == 0:
            fail(f"{name}: succeeded, an error was expected\n{' '.join(cmd)}")
        return r.stdout + r.stderr
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}\n{' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return None
    with open(out + ".log") as f:
        return f.read()


def line(log, prefix):
    m = re.search("^" + prefix + ".*$", log, re.M)
    return m.group(0) if m else ""


# measured
log = run("measured", ["-ntmpi", "measure"])
if log is not None:
    lay = line(log, "layout: ")
    if cores < 2:
        if "not timed" not in lay or "1 core" not in lay:
            fail("one core: the layout line should say it did not time the layouts: " + lay)
    else:
        times = {(int(r), int(t)): float(ms) for r, t, ms in
                 re.findall(r"(\d+) ranks? x (\d+) threads? ([0-9.]+) ms", lay)}
        expected = {(r, cores // r) for r in range(1, cores + 1) if cores % r == 0}
        if set(times) != expected:
            fail(f"the layout line should time the layouts {sorted(expected)}: {lay}")
        else:
            best = min(times, key=lambda k: (times[k], k[0]))
            m = re.match(r"layout: (\d+) ranks? x (\d+) threads?, the fastest measured", lay)
            if not m or (int(m.group(1)), int(m.group(2))) != best:
                fail(f"the fastest layout {best} should run: {lay}")
            else:
                dd = line(log, "Domain decomposition: ")
                thr = line(log, "threads: ")
                if (best[0] > 1) != bool(dd) or (best[0] > 1 and not dd.startswith(f"Domain decomposition: {best[0]} ranks")):
                    fail(f"the run should have {best[0]} rank(s): '{dd}'")
                if not thr.startswith(f"threads: {best[1]} per rank"):
                    fail(f"the run should have {best[1]} thread(s) per rank: '{thr}'")
    left = os.listdir(scratch)
    if left:
        fail("the trials left files in TMPDIR: " + ", ".join(left))

# -ntmpi 2 against mpirun -np 2
if cores >= 2:
    a = run("ntmpi2", ["-ntmpi", "2"])
    b = run("mpirun2", ["-nt", "1"], mpirun=args.mpirun.split() + ["-np", "2"])
    if a is not None and b is not None:
        if "layout: -ntmpi 2: 2 ranks x 1 thread" not in a:
            fail("the -ntmpi 2 log should say how its ranks were chosen: " + line(a, "layout: "))
        if "layout: 2 ranks started by the launcher" not in b:
            fail("the mpirun log should say the launcher started its ranks: " + line(b, "layout: "))
        for ext in (".csv", ".trr"):
            if not filecmp.cmp(os.path.join(work, "ntmpi2" + ext), os.path.join(work, "mpirun2" + ext), shallow=False):
                fail(f"-ntmpi 2 and mpirun -np 2 differ in {ext}")

# auto on a short run
log = run("short", [])
if log is not None and not re.search(r"layout: 1 rank with threads, not timed .*-ntmpi auto.*a run of 20 steps", log):
    fail("a short run under -ntmpi auto should say why it did not measure: " + line(log, "layout: "))

# auto on a long run measures: 100,000 steps stopped by -maxh after about 2 s
if cores >= 2:
    log = run("long", ["-maxh", "0.0005"], steps=100000)
    if log is not None and not re.search(r"layout: \d+ ranks? x \d+ threads?, the fastest measured \(-ntmpi auto:", log):
        fail("a long run under -ntmpi auto should time the layouts: " + line(log, "layout: "))

# SIGINT while the layouts are timed: the trial stops, nothing is left in TMPDIR
if cores >= 2:
    import signal
    import time
    sig_tmp = os.path.join(work, "sigtmp")
    os.mkdir(sig_tmp)
    cmd = [args.putmd, "run"] + inputs + ["-deffnm", os.path.join(work, "sig"), "-nsteps", "100000", "-ntmpi",
                                          "measure"] + fixed
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(env, TMPDIR=sig_tmp))
    time.sleep(0.7)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    if os.listdir(sig_tmp):
        fail("SIGINT during the trials left files in TMPDIR: " + ", ".join(os.listdir(sig_tmp)))
    if "timing" in out and "the fastest measured" not in out and "stopped by SIGINT while timing the layouts" not in out:
        fail("SIGINT during the trials should be reported: " + out[-500:])

# errors
out = run("bad", ["-ntmpi", "two"], expect_fail=True)
if "-ntmpi 'two' is not a rank count; valid: auto, measure or 1..1024" not in out:
    fail("a bad -ntmpi should name the valid values: " + out[-500:])
out = run("launched", ["-ntmpi", "2"], mpirun=args.mpirun.split() + ["-np", "2"], expect_fail=True)
if "the launcher (mpirun) started 2 ranks and sets the layout" not in out:
    fail("-ntmpi under mpirun should be refused: " + out[-500:])
out = run("nolauncher", ["-ntmpi", "2"], expect_fail=True, extra_env={"MPIEXEC": os.path.join(work, "no-mpirun")})
if "cannot start the launcher '" + os.path.join(work, "no-mpirun") + "'" not in out:
    fail("a missing launcher should be named: " + out[-500:])

if failures:
    print(f"{len(failures)} check(s) failed; files in {work}", file=sys.stderr)
    sys.exit(1)
print("ntmpi: all checks passed")
