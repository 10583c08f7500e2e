/* io/gro.h — GROMACS .gro coordinate files.
 *
 * Fixed columns: residue number (5), residue name (5), atom name (5), atom
 * number (5), then x y z in fields whose width is found from the distance
 * between the first two decimal points (8 for the usual %8.3f), then optional
 * velocities in the same width. The last line is the box: 3 numbers for a
 * rectangular box or 9 (v1x v2y v3z v1y v1z v2x v2z v3x v3y) for a triclinic
 * one. Coordinates are kept in double exactly as read.
 */
#pragma once

#include <string>
#include <vector>

#include "core/box.h"
#include "core/vec.h"

namespace putmd
{

struct GroAtom
{
    int         residueNumber = 0;
    std::string residueName;
    std::string atomName;
};

struct GroFile
{
    std::string          title;
    std::vector<GroAtom> atoms;
    std::vector<DVec>    x;
    std::vector<DVec>    v; // empty when the file has no velocities
    Box                  box;
};

GroFile readGro(const std::string& path);
GroFile parseGro(const std::string& text, const std::string& path);

} // namespace putmd
