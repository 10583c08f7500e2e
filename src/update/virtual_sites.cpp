#include "update/virtual_sites.h"

#include <cmath>

namespace putmd
{

namespace
{

/* (I - n n^T) f / |t| for n = t/|t|: the derivative of the unit vector
 * t/|t| applied to f (symmetric, so the same for its transpose). */
DVec unitDerivative(const DVec& t, const DVec& f)
{
    const double inv = 1 / norm(t);
    const DVec   n   = t * inv;
    return (f - n * dot(n, f)) * inv;
}

/* The constructing atoms relative to the first (nearest images). */
struct Frame
{
    DVec x0;
    DVec r[3]; // r[k-1] = x_k - x_0 for k = 1..3
};

Frame frameOf(const VirtualSite& v, const std::vector<Vec3<real>>& x, const Pbc& pbc)
{
    Frame fr;
    fr.x0 = DVec(x[v.from[0]]);
    for (size_t k = 1; k < v.from.size() && k <= 3; k++)
    {
        fr.r[k - 1] = pbc.dx(DVec(x[v.from[k]]), fr.x0);
    }
    return fr;
}

/* The site relative to its first atom. */
DVec sitePosition(const VirtualSite& v, const Frame& fr)
{
    const DVec& rij = fr.r[0];
    switch (v.kind)
    {
        case VirtualSite::Kind::Linear:
        {
            DVec p(0, 0, 0);
            for (size_t k = 1; k < v.from.size(); k++)
            {
                p += fr.r[k - 1] * v.weights[k];
            }
            return p;
        }
        case VirtualSite::Kind::Fd2: return rij * (v.a / norm(rij));
        case VirtualSite::Kind::Fd3:
        {
            const DVec t = rij + (fr.r[1] - rij) * v.a;
            return t * (v.b / norm(t));
        }
        case VirtualSite::Kind::Fad3:
        {
            const DVec rjk = fr.r[1] - rij;
            const DVec p   = rjk - rij * (dot(rij, rjk) / dot(rij, rij));
            return rij * (v.a / norm(rij)) + p * (v.b / norm(p));
        }
        case VirtualSite::Kind::Out3: return rij * v.a + fr.r[1] * v.b + cross(rij, fr.r[1]) * v.c;
        case VirtualSite::Kind::Fdn4:
        {
            const DVec m = cross(fr.r[1] * v.a - rij, fr.r[2] * v.b - rij);
            return m * (v.c / norm(m));
        }
    }
    return DVec(0, 0, 0);
}

/* The forces on the constructing atoms 1..3 (f_k = (d x_site/d x_k)^T f);
 * the first atom's is f minus their sum. */
void spreadNonlinear(const VirtualSite& v, const Frame& fr, const DVec& f, DVec* fk)
{
    const DVec& rij = fr.r[0];
    switch (v.kind)
    {
        case VirtualSite::Kind::Fd2: fk[0] = unitDerivative(rij, f) * v.a; break;
        case VirtualSite::Kind::Fd3:
        {
            // t = (1 - a) r_ij + a r_ik
            const DVec t = rij + (fr.r[1] - rij) * v.a;
            const DVec g = unitDerivative(t, f) * v.b;
            fk[0]        = g * (1 - v.a);
            fk[1]        = g * v.a;
            break;
        }
        case VirtualSite::Kind::Fad3:
        {
            // x = a u + b q with u = r_ij/|r_ij|, q = p/|p|, p = (I - u u^T) r_jk
            const DVec   rjk = fr.r[1] - rij;
            const double dij = norm(rij);
            const DVec   u   = rij * (1 / dij);
            const DVec   p   = rjk - u * dot(u, rjk);
            const DVec   h   = unitDerivative(p, f) * v.b; // gradient of b q.f with respect to p
            // p depends on r_jk through (I - u u^T), on u through -(u.r_jk) u
            const DVec gjk = h - u * dot(u, h);
            const DVec du    = (rjk * dot(u, h) + h * dot(u, rjk)) * -1.0; // d(h.p)/du
            const DVec gij   = unitDerivative(rij, f) * v.a + (du - u * dot(u, du)) * (1 / dij);
            // r_ij = x_j - x_i, r_jk = x_k - x_j
            fk[0] = gij - gjk;
            fk[1] = gjk;
            break;
        }
        case VirtualSite::Kind::Out3:
            fk[0] = f * v.a + cross(fr.r[1], f) * v.c;
            fk[1] = f * v.b - cross(rij, f) * v.c;
            break;
        case VirtualSite::Kind::Fdn4:
        {
            const DVec ra = fr.r[1] * v.a - rij, rb = fr.r[2] * v.b - rij;
            const DVec h  = unitDerivative(cross(ra, rb), f) * v.c;
            const DVec ga = cross(rb, h), gb = cross(h, ra); // gradients of h.(ra x rb)
            fk[0]         = (ga + gb) * -1.0;
            fk[1]         = ga * v.a;
            fk[2]         = gb * v.b;
            break;
        }
        case VirtualSite::Kind::Linear: break;
    }
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
        DVec p;
        if (v.kind == VirtualSite::Kind::Linear && v.from.size() > 4)
        {
            const DVec x0(x[v.from[0]]);
            p = x0;
            for (size_t k = 1; k < v.from.size(); k++)
            {
                p += pbc.dx(DVec(x[v.from[k]]), x0) * v.weights[k];
            }
        }
        else
        {
            const Frame fr = frameOf(v, x, pbc);
            p              = fr.x0 + sitePosition(v, fr);
        }
        // the image nearest to where the site was: a site put in the box
        // apart from its atoms at a search step stays on that side. The
        // shift is a whole number of box vectors, so without one the site
        // is exactly p: where it was (moved by its velocity in the update,
        // rescaled by a thermostat) changes no bit of it
        const DVec old(x[v.site]);
        DVec       n = box.toFractional(old - p);
        n            = DVec(std::round(n.x), std::round(n.y), std::round(n.z));
        x[v.site]    = Vec3<real>(n.x == 0 && n.y == 0 && n.z == 0 ? p : p + box.fromFractional(n));
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
        // positions relative to the site: x_k - x_site; the virial term is
        // zero for a linear site where its atoms put it, not for the others
        // (nor before the first placement of a continuation run)
        const DVec site = pbc.dx(DVec(x[v.site]), x0);
        if (v.kind == VirtualSite::Kind::Linear)
        {
            for (size_t k = 0; k < v.from.size(); k++)
            {
                const DVec fk = fv * v.weights[k];
                f[v.from[k]] += Vec3<real>(fk);
                if (virial)
                {
                    const DVec rk = k == 0 ? DVec(0, 0, 0) : pbc.dx(DVec(x[v.from[k]]), x0);
                    addVirial(*virial, rk - site, fk);
                }
            }
            continue;
        }
        const Frame fr = frameOf(v, x, pbc);
        DVec        fk[3];
        spreadNonlinear(v, fr, fv, fk);
        DVec fi = fv;
        for (size_t k = 1; k < v.from.size(); k++)
        {
            fi -= fk[k - 1];
            f[v.from[k]] += Vec3<real>(fk[k - 1]);
        }
        f[v.from[0]] += Vec3<real>(fi);
        if (virial)
        {
            addVirial(*virial, site * -1.0, fi);
            for (size_t k = 1; k < v.from.size(); k++)
            {
                addVirial(*virial, fr.r[k - 1] - site, fk[k - 1]);
            }
        }
    }
}

} // namespace putmd
