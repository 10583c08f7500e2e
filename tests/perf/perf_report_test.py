#!/usr/bin/env python3
"""The performance report of `putmd run` (cycle and time accounting,
imbalance, communication, -perf JSON, tools/plot_perf.py). Subcommands,
each exiting non-zero with a message on failure:

  report RANKS  a short MD of water-spce-3k (RANKS 0: no mpirun, one rank)
                with -perf: the log's accounting table has the rows, the
                top-level rows and Rest add up to Total within 2%, sub-rows
                do not exceed their parent, the load-imbalance line and the
                performance line (ns/day, hour/ns, atom-steps/s) are there,
                the communication table has the histogram columns (with
                ranks), the JSON validates against docs/perf-schema.json and
                agrees with the log, and tools/plot_perf.py writes its PNGs
  pme           the same water on 3 ranks with one separate PME rank and on 4
                with two: the log's PME-rank rows and the PME ranks' own
                communication table, which agrees with the JSON (validated);
                one PME rank sends exactly one force message per PP rank and
                computation (no traffic among PME ranks), two add their
                transposes and redistribution among themselves
  imbalance     the same water with the molecules of the upper half in x
                thinned to one in eight (box unchanged), on 2 ranks with -dd 2 1 1: the
                imbalance line exceeds the hint threshold and the hint is
                printed (and is in the JSON)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--putmd", required=True)
p.add_argument("--mpirun", default="mpiexec --oversubscribe")
p.add_argument("--data", required=True, help="tests/data")
p.add_argument("--source", required=True, help="the source tree (docs/perf-schema.json, tools/plot_perf.py)")
p.add_argument("what")
p.add_argument("args", nargs="*")
args = p.parse_args()

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_osc="^rdma")
ENV.pop("PUTMD_TIMING", None)
MDP = """integrator = md
dt = 0.002
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
ld-seed = 4242
nstcalcenergy = 5
nstenergy = 10
nstlog = 10
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
continuation = yes
"""
THRESHOLD = 5.0  # kImbalanceHintPercent in src/timing/perf_report.h
WATER = os.path.join(args.data, "systems", "water-spce-3k")


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def run_md(cwd, ranks, top, gro, nsteps, extra=()):
    with open(os.path.join(cwd, "run.mdp"), "w") as f:
        f.write(MDP)
    cmd = [args.putmd, "run", "-p", top, "-c", gro, "-f", "run.mdp", "-nsteps", str(nsteps), "-nt", "1",
           "-deffnm", "md", "-perf", "perf.json", "-cpt", "-1"] + list(extra)
    if ranks > 0:
        cmd = args.mpirun.split() + ["-np", str(ranks)] + cmd
    r = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    with open(os.path.join(cwd, "md.log")) as f:
        log = f.read()
    with open(os.path.join(cwd, "perf.json")) as f:
        perf = json.load(f)
    return log, perf


def accounting_rows(log):
    """(name, depth, wall seconds) of the PP table's rows, then Rest and Total."""
    at = log.find("R E A L   C Y C L E   A N D   T I M E   A C C O U N T I N G")
    if at < 0:
        fail("no cycle and time accounting table in the log")
    lines = log[at:].splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(" Activity")), None)
    if start is None:
        fail("accounting table without its header line")
    rows = []
    for line in lines[start + 2:]:
        if line.startswith(" ---"):
            continue
        name = line[1:29]
        nums = line[29:].split()
        stripped = name.strip()
        depth = (len(name) - len(name.lstrip(" "))) // 2
        if stripped in ("Rest", "Total"):
            rows.append((stripped, 0, float(nums[0])))
            if stripped == "Total":
                return rows
        else:
            if len(nums) != 9:
                fail(f"accounting row with {len(nums)} numbers, expected 9: {line!r}")
            rows.append((stripped, depth, float(nums[3])))
    fail("accounting table without a Total row")


def check_sums(rows):
    total = rows[-1][2]
    top = [w for n, d, w in rows[:-1] if d == 0]
    names = [n for n, _, _ in rows]
    for want in ("Force", "Nonbonded", "PME mesh", "Update", "Constraints", "Rest", "Total"):
        if want not in names:
            fail(f"accounting table lacks the row {want!r}: {names}")
    if total <= 0:
        fail(f"Total {total} s")
    if abs(sum(top) - total) > 0.02 * total + 0.0015:  # 2%, and the rounding of the printed values
        fail(f"top-level rows and Rest add up to {sum(top):.3f} s, Total {total:.3f} s")
    rest = dict((n, w) for n, d, w in rows)["Rest"]
    if rest < -0.01 * total:
        fail(f"Rest {rest} s is negative: a stage counted twice")
    # sub-rows against their parent (the row above at lower depth)
    for i, (n, d, w) in enumerate(rows[:-2]):
        children = []
        for n2, d2, w2 in rows[i + 1:-2]:
            if d2 <= d:
                break
            if d2 == d + 1:
                children.append(w2)
        if children and sum(children) > 1.02 * w + 0.0015:
            fail(f"the rows under {n!r} add up to {sum(children):.3f} s, more than its {w:.3f} s")
    return total


def imbalance_of(log):
    m = re.search(r"Load imbalance: ([0-9.]+)% of the wall time lost", log)
    if not m:
        fail("no load-imbalance line in the log")
    return float(m.group(1))


def validate(perf):
    import jsonschema
    with open(os.path.join(args.source, "docs", "perf-schema.json")) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(perf, schema)
    except jsonschema.ValidationError as e:
        fail(f"perf.json does not validate against docs/perf-schema.json: {e.message} at {list(e.absolute_path)}")


def report(ranks):
    with tempfile.TemporaryDirectory(prefix="putmd_perf_") as d:
        log, perf = run_md(d, ranks, os.path.join(WATER, "topol.top"), os.path.join(WATER, "conf.gro"), 20)
        rows = accounting_rows(log)
        total = check_sums(rows)
        lost = imbalance_of(log)
        m = re.search(r"^Performance: ([0-9.]+) ns/day ([0-9.]+) hour/ns ([0-9.e+]+) atom-steps/s$", log, re.M)
        if not m:
            fail("no performance line with ns/day, hour/ns and atom-steps/s")
        validate(perf)
        npp = max(1, ranks)
        if perf["ranks"]["pp"] != npp or perf["steps"] != 20 or perf["atoms"] != 2931:
            fail(f"JSON ranks/steps/atoms {perf['ranks']} {perf['steps']} {perf['atoms']}")
        if abs(perf["wall_seconds"] - total) > 0.0015 + 1e-3 * total:
            fail(f"JSON wall_seconds {perf['wall_seconds']} against the log's Total {total}")
        if abs(perf["imbalance"]["lost_percent"] - lost) > 0.06:
            fail(f"JSON lost_percent {perf['imbalance']['lost_percent']} against the log's {lost}")
        for s in perf["stages"]:
            if len(s["per_rank_seconds"]) != npp:
                fail(f"stage {s['key']}: {len(s['per_rank_seconds'])} per-rank times on {npp} ranks")
            if not s["seconds_min"] - 1e-12 <= s["seconds_avg"] <= s["seconds_max"] + 1e-12:
                fail(f"stage {s['key']}: min/avg/max out of order")
        keys = [s["key"] for s in perf["stages"]]
        for k in ("force", "nonbonded", "pme_mesh", "update", "constraints"):
            if k not in keys:
                fail(f"JSON stages lack {k}: {keys}")
        if ranks > 1:
            if "energy_reduction" not in keys:
                fail(f"no energy_reduction stage on {ranks} ranks: {keys}")
            if "C O M M U N I C A T I O N" not in log or "16-64KiB" not in log:
                fail("no communication table with the message-size histogram in the log")
            phases = {ph["phase"]: ph for ph in perf["communication"]["phases"]}
            for ph in phases.values():
                if sum(ph["histogram"]) != ph["messages"]:
                    fail(f"phase {ph['phase']}: histogram sums to {sum(ph['histogram'])}, {ph['messages']} messages")
                if ph["messages"] and ph["largest_message_bytes"] < ph["mean_message_bytes"]:
                    fail(f"phase {ph['phase']}: largest message below the mean")
            halo = [ph for name, ph in phases.items() if ph["messages"] > 0]
            if not halo:
                fail("no messages counted in any phase on several ranks")
        elif perf["imbalance"]["hint"] is not None:
            fail("an imbalance hint on one rank")
        out = os.path.join(d, "figs")
        r = subprocess.run([sys.executable, os.path.join(args.source, "tools", "plot_perf.py"), "-o", out,
                            os.path.join(d, "perf.json")], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            fail(f"tools/plot_perf.py: exit {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}")
        for name in ("perf-stages.png", "perf-scaling.png", "perf-messages.png"):
            path = os.path.join(out, name)
            with open(path, "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n" or os.path.getsize(path) < 2000:
                    fail(f"{name} is not a PNG figure")
        print(f"OK: {ranks or 1} rank(s), total {total:.3f} s, imbalance {lost:.1f}%, {len(rows)} rows")


def half_water(d):
    """water-spce-3k without 7 of every 8 molecules whose oxygen is in the upper
    half of x (box unchanged): one domain of -dd 2 1 1 holds ~8 times the atoms
    of the other, which is not left quite empty."""
    with open(os.path.join(WATER, "conf.gro")) as f:
        lines = f.read().splitlines()
    n = int(lines[1])
    atoms, box = lines[2:2 + n], lines[2 + n]
    lx = float(box.split()[0])
    kept = []
    for i in range(0, n, 3):
        if float(atoms[i][20:28]) < lx / 2 or (i // 3) % 8 == 0:
            kept += atoms[i:i + 3]
    with open(os.path.join(d, "half.gro"), "w") as f:
        f.write("SPC/E water, upper half in x thinned\n%5d\n" % len(kept) + "\n".join(kept) + "\n" + box + "\n")
    with open(os.path.join(WATER, "topol.top")) as f:
        top = f.read()
    top = re.sub(r"^SOL\s+\d+", f"SOL {len(kept) // 3}", top, flags=re.M)
    with open(os.path.join(d, "half.top"), "w") as f:
        f.write(top)
    return os.path.join(d, "half.top"), os.path.join(d, "half.gro"), len(kept)


def imbalance():
    with tempfile.TemporaryDirectory(prefix="putmd_perf_") as d:
        top, gro, kept = half_water(d)
        log, perf = run_md(d, 2, top, gro, 40, ["-dd", "2", "1", "1", "-dlb", "no"])
        check_sums(accounting_rows(log))
        lost = imbalance_of(log)
        if lost <= THRESHOLD:
            fail(f"one domain holds most of the {kept} atoms, yet the imbalance line says {lost}% (hint threshold {THRESHOLD}%)")
        if "is lost to load imbalance" not in log or "Try -dlb yes" not in log or "-dd with other counts" not in log:
            fail("imbalance above the threshold but no hint in the log")
        validate(perf)
        if not perf["imbalance"]["hint"] or perf["imbalance"]["worst_stage"] is None:
            fail(f"JSON imbalance without hint: {perf['imbalance']}")
        print(f"OK: {kept} atoms, most in one of 2 domains, {lost:.1f}% lost to imbalance, worst stage "
              f"{perf['imbalance']['worst_stage']}")


def pme_table(log):
    """{phase: (messages, bytes)} of the PME ranks' communication table."""
    at = log.find("C O M M U N I C A T I O N   O F   T H E   P M E   R A N K S")
    if at < 0:
        fail("no PME ranks' communication table in the log")
    rows = {}
    lines = log[at:].splitlines()
    header = next((k for k, l in enumerate(lines) if l.startswith(" Phase")), None)
    if header is None:
        fail("the PME ranks' communication table has no header line")
    for line in lines[header + 1:]:
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            break
        rows[parts[0]] = (int(parts[1]), int(parts[2]))
    return rows


def pme_ranks():
    messages = {}
    for ranks, npme in ((3, 1), (4, 2)):
        with tempfile.TemporaryDirectory(prefix="putmd_perf_") as d:
            steps = 20
            log, perf = run_md(d, ranks, os.path.join(WATER, "topol.top"), os.path.join(WATER, "conf.gro"), steps,
                               ["--npme", str(npme)])
            validate(perf)
            npp = ranks - npme
            if "[PME] Rest" not in log:
                fail(f"{npme} PME rank(s): no [PME] rows in the accounting table")
            rows = pme_table(log)
            c = perf["communication"]["pme_ranks"]
            if c is None or c["ranks"] != npme:
                fail(f"{npme} PME rank(s): JSON pme_ranks {c}")
            for ph in c["phases"]:
                if rows.get(ph["phase"]) != (ph["messages"], ph["bytes"]):
                    fail(f"{npme} PME rank(s): phase {ph['phase']}: log {rows.get(ph['phase'])}, JSON "
                         f"{ph['messages']} messages, {ph['bytes']} bytes")
                if sum(ph["histogram"]) != ph["messages"]:
                    fail(f"{npme} PME rank(s): phase {ph['phase']}: the histogram sums to {sum(ph['histogram'])}")
            pme = next(ph for ph in c["phases"] if ph["phase"] == "pme")
            forces = npp * (steps + 1)  # one force message per PP rank and computation (steps 0 to nsteps)
            if npme == 1 and pme["messages"] != forces:
                fail(f"one PME rank sent {pme['messages']} messages, expected {forces} force messages to {npp} PP "
                     "ranks")
            if npme == 2 and pme["messages"] <= forces:
                fail(f"two PME ranks sent {pme['messages']} messages: no more than their {forces} force messages, "
                     "nothing among themselves")
            messages[npme] = pme["messages"]
    print(f"OK: the PME ranks' own communication: 1 PME rank {messages[1]} messages (its forces), 2 PME ranks "
          f"{messages[2]} (forces, transposes and redistribution)")


if args.what == "report":
    report(int(args.args[0]))
elif args.what == "imbalance":
    imbalance()
elif args.what == "pme":
    pme_ranks()
else:
    fail("unknown subcommand " + args.what)
