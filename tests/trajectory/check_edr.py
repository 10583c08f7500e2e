#!/usr/bin/env python3
"""NAME.edr against NAME.csv: putmd writes the same energies twice, and every
reader of GROMACS's energy files must get the CSV's values.

  * `gmx energy` (Debian's GROMACS, mixed precision) lists exactly the CSV's
    terms, in order, and extracts every term of every frame within its own
    precision (it holds energies as floats and prints 6 decimals: 5e-7 relative, or 1e-6 absolute
    near zero); `gmx_d energy -dp` (double precision) extracts the CSV's
    values to the 13 digits it prints (1e-12 relative);
  * the times and steps match;
  * panedr/pyedr, when installed (pip install pyedr), read the same frames
    (this part is skipped, and says so, without it).
usage: check_edr.py NAME.edr NAME.csv
"""
import csv
import os
import subprocess
import sys
import tempfile

edr, csv_path = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []


def fail(msg):
    failures.append(msg)
    print("FAILED: " + msg)


with open(csv_path) as f:
    rows = list(csv.reader(f))
header, data = rows[0], [[float(v) for v in r] for r in rows[1:]]
terms = header[2:]

env = dict(os.environ, GMX_MAXBACKUP="-1")
with tempfile.TemporaryDirectory() as tmp:
    listing = subprocess.run(["gmx", "energy", "-f", edr, "-o", os.path.join(tmp, "x.xvg")], input="0\n",
                             capture_output=True, text=True, env=env, cwd=tmp)
    text = listing.stdout + listing.stderr
    # the selection table: "  1  LJ-(SR)  2  Disper.-corr. ..." (spaces in names become '-')
    import re
    block = re.split(r"^-{20,}\s*$", text, flags=re.M)
    table = block[1] if len(block) > 1 else text
    listed = [name for num, name in re.findall(r"(\d+)\s+(\S+)", table)]
    expected = [t.replace(" ", "-") for t in terms]
    if listed != expected:
        fail(f"gmx energy lists {listed}, the CSV has {expected}")
    for dp in (True, False):
        out = os.path.join(tmp, f"all{'-dp' if dp else ''}.xvg")
        sel = "\n".join(str(i + 1) for i in range(len(terms))) + "\n0\n"
        exe = ["gmx_d", "energy", "-dp"] if dp else ["gmx", "energy"]
        r = subprocess.run(exe + ["-f", edr, "-o", out], input=sel,
                           capture_output=True, text=True, env=env, cwd=tmp)
        if r.returncode != 0 or not os.path.exists(out):
            fail(f"{' '.join(exe)} failed:\n{r.stderr[-2000:]}")
            continue
        frames = [[float(v) for v in line.split()] for line in open(out) if line[0] not in "#@" and line.strip()]
        if len(frames) != len(data):
            fail(f"gmx energy read {len(frames)} frames, the CSV has {len(data)}")
            continue
        worst = 0.0
        for fr, row in zip(frames, data):
            if abs(fr[0] - row[0]) > 1e-6:
                fail(f"frame time {fr[0]} against the CSV's {row[0]}")
                break
            for k, t in enumerate(terms):
                a, b = fr[1 + k], row[2 + k]
                rel = abs(a - b) / max(abs(b), 1e-300)
                ok = rel <= 1e-12 if dp else (rel <= 5e-7 or abs(a - b) <= 1e-6)
                worst = max(worst, rel if b != 0 else abs(a - b))
                if not ok:
                    fail(f"{t} at t = {row[0]}: {' '.join(exe)} {a}, CSV {b}")
                    break
        print(f"{' '.join(exe):17s}: {len(frames)} frames x {len(terms)} terms, largest relative "
              f"difference from the CSV {worst:.2e}")
    try:
        import pyedr  # noqa: F401
    except ImportError:
        print("pyedr not installed: its check skipped (pip install pyedr)")
    else:
        d = pyedr.edr_to_dict(edr)
        for t in terms:
            col = d.get(t)
            if col is None or len(col) != len(data):
                fail(f"pyedr: term {t} missing or of the wrong length")
                continue
            for v, row in zip(col, data):
                if abs(v - row[2 + terms.index(t)]) > 1e-12 * max(1.0, abs(v)):
                    fail(f"pyedr: {t} {v} against the CSV's {row[2 + terms.index(t)]}")
                    break
        print(f"pyedr: {len(terms)} terms read")
print("FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
