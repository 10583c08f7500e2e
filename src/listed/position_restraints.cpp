#include "listed/position_restraints.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace putmd
{

void setPositionRestraintReferences(Topology* top, const std::vector<DVec>& x, const Box& refBox,
                                    RefCoordScaling scaling, const std::string& refFile)
{
    auto& settings   = top->positionRestraintSettings;
    settings.scaling = scaling;
    if (top->positionRestraints.empty())
    {
        return;
    }
    if (static_cast<int>(x.size()) != top->numAtoms)
    {
        throw InputError(SourceLocation{ refFile, 0 },
                         fmt::format("the position-restraint reference has {} atoms but the topology has {}; give a "
                                     "coordinate file of the same system with -r (default: the -c file)",
                                     x.size(), top->numAtoms));
    }
    DVec com(0, 0, 0);
    if (scaling == RefCoordScaling::Com)
    {
        double mass = 0;
        for (const auto& p : top->positionRestraints)
        {
            if (p.inCom)
            {
                com += x[p.i] * top->mass[p.i];
                mass += top->mass[p.i];
            }
        }
        if (mass <= 0)
        {
            throw InputError(SourceLocation{ refFile, 0 },
                             "refcoord-scaling = com: the position-restrained atoms have no mass; use "
                             "refcoord-scaling = no or all");
        }
        com = com * (1 / mass);
        const DVec s = refBox.toFractional(com);
        for (int d = 0; d < 3; d++)
        {
            settings.comFraction[d] = s[d];
        }
    }
    for (auto& p : top->positionRestraints)
    {
        DVec r = x[p.i];
        if (scaling == RefCoordScaling::All)
        {
            r = refBox.toFractional(r);
        }
        else if (scaling == RefCoordScaling::Com)
        {
            r -= com;
        }
        for (int d = 0; d < 3; d++)
        {
            p.ref[d] = r[d];
        }
    }
}

namespace
{

/* Flat-bottomed restraint: energy and force for displacement dx. */
double flatBottom(const PositionRestraint& p, const DVec& dx, DVec* fOut)
{
    DVec&        f      = *fOut;
    const bool   invert = p.r < 0;
    const double r      = std::abs(p.r);
    const double k      = p.kFlat;
    f                   = DVec(0, 0, 0);
    auto radial         = [&](int skip) { // sphere (skip = -1) or cylinder along skip
        double dr2 = 0;
        for (int d = 0; d < 3; d++)
        {
            dr2 += d == skip ? 0.0 : dx[d] * dx[d];
        }
        if (dr2 > 0 && ((dr2 > r * r && !invert) || (dr2 < r * r && invert)))
        {
            const double dr = std::sqrt(dr2);
            for (int d = 0; d < 3; d++)
            {
                f[d] = d == skip ? 0.0 : -k * (dr - r) * dx[d] / dr;
            }
            return 0.5 * k * (dr - r) * (dr - r);
        }
        return 0.0;
    };
    switch (p.geometry)
    {
        case 1: return radial(-1);
        case 2:
        case 8: return radial(2);
        case 6: return radial(0);
        case 7: return radial(1);
        default: // 3, 4, 5: a layer normal to x, y, z
        {
            const int    d  = p.geometry - 3;
            const double dr = dx[d];
            if ((dr > r && !invert) || (dr > 0 && dr < r && invert))
            {
                f[d] = -k * (dr - r);
                return 0.5 * k * (dr - r) * (dr - r);
            }
            if ((dr < -r && !invert) || (dr < 0 && dr > -r && invert))
            {
                f[d] = -k * (dr + r);
                return 0.5 * k * (dr + r) * (dr + r);
            }
            return 0.0;
        }
    }
}

} // namespace

void computePositionRestraints(const std::vector<PositionRestraint>& list, const PositionRestraintSettings& settings,
                               const std::vector<Vec3<real>>& x, const Box& box, std::vector<Vec3<real>>& f,
                               EnergyTerms& energies, Matrix3* virial)
{
    if (settings.any)
    {
        energies.markPresent(EnergyTerm::PositionRest);
    }
    if (settings.anyFlat)
    {
        energies.markPresent(EnergyTerm::FlatBottomPosRest);
    }
    if (list.empty())
    {
        return;
    }
    const Pbc  pbc(box);
    const DVec comScaled =
            box.fromFractional(DVec(settings.comFraction[0], settings.comFraction[1], settings.comFraction[2]));
    double harmonic = 0, flat = 0;
    for (const auto& p : list)
    {
        const DVec ref(p.ref[0], p.ref[1], p.ref[2]);
        DVec       pos, rdist;
        switch (settings.scaling)
        {
            case RefCoordScaling::No:
                pos   = ref;
                rdist = ref;
                break;
            case RefCoordScaling::All:
                pos   = box.fromFractional(ref);
                rdist = DVec(0, 0, 0);
                break;
            case RefCoordScaling::Com:
                pos   = comScaled + ref;
                rdist = ref;
                break;
        }
        const DVec dx = pbc.dx(DVec(x[p.i]), pos);
        DVec       fi;
        if (p.func == 1)
        {
            for (int d = 0; d < 3; d++)
            {
                fi[d] = -p.k[d] * dx[d];
                harmonic += 0.5 * p.k[d] * dx[d] * dx[d];
            }
        }
        else
        {
            flat += flatBottom(p, dx, &fi);
        }
        f[p.i] += Vec3<real>(fi);
        if (virial)
        {
            for (int d = 0; d < 3; d++)
            {
                (*virial)(d, d) -= 0.5 * (dx[d] + rdist[d]) * fi[d];
            }
        }
    }
    energies[EnergyTerm::PositionRest] += harmonic;
    energies[EnergyTerm::FlatBottomPosRest] += flat;
}

} // namespace putmd
