/* io/preprocessor.h — the C-preprocessor subset used by GROMACS topologies.
 *
 * Supports #include "file" / <file>, #define NAME [value], #undef,
 * #ifdef/#ifndef/#else/#endif and backslash line continuation. Defined names
 * with values are substituted word by word into ordinary lines (force fields
 * use this for parameter macros such as gb_1 or the CHARMM/GROMOS dihedral
 * macros). Comments (';' to end of line) are removed. Each output line keeps
 * the file and line it came from, so every later error can point at the
 * user's own file, not at an expanded stream.
 *
 * Include search order (as GROMACS): the directory of the including file, the
 * -I directories, the GMXLIB directories, then the GROMACS data directory.
 *
 * With PreprocessorOptions::memoryFiles set, the topology and every include
 * are read from that map only (same search order, paths compared after
 * lexical normalisation): the real file system is never touched. The fuzz
 * target and tests use this.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"

namespace putmd
{

struct SourceLine
{
    std::string    text;
    SourceLocation where;
};

struct PreprocessorOptions
{
    std::vector<std::string>           includeDirs; // -I, in order
    std::vector<std::string>           gmxlibDirs;  // GMXLIB, in order
    std::string                        dataDir;     // e.g. /usr/share/gromacs/top ("" = none)
    std::map<std::string, std::string> defines;     // -DNAME[=value]
    /* path -> contents; when not null, the only files there are */
    const std::map<std::string, std::string>* memoryFiles = nullptr;
};

std::vector<SourceLine> preprocessTopology(const std::string& path, const PreprocessorOptions& options);

} // namespace putmd
