#!/usr/bin/env python3
"""MD with domain decomposition against the single-rank run (putmd_d).

Runs SYSTEM for STEPS steps with energies every step: once on one rank
(no mpirun), then under mpirun with each rank count. Checks:
  * every energy column of every step equals the single-rank value within
    TOL relative (floor 1 in the column's unit for terms near zero, 1000 bar for the
    pressure, a small difference of large terms);
  * for the same rank count and schedule, every backend writes byte-identical
    energy and trajectory (.trr, full precision) files. With --putmd-mixed
    these variants run in the mixed-precision build (the first backend runs
    in both builds): the comparison with one rank needs double precision,
    the bitwise one does not, and the mixed build's cluster kernels make the
    variants several times cheaper than the double build's pair lists
    (putmd_d's own backends are compared bit for bit in DomDecForces.*);
  * the direct halo schedule agrees with the staged one within 1e-12 (on
    every backend, or on those of --later-schedule-backends);
  * the log reports no collective call and no barrier in normal steps, over
    every phase, PME and the separate PME ranks included (with the
    collective transpose alltoallv, asked for by name, only the arena
    growths are checked);
  * with --npme K (several values allowed) the same with separate PME ranks,
    and every transpose algorithm of --transposes gives the same bits.
Exit status 0 when everything holds; messages name the step and column.
"""
import argparse
import csv
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--putmd-mixed", default=None,
               help="mixed-precision putmd: runs the bitwise comparisons between backends and transposes")
p.add_argument("--mpirun", required=True, help="mpirun command, e.g. 'mpiexec --oversubscribe'")
p.add_argument("--system", required=True)
p.add_argument("--coordinates", default="conf.gro")
p.add_argument("--ranks", default="2")
p.add_argument("--backends", default="p2p")
p.add_argument("--schedules", default="staged")
p.add_argument("--later-schedule-backends", default=None,
               help="backends that also run the schedules after the first (default: every backend of --backends)")
p.add_argument("--npme", default="0", help="PME layouts: separate PME rank counts, e.g. '0 1 2'")
p.add_argument("--transposes", default="pairwise", help="3D-FFT transpose algorithms, e.g. 'alltoallv pairwise rma'")
p.add_argument("--steps", type=int, default=100)
p.add_argument("--threads", type=int, default=1, help="threads per rank of the decomposed runs (-nt)")
p.add_argument("--tol", type=float, default=1e-9)
p.add_argument("--mdp", default="", help="extra mdp settings, ';'-separated key=value")
p.add_argument("--expect-log", action="append", default=[],
               help="BACKEND=REGEX: the log of every run with that --comm value must match REGEX (BACKEND *: every run)")
p.add_argument("--dd-args", default="", help="extra arguments of the decomposed runs, e.g. '-dlb yes'")
args = p.parse_args()

failures = []
# mixed against double precision: energies within 1e-4 relative, the
# pressure (a small difference of terms of ~1e5 kJ/mol, computed in single
# precision) within 5 bar (5e-3 of the 1000-bar floor)
MIXED_TOL, MIXED_PRESSURE_TOL = 1e-4, 5e-3


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg, file=sys.stderr)


def write_mdp(path):
    overrides = {"nstcalcenergy": "1", "nstenergy": "1", "nstlog": "0", "nstxout-compressed": "0",
                 "nstxout": "10", "nstvout": "10", "nstfout": "0", "gen-vel": "no", "continuation": "yes",
                 "ld-seed": "2718"}
    for item in filter(None, args.mdp.split(";")):
        k, v = item.split("=")
        overrides[k.strip()] = v.strip()
    lines = []
    with open(os.path.join(args.system, "md.mdp")) as f:
        for line in f:
            key = line.split(";")[0].split("=")[0].strip().lower().replace("_", "-")
            if key in overrides:
                continue
            lines.append(line.rstrip("\n"))
    lines += [f"{k} = {v}" for k, v in overrides.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(workdir, name, ranks, backend="p2p", schedule="staged", npme=0, transpose="pairwise", putmd=None):
    out = os.path.join(workdir, name)
    cmd = [putmd or args.putmd, "run", "-p", os.path.join(args.system, "topol.top"),
           "-c", os.path.join(args.system, args.coordinates), "-f", os.path.join(workdir, "run.mdp"),
           "-deffnm", out, "-nsteps", str(args.steps), "-nt", str(args.threads if ranks > 0 else 1)]
    if ranks > 0:
        cmd = args.mpirun.split() + ["-np", str(ranks)] + cmd + ["--comm", backend, "--halo", schedule,
                                                                   "--npme", str(npme), "--fft-transpose", transpose]
        cmd += args.dd_args.split()
        if "-dlb" not in args.dd_args.split():
            # load balancing from measured times (-dlb auto) would make the
            # runs compared bit for bit differ from run to run
            cmd += ["-dlb", "no"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_osc="^rdma",  # ^rdma: for shmem (docs/communication.md)
               # estimated FFT plans: the runs compared bit for bit are separate
               # processes, and measured plans may differ between two of them
               PUTMD_FFTW_PLAN="estimate")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}\n{' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
        return None
    return out


def energies(prefix):
    with open(prefix + ".csv") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return header, [[float(v) for v in row] for row in rows[1:]]


def compare(prefix, ref, tol, label, pressure_tol=None):
    h1, a = energies(prefix)
    h0, b = energies(ref)
    if h1 != h0 or len(a) != len(b):
        fail(f"{label}: columns or step counts differ ({len(a)} vs {len(b)} rows)")
        return 0.0
    worst = 0.0
    # the pressure is a small difference of large terms (kinetic energy and
    # virial, ~1e5 kJ/mol): compare it on the scale of 1000 bar
    floors = [1000.0 if h.startswith("Pres") else 1.0 for h in h0]
    for ra, rb in zip(a, b):
        for k, (x, y) in enumerate(zip(ra, rb)):
            rel = abs(x - y) / max(abs(y), floors[k])
            own_limit = pressure_tol is not None and h0[k].startswith("Pres")
            limit = pressure_tol if own_limit else tol
            if not own_limit:
                worst = max(worst, rel)
            if rel > limit:
                fail(f"{label}: step {int(rb[1])} {h0[k]}: {x!r} vs reference {y!r} (relative {rel:.2e} > {limit:.0e})")
                return worst
    return worst


def check_identical(out, reference, label, what):
    """Fails unless OUT's .csv and .trr are byte-identical to REFERENCE's."""
    differ = [ext for ext in (".csv", ".trr") if not filecmp.cmp(reference + ext, out + ext, shallow=False)]
    for ext in differ:
        fail(f"{label}: {ext} differs from {what}'s (must be bitwise identical)")
    if not differ:
        print(f"{label}: bitwise identical to {what}")


def check_log(prefix, label, transpose):
    with open(prefix + ".log") as f:
        text = f.read()
    m = re.search(r"Collective calls and barriers in normal steps \(every phase, PME included\): (\d+)"
                  r"(?: on the PP ranks, (\d+) on the PME ranks)?; arena growths outside search steps: (\d+)", text)
    if not m:
        fail(f"{label}: the log has no communication summary")
        return
    pp, pme, growths = int(m.group(1)), int(m.group(2) or 0), int(m.group(3))
    if (transpose != "alltoallv" and (pp != 0 or pme != 0)) or growths != 0:
        fail(f"{label}: {pp} collectives and barriers in normal steps on the PP ranks, {pme} on the PME ranks, "
             f"{growths} arena growths outside search steps")


work = tempfile.mkdtemp(prefix="putmd-ddmd-")
try:
    write_mdp(os.path.join(work, "run.mdp"))
    ref = run(work, "single", 0)
    if ref is None:
        sys.exit(1)
    backends = args.backends.split()
    schedules = args.schedules.split()
    transposes = args.transposes.split()
    for n in [int(v) for v in args.ranks.split()]:
      for npme in [int(v) for v in args.npme.split()]:
        if npme > n // 2:
            continue
        staged = None
        for schedule in schedules:
            first = None
            on = backends
            if schedule != schedules[0] and args.later_schedule_backends is not None:
                on = [b for b in backends if b in args.later_schedule_backends.split()]
            variants = [(b, transposes[0]) for b in on if not (npme > 0 and b == "shmem")]
            variants += [(backends[0], t) for t in transposes[1:]]
            # (build, backend, transpose): the first variant in double
            # (against one rank), then, with --putmd-mixed and more than one
            # variant, every variant in the mixed build (bitwise among them)
            runs = [("d", *variants[0])]
            if args.putmd_mixed and len(variants) > 1:
                runs += [("m", b, t) for b, t in variants]
            else:
                runs += [("d", b, t) for b, t in variants[1:]]
            first_mixed = None
            for build, backend, transpose in runs:
                label = (f"{os.path.basename(args.system)} {n} ranks npme {npme} {backend} {schedule} {transpose}"
                         + (" (mixed precision)" if build == "m" else ""))
                out = run(work, f"np{n}-pme{npme}-{backend}-{schedule}-{transpose}-{build}", n, backend, schedule,
                          npme, transpose, args.putmd_mixed if build == "m" else None)
                if out is None:
                    continue
                if n > 1:  # one rank under mpirun is the one-rank code path
                    check_log(out, label, transpose)
                for item in args.expect_log:
                    want_backend, regex = item.split("=", 1)
                    if want_backend in (backend, "*"):
                        with open(out + ".log") as f:
                            line = re.search(regex, f.read())
                        if not line:
                            fail(f"{label}: the log does not match {regex!r}")
                        else:
                            print(f"{label}: log: ...{line.group(0)}...")
                if build == "m" and first_mixed is None:
                    first_mixed = out
                    # the same physics as the double run, within what the
                    # precision and the mixed build's cluster pair list allow
                    if first is not None:
                        w = compare(out, first, MIXED_TOL, label + " vs double precision",
                                    pressure_tol=MIXED_PRESSURE_TOL)
                        print(f"{label}: the reference of the mixed-precision variants; "
                              f"largest relative difference of the energies from the double-precision run: {w:.2e}")
                elif build == "m":
                    check_identical(out, first_mixed, label, "the first mixed-precision variant")
                elif first is None:
                    first = out
                    worst = compare(out, ref, args.tol, label)
                    print(f"{label}: largest relative difference from one rank over {args.steps} steps: {worst:.2e}")
                    if schedule == "staged":
                        staged = out
                    elif staged is not None:
                        w = compare(out, staged, 1e-12, label + " vs staged")
                        print(f"{label}: direct vs staged: {w:.2e}")
                else:
                    check_identical(out, first, label, "the first variant")
finally:
    shutil.rmtree(work, ignore_errors=True)

print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
