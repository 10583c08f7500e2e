#!/usr/bin/python3
"""check_readers.py CONF.gro DIR -- do other programs read putmd's trajectories?

DIR holds what write_test_trajectory (mixed and double builds) wrote from
CONF.gro: traj_TAG.xtc (precision 1000), tric_TAG.xtc (precision 100,
triclinic box), traj_TAG.trr (x, v, f; frame 1 x only) and final_TAG.gro,
for TAG in mixed, double. The frame contents follow the formulas in
write_test_trajectory.cpp, repeated here. Each file is read with

  * gmx check -f: frame and atom counts (and which arrays each frame has),
  * gmx dump -f: every number, to the 6 digits it prints,
  * MDAnalysis (Universe(CONF.gro, file)): lengths in A, forces per A,
  * MDTraj (md.load(file, top=CONF.gro), and its file classes for steps):
    nm,

and must give 5 frames of the right atom count, coordinates within half a
step of the precision (XTC), the stored float or double value (TRR; the
Python readers hold float32), the box, time, step and lambda. Run with
Debian's /usr/bin/python3, where python3-mdanalysis and python3-mdtraj are.
Exits 1 listing every failed check.
"""
import os
import re
import subprocess
import sys

import numpy as np

FRAMES = 5
TAGS = ("mixed", "double")
failures = []
report = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


# ---------------------------------------------------------------- expected --

def read_conf(path):
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[1])
    x0 = np.array([[float(l[20 + 8 * d:28 + 8 * d]) for d in range(3)] for l in lines[2:2 + n]])
    box = [float(t) for t in lines[2 + n].split()]
    return x0, np.diag(box[:3])


TRICLINIC = np.array([[3.1, 0.0, 0.0], [1.0, 3.0, 0.0], [-0.5, 0.8, 2.9]])


def positions(x0, k):
    i = np.arange(len(x0))[:, None]
    d = np.arange(3)[None, :]
    return x0 + np.array([0.01 * k, 0.02 * k, -0.01 * k]) + 0.00037 * ((i + 2 * d + k) % 7)


def velocities(n, k):
    i = np.arange(n)[:, None]
    d = np.arange(3)[None, :]
    return 0.001 * ((i + 7 * k + 3 * d) % 1000) - 0.5


def forces(n, k):
    i = np.arange(n)[:, None]
    d = np.arange(3)[None, :]
    return 0.5 * ((13 * i + 5 * k + d) % 2001) - 500.0


def trr_has_vf(k):
    return k != 1


def lengths_angles(box):
    """Box vectors (rows) -> a, b, c and alpha, beta, gamma in degrees."""
    a, b, c = box
    la, lb, lc = (np.linalg.norm(v) for v in (a, b, c))

    def angle(u, v, lu, lv):
        return np.degrees(np.arccos(np.dot(u, v) / (lu * lv)))

    return np.array([la, lb, lc]), np.array([angle(b, c, lb, lc), angle(a, c, la, lc), angle(a, b, la, lb)])


class Expect:
    """What one file should hold: per-frame arrays in nm and the tolerance
    with which a reader's float32 numbers may differ from them."""

    def __init__(self, kind, x0, box, tag, precision=None):
        self.kind = kind  # "xtc" or "trr"
        self.n = len(x0)
        self.box = box
        self.precision = precision
        dtype = np.float32 if tag == "mixed" else np.float64
        self.x = [positions(x0, k).astype(dtype) for k in range(FRAMES)]
        self.v = [velocities(self.n, k).astype(dtype) for k in range(FRAMES)]
        self.f = [forces(self.n, k).astype(dtype) for k in range(FRAMES)]

    def x_tolerance(self):
        if self.kind == "xtc":
            return 0.5 / self.precision + 2e-6  # rounding to 1/precision, then float32
        return 0.0


def compare(what, got, want, atol, rtol=0.0):
    err = np.abs(np.asarray(got, dtype=np.float64) - np.asarray(want, dtype=np.float64))
    bound = atol + rtol * np.abs(np.asarray(want, dtype=np.float64))
    worst = float(err.max()) if err.size else 0.0
    ok = check(got is not None and np.shape(got) == np.shape(want) and bool(np.all(err <= bound)),
               f"{what}: max deviation {worst:.3g} exceeds the tolerance (atol {atol:g}, rtol {rtol:g})")
    return worst if ok else float("inf")


# --------------------------------------------------------------------- gmx --

def gmx(*args):
    r = subprocess.run(["gmx", "-nocopyright", "-quiet", *args], capture_output=True, text=True)
    check(r.returncode == 0, f"gmx {' '.join(args)} exited with {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout + r.stderr


def gmx_check(path, exp):
    out = gmx("check", "-f", path)
    atoms = re.search(r"# Atoms\s+(\d+)", out)
    table = dict(re.findall(r"^(Coords|Velocities|Forces|Box|Step|Time|Lambda)\s+(\d+)", out, re.M))
    name = os.path.basename(path)
    check(atoms is not None and int(atoms.group(1)) == exp.n, f"gmx check {name}: atoms {atoms and atoms.group(1)}, expected {exp.n}")
    want = {"Coords": FRAMES, "Box": FRAMES, "Step": FRAMES}
    if exp.kind == "trr":
        nvf = sum(trr_has_vf(k) for k in range(FRAMES))
        want.update({"Velocities": nvf, "Forces": nvf, "Lambda": FRAMES})
    else:
        prec = re.search(r"Precision ([0-9.eE+-]+) \(nm\)", out)
        check(prec is not None and abs(float(prec.group(1)) - 1 / exp.precision) < 1e-9,
              f"gmx check {name}: precision {prec and prec.group(1)}, expected {1 / exp.precision}")
    for item, count in want.items():
        check(int(table.get(item, -1)) == count, f"gmx check {name}: {item} in {table.get(item)} frames, expected {count}")
    report.append(f"gmx check {name}: {atoms and atoms.group(1)} atoms, "
                  + ", ".join(f"{k} {v}" for k, v in table.items()))


def parse_dump(text):
    """gmx dump -f output -> list of frames {header fields, arrays}."""
    frames = []
    array = None
    for line in text.splitlines():
        m = re.match(r"\s*natoms=\s*(\d+)\s+step=\s*(-?\d+)\s+time=\s*(\S+)(?:\s+(lambda|prec)=\s*(\S+))?", line)
        if m:
            frames.append({"natoms": int(m.group(1)), "step": int(m.group(2)), "time": float(m.group(3)),
                           m.group(4) or "none": float(m.group(5) or 0)})
            continue
        m = re.match(r"\s*(box|x|v|f) \((\d+)x3\):", line)
        if m and frames:
            array = frames[-1].setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*(box|x|v|f)\[\s*\d+\]=\{(.*)\}", line)
        if m and array is not None:
            array.append([float(t) for t in m.group(2).split(",")])
    return frames


def gmx_dump(path, exp):
    frames = parse_dump(gmx("dump", "-f", path))
    name = os.path.basename(path)
    if not check(len(frames) == FRAMES, f"gmx dump {name}: {len(frames)} frames, expected {FRAMES}"):
        return
    worst = 0.0
    for k, fr in enumerate(frames):
        check(fr["natoms"] == exp.n and fr["step"] == 1000 * k and abs(fr["time"] - 2.0 * k) < 1e-6,
              f"gmx dump {name} frame {k}: natoms {fr['natoms']} step {fr['step']} time {fr['time']}")
        compare(f"gmx dump {name} frame {k} box", fr.get("box"), exp.box, 1e-6, 1e-5)
        # gmx dump prints 6 significant digits
        worst = max(worst, compare(f"gmx dump {name} frame {k} x", np.array(fr.get("x")), exp.x[k],
                                   exp.x_tolerance() + 1e-9, 5.1e-6))
        if exp.kind == "trr":
            check(abs(fr["lambda"] - 0.1 * k) < 1e-6, f"gmx dump {name} frame {k}: lambda {fr['lambda']}")
            for key, want in (("v", exp.v[k]), ("f", exp.f[k])):
                if trr_has_vf(k):
                    compare(f"gmx dump {name} frame {k} {key}", np.array(fr.get(key)), want, 1e-9, 5.1e-6)
                else:
                    check(key not in fr, f"gmx dump {name} frame {k} has {key}, which was not written")
        else:
            check(abs(fr["prec"] - exp.precision) < 1e-6, f"gmx dump {name} frame {k}: prec {fr['prec']}")
    report.append(f"gmx dump {name}: {len(frames)} frames, max |x - written| {worst:.2e} nm")


# -------------------------------------------------------------- MDAnalysis --

def mdanalysis(conf, path, exp):
    import MDAnalysis as mda

    name = os.path.basename(path)
    u = mda.Universe(conf, path)
    check(u.atoms.n_atoms == exp.n, f"MDAnalysis {name}: {u.atoms.n_atoms} atoms, expected {exp.n}")
    if not check(len(u.trajectory) == FRAMES, f"MDAnalysis {name}: {len(u.trajectory)} frames, expected {FRAMES}"):
        return
    lengths, angles = lengths_angles(exp.box)
    worst = 0.0
    # float32 in A: the value as stored, rounded to float32 twice (read, then x10)
    rtol = 0.0 if exp.kind == "xtc" else 2.5e-7
    for k, ts in enumerate(u.trajectory):
        check(abs(ts.time - 2.0 * k) < 1e-5, f"MDAnalysis {name} frame {k}: time {ts.time}")
        if "step" in ts.data:
            check(int(ts.data["step"]) == 1000 * k, f"MDAnalysis {name} frame {k}: step {ts.data['step']}")
        compare(f"MDAnalysis {name} frame {k} box lengths", ts.dimensions[:3].astype(np.float64) / 10, lengths, 1e-6, 1e-6)
        compare(f"MDAnalysis {name} frame {k} box angles", ts.dimensions[3:], angles, 1e-3)
        worst = max(worst, compare(f"MDAnalysis {name} frame {k} x", ts.positions.astype(np.float64) / 10, exp.x[k],
                                   exp.x_tolerance() + 1e-7 * (exp.kind == "trr"), rtol))
        if exp.kind == "trr":
            check(abs(ts.data.get("lambda", -1) - 0.1 * k) < 1e-6, f"MDAnalysis {name} frame {k}: lambda {ts.data.get('lambda')}")
            if check(ts.has_velocities == trr_has_vf(k) and ts.has_forces == trr_has_vf(k),
                     f"MDAnalysis {name} frame {k}: has v {ts.has_velocities}, f {ts.has_forces}") and trr_has_vf(k):
                compare(f"MDAnalysis {name} frame {k} v", ts.velocities.astype(np.float64) / 10, exp.v[k], 1e-7, rtol)
                compare(f"MDAnalysis {name} frame {k} f", ts.forces.astype(np.float64) * 10, exp.f[k], 1e-7, rtol)
    report.append(f"MDAnalysis {name}: {u.atoms.n_atoms} atoms, {len(u.trajectory)} frames, "
                  f"box {np.round(u.trajectory[0].dimensions.astype(np.float64), 4).tolist()}, max |x - written| {worst:.2e} nm")


def mdanalysis_gro(path, exp):
    import MDAnalysis as mda

    u = mda.Universe(path)
    name = os.path.basename(path)
    check(u.atoms.n_atoms == exp.n, f"MDAnalysis {name}: {u.atoms.n_atoms} atoms")
    compare(f"MDAnalysis {name} x", u.atoms.positions / 10, exp.x[-1], 0.0005 + 1e-6)
    compare(f"MDAnalysis {name} v", u.atoms.velocities / 10, exp.v[-1], 0.00005 + 1e-6)
    compare(f"MDAnalysis {name} box", u.dimensions[:3] / 10, lengths_angles(exp.box)[0], 1e-5)
    report.append(f"MDAnalysis {name}: {u.atoms.n_atoms} atoms, names {list(u.atoms.names[:3])}")


# ------------------------------------------------------------------ MDTraj --

def mdtraj(conf, path, exp):
    import mdtraj as md

    name = os.path.basename(path)
    t = md.load(path, top=conf)
    check(t.n_atoms == exp.n, f"MDTraj {name}: {t.n_atoms} atoms, expected {exp.n}")
    if not check(t.n_frames == FRAMES, f"MDTraj {name}: {t.n_frames} frames, expected {FRAMES}"):
        return
    compare(f"MDTraj {name} time", t.time, 2.0 * np.arange(FRAMES), 1e-5)
    compare(f"MDTraj {name} box vectors", t.unitcell_vectors, np.array([exp.box] * FRAMES), 1e-6, 1e-6)
    worst = max(compare(f"MDTraj {name} frame {k} x", t.xyz[k], exp.x[k].astype(np.float32), exp.x_tolerance())
                for k in range(FRAMES))
    cls = md.formats.XTCTrajectoryFile if exp.kind == "xtc" else md.formats.TRRTrajectoryFile
    with cls(path) as f:
        data = f.read()
    compare(f"MDTraj {name} steps", data[2], 1000 * np.arange(FRAMES), 0)
    if exp.kind == "trr":
        compare(f"MDTraj {name} lambda", data[4], 0.1 * np.arange(FRAMES), 1e-6)
    report.append(f"MDTraj {name}: {t.n_atoms} atoms, {t.n_frames} frames, "
                  f"box lengths {np.round(t.unitcell_lengths[0].astype(np.float64), 5).tolist()} nm, max |x - written| {worst:.2e} nm")


def mdtraj_gro(path, exp):
    import mdtraj as md

    t = md.load(path)
    name = os.path.basename(path)
    check(t.n_atoms == exp.n and t.n_frames == 1, f"MDTraj {name}: {t.n_atoms} atoms, {t.n_frames} frames")
    compare(f"MDTraj {name} x", t.xyz[0], exp.x[-1], 0.0005 + 1e-6)
    report.append(f"MDTraj {name}: {t.n_atoms} atoms")


# -------------------------------------------------------------------- main --

def guarded(reader, *args):
    """A reader that raises (cannot parse the file) is a failed check."""
    try:
        reader(*args)
    except Exception as e:  # noqa: BLE001 - any reader error is a finding
        check(False, f"{reader.__name__} {os.path.basename(args[-2])}: {type(e).__name__}: {e}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    conf, outdir = sys.argv[1], sys.argv[2]
    x0, box = read_conf(conf)
    for tag in TAGS:
        files = [("xtc", f"traj_{tag}.xtc", box, 1000), ("xtc", f"tric_{tag}.xtc", TRICLINIC, 100),
                 ("trr", f"traj_{tag}.trr", box, None)]
        for kind, name, b, precision in files:
            path = os.path.join(outdir, name)
            if not check(os.path.isfile(path), f"{path} was not written"):
                continue
            exp = Expect(kind, x0, b, tag, precision)
            guarded(gmx_check, path, exp)
            guarded(gmx_dump, path, exp)
            guarded(mdanalysis, conf, path, exp)
            guarded(mdtraj, conf, path, exp)
        gro = os.path.join(outdir, f"final_{tag}.gro")
        if check(os.path.isfile(gro), f"{gro} was not written"):
            exp = Expect("gro", x0, box, tag)
            out = gmx("check", "-f", gro)
            check(re.search(r"^Coords\s+1\b", out, re.M) and re.search(r"^Velocities\s+1\b", out, re.M),
                  f"gmx check {gro}: expected one frame with coordinates and velocities")
            guarded(mdanalysis_gro, gro, exp)
            guarded(mdtraj_gro, gro, exp)
    print("\n".join(report))
    if failures:
        print(f"\n{len(failures)} FAILED checks:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print(f"\nall reader checks passed ({len(report)} files x readers)")


if __name__ == "__main__":
    main()
