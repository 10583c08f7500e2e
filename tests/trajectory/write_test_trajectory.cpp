/* write_test_trajectory — writes a small trajectory with putmd's writers for
 * the reader-compatibility test (check_readers.py reads it back with
 * gmx check, gmx dump, MDAnalysis and MDTraj).
 *
 * Usage: write_test_trajectory CONF.gro OUTDIR
 *
 * From the configuration's positions x0 it writes kFrames frames; frame k
 * has step 1000k, time 2k ps, lambda 0.1k and
 *     x[i][d] = x0[i][d] + (0.01k, 0.02k, -0.01k)[d]
 *               + 0.00037 * ((i + 2d + k) % 7)             nm (off the 0.001 grid)
 *     v[i][d] = 0.001 * ((i + 7k + 3d) % 1000) - 0.5     nm/ps
 *     f[i][d] = 0.5 * ((13i + 5k + d) % 2001) - 500      kJ/mol/nm
 * each computed in double and then rounded to the build's precision
 * (check_readers.py repeats the formulas). Files, tagged with the build's
 * precision name (mixed or double):
 *     traj_TAG.xtc      precision 1000, the configuration's box
 *     traj_TAG.trr      x, v, f in every frame; x only in frame 1
 *     tric_TAG.xtc      precision 100, a triclinic box (a, b, c below)
 *     final_TAG.gro     the last frame's x and v
 */
#include <cstdio>
#include <exception>
#include <string>

#include "core/error.h"
#include "io/gro.h"
#include "io/trajectory.h"

namespace
{

using putmd::real;
using putmd::Vec3;

constexpr int kFrames = 5;

std::vector<Vec3<real>> positions(const std::vector<putmd::DVec>& x0, int k)
{
    std::vector<Vec3<real>> x(x0.size());
    for (size_t i = 0; i < x0.size(); i++)
    {
        const double shift[3] = { 0.01 * k, 0.02 * k, -0.01 * k };
        for (int d = 0; d < 3; d++)
        {
            x[i][d] = static_cast<real>(x0[i][d] + shift[d] + 0.00037 * static_cast<double>((i + 2 * d + k) % 7));
        }
    }
    return x;
}

std::vector<Vec3<real>> velocities(size_t n, int k)
{
    std::vector<Vec3<real>> v(n);
    for (size_t i = 0; i < n; i++)
    {
        for (int d = 0; d < 3; d++)
        {
            v[i][d] = static_cast<real>(0.001 * static_cast<double>((i + 7 * k + 3 * d) % 1000) - 0.5);
        }
    }
    return v;
}

std::vector<Vec3<real>> forces(size_t n, int k)
{
    std::vector<Vec3<real>> f(n);
    for (size_t i = 0; i < n; i++)
    {
        for (int d = 0; d < 3; d++)
        {
            f[i][d] = static_cast<real>(0.5 * static_cast<double>((13 * i + 5 * k + d) % 2001) - 500.0);
        }
    }
    return f;
}

putmd::Box triclinicBox()
{
    putmd::Matrix3 m;
    m(0, 0) = 3.1;
    m(1, 0) = 1.0;
    m(1, 1) = 3.0;
    m(2, 0) = -0.5;
    m(2, 1) = 0.8;
    m(2, 2) = 2.9;
    return putmd::Box(m);
}

void writeAll(const std::string& confPath, const std::string& outDir)
{
    const putmd::GroFile conf = putmd::readGro(confPath);
    const int            n    = static_cast<int>(conf.x.size());
    const std::string    tag  = putmd::precisionName();
    putmd::XtcWriter     xtc(outDir + "/traj_" + tag + ".xtc", n, 1000);
    putmd::XtcWriter     tric(outDir + "/tric_" + tag + ".xtc", n, 100);
    putmd::TrrWriter     trr(outDir + "/traj_" + tag + ".trr", n);
    for (int k = 0; k < kFrames; k++)
    {
        const auto x = positions(conf.x, k);
        const auto v = velocities(n, k);
        const auto f = forces(n, k);
        xtc.write(1000L * k, 2.0 * k, conf.box, x);
        tric.write(1000L * k, 2.0 * k, triclinicBox(), x);
        if (k == 1)
        {
            trr.write(1000L * k, 2.0 * k, 0.1 * k, conf.box, &x, nullptr, nullptr);
        }
        else
        {
            trr.write(1000L * k, 2.0 * k, 0.1 * k, conf.box, &x, &v, &f);
        }
    }
    const auto v = velocities(n, kFrames - 1);
    putmd::writeGro(outDir + "/final_" + tag + ".gro", conf.title, conf.atoms, positions(conf.x, kFrames - 1), &v,
                    conf.box);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: %s CONF.gro OUTDIR\n", argv[0]);
        return 2;
    }
    try
    {
        writeAll(argv[1], argv[2]);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "write_test_trajectory: %s\n", e.what());
        return 1;
    }
    return 0;
}
