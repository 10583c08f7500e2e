#!/usr/bin/env bash
# Single-point GROMACS double-precision references for the mdp variants.
#
# usage: tests/reference/make_variants.sh [-k] [VARIANT ...]   (default: all)
#
# Each tests/data/variants/VARIANT/ holds
#   ref.mdp         the single-point input (nsteps 0, constraints, cut-offs ...)
#   system          one line: path of the system folder, relative to VARIANT/
#                   (conf.gro + topol.top are taken from there, never copied)
#   maxwarn         optional: number of grompp warnings to accept, beyond the
#                   GROMOS one make_reference.sh already accepts
#   restraint-reference  optional: one line, path (relative to VARIANT/) of the
#                   position-restraint reference coordinates (grompp -r)
# and gets (overwritten) reference.json, same format as the systems' ones
# (pme_grid is null for non-PME electrostatics), and forces-full.json (the
# forces at full double precision). The system folders are not modified.
# -k: keep the stored reference.json files, write only forces-full.json (and
# print how the regenerated reference compares). Everything else is
# make_reference.sh [-k] -o VARIANT SYSTEM.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VDIR=$(cd "$HERE/../data/variants" && pwd)
KEEP=()
if [ "${1:-}" = "-k" ]; then KEEP=(-k); shift; fi
export NT=${NT:-1}   # mdrun threads; the stored references were made with 1 (thread count changes last digits)

if [ $# -eq 0 ]; then
    set -- $(cd "$VDIR" && for d in */; do [ -f "$d/ref.mdp" ] && echo "${d%/}"; done)
fi
for v in "$@"; do
    v=${v%/}; v=${v##*/}
    d="$VDIR/$v"
    [ -f "$d/ref.mdp" ] && [ -f "$d/system" ] || { echo "$d: need ref.mdp and system" >&2; exit 1; }
    sys="$d/$(head -n1 "$d/system" | tr -d '[:space:]')"
    mw=0
    [ -f "$d/maxwarn" ] && mw=$(head -n1 "$d/maxwarn" | tr -d '[:space:]')
    rr=()
    [ -f "$d/restraint-reference" ] && rr=(-r "$d/$(head -n1 "$d/restraint-reference" | tr -d '[:space:]')")
    echo "=== variant $v"
    "$HERE/make_reference.sh" ${KEEP[@]+"${KEEP[@]}"} -o "$d" -m "$mw" ${rr[@]+"${rr[@]}"} "$sys"
done
