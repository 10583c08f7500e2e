#!/usr/bin/env python3
"""tools/plot_scaling.py on the data that ships in bench/results: both
figures are written from every row (the counts it reports are checked
against the files), and a damaged table or CSV row stops it with the file,
the row and what is wrong.

    plot_scaling_test.py --source SOURCE_TREE
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--source", required=True)
args = p.parse_args()
tool = os.path.join(args.source, "tools", "plot_scaling.py")
results = os.path.join(args.source, "bench", "results")


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def plot(what, data, out, ok=True):
    r = subprocess.run([sys.executable, tool, what, data, out], capture_output=True, text=True, timeout=300)
    if ok and r.returncode != 0:
        fail(f"plot_scaling.py {what} {data}: exit {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}")
    if not ok and r.returncode == 0:
        fail(f"plot_scaling.py {what} {data} accepted a damaged file:\n{r.stdout}")
    return r


with tempfile.TemporaryDirectory() as d:
    # the transposes: one line per grid, every row's three algorithms
    table = os.path.join(results, "smpi-transposes-gbe.md")
    rows = [l for l in open(table) if re.match(r"^\| \d+ \|", l)]
    per_grid = {}
    for l in rows:
        grid = l.split("|")[2].strip()
        per_grid[grid] = per_grid.get(grid, 0) + 1
    out = os.path.join(d, "transposes.png")
    r = plot("transposes", table, out)
    for grid, n in per_grid.items():
        want = f"{grid}: alltoallv {n} rank counts, pairwise {n} rank counts, rma {n} rank counts"
        if want not in r.stdout:
            fail(f"transposes: expected '{want}' in\n{r.stdout}")
    if not os.path.exists(out) or os.path.getsize(out) < 10000:
        fail("transposes: no figure written")

    # the steps: every CSV row in one of the reported series
    steps = os.path.join(results, "smpi-steps.csv")
    data = list(csv.DictReader(l for l in open(steps) if not l.startswith("#")))
    out = os.path.join(d, "steps.png")
    r = plot("steps", steps, out)
    counted = sum(int(m) for m in re.findall(r": (\d+) rank counts", r.stdout))
    if counted != len(data):
        fail(f"steps: {counted} points reported for {len(data)} rows\n{r.stdout}")
    if not os.path.exists(out) or os.path.getsize(out) < 10000:
        fail("steps: no figure written")

    # damaged inputs are refused, naming the row
    bad = os.path.join(d, "bad.md")
    with open(bad, "w") as f:
        f.writelines(rows[:2] + ["| 8 | 32^3 | 4x2 | 1.2 | fast | 3.7 | alltoallv | pairwise |\n"])
    r = plot("transposes", bad, os.path.join(d, "bad.png"), ok=False)
    if "bad.md:3" not in r.stderr + r.stdout:
        fail(f"a damaged transposes row: the message does not name bad.md:3:\n{r.stderr}")
    badcsv = os.path.join(d, "bad.csv")
    lines = open(steps).read().splitlines()
    header = next(k for k, l in enumerate(lines) if not l.startswith("#"))
    lines[header + 2] = lines[header + 2].replace(",p2p,", ",tcp,", 1)
    open(badcsv, "w").write("\n".join(lines) + "\n")
    r = plot("steps", badcsv, os.path.join(d, "bad.png"), ok=False)
    if "data row 2" not in r.stderr + r.stdout or "tcp" not in r.stderr + r.stdout:
        fail(f"a damaged steps row: the message does not name data row 2 and its backend:\n{r.stderr}")
print(f"plot_scaling.py: {len(rows)} transpose rows in {len(per_grid)} grids, {len(data)} step rows; damaged rows refused")
print("passed")
