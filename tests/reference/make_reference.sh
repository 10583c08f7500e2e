#!/usr/bin/env bash
# Single-point GROMACS double-precision reference for one system folder.
#
# usage: tests/reference/make_reference.sh [-k] SYSTEM_DIR [SYSTEM_DIR ...]
#        tests/reference/make_reference.sh [-k] -o OUT_DIR [-m MAXWARN] SYSTEM_DIR
#
# SYSTEM_DIR must hold conf.gro and topol.top (plus any .itp it includes).
# Default mode writes (overwrites):
#   SYSTEM_DIR/ref/ref.mdp        (only if missing; the standard single-point input)
#   SYSTEM_DIR/processed.top      (gmx_d grompp -pp: all includes/macros expanded)
#   SYSTEM_DIR/ref/reference.json (energies, forces, PME grid)
#   SYSTEM_DIR/ref/forces-full.json (the same forces at full double precision)
# With -o OUT_DIR (one SYSTEM_DIR only; used by make_variants.sh) the input is
# OUT_DIR/ref.mdp and the only files written are OUT_DIR/reference.json and
# OUT_DIR/forces-full.json; the system folder is left untouched.
# With -k (keep) an existing reference.json (and processed.top) is not
# overwritten: only forces-full.json is written, and the regenerated
# reference.json is compared with the stored one (max relative energy
# difference, max force difference); if KEEP_REGEN=DIR is set, the
# regenerated reference.json is saved as DIR/<folder name>.reference.json. -m adds MAXWARN accepted grompp warnings
# (on top of the GROMOS one). pme_grid is null when coulombtype is not PME.
# Procedure: gmx_d grompp -f ref/ref.mdp -c conf.gro -p topol.top;
#            gmx_d mdrun -rerun conf.gro; gmx_d energy -dp (all terms up to
#            and including Potential); gmx_d traj -of (forces, all atoms,
#            6 significant digits); fourier-nx/ny/nz from gmx_d dump of the
#            tpr; forces-full.json: the forces read directly from the rerun's
#            double-precision ref.trr (XDR, big-endian float64; gmx_d dump
#            prints at most 9 digits even with GMX_PRINT_LONGFORMAT), written
#            with Python's repr (17 significant digits, round-trips exactly),
#            checked against the 6-digit ones (must agree to their rounding).
# Installs Debian's `gromacs` package with apt-get if gmx_d is missing.
set -euo pipefail

if ! command -v gmx_d >/dev/null 2>&1; then
    echo "gmx_d not found: installing Debian's gromacs package" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y gromacs
fi
export GMX_MAXBACKUP=-1   # no #backup# files
NT=${NT:-1}   # mdrun threads; the stored references were made with 1 (the thread count changes the last digits)

write_ref_mdp() {
cat > "$1" <<'MDP'
integrator = md
nsteps = 0
nstcalcenergy = 1
nstenergy = 1
nstfout = 1
constraints = none
cutoff-scheme   = Verlet
coulombtype     = PME
rcoulomb        = 1.0
rvdw            = 1.0
vdw-modifier    = Potential-shift
fourierspacing  = 0.12
pme-order       = 4
ewald-rtol      = 1e-5
DispCorr        = EnerPres
pbc             = xyz
MDP
}

# one_system SYSTEM_DIR [OUT_DIR]
#   without OUT_DIR: mdp SYSTEM_DIR/ref/ref.mdp, output SYSTEM_DIR/ref/ + processed.top
#   with OUT_DIR:    mdp OUT_DIR/ref.mdp, output OUT_DIR/reference.json only
one_system() {
    local sys out mdp
    sys=$(cd "$1" && pwd)
    [ -f "$sys/conf.gro" ] && [ -f "$sys/topol.top" ] || { echo "$sys: need conf.gro and topol.top" >&2; return 1; }
    if [ -n "${2:-}" ]; then
        out=$(cd "$2" && pwd)
        mdp="$out/ref.mdp"
        [ -f "$mdp" ] || { echo "$mdp missing" >&2; return 1; }
    else
        mkdir -p "$sys/ref"
        out="$sys/ref"
        mdp="$sys/ref/ref.mdp"
        [ -f "$mdp" ] || write_ref_mdp "$mdp"
    fi
    # (not local: the EXIT trap of the subshell uses it)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/putmd-ref.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    echo "== $sys -> $out (scratch $tmp)"
    # GROMOS force fields always trigger one grompp warning (twin-range
    # parametrisation); accept exactly that one.
    local mw=$EXTRA_MAXWARN
    grep -qi '^#include *"gromos' "$sys/topol.top" && mw=$((mw + 1))
    (
        cd "$sys"
        gmx_d grompp -maxwarn $mw -f "$mdp" -c conf.gro -p topol.top -o "$tmp/ref.tpr" \
            -po "$tmp/mdout.mdp" -pp "$tmp/processed.top" > "$tmp/grompp.log" 2>&1 \
            || { tail -40 "$tmp/grompp.log" >&2; exit 1; }
    )
    cd "$tmp"
    # grompp warnings/notes, for the record (variants: they may matter)
    [ -n "${2:-}" ] && grep -A6 -E '^(WARNING|NOTE)' grompp.log | grep -v '^--$' || true
    [ -n "${2:-}" ] || [ -n "$KEEP" ] || cp processed.top "$sys/processed.top"
    gmx_d mdrun -nt "$NT" -reprod -s ref.tpr -rerun "$sys/conf.gro" -deffnm ref > mdrun.log 2>&1 \
        || { tail -40 mdrun.log >&2; exit 1; }
    # list the energy terms, select 1..Potential
    echo 0 | gmx_d energy -f ref.edr -o list.xvg > terms.log 2>&1 || true
    local sel
    sel=$(python3 - terms.log <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# the term table after the dashes: "  1  Bond   2  U-B ..." (spaces in
# names are printed as '-'; the numbers are what gmx energy reads)
parts = re.split(r"^-{20,}\s*$", text, flags=re.M)
block = parts[1] if len(parts) > 1 else text
terms = {}
for num, name in re.findall(r"(\d+)\s+(\S+)", block):
    terms[int(num)] = name
pot = [k for k, v in terms.items() if v == "Potential"]
if not pot:
    sys.exit("Potential not found in energy term list")
print(" ".join(str(k) for k in sorted(terms) if 1 <= k <= pot[0]))
PY
)
    echo "$sel 0" | tr ' ' '\n' | gmx_d energy -f ref.edr -dp -o energy.xvg > energy.log 2>&1
    # interaction setup mdrun reports (Ewald coefficient, RF constants, LJ shifts)
    [ -n "${2:-}" ] && sed -n '/^System total charge/,/^Using SIMD/p' ref.log \
        | grep -vE '^(Generated table|Tabscale|Using SIMD|$)' || true
    echo 0 | gmx_d traj -s ref.tpr -f ref.trr -of force.xvg > traj.log 2>&1
    gmx_d dump -s ref.tpr 2> /dev/null | grep -E '^ *(fourier-n[xyz]|coulombtype) *=' > grid.txt
    python3 - "$sys" "$out" "$KEEP" "${KEEP_REGEN:-}" <<'PY'
import json, math, os, re, shutil, struct, sys
sysdir, outdir, keep, keep_regen = sys.argv[1:5]

def xvg(fn):
    legends, rows = [], []
    for line in open(fn):
        if line.startswith("@"):
            m = re.match(r'@ s(\d+) legend "(.*)"', line)
            if m:
                legends.append(m.group(2))
            continue
        if line.startswith("#") or not line.strip():
            continue
        rows.append(line.split())
    return legends, rows

legends, rows = xvg("energy.xvg")
assert len(rows) == 1, "expected one frame in energy.xvg"
vals = [float(v) for v in rows[0][1:]]
assert len(vals) == len(legends)
energies = dict(zip(legends, vals))
assert list(energies)[-1] == "Potential", list(energies)

_, frows = xvg("force.xvg")
assert len(frows) == 1
f = [float(v) for v in frows[0][1:]]
assert len(f) % 3 == 0
forces = [f[i:i + 3] for i in range(0, len(f), 3)]

grid = {}
for line in open("grid.txt"):
    k, v = line.split("=")
    grid[k.strip()] = v.strip()
if grid["coulombtype"].upper() in ("PME", "PME-SWITCH", "PME-USER", "PME-USER-SWITCH"):
    pme_grid = [int(grid["fourier-nx"]), int(grid["fourier-ny"]), int(grid["fourier-nz"])]
else:
    pme_grid = None

with open(sysdir + "/conf.gro") as g:
    g.readline()
    natoms = int(g.readline())
assert natoms == len(forces), (natoms, len(forces))

ref = {
    "source": "GROMACS 2022.5 double precision (gmx_d), single point -rerun of conf.gro with ref.mdp",
    "units": {"energy": "kJ/mol", "force": "kJ/mol/nm"},
    "natoms": natoms,
    "pme_grid": pme_grid,
    "energies": energies,
    "forces": forces,
}
ver = open("mdrun.log").read()
m = re.search(r"GROMACS version:\s+(\S+)", ver)
if m and not m.group(1).startswith("2022.5"):
    ref["source"] = ref["source"].replace("2022.5", m.group(1))
refjson = outdir + "/reference.json"
if keep and os.path.exists(refjson):
    refjson = "reference.json"           # scratch copy, for the comparison
with open(refjson, "w") as out:
    json.dump(ref, out, indent=1)
print("natoms", natoms, "pme_grid", pme_grid)
for k, v in energies.items():
    print("  %-16s %.10f" % (k, v))

def trr_forces(fn):
    """Forces of the only frame of a double-precision .trr (XDR, big-endian)."""
    b = open(fn, "rb").read()
    magic, _ = struct.unpack(">ii", b[:8])
    assert magic == 1993, "not a trr file"
    n = struct.unpack(">i", b[8:12])[0]             # version string, padded to 4
    p = 12 + (n + 3) // 4 * 4
    (ir, e, box, vir, pres, top, sym, xs, vs, fs,
     nat, step, nre) = struct.unpack(">13i", b[p:p + 52])
    p += 52
    rs = box // 9 if box else (xs or vs or fs) // (3 * nat)
    assert rs == 8, "trr is not double precision (real size %d)" % rs
    assert fs == 3 * nat * rs, "trr frame has no forces"
    p += 2 * rs + ir + e + box + vir + pres + top + sym + xs + vs   # t, lambda, blocks
    f = struct.unpack(">%dd" % (3 * nat), b[p:p + fs])
    assert p + fs == len(b), "expected exactly one frame in the trr"
    return nat, [list(f[i:i + 3]) for i in range(0, len(f), 3)]

nat, ffull = trr_forces("ref.trr")
assert nat == natoms, (nat, natoms)
# the 6-digit forces must be the full ones rounded to 6 significant digits
worst, nexact, d2, s2 = 0.0, 0, 0.0, 0.0
for a3, b3 in zip(ffull, forces):
    for a, b in zip(a3, b3):
        nexact += float("%.6g" % a) == b
        d2 += (a - b) ** 2
        s2 += a * a
        if a != 0.0:
            ulp6 = 10.0 ** (math.floor(math.log10(abs(a))) - 5)
            worst = max(worst, abs(a - b) / ulp6)
assert worst <= 0.5 + 1e-6, "full-precision forces disagree with gmx traj -of (%g units of the 6th digit)" % worst
print("forces-full: %d/%d components equal the 6-digit ones after rounding; "
      "max |f6 - f| = %.3f units of the 6th digit; RMS(f6 - f)/RMS(f) = %.3e"
      % (nexact, 3 * natoms, worst, math.sqrt(d2 / s2) if s2 else 0.0))
with open(outdir + "/forces-full.json", "w") as out:
    out.write('{"source": %s,\n "units": {"force": "kJ/mol/nm"},\n "natoms": %d,\n "forces": [\n'
              % (json.dumps(ref["source"] + "; forces read from the rerun's double-precision trr, full precision"), natoms))
    out.write(",\n".join("  [%r, %r, %r]" % tuple(v) for v in ffull))
    out.write("\n ]\n}\n")
chk = json.load(open(outdir + "/forces-full.json"))
assert chk["forces"] == ffull and chk["natoms"] == natoms

if keep and refjson == "reference.json":
    old = json.load(open(outdir + "/reference.json"))
    assert list(old["energies"]) == list(energies), (list(old["energies"]), list(energies))
    erel = max(abs(energies[k] - old["energies"][k]) / max(abs(old["energies"][k]), 1e-300)
               for k in energies)
    fmax = max(abs(a - b) for a3, b3 in zip(forces, old["forces"]) for a, b in zip(a3, b3))
    fr2 = sum((a - b) ** 2 for a3, b3 in zip(ffull, old["forces"]) for a, b in zip(a3, b3))
    print("keep: stored reference.json not overwritten; regenerated vs stored: "
          "max rel energy diff %.3e, max |f6 diff| %.3e, identical file: %s; "
          "RMS(stored f6 - full f)/RMS(f) = %.3e"
          % (erel, fmax, open("reference.json").read() == open(outdir + "/reference.json").read(),
             math.sqrt(fr2 / s2) if s2 else 0.0))
    assert old["natoms"] == natoms and old["pme_grid"] == pme_grid
    if keep_regen:
        name = os.path.basename(outdir if os.path.basename(outdir) != "ref" else os.path.dirname(outdir))
        os.makedirs(keep_regen, exist_ok=True)
        shutil.copy("reference.json", os.path.join(keep_regen, name + ".reference.json"))
PY
    cd /
    rm -rf "$tmp"
}

usage() {
    echo "usage: $0 [-k] SYSTEM_DIR [SYSTEM_DIR ...]" >&2
    echo "       $0 [-k] -o OUT_DIR [-m MAXWARN] SYSTEM_DIR" >&2
    exit 1
}
OUTDIR=""
EXTRA_MAXWARN=0
KEEP=""
while getopts "ko:m:" opt; do
    case $opt in
        k) KEEP=1 ;;
        o) OUTDIR=$OPTARG ;;
        m) EXTRA_MAXWARN=$OPTARG ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
if [ -n "$OUTDIR" ]; then
    [ $# -eq 1 ] || usage
    ( one_system "$1" "$OUTDIR" )
else
    for d in "$@"; do
        ( one_system "$d" )
    done
fi
