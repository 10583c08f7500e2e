#!/usr/bin/env python3
"""Builds tests/data/systems/water-slab-12k from water-spce-12k: every water
whose oxygen lies in x >= 2.5 nm (half of the 5 nm box) is kept, and of
those in x < 2.5 nm only every tenth (in file order): a liquid slab beside a
region at a tenth of the density, which an equal domain decomposition along
x cannot balance (issue 18, dynamic load balancing). Coordinates and
velocities are copied unchanged; the topology is water-spce-12k's with the
new molecule count. The GROMACS reference is then made by
tests/reference/make_reference.sh tests/data/systems/water-slab-12k.

usage: tests/reference/make_slab.py [SOURCE_DIR [OUT_DIR]]"""
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "tests/data/systems/water-spce-12k"
out = sys.argv[2] if len(sys.argv) > 2 else "tests/data/systems/water-slab-12k"
lines = open(os.path.join(src, "conf.gro")).read().splitlines()
title, natoms, atoms, box = lines[0], int(lines[1]), lines[2:-1], lines[-1]
assert len(atoms) == natoms and natoms % 3 == 0, "expected 3-site waters"
half = float(box.split()[0]) / 2
kept, sparse = [], 0
for m in range(natoms // 3):
    mol = atoms[3 * m:3 * m + 3]
    x = float(mol[0][20:28])
    if x < half:
        sparse += 1
        if sparse % 10 != 1:
            continue
    kept.append(mol)
os.makedirs(os.path.join(out, "ref"), exist_ok=True)
with open(os.path.join(out, "conf.gro"), "w") as f:
    f.write("SPC/E water slab: x >= %.2f nm liquid, x < %.2f nm at a tenth of the density\n" % (half, half))
    f.write("%5d\n" % (3 * len(kept)))
    for i, mol in enumerate(kept):
        for k, line in enumerate(mol):
            # renumber residues and atoms (5-digit fields wrap as in GROMACS)
            f.write("%5d%s%5d%s\n" % ((i + 1) % 100000, line[5:15], (3 * i + k + 1) % 100000, line[20:]))
    f.write(box + "\n")
for name in ("topol.top", "md.mdp"):
    text = open(os.path.join(src, name)).read()
    if name == "topol.top":
        text = re.sub(r"SOL\s+\d+", "SOL %d" % len(kept), text)
    open(os.path.join(out, name), "w").write(text)
print("%d waters kept of %d (%d of %d in the sparse half)" % (len(kept), natoms // 3, (sparse + 9) // 10, sparse))
