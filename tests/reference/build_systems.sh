#!/usr/bin/env bash
# Build the small peptide reference systems from scratch, then compute their
# GROMACS double-precision single-point references.
#
# usage: tests/reference/build_systems.sh [NAME ...]
#   NAME: peptide-charmm27-cubic | peptide-gromos-cubic | peptide-amber-triclinic
#         | peptide-oplsaa-cubic | peptide-amber-vsites | peptide-gromos-charged
#   (default: all six).  Output: tests/data/systems/NAME/.
#   Scratch work goes to $WORK (default /tmp/refbuild/NAME).
#
# Per system: make_peptide.py (heavy-atom PDB, alpha helix) -> gmx pdb2gmx
# -ignh (peptide-amber-vsites: -vsite hydrogens) -> gmx editconf (1.0 nm padding) -> gmx solvate -> gmx genion
# (neutralise, NaCl for the CHARMM system) -> steepest descent -> 5000 steps
# (10 ps) NVT at 300 K with h-bond constraints -> conf.gro (with velocities,
# molecules whole) -> make_reference.sh.
# Derived systems (DERIVED below) are not built from scratch: they are the
# stored folder of their base system with all NA/CL ions removed (conf.gro,
# start.gro, [ molecules ] of topol.top; posre.itp, md.mdp, ref/ref.mdp
# copied), i.e. a non-neutral system for the PME net-charge term. Their
# ref/maxwarn (1) tells make_reference.sh to accept grompp's warning about
# Ewald with a net charge. Building the base in the same call builds it first.
# The build uses mixed-precision `gmx` (the references use `gmx_d`); MD is not
# bit-reproducible, so a rebuild gives different coordinates and references.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DEST=$(cd "$HERE/.." && pwd)/data/systems
WORKROOT=${WORK:-/tmp/refbuild}
NT=${NT:-2}
export GMX_MAXBACKUP=-1

if ! command -v gmx >/dev/null 2>&1 || ! command -v gmx_d >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y gromacs
fi

# name | sequence | force field | water | box type | genion extra | pdb2gmx extra
SYSTEMS="
peptide-charmm27-cubic|ASKDF|charmm27|tip3p|cubic|-conc 0.15|
peptide-gromos-cubic|KVFSK|gromos54a7|spc|cubic||
peptide-amber-triclinic|GSDNAE|amber99sb-ildn|tip3p|dodecahedron||
peptide-oplsaa-cubic|ALKVS|oplsaa|tip3p|cubic||
peptide-amber-vsites|KFSALTQ|amber99sb-ildn|tip3p|cubic||-vsite hydrogens
"
# name | base system (its ions are removed)
DERIVED="
peptide-gromos-charged|peptide-gromos-cubic
"

common_mdp() {
cat <<'MDP'
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

build() {
    local name=$1 seq=$2 ff=$3 water=$4 bt=$5 ionopt=$6 p2gopt=$7
    local w=$WORKROOT/$name out=$DEST/$name
    echo "=== $name: $seq, $ff/$water, $bt box"
    rm -rf "$w"; mkdir -p "$w"; cd "$w"
    trap 'echo "FAILED: see the latest *.log in $w" >&2' ERR
    # GROMOS force fields always trigger one grompp warning (twin-range
    # parametrisation); accept exactly that one.
    local mw=0
    case "$ff" in gromos*) mw=1 ;; esac
    python3 "$HERE/make_peptide.py" "$seq" peptide.pdb
    local cmapopt=""
    [ "$ff" = charmm27 ] && cmapopt="-nocmap"
    gmx pdb2gmx -f peptide.pdb -ff "$ff" -water "$water" -ignh $cmapopt $p2gopt \
        -o protein.gro -p topol.top -i posre.itp > pdb2gmx.log 2>&1
    grep -q '^\[ *cmap *\]' topol.top && { echo "cmap in topology" >&2; exit 1; }
    # virtual sites only where asked for (-vsite hydrogens)
    if [ -z "$p2gopt" ] && grep -qiE '^\[ *(virtual_sites|dummies)' topol.top; then
        echo "virtual sites in topology" >&2; exit 1
    fi
    gmx editconf -f protein.gro -o boxed.gro -c -d 1.0 -bt "$bt" > editconf.log 2>&1
    gmx solvate -cp boxed.gro -cs spc216.gro -p topol.top -o solvated.gro > solvate.log 2>&1
    { echo "integrator = steep"; echo "nsteps = 0"; common_mdp; } > ions.mdp
    gmx grompp -f ions.mdp -c solvated.gro -p topol.top -o ions.tpr -maxwarn $((mw + 1)) > grompp_ions.log 2>&1
    echo SOL | gmx genion -s ions.tpr -p topol.top -o start.gro -pname NA -nname CL \
        -neutral $ionopt -seed 7 > genion.log 2>&1
    { echo "integrator = steep"; echo "nsteps = 2000"; echo "emtol = 500"; echo "emstep = 0.01";
      common_mdp; } > em.mdp
    gmx grompp -f em.mdp -c start.gro -p topol.top -o em.tpr -maxwarn $mw > grompp_em.log 2>&1
    gmx mdrun -nt "$NT" -deffnm em > em_mdrun.log 2>&1
    cat > nvt.mdp <<MDP
integrator = md
dt = 0.002
nsteps = 5000
constraints = h-bonds
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
gen-vel = yes
gen-temp = 300
gen-seed = 2024
nstcalcenergy = 100
nstenergy = 100
nstlog = 100
$(common_mdp)
MDP
    gmx grompp -f nvt.mdp -c em.gro -p topol.top -o nvt.tpr -maxwarn $mw > grompp_nvt.log 2>&1
    gmx mdrun -nt "$NT" -deffnm nvt > nvt_mdrun.log 2>&1
    # make every molecule whole (keeps velocities)
    echo 0 | gmx trjconv -s nvt.tpr -f nvt.gro -pbc mol -o conf.gro > trjconv.log 2>&1

    rm -rf "$out"; mkdir -p "$out/ref"
    cp conf.gro start.gro posre.itp "$out/"
    # topol.top: drop pdb2gmx's header comment (paths, user, date)
    sed '1,/^; Include forcefield parameters/{/^;/d}' topol.top > "$out/topol.top"
    sed -i '1{/^$/d}' "$out/topol.top"
    # production-style input like the shared systems
    { cat <<'MDP'
integrator = md
dt = 0.002
nsteps = 5000
constraints = h-bonds
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
nstcalcenergy = 100
nstenergy = 500
nstlog = 1000
nstxout-compressed = 5000
MDP
      common_mdp; } > "$out/md.mdp"
    "$HERE/make_reference.sh" "$out"
}

# derive NAME BASE: the stored folder BASE without its NA/CL ions (non-neutral)
derive() {
    local name=$1 base=$2
    local src=$DEST/$base out=$DEST/$name
    echo "=== $name: $base without its ions"
    [ -f "$src/conf.gro" ] || { echo "$src/conf.gro missing: build $base first" >&2; exit 1; }
    rm -rf "$out"; mkdir -p "$out/ref"
    cp "$src/posre.itp" "$src/md.mdp" "$out/"
    cp "$src/ref/ref.mdp" "$out/ref/"
    python3 - "$src" "$out" <<'PY'
import sys
src, out = sys.argv[1:3]
IONS = ("NA", "CL")
for fn in ("conf.gro", "start.gro"):
    lines = open(src + "/" + fn).read().splitlines(True)
    n = int(lines[1])
    atoms = [l for l in lines[2:2 + n] if l[5:10].strip() not in IONS]
    with open(out + "/" + fn, "w") as f:
        f.write(lines[0])
        f.write("%5d\n" % len(atoms))
        f.writelines(atoms)
        f.writelines(lines[2 + n:])
    print("%s: %d -> %d atoms" % (fn, n, len(atoms)))
section, kept = None, []
for l in open(src + "/topol.top"):
    t = l.split(";")[0].strip()
    if t.startswith("["):
        section = t.strip("[] ").lower()
    elif section == "molecules" and t and t.split()[0] in IONS:
        print("topol.top: [ molecules ] line dropped: " + l.strip())
        continue
    kept.append(l)
open(out + "/topol.top", "w").writelines(kept)
PY
    # grompp: "You are using Ewald electrostatics in a system with net charge"
    echo 1 > "$out/ref/maxwarn"
    "$HERE/make_reference.sh" "$out"
}

want=("$@")
selected() {
    [ ${#want[@]} -eq 0 ] && return 0
    case " ${want[*]} " in *" $1 "*) return 0 ;; esac
    return 1
}
for n in "$@"; do
    printf '%s\n%s\n' "$SYSTEMS" "$DERIVED" | grep -q "^$n|" || { echo "unknown system: $n" >&2; exit 1; }
done
echo "$SYSTEMS" | while IFS='|' read -r name seq ff water bt ionopt p2gopt; do
    [ -n "$name" ] || continue
    selected "$name" || continue
    ( build "$name" "$seq" "$ff" "$water" "$bt" "$ionopt" "$p2gopt" ) || exit 1
done
echo "$DERIVED" | while IFS='|' read -r name base; do
    [ -n "$name" ] || continue
    selected "$name" || continue
    ( derive "$name" "$base" ) || exit 1
done
