#include "io/gro.h"

#include "io/text.h"

namespace putmd
{

namespace
{

/* Width of one coordinate field, from the spacing of the decimal points. */
int fieldWidth(const std::string& line, const SourceLocation& where)
{
    constexpr size_t xStart = 20;
    const size_t     p1     = line.find('.', xStart);
    const size_t     p2     = p1 == std::string::npos ? p1 : line.find('.', p1 + 1);
    if (p1 == std::string::npos || p2 == std::string::npos)
    {
        throw InputError(where, "atom line has no coordinates after column 20 (expected "
                                "x, y, z in fixed-width fields such as %8.3f)");
    }
    return static_cast<int>(p2 - p1);
}

Box parseBox(const std::string& line, const SourceLocation& where)
{
    const auto tok = splitWhitespace(line);
    if (tok.size() != 3 && tok.size() != 9)
    {
        throw InputError(where, "the box line must have 3 numbers (rectangular) or 9 (triclinic), found "
                                        + std::to_string(tok.size()) + ": '" + std::string(trim(line)) + "'"
                                        + (tok.size() > 3 ? " (if this is an atom line, the atom count on line 2 is too small)" : ""));
    }
    double v[9] = {};
    for (size_t i = 0; i < tok.size(); i++)
    {
        v[i] = parseDouble(tok[i], where, "box element " + std::to_string(i + 1));
    }
    Matrix3 m;
    m(0, 0) = v[0];
    m(1, 1) = v[1];
    m(2, 2) = v[2];
    m(0, 1) = v[3];
    m(0, 2) = v[4];
    m(1, 0) = v[5];
    m(1, 2) = v[6];
    m(2, 0) = v[7];
    m(2, 1) = v[8];
    Box box(m);
    if (const std::string problem = box.checkGromacsForm(); !problem.empty())
    {
        throw InputError(where, "invalid box: " + problem);
    }
    return box;
}

} // namespace

GroFile parseGro(const std::string& text, const std::string& path)
{
    const auto lines = splitLines(text);
    GroFile    gro;
    if (lines.size() < 2)
    {
        throw InputError(SourceLocation{ path, static_cast<int>(lines.size()) + 1 },
                         "file ends before the atom-count line (a .gro file starts with a title "
                         "line and a line holding the number of atoms)");
    }
    gro.title = std::string(trim(lines[0]));
    const SourceLocation countLoc{ path, 2 };
    const long           natoms = parseInt(trim(lines[1]), countLoc, "the number of atoms");
    if (natoms < 0 || natoms > 1'000'000'000)
    {
        throw InputError(countLoc, "the number of atoms must be between 0 and 1e9, found " + std::to_string(natoms));
    }
    if (lines.size() < static_cast<size_t>(natoms) + 3)
    {
        throw InputError(SourceLocation{ path, static_cast<int>(lines.size()) },
                         "file is truncated: line 2 announces " + std::to_string(natoms)
                                 + " atoms, so the file needs " + std::to_string(natoms + 3)
                                 + " lines (title, count, atoms, box) but it has "
                                 + std::to_string(lines.size()));
    }
    gro.atoms.resize(natoms);
    gro.x.resize(natoms);
    int  width         = 8;
    bool hasVelocities = false;
    for (long i = 0; i < natoms; i++)
    {
        const std::string&   line = lines[i + 2];
        const SourceLocation where{ path, static_cast<int>(i) + 3 };
        if (i == 0)
        {
            width         = fieldWidth(line, where);
            hasVelocities = line.size() >= static_cast<size_t>(20 + 6 * width);
            if (hasVelocities)
            {
                gro.v.resize(natoms);
            }
        }
        if (line.size() < static_cast<size_t>(20 + 3 * width))
        {
            throw InputError(where, "atom line is too short: " + std::to_string(line.size())
                                            + " characters, expected at least "
                                            + std::to_string(20 + 3 * width)
                                            + " (20 for residue and atom, then x, y, z in "
                                            + std::to_string(width) + "-character fields)");
        }
        GroAtom& a     = gro.atoms[i];
        a.residueNumber = static_cast<int>(parseInt(line.substr(0, 5), where, "the residue number (columns 1-5)"));
        a.residueName  = std::string(trim(line.substr(5, 5)));
        a.atomName     = std::string(trim(line.substr(10, 5)));
        const char* axis[] = { "x", "y", "z" };
        for (int d = 0; d < 3; d++)
        {
            gro.x[i][d] = parseDouble(line.substr(20 + d * width, width), where,
                                      std::string("coordinate ") + axis[d] + " of atom " + std::to_string(i + 1));
        }
        if (hasVelocities)
        {
            if (line.size() < static_cast<size_t>(20 + 6 * width))
            {
                throw InputError(where, "atom line has no velocities while the first atom line has them");
            }
            for (int d = 0; d < 3; d++)
            {
                gro.v[i][d] = parseDouble(line.substr(20 + (3 + d) * width, width), where,
                                          std::string("velocity ") + axis[d] + " of atom " + std::to_string(i + 1));
            }
        }
    }
    gro.box = parseBox(lines[natoms + 2], SourceLocation{ path, static_cast<int>(natoms) + 3 });
    for (size_t extra = natoms + 3; extra < lines.size(); extra++)
    {
        if (!trim(lines[extra]).empty())
        {
            throw InputError(SourceLocation{ path, static_cast<int>(extra) + 1 },
                             "unexpected text after the box line; the atom count on line 2 ("
                                     + std::to_string(natoms) + ") may be too small");
        }
    }
    return gro;
}

GroFile readGro(const std::string& path)
{
    return parseGro(readFile(path), path);
}

} // namespace putmd
