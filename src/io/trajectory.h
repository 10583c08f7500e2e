/* io/trajectory.h — trajectory output in GROMACS's formats, written by
 * putmd itself from the published format descriptions.
 *
 * XtcWriter: compressed coordinates (xdr3dfcoord), precision from
 * compressed-x-precision; the frames GROMACS tools, MDAnalysis and MDTraj
 * read. TrrWriter: full-precision frames with any of x, v, f (XDR, in the
 * build's precision: float for putmd, double for putmd_d). Both open with
 * a file name, append frames, and flush on every frame so that a crashed
 * run leaves only whole frames. GroWriter writes a final configuration.
 */
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/box.h"
#include "core/real.h"
#include "core/vec.h"

namespace putmd
{

class XtcWriter
{
public:
    /* Throws InputError naming the path if it cannot be created. */
    /* append: continue an existing file (a checkpoint restart, after the file
     * was cut back to the checkpointed size) instead of starting a new one. */
    XtcWriter(const std::string& path, int numAtoms, double precision, bool append = false);
    ~XtcWriter();
    XtcWriter(const XtcWriter&)            = delete;
    XtcWriter& operator=(const XtcWriter&) = delete;

    /* x: numAtoms positions (nm), or a subset selected by the caller. */
    void write(long step, double time, const Box& box, const std::vector<Vec3<real>>& x);

private:
    std::FILE*  file_ = nullptr;
    std::string path_;
    int         numAtoms_;
    double      precision_;
};

class TrrWriter
{
public:
    TrrWriter(const std::string& path, int numAtoms, bool append = false);
    ~TrrWriter();
    TrrWriter(const TrrWriter&)            = delete;
    TrrWriter& operator=(const TrrWriter&) = delete;

    /* Any of x, v, f may be null (not written in this frame). */
    void write(long step, double time, double lambda, const Box& box, const std::vector<Vec3<real>>* x,
               const std::vector<Vec3<real>>* v, const std::vector<Vec3<real>>* f);

private:
    std::FILE*  file_ = nullptr;
    std::string path_;
    int         numAtoms_;
};

struct GroAtom;
/* A .gro file with positions (%8.3f) and, if given, velocities (%8.4f);
 * written atomically. Atom and residue names from atoms. */
void writeGro(const std::string& path, const std::string& title, const std::vector<GroAtom>& atoms,
              const std::vector<Vec3<real>>& x, const std::vector<Vec3<real>>* v, const Box& box);

} // namespace putmd
