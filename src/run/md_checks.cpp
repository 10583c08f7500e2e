/* run/md_checks.cpp — blow-up checks and the last good frame (see md_run.h). */
#include "run/md_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "update/kinetic.h"

namespace putmd::md_detail
{

/* The coordinates at the start of a failing step (they are finite; the
 * forces or the update they led to are not): NAME_lastgood.gro, or with
 * several ranks this rank's atoms in NAME_lastgood_rankR.gro (the failing
 * rank cannot ask the others for theirs). Returns what to tell the user. */
std::string MdRun::writeLastGoodFrame(long step)
{
    try
    {
        if (!dd_)
        {
            const std::string path = options_.deffnm + "_lastgood.gro";
            writeGro(path, top_.systemName + " (last good frame, step " + std::to_string(step) + ")",
                     in_.coordinates.atoms, x_, &v_, box_);
            return "the last good coordinates (step " + std::to_string(step) + ") are in " + path;
        }
        const std::string path  = fmt::format("{}_lastgood_rank{}.gro", options_.deffnm, comm_->rank());
        std::vector<GroAtom> atoms;
        for (int i = 0; i < dd_->numHome(); i++)
        {
            atoms.push_back(in_.coordinates.atoms[dd_->globalIndex()[i]]);
        }
        writeGro(path, top_.systemName + " (this rank's atoms, last good frame, step " + std::to_string(step) + ")",
                 atoms, x_, &v_, box_);
        return "this rank's last good coordinates (step " + std::to_string(step) + ") are in " + path;
    }
    catch (const std::exception& e)
    {
        return std::string("the last good frame could not be written: ") + e.what();
    }
}

/* Non-finite or huge forces stop the run: nothing good comes after them. */
void MdRun::checkForces(long step, const ForceOutput& forces)
{
    constexpr double kHugeForce = 1e7; // kJ/mol/nm, far above any force in a sound system
    // every step: the scan threaded (OpenMP's threads, -nt), the first bad
    // atom named as a serial scan would
    // (the scan in the build's precision: a float square overflows to inf
    // only above 1.8e19, which fails the test as it should)
    const long n        = static_cast<long>(forces.f.size());
    long       firstBad = n;
    const real huge2    = real(kHugeForce * kHugeForce);
#pragma omp parallel for schedule(static) reduction(min : firstBad) if (n > 4096)
    for (long i = 0; i < n; i++)
    {
        if (!(norm2(forces.f[i]) < huge2))
        {
            firstBad = std::min(firstBad, i);
        }
    }
    for (size_t i = size_t(firstBad); i < forces.f.size(); i++)
    {
        const double f2 = norm2(DVec(forces.f[i]));
        if (!(f2 < kHugeForce * kHugeForce))
        {
            const int global = dd_ ? dd_->globalIndex()[i] : static_cast<int>(i);
            // its nearest neighbour (among this rank's atoms) is usually the culprit
            const Pbc pbc(box_);
            size_t    nearest = i;
            double    d2min   = std::numeric_limits<double>::infinity();
            for (size_t j = 0; j < x_.size(); j++)
            {
                const double d2 = norm2(DVec(pbc.dx(x_[i], x_[j])));
                if (j != i && d2 < d2min)
                {
                    d2min   = d2;
                    nearest = j;
                }
            }
            const std::string neighbour =
                    nearest == i ? std::string()
                                 : fmt::format("; the nearest atom to it is {} at {:.4f} nm",
                                               top_.describeAtom(dd_ ? dd_->globalIndex()[nearest] : static_cast<int>(nearest)),
                                               std::sqrt(d2min));
            throw SimulationError(fmt::format(
                    "step {} (t = {} ps): the force on {} is {:.3g} kJ/mol/nm, {}{}; the system is blowing up (atoms "
                    "too close together, or too long a time step); {}",
                    step, mdp_.tinit + step * mdp_.dt, top_.describeAtom(global), std::sqrt(f2),
                    std::isfinite(f2) ? "above the 1e7 kJ/mol/nm putmd accepts" : "not a finite number", neighbour,
                    writeLastGoodFrame(step)));
        }
    }
}

/* At a search step: an atom that moved more than three times the pair-list
 * buffer of an exact atom-pair list (rlist - cut-off of the double build;
 * the mixed build's cluster list may have rlist = cut-off) since the last
 * search is far beyond thermal motion (a hydrogen moves up to about the
 * buffer in that time; three times needs a speed seen less than once in
 * 1e12 samples) and has certainly left partners out of the list: the
 * system is blowing up. */
void MdRun::checkDisplacements(long step)
{
    const double buffer = settings_.displacementBuffer > 0 ? settings_.displacementBuffer
                                                           : settings_.rlist - std::max(mdp_.rcoulomb, mdp_.rvdw);
    if (xAtSearch_.size() == x_.size())
    {
        for (size_t i = 0; i < x_.size(); i++)
        {
            const double d = std::sqrt(norm2(DVec(x_[i]) - DVec(xAtSearch_[i])));
            largestDisplacement_ = std::max(largestDisplacement_, d);
            if (d > 3 * buffer)
            {
                const int global = dd_ ? dd_->globalIndex()[i] : static_cast<int>(i);
                throw SimulationError(fmt::format(
                        "step {} (t = {} ps): {} moved {:.3f} nm since the last pair search, more than three times "
                        "the pair-list buffer of {:.3f} nm (exact-list buffer; rlist {:.3f} nm, nstlist {}), far "
                        "beyond thermal motion: the system is blowing up or the time step is too long; {}",
                        step, mdp_.tinit + step * mdp_.dt, top_.describeAtom(global), d, buffer, settings_.rlist,
                        settings_.nstlist, writeLastGoodFrame(step)));
            }
        }
    }
}

} // namespace putmd::md_detail
