#include "update/virtual_sites.h"

namespace putmd
{

namespace
{

DVec crossD(const DVec& a, const DVec& b)
{
    return { a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x };
}

} // namespace

void constructVirtualSites(const std::vector<VirtualSite>& sites, std::vector<Vec3<real>>& x, const Box& box)
{
    if (sites.empty())
    {
        return;
    }
    const Pbc pbc(box);
    for (const auto& v : sites)
    {
        const DVec x0(x[v.from[0]]);
        DVec       p = x0;
        if (v.kind == VirtualSite::Kind::Linear)
        {
            for (size_t k = 1; k < v.from.size(); k++)
            {
                p += pbc.dx(DVec(x[v.from[k]]), x0) * v.weights[k];
            }
        }
        else
        {
            const DVec rij = pbc.dx(DVec(x[v.from[1]]), x0), rik = pbc.dx(DVec(x[v.from[2]]), x0);
            p += rij * v.a + rik * v.b + crossD(rij, rik) * v.c;
        }
        // the image nearest to where the site was: a site put in the box
        // apart from its atoms at a search step stays on that side
        const DVec old(x[v.site]);
        x[v.site] = Vec3<real>(old + pbc.dx(p, old));
    }
}

void spreadVirtualSiteForces(const std::vector<VirtualSite>& sites, const std::vector<Vec3<real>>& x,
                             std::vector<Vec3<real>>& f, const Box& box, Matrix3* virial)
{
    if (sites.empty())
    {
        return;
    }
    const Pbc pbc(box);
    // in reverse construction order: a site built from another site passes
    // its force on before that one spreads
    for (auto it = sites.rbegin(); it != sites.rend(); ++it)
    {
        const auto& v  = *it;
        const DVec  fv(f[v.site]);
        f[v.site]      = Vec3<real>();
        const DVec x0(x[v.from[0]]);
        if (v.kind == VirtualSite::Kind::Linear)
        {
            const DVec site = pbc.dx(DVec(x[v.site]), x0);
            for (size_t k = 0; k < v.from.size(); k++)
            {
                const DVec fk = fv * v.weights[k];
                f[v.from[k]] += Vec3<real>(fk);
                if (virial)
                {
                    // zero when the site sits where its atoms put it; not
                    // before the first update of a continuation run
                    const DVec rk = k == 0 ? DVec(0, 0, 0) : pbc.dx(DVec(x[v.from[k]]), x0);
                    addVirial(*virial, rk - site, fk);
                }
            }
            continue;
        }
        const DVec rij = pbc.dx(DVec(x[v.from[1]]), x0), rik = pbc.dx(DVec(x[v.from[2]]), x0);
        const DVec fj  = fv * v.a + crossD(rik, fv) * v.c;
        const DVec fk  = fv * v.b - crossD(rij, fv) * v.c;
        const DVec fi  = fv - fj - fk;
        f[v.from[0]] += Vec3<real>(fi);
        f[v.from[1]] += Vec3<real>(fj);
        f[v.from[2]] += Vec3<real>(fk);
        if (virial)
        {
            // positions relative to the site: x_k - x_site
            const DVec site = pbc.dx(DVec(x[v.site]), x0);
            addVirial(*virial, -site, fi);
            addVirial(*virial, rij - site, fj);
            addVirial(*virial, rik - site, fk);
        }
    }
}

} // namespace putmd
