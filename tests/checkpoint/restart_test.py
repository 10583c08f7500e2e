#!/usr/bin/env python3
"""Checkpoints and continuation of putmd runs (the "never lose a simulation"
issue). Subcommands, each exiting non-zero with a message on failure:

  kill     RANKS   a run killed with SIGKILL at random moments and continued
                   from its last checkpoint each time ends with exactly the
                   outputs (.csv .xtc .trr .gro bytes) of an uninterrupted run
  ranks    A B     a run checkpointed on A ranks and continued on B ranks
                   matches the uninterrupted A-rank run's energies within
                   1e-6 relative over 50 steps (putmd_d)
  bad              truncated, corrupted, wrong-version and wrong-system
                   checkpoints are refused with a clear message
  diskfull         a checkpoint that cannot be written (file-size limit)
                   stops the run with a clear error and leaves the previous
                   checkpoint readable
  explode          overlapping atoms / too long a time step stop the run with
                   the atoms named and the last good frame written
  split    RANKS   NPT with Parrinello-Rahman (isotropic and anisotropic) and
                   position restraints (refcoord-scaling com) on the
                   triclinic box of 8 peptides (isotropic on one rank,
                   anisotropic on several): a run stopped at step 20 and continued
                   to 40 writes exactly the outputs of an uninterrupted run
                   (box velocity and restraint references carried over)
  dlb    N         dynamic load balancing (-dlb yes, deterministic loads)
                   on N ranks of the half-empty water box: stopped after a
                   balance and continued, the outputs of the uninterrupted
                   run (the boundaries and pending loads carried over)
  vv     N         velocity Verlet (md-vv) on N ranks: continued from a
                   checkpoint inside the run, the outputs of the
                   uninterrupted run (the constraint virial carried over)
  prune            (the mixed-precision putmd, whose cluster kernels prune
                   their pair list) NPT water stopped at step 20 and
                   continued to 40 writes the uninterrupted run's outputs,
                   and a continuation prunes as its checkpoint says: an
                   interval and radius written into the checkpoint are the
                   ones the continuation's log names and uses
  vsites N         the pdb2gmx -vsite hydrogens peptide (virtual sites built
                   across update groups) with energygrps on N ranks: stopped
                   at a pair-search step and continued, the outputs of the
                   uninterrupted run
"""
import argparse
import csv
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--mpirun", default="mpiexec --oversubscribe")
p.add_argument("--data", required=True, help="tests/data")
p.add_argument("what")
p.add_argument("args", nargs="*")
args = p.parse_args()

# PUTMD_FFTW_PLAN=estimate: the uninterrupted reference and the killed runs
# are separate processes, and measured FFT plans may differ between two
# processes (a continuation takes its checkpoint's plans, but the reference
# measures its own); estimated plans are the same in every process.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", PUTMD_FFTW_PLAN="estimate")
MDP = """integrator = md
dt = 0.002
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
ld-seed = 4242
nstcalcenergy = 5
nstenergy = 5
nstlog = 50
nstxout-compressed = 10
nstxout = 20
nstvout = 20
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
DispCorr = EnerPres
continuation = yes
"""


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def command(system, ranks, nsteps, extra=()):
    sysdir = os.path.join(args.data, "systems", system)
    cmd = [args.putmd, "run", "-p", f"{sysdir}/topol.top", "-c", f"{sysdir}/conf.gro", "-f", "run.mdp",
           "-nsteps", str(nsteps), "-nt", "1"] + list(extra)
    if "-dlb" not in extra:
        # balancing from measured times (-dlb auto) is not reproducible from
        # run to run; the dlb test balances deterministically
        cmd += ["-dlb", "no"]
    if ranks > 0:
        cmd = args.mpirun.split() + ["-np", str(ranks)] + cmd
    return cmd


def run(cwd, cmd, check=True, preexec=None):
    r = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=900, preexec_fn=preexec)
    if check and r.returncode != 0:
        fail(f"{' '.join(cmd)} in {cwd}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return r


def fresh_dir(root, name, mdp=MDP):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "run.mdp"), "w") as f:
        f.write(mdp)
    return d


def energies(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], {int(r[1]): [float(v) for v in r] for r in rows[1:]}


def kill_test(root, ranks):
    system, nsteps = "water-spce-3k", 150
    ref = fresh_dir(root, "uninterrupted")
    t0 = time.time()
    run(ref, command(system, ranks, nsteps, ["-cpt", "0"]))
    whole = time.time() - t0
    work = fresh_dir(root, "killed")
    rng = random.Random(int(os.environ.get("PUTMD_KILL_SEED", "12345")))
    kills, started = 0, time.time()
    while True:
        extra = ["-cpt", "0"] + (["-cpi", "md.cpt"] if os.path.exists(os.path.join(work, "md.cpt")) else [])
        proc = subprocess.Popen(command(system, ranks, nsteps, extra), cwd=work, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        # a random moment within the first 20-60% of an uninterrupted run's
        # time (start-up included), so kills happen on fast and slow machines
        delay = rng.uniform(0.2, 0.6) * whole
        try:
            out, err = proc.communicate(timeout=delay)
            if proc.returncode != 0:
                fail(f"a continuation failed (exit {proc.returncode}):\n{err.decode()[:3000]}")
            break
        except subprocess.TimeoutExpired:
            # the launcher and every rank (Open MPI gives ranks their own process
            # groups, so kill the whole session, as a batch system kills a job)
            subprocess.run(["pkill", "-9", "-s", str(proc.pid)])
            proc.communicate()
            for _ in range(100):
                if subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True).returncode != 0:
                    break
                time.sleep(0.1)
            kills += 1
        if time.time() - started > 600:
            fail("the killed run did not finish within 10 minutes of restarts")
    if kills == 0:
        fail("the run finished before it could be killed; nothing was tested")
    for ext in ("csv", "edr", "xtc", "trr", "gro"):
        a, b = os.path.join(ref, "md." + ext), os.path.join(work, "md." + ext)
        da, db = open(a, "rb").read(), open(b, "rb").read()
        if da != db:
            at = next((i for i in range(min(len(da), len(db))) if da[i] != db[i]), min(len(da), len(db)))
            fail(f"md.{ext} after {kills} kills and continuations differs from the uninterrupted run's from byte {at} "
                 f"(sizes {len(db)} and {len(da)})")
    print(f"{ranks or 1} rank(s): killed {kills} times at random moments, continued from the last checkpoint each "
          f"time; .csv .edr .xtc .trr .gro identical to the uninterrupted run")


RANKS_STEPS = 70  # the continuation runs 50 steps (two and a half pair searches) past the checkpoint


def ranks_test(root, a, b):
    system = "water-spce-12k"
    mdp = MDP.replace("nstcalcenergy = 5", "nstcalcenergy = 1").replace("nstenergy = 5", "nstenergy = 1")
    ref = fresh_dir(root, "uninterrupted", mdp)
    run(ref, command(system, a, RANKS_STEPS))
    cont = fresh_dir(root, "continued", mdp)
    run(cont, command(system, a, 20))
    run(cont, command(system, b, RANKS_STEPS, ["-cpi", "md.cpt"]))
    h0, e0 = energies(os.path.join(ref, "md.csv"))
    h1, e1 = energies(os.path.join(cont, "md.csv"))
    if h0 != h1 or sorted(e0) != sorted(e1):
        fail(f"the continued run's energy file has other columns or steps ({len(e1)} rows vs {len(e0)})")
    worst = 0.0
    for step in range(20, RANKS_STEPS + 1):
        for k, (x, y) in enumerate(zip(e1[step], e0[step])):
            floor = 1000.0 if h0[k].startswith("Pres") else 1.0
            rel = abs(x - y) / max(abs(y), floor)
            worst = max(worst, rel)
            if rel > 1e-6:
                fail(f"{a} -> {b} ranks: step {step} {h0[k]}: {x!r} vs uninterrupted {y!r} (relative {rel:.2e} > 1e-6)")
    print(f"checkpoint on {a or 1} rank(s) at step 20, continued on {b or 1}: steps 20-{RANKS_STEPS} within {worst:.2e} relative of the "
          f"uninterrupted run")


NPT_MDP = MDP.replace("tau-t = 0.1", "tau-t = 0.5") + """define = -DPOSRES
refcoord-scaling = com
pcoupl = Parrinello-Rahman
tau-p = 0.5
nstpcouple = 5
"""


def split_test(root, ranks):
    system = "peptide8-amber-triclinic"
    # one rank: isotropic; several: anisotropic (each case costs a minute of putmd_d)
    cases = (("isotropic", "pcoupltype = isotropic\nref-p = 1\ncompressibility = 4.5e-5\n"),
             ("anisotropic", "pcoupltype = anisotropic\nref-p = 1 1 1 0 0 0\n"
                             "compressibility = 4.5e-5 4.5e-5 4.5e-5 0 0 0\n"))
    for label, extra in cases[:1] if ranks <= 1 else cases[1:]:
        mdp = NPT_MDP + extra
        # (several ranks: the grid fixed, as the automatic choice depends on
        # the box, which the barostat changed by the continuation's start)
        dd = ["-dd", str(ranks), "1", "1"] if ranks > 1 else []
        ref = fresh_dir(root, "whole-" + label, mdp)
        run(ref, command(system, ranks, 40, ["-cpt", "0"] + dd))
        work = fresh_dir(root, "split-" + label, mdp)
        run(work, command(system, ranks, 20, ["-cpt", "0"] + dd))
        run(work, command(system, ranks, 40, ["-cpt", "0", "-cpi", "md.cpt"] + dd))
        for ext in ("csv", "edr", "trr", "gro"):
            da = open(os.path.join(ref, "md." + ext), "rb").read()
            db = open(os.path.join(work, "md." + ext), "rb").read()
            if da != db:
                at = next((i for i in range(min(len(da), len(db))) if da[i] != db[i]), min(len(da), len(db)))
                fail(f"{label}: md.{ext} of the run continued at step 20 (a pair-search step) differs from the uninterrupted run's from "
                     f"byte {at}")
        header, rows = energies(os.path.join(ref, "md.csv"))
        vol = header.index("Volume")
        if rows[0][vol] == rows[40][vol]:
            fail(f"{label}: the volume did not change; the barostat was not tested")
        if "Position Rest." not in header:
            fail(f"{label}: no Position Rest. column")
        print(f"{label}, {ranks or 1} rank(s): continued at step 20 (a pair-search step), outputs identical to the uninterrupted run "
              f"(volume {rows[0][vol]:.4f} -> {rows[40][vol]:.4f} nm^3)")


def vv_test(root, ranks):
    """Velocity Verlet (md-vv, SETTLE water, v-rescale): continued from a
    checkpoint written in the middle of the run (NAME_prev.cpt, its outputs
    cut back to it), the outputs of the uninterrupted run. The step it
    starts at reports a pressure with the constraint virial of the drift
    before the checkpoint, which the checkpoint carries (format 6)."""
    system = "water-spce-3k"
    mdp = MDP.replace("integrator = md\n", "integrator = md-vv\n")
    if "integrator = md-vv" not in mdp:
        fail("the test's mdp has no integrator line to change")
    nsteps = 40
    dd = ["-dd", str(ranks), "1", "1"] if ranks > 1 else []
    ref = fresh_dir(root, "uninterrupted", mdp)
    run(ref, command(system, ranks, nsteps, ["-cpt", "0"] + dd))
    work = fresh_dir(root, "continued", mdp)
    run(work, command(system, ranks, nsteps, ["-cpt", "0"] + dd))
    prev = os.path.join(work, "md_prev.cpt")
    if not os.path.exists(prev):
        fail("the run wrote no checkpoint before its last one (md_prev.cpt)")
    shutil.copy(prev, os.path.join(work, "mid.cpt"))
    run(work, command(system, ranks, nsteps, ["-cpt", "0", "-cpi", "mid.cpt"] + dd))
    log = open(os.path.join(work, "md.log")).read()
    m = re.search(r"continuing from mid.cpt at step (\d+)", log)
    if not m or not 0 < int(m.group(1)) < nsteps:
        fail("the continuation's log does not say it continued from a step inside the run")
    step = int(m.group(1))
    for ext in ("csv", "edr", "trr", "gro"):
        da = open(os.path.join(ref, "md." + ext), "rb").read()
        db = open(os.path.join(work, "md." + ext), "rb").read()
        if da != db:
            at = next((i for i in range(min(len(da), len(db))) if da[i] != db[i]), min(len(da), len(db)))
            fail(f"md-vv: md.{ext} of the run continued at step {step} differs from the uninterrupted run's from byte {at}")
    header, rows = energies(os.path.join(ref, "md.csv"))
    if step not in rows or "Pressure" not in header:
        fail(f"the energy file has no row with the pressure at step {step}, so the carried virial was not tested")
    print(f"md-vv, {ranks or 1} rank(s): continued at step {step} from a checkpoint inside the run, outputs identical to the "
          f"uninterrupted run (pressure there {rows[step][header.index('Pressure')]:.3f} bar)")


def vsites_test(root, ranks):
    """pdb2gmx -vsite hydrogens on several ranks (sites built across update
    groups), with energygrps: stopped at a pair-search step and continued,
    the outputs of the uninterrupted run."""
    system = "peptide-amber-vsites"
    mdp = MDP + "constraints = h-bonds\nenergygrps = Protein SOL\n"
    dd = ["-dd", str(ranks), "1", "1"] if ranks > 1 else []
    # stop at the second search (the automatic nstlist of this system): a
    # continuation searches at its first step
    probe = fresh_dir(root, "probe-vsites", mdp)
    run(probe, command(system, ranks, 0, ["-cpt", "0"] + dd))
    import re
    m = re.search(r"updated every (\d+) steps", open(os.path.join(probe, "md.log")).read())
    if not m:
        fail("vsites: no pair-list interval in the log")
    nstlist = int(m.group(1))
    ref = fresh_dir(root, "whole-vsites", mdp)
    run(ref, command(system, ranks, 2 * nstlist, ["-cpt", "0"] + dd))
    work = fresh_dir(root, "split-vsites", mdp)
    run(work, command(system, ranks, nstlist, ["-cpt", "0"] + dd))
    run(work, command(system, ranks, 2 * nstlist, ["-cpt", "0", "-cpi", "md.cpt"] + dd))
    for ext in ("csv", "edr", "gro"):
        da = open(os.path.join(ref, "md." + ext), "rb").read()
        db = open(os.path.join(work, "md." + ext), "rb").read()
        if da != db:
            fail(f"vsites: md.{ext} of the run continued at step {nstlist} differs from the uninterrupted run's")
    header, rows = energies(os.path.join(ref, "md.csv"))
    if "Coul-SR:Protein-SOL" not in header:
        fail("vsites: no energy-group columns")
    print(f"virtual-site hydrogens and energygrps, {ranks or 1} rank(s): continued at step {nstlist} (a pair-search "
          f"step), outputs identical to the uninterrupted run")


def dlb_test(root, ranks):
    """Dynamic load balancing on the half-empty water box: stopped at the
    second pair search (after a balance moved the boundaries) and continued,
    the outputs of the uninterrupted run. PUTMD_DLB_LOAD=atoms makes the
    balance deterministic (measured times differ from run to run)."""
    import re
    system = "water-slab-12k"
    env = dict(ENV, PUTMD_DLB_LOAD="atoms")
    dd = ["-dd", str(ranks), "1", "1", "-dlb", "yes"]

    def run_dlb(cwd, nsteps, extra=()):
        r = subprocess.run(command(system, ranks, nsteps, ["-cpt", "0"] + dd + list(extra)), cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            fail(f"dlb: exit {r.returncode} in {cwd}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")

    probe = fresh_dir(root, "probe-dlb")
    run_dlb(probe, 0)
    m = re.search(r"updated every (\d+) steps", open(os.path.join(probe, "md.log")).read())
    if not m:
        fail("dlb: no pair-list interval in the log")
    nstlist = int(m.group(1))
    ref = fresh_dir(root, "whole-dlb")
    run_dlb(ref, 3 * nstlist)
    work = fresh_dir(root, "split-dlb")
    run_dlb(work, 2 * nstlist)
    run_dlb(work, 3 * nstlist, ["-cpi", "md.cpt"])
    for ext in ("csv", "edr", "trr", "gro"):
        da = open(os.path.join(ref, "md." + ext), "rb").read()
        db = open(os.path.join(work, "md." + ext), "rb").read()
        if da != db:
            fail(f"dlb: md.{ext} of the run continued at step {2 * nstlist} differs from the uninterrupted run's")
    log = open(os.path.join(ref, "md.log")).read()
    m = re.search(r"Dynamic load balancing \(-dlb yes\).*?(\d+) balance\(s\).*at the end x: ([0-9. ]+)", log)
    if not m or int(m.group(1)) < 2 or len(set(m.group(2).split())) < 2:
        fail(f"dlb: the uninterrupted run did not move its boundaries: {m.group(0) if m else 'no summary'}")
    print(f"load balancing, {ranks} ranks: continued at step {2 * nstlist} after {m.group(1)} balances in all "
          f"(slab widths at the end {m.group(2).strip()} nm), outputs identical to the uninterrupted run")


def expect_error(cwd, cmd, texts, label):
    r = run(cwd, cmd, check=False)
    if r.returncode == 0:
        fail(f"{label}: the run was accepted")
    for t in texts:
        if t not in r.stderr:
            fail(f"{label}: the message does not say '{t}':\n{r.stderr[-2000:]}")
    print(f"{label}: refused: {r.stderr.strip().splitlines()[-1][:200]}")


def bad_test(root):
    d = fresh_dir(root, "bad")
    run(d, command("water-spce-3k", 0, 20))
    good = open(os.path.join(d, "md.cpt"), "rb").read()

    def variant(name, data):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        return ["-cpi", name, "-deffnm", "again"]

    expect_error(d, command("water-spce-3k", 0, 40, variant("truncated.cpt", good[: len(good) // 2])),
                 ["truncated.cpt", "truncated"], "truncated checkpoint")
    corrupted = bytearray(good)
    corrupted[len(good) // 3] ^= 0x10
    expect_error(d, command("water-spce-3k", 0, 40, variant("corrupted.cpt", bytes(corrupted))),
                 ["corrupted.cpt", "checksum"], "corrupted checkpoint")
    wrongversion = bytearray(good)
    wrongversion[8] = 99
    expect_error(d, command("water-spce-3k", 0, 40, variant("version.cpt", bytes(wrongversion))),
                 ["version.cpt", "format version 99"], "wrong-version checkpoint")
    expect_error(d, command("water-spce-12k", 0, 40, ["-cpi", "md.cpt", "-deffnm", "other"]),
                 ["md.cpt", "another system"], "checkpoint of another system")
    expect_error(d, command("water-spce-3k", 0, 40, variant("empty.cpt", b"")),
                 ["empty.cpt", "empty"], "empty file")
    # an output file changed after the checkpoint is not silently appended to
    with open(os.path.join(d, "md.csv"), "r+b") as f:
        f.seek(40)
        f.write(b"XXXX")
    expect_error(d, command("water-spce-3k", 0, 40, ["-cpi", "md.cpt"]),
                 ["md.csv", "does not match the checkpoint"], "changed output file")


def limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def diskfull_test(root):
    d = fresh_dir(root, "full", MDP.replace("nstxout-compressed = 10", "nstxout-compressed = 0")
                  .replace("nstxout = 20", "nstxout = 0").replace("nstvout = 20", "nstvout = 0"))
    # a run with a checkpoint (water-spce-12k: ~580 kB), then its continuation
    # under a 200 kB file-size limit, which the next checkpoint exceeds
    run(d, command("water-spce-12k", 0, 20, ["-deffnm", "big"]))
    before = open(os.path.join(d, "big.cpt"), "rb").read()
    r = subprocess.run(command("water-spce-12k", 0, 80, ["-cpt", "0", "-deffnm", "big", "-cpi", "big.cpt"]), cwd=d,
                       env=ENV, capture_output=True, text=True, timeout=600, preexec_fn=limit_file_size)
    if r.returncode == 0:
        fail("a run whose checkpoint exceeds the file-size limit succeeded")
    if r.returncode < 0:
        fail(f"putmd was killed by signal {-r.returncode} instead of reporting the error")
    if "big.cpt" not in r.stderr or "cannot write the checkpoint" not in r.stderr:
        fail(f"no clear message for the failed checkpoint write:\n{r.stderr[-2000:]}")
    if open(os.path.join(d, "big.cpt"), "rb").read() != before:
        fail("the last good checkpoint changed")
    leftovers = [f for f in os.listdir(d) if "putmd-tmp" in f]
    if leftovers:
        fail(f"temporary files left behind: {leftovers}")
    # the last good checkpoint is readable: the run continues from it
    run(d, command("water-spce-12k", 0, 40, ["-cpi", "big.cpt", "-deffnm", "big"]))
    print(f"file-size limit: {r.stderr.strip().splitlines()[-1][:240]}; the last good checkpoint is intact and the "
          f"run continues from it")


def explode_test(root):
    d = fresh_dir(root, "explode", MDP.replace("dt = 0.002", "dt = 0.02"))
    r = run(d, command("water-spce-3k", 0, 200), check=False)
    if r.returncode == 0:
        fail("a run with a 20 fs time step did not stop")
    if "atom " not in r.stderr or "step " not in r.stderr:
        fail(f"the error does not name the step and the atoms:\n{r.stderr[-2000:]}")
    if r.returncode < 0:
        fail(f"putmd crashed (signal {-r.returncode})")
    print(f"time step 20 fs: {r.stderr.strip().splitlines()[-1][:300]}")
    if not os.path.exists(os.path.join(d, "md_lastgood.gro")):
        fail("no last good frame (md_lastgood.gro) was written")
    # two water oxygens 0.01 nm apart
    sysdir = os.path.join(args.data, "systems", "water-spce-3k")
    lines = open(os.path.join(sysdir, "conf.gro")).read().splitlines()
    x, y, z = (float(lines[2][20 + 8 * k:28 + 8 * k]) for k in range(3))
    lines[5] = lines[5][:20] + f"{x + 0.01:8.3f}{y:8.3f}{z:8.3f}" + lines[5][44:]
    d2 = fresh_dir(root, "overlap")
    with open(os.path.join(d2, "overlap.gro"), "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = command("water-spce-3k", 0, 20)
    cmd[cmd.index("-c") + 1] = "overlap.gro"
    r = run(d2, cmd, check=False)
    if r.returncode == 0 or r.returncode < 0:
        fail(f"overlapping atoms: exit {r.returncode}\n{r.stderr[-2000:]}")
    if "atom 4 (SOL1 OW, molecule 2)" not in r.stderr or "atom 1 (SOL1 OW, molecule 1)" not in r.stderr:
        fail(f"overlapping atoms: the error does not name the atoms:\n{r.stderr[-2000:]}")
    print(f"overlapping atoms: {r.stderr.strip().splitlines()[-1][:300]}")


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def prune_test(root):
    # stopped at a pair-search step (nstlist 80 here): the mixed build's
    # cluster lists then hold the same pairs in the same order, so its float
    # sums repeat bit for bit; a continuation elsewhere searches afresh
    system, search, end = "water-spce-3k", 80, 100
    mdp = MDP + "pcoupl = c-rescale\ntau-p = 1.0\nref-p = 1\ncompressibility = 4.5e-5\nnstpcouple = 5\n"
    ref = fresh_dir(root, "whole", mdp)
    run(ref, command(system, 0, end, ["-cpt", "0"]))
    log = open(os.path.join(ref, "md.log")).read()
    chosen = re.search(r"dynamic pruning: inner list rlist ([0-9.]+) nm, pruned every (\d+) steps", log)
    if not chosen or f"updated every {search} steps" not in log:
        fail(f"the mixed-precision run chose no dynamic pruning or no nstlist {search}; the test needs both:\n"
             + log[:3000])
    work = fresh_dir(root, "split", mdp)
    run(work, command(system, 0, search, ["-cpt", "0"]))
    shutil.copy(os.path.join(work, "md.cpt"), os.path.join(root, "at-search.cpt"))
    run(work, command(system, 0, end, ["-cpt", "0", "-cpi", "md.cpt"]))
    for ext in ("csv", "edr", "trr", "gro"):
        if open(os.path.join(ref, "md." + ext), "rb").read() != open(os.path.join(work, "md." + ext), "rb").read():
            fail(f"md.{ext} of the mixed-precision run continued at step {search} differs from the uninterrupted "
                 "run's")
    header, rows = energies(os.path.join(ref, "md.csv"))
    vol = header.index("Volume")
    if rows[0][vol] == rows[end][vol]:
        fail("the volume did not change; the barostat was not tested")
    kept = (f"dynamic pruning as the run continued: inner list rlist {chosen.group(1)} nm, pruned every "
            f"{chosen.group(2)} steps")
    if kept not in open(os.path.join(work, "md.log")).read():
        fail(f"the continuation's log does not say '{kept}'")
    # the checkpoint's last body fields: the pruning interval (i32), the
    # inner radius (f64) and the kernel's i-rows per pruned group (i32),
    # then the checksum (u64)
    data = bytearray(open(os.path.join(root, "at-search.cpt"), "rb").read())
    if int.from_bytes(data[8:12], "little") < 8:
        fail("the checkpoint is older than format version 8")
    interval = int.from_bytes(data[-24:-20], "little", signed=True)
    rows_kernel = int.from_bytes(data[-12:-8], "little", signed=True)
    if interval != int(chosen.group(2)) or rows_kernel not in (2, 4):
        fail(f"the checkpoint's pruning interval {interval} (the run's {chosen.group(2)}) and i-rows {rows_kernel}")

    def edited_continuation(name, interval, radius, kernel_rows):
        d = bytearray(data)
        d[-24:-20] = interval.to_bytes(4, "little", signed=True)
        d[-20:-12] = struct.pack("<d", radius)
        d[-12:-8] = kernel_rows.to_bytes(4, "little", signed=True)
        d[-8:] = fnv1a64(bytes(d[20:-8])).to_bytes(8, "little")
        open(os.path.join(work, name), "wb").write(d)
        # the split run's outputs are cut back to the checkpoint by the
        # continuation, as after a crash
        run(work, command(system, 0, search + 10, ["-cpt", "0", "-cpi", name]))
        return open(os.path.join(work, "md.log")).read().split("continuing from")[-1]

    radius = float(chosen.group(1)) + 0.0501  # larger (safe), and not what a fresh choice gives
    text = edited_continuation("edited.cpt", 3, radius, rows_kernel)
    want = f"dynamic pruning as the run continued: inner list rlist {radius:.4f} nm, pruned every 3 steps"
    if want not in text:
        fail(f"the continuation does not prune as its checkpoint says (expected '{want}'):\n{text[-3000:]}")
    # sized for the other kernel's groups (AVX2 prunes 2 i-rows together,
    # the others 4): chosen afresh, and said so
    text = edited_continuation("other-kernel.cpt", 3, radius, 6 - rows_kernel)
    fresh = re.search(r"dynamic pruning: inner list rlist [0-9.]+ nm, pruned every \d+ steps", text)
    if "dynamic pruning chosen afresh" not in text or not fresh:
        fail(f"a checkpoint sized for {6 - rows_kernel} i-rows is not re-chosen for this kernel's {rows_kernel}:\n"
             f"{text[-3000:]}")
    print(f"mixed precision, NPT: continued at step {search} with outputs identical to the uninterrupted run (volume "
          f"{rows[0][vol]:.4f} -> {rows[end][vol]:.4f} nm^3; pruning every {chosen.group(2)} steps at "
          f"{chosen.group(1)} nm); a checkpoint saying every 3 steps at {radius:.4f} nm is followed")

root = tempfile.mkdtemp(prefix="putmd-ckpt-")
try:
    if args.what == "kill":
        kill_test(root, int(args.args[0]))
    elif args.what == "ranks":
        ranks_test(root, int(args.args[0]), int(args.args[1]))
    elif args.what == "bad":
        bad_test(root)
    elif args.what == "diskfull":
        diskfull_test(root)
    elif args.what == "explode":
        explode_test(root)
    elif args.what == "split":
        split_test(root, int(args.args[0]))
    elif args.what == "vv":
        vv_test(root, int(args.args[0]))
    elif args.what == "vsites":
        vsites_test(root, int(args.args[0]))
    elif args.what == "dlb":
        dlb_test(root, int(args.args[0]))
    elif args.what == "prune":
        prune_test(root)
    else:
        fail("unknown test " + args.what)
finally:
    if os.environ.get("PUTMD_KEEP"):
        print("kept " + root)
    else:
        shutil.rmtree(root, ignore_errors=True)
print("passed")
