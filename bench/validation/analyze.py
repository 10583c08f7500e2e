#!/usr/bin/env python3
"""Numbers for docs/validation.md from putmd's NAME.csv and GROMACS's NAME.edr.

usage: analyze.py drift  PUTMD_CSV GMX_EDR NATOMS [SKIP_PS]   conserved-energy drift per atom (linear fit after SKIP_PS)
       analyze.py mean   PUTMD_CSV GMX_EDR COLUMN [SKIP_PS]   mean of a column (e.g. Density, Temperature)
GMX_EDR may be '-' to skip GROMACS. Standard library only; needs `gmx` for .edr files.
"""
import csv
import subprocess
import sys
import tempfile

GMX_NAMES = {"Conserved En.": "Conserved-En.", "Total Energy": "Total-Energy", "Density": "Density", "Temperature": "Temperature",
             "Pressure": "Pressure", "Volume": "Volume"}


def putmd_series(path, column):
    rows = list(csv.DictReader(open(path)))
    return [float(r["Time (ps)"]) for r in rows], [float(r[column]) for r in rows]


def gmx_series(edr, column):
    with tempfile.NamedTemporaryFile(suffix=".xvg") as xvg:
        r = subprocess.run(["gmx", "energy", "-f", edr, "-o", xvg.name], input=GMX_NAMES[column] + "\n\n",
                           text=True, capture_output=True)
        if r.returncode != 0 and column == "Conserved En.":
            # without coupling GROMACS writes no Conserved En.: the total energy is conserved
            return gmx_series(edr, "Total Energy")
        r.check_returncode()
        t, v = [], []
        for line in open(xvg.name):
            if line[0] in "#@":
                continue
            a, b = line.split()[:2]
            t.append(float(a))
            v.append(float(b))
        return t, v


def slope(t, v):
    n = len(t)
    mt, mv = sum(t) / n, sum(v) / n
    return sum((a - mt) * (b - mv) for a, b in zip(t, v)) / sum((a - mt) ** 2 for a in t)


def main():
    kind = sys.argv[1]
    if kind == "drift":
        natoms = int(sys.argv[4])
        skip = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
        for name, series in (("putmd", lambda c: putmd_series(sys.argv[2], c)),
                             ("GROMACS", lambda c: gmx_series(sys.argv[3], c))):
            if (name == "GROMACS" and sys.argv[3] == "-") or (name == "putmd" and sys.argv[2] == "-"):
                continue
            t, e = series("Conserved En.")
            keep = [i for i, a in enumerate(t) if a >= t[0] + skip]
            t, e = [t[i] for i in keep], [e[i] for i in keep]
            # kJ/mol/ps per atom, and per ns
            s = slope(t, e) / natoms
            print(f"{name}: drift {s:.3e} kJ/mol/ps per atom ({s * 1000:.3e} per ns), {len(t)} points over {t[-1] - t[0]:.1f} ps")
    elif kind == "mean":
        column = sys.argv[4]
        skip = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
        for name, series in (("putmd", lambda c: putmd_series(sys.argv[2], c)),
                             ("GROMACS", lambda c: gmx_series(sys.argv[3], c))):
            if (name == "GROMACS" and sys.argv[3] == "-") or (name == "putmd" and sys.argv[2] == "-"):
                continue
            t, v = series(column)
            sel = [b for a, b in zip(t, v) if a >= t[0] + skip]
            mean = sum(sel) / len(sel)
            sd = (sum((b - mean) ** 2 for b in sel) / len(sel)) ** 0.5
            print(f"{name}: mean {column} {mean:.4f} (sd {sd:.4f}, {len(sel)} points after {skip} ps)")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
