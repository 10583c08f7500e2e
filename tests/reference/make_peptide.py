#!/usr/bin/env python3
"""Write a heavy-atom PDB of a short peptide (standard library only).

The chain is built from standard internal coordinates (bond lengths, bond
angles, dihedrals) with the NeRF construction.  Only heavy atoms are written
(N, CA, C, O, side chain, OXT on the last residue); `gmx pdb2gmx -ignh` adds
the hydrogens.  The backbone conformation is an alpha helix by default
(compact, so the solvated box stays small) or fully extended.

usage: make_peptide.py SEQUENCE OUT.pdb [--extended]
       SEQUENCE in one-letter code, e.g. ASKDF (residues: G A S V T L I F K D E N Q)
"""
import math
import sys

ONE_TO_THREE = {
    "G": "GLY", "A": "ALA", "S": "SER", "V": "VAL", "T": "THR", "L": "LEU",
    "I": "ILE", "F": "PHE", "K": "LYS", "D": "ASP", "E": "GLU", "N": "ASN",
    "Q": "GLN",
}

# Side chains: (atom, ref1, ref2, ref3, bond [A], angle ref3-atom [deg],
# dihedral ref1-ref2-ref3-atom [deg]).  CB is placed separately.
CHI1 = -60.0
SIDE = {
    "GLY": [],
    "ALA": [],
    "SER": [("OG", "N", "CA", "CB", 1.417, 110.8, CHI1)],
    "VAL": [("CG1", "N", "CA", "CB", 1.527, 110.7, 180.0),
            ("CG2", "N", "CA", "CB", 1.527, 110.4, -60.0)],
    "THR": [("OG1", "N", "CA", "CB", 1.43, 109.2, CHI1),
            ("CG2", "N", "CA", "CB", 1.53, 111.1, CHI1 - 120.0)],
    "LEU": [("CG", "N", "CA", "CB", 1.53, 116.1, CHI1),
            ("CD1", "CA", "CB", "CG", 1.524, 110.3, 180.0),
            ("CD2", "CA", "CB", "CG", 1.525, 110.6, 60.0)],
    "ILE": [("CG1", "N", "CA", "CB", 1.53, 110.4, CHI1),
            ("CG2", "N", "CA", "CB", 1.53, 110.5, CHI1 - 120.0),
            ("CD1", "CA", "CB", "CG1", 1.52, 113.97, 180.0)],
    "PHE": [("CG", "N", "CA", "CB", 1.50, 113.85, CHI1),
            ("CD1", "CA", "CB", "CG", 1.39, 120.0, 90.0),
            ("CD2", "CA", "CB", "CG", 1.39, 120.0, -90.0),
            ("CE1", "CB", "CG", "CD1", 1.39, 120.0, 180.0),
            ("CE2", "CB", "CG", "CD2", 1.39, 120.0, 180.0),
            ("CZ", "CG", "CD1", "CE1", 1.39, 120.0, 0.0)],
    "LYS": [("CG", "N", "CA", "CB", 1.52, 113.83, CHI1),
            ("CD", "CA", "CB", "CG", 1.52, 111.79, 180.0),
            ("CE", "CB", "CG", "CD", 1.52, 111.68, 180.0),
            ("NZ", "CG", "CD", "CE", 1.49, 111.36, 180.0)],
    "ASP": [("CG", "N", "CA", "CB", 1.52, 113.06, CHI1),
            ("OD1", "CA", "CB", "CG", 1.25, 119.22, -90.0),
            ("OD2", "CA", "CB", "CG", 1.25, 118.22, 90.0)],
    "GLU": [("CG", "N", "CA", "CB", 1.52, 113.82, CHI1),
            ("CD", "CA", "CB", "CG", 1.52, 113.31, 180.0),
            ("OE1", "CB", "CG", "CD", 1.25, 119.02, -90.0),
            ("OE2", "CB", "CG", "CD", 1.25, 118.08, 90.0)],
    "ASN": [("CG", "N", "CA", "CB", 1.52, 112.62, CHI1),
            ("OD1", "CA", "CB", "CG", 1.23, 120.85, -60.0),
            ("ND2", "CA", "CB", "CG", 1.33, 116.48, 120.0)],
    "GLN": [("CG", "N", "CA", "CB", 1.52, 113.75, CHI1),
            ("CD", "CA", "CB", "CG", 1.52, 112.78, 180.0),
            ("OE1", "CB", "CG", "CD", 1.24, 120.86, -60.0),
            ("NE2", "CB", "CG", "CD", 1.33, 116.50, 120.0)],
}


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0])


def norm(a):
    n = math.sqrt(a[0] ** 2 + a[1] ** 2 + a[2] ** 2)
    return (a[0] / n, a[1] / n, a[2] / n)


def place(a, b, c, bond, angle, dihedral):
    """Position d with |cd| = bond, angle(b,c,d) = angle, dihedral(a,b,c,d)."""
    angle = math.radians(angle)
    dihedral = math.radians(dihedral)
    bc = norm(sub(c, b))
    n = norm(cross(sub(b, a), bc))
    m = cross(n, bc)
    d2 = (-bond * math.cos(angle),
          bond * math.sin(angle) * math.cos(dihedral),
          bond * math.sin(angle) * math.sin(dihedral))
    return tuple(c[i] + d2[0] * bc[i] + d2[1] * m[i] + d2[2] * n[i]
                 for i in range(3))


def build(seq, phi, psi, omega=180.0):
    # 1. backbone (and CB, O, OXT) of every residue
    residues = []
    n = (0.0, 0.0, 0.0)
    ca = (1.458, 0.0, 0.0)
    c = place((0.0, 1.0, 0.0), n, ca, 1.525, 111.2, -60.0)
    for i, letter in enumerate(seq):
        name = ONE_TO_THREE[letter]
        atoms = {"N": n, "CA": ca, "C": c}
        order = ["N", "CA", "C", "O"]
        if name != "GLY":
            # L-amino acid: improper N-C-CA-CB = +122.7 deg
            atoms["CB"] = place(n, c, ca, 1.53, 109.5, 122.69)
            order.append("CB")
        # next backbone N (also defines the carbonyl O: psi + 180)
        n_next = place(n, ca, c, 1.329, 116.2, psi)
        atoms["O"] = place(n, ca, c, 1.231, 120.5, psi + 180.0)
        residues.append((name, order, atoms))
        ca_next = place(ca, c, n_next, 1.458, 121.7, omega)
        c_next = place(c, n_next, ca_next, 1.525, 111.2, phi)
        n, ca, c = n_next, ca_next, c_next
    # 2. side chains: pick the chi1 rotamer (-60, 180, 60) farthest from
    #    the atoms of the other residues
    for i, (name, order, atoms) in enumerate(residues):
        if not SIDE[name]:
            continue
        others = [xyz for j, (_, o, a) in enumerate(residues) if j != i
                  for xyz in a.values()]
        best = None
        for chi1 in (-60.0, 180.0, 60.0):
            trial = dict(atoms)
            for (nm, r1, r2, r3, bnd, ang, dih) in SIDE[name]:
                if r1 == "N":  # chi1-type dihedral: shift by the rotamer
                    dih = dih - CHI1 + chi1
                trial[nm] = place(trial[r1], trial[r2], trial[r3], bnd, ang, dih)
            new = [trial[nm] for (nm, *_rest) in SIDE[name]]
            d = min(math.dist(x, y) for x in new for y in others)
            if best is None or d > best[0]:
                best = (d, trial)
        atoms.update(best[1])
        order.extend(nm for (nm, *_rest) in SIDE[name])
    # 3. C-terminal OXT
    name, order, atoms = residues[-1]
    atoms["OXT"] = place(atoms["N"], atoms["CA"], atoms["C"], 1.25, 117.0, psi)
    order.append("OXT")
    return residues


def min_nonbonded_distance(residues):
    """Smallest distance between atoms more than 3 list positions apart
    across residues (a crude clash check)."""
    allat = []
    for ri, (_, order, atoms) in enumerate(residues):
        for nm in order:
            allat.append((ri, nm, atoms[nm]))
    best = 1e9
    for i in range(len(allat)):
        for j in range(i + 1, len(allat)):
            ri, ni, xi = allat[i]
            rj, nj, xj = allat[j]
            if abs(ri - rj) < 2:
                continue
            d = math.dist(xi, xj)
            best = min(best, d)
    return best


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    seq = argv[1].upper()
    out = argv[2]
    if "--extended" in argv:
        phi, psi = -150.0, 150.0
    else:
        phi, psi = -57.0, -47.0
    residues = build(seq, phi, psi)
    dmin = min_nonbonded_distance(residues)
    if dmin < 2.5:
        sys.exit("clash: closest atoms of residues i, i+2.. are %.2f A" % dmin)
    lines = ["REMARK   peptide %s built by make_peptide.py" % seq]
    serial = 1
    for ri, (name, order, atoms) in enumerate(residues):
        for nm in order:
            x, y, z = atoms[nm]
            fmt_name = (" " + nm).ljust(4) if len(nm) < 4 else nm
            lines.append("ATOM  %5d %4s %3s A%4d    %8.3f%8.3f%8.3f  1.00  0.00          %2s"
                         % (serial, fmt_name, name, ri + 1, x, y, z, nm[0]))
            serial += 1
    lines.append("TER")
    lines.append("END")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
