#include "nonbonded/exclusion_corrections.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"

namespace putmd
{

double exclusionCorrections(const Topology& top, const InteractionConst& ic, const Pbc& pbc,
                            const std::vector<Vec3<real>>& x, std::vector<Vec3<real>>& f, Matrix3* virial,
                            int numSelfAtoms, int numThreads)
{
    const int numSelf = numSelfAtoms < 0 ? top.numAtoms : numSelfAtoms;
    using RVec         = Vec3<real>;
    const double rc2  = ic.rcoulomb * ic.rcoulomb;
    const double beta = ic.ewaldCoeff;
    const int    nt   = std::max(1, std::min(numThreads, top.numAtoms / 64 + 1));
    struct Share
    {
        double                            v = 0, q2 = 0;
        Matrix3                           virial;
        std::vector<std::pair<int, RVec>> later; // forces on atoms of later shares
    };
    std::vector<Share> shares(nt);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++)
    {
        Share&    sh    = shares[t];
        const int begin = static_cast<int>(long(top.numAtoms) * t / nt);
        const int end   = static_cast<int>(long(top.numAtoms) * (t + 1) / nt);
        for (int i = begin; i < end; i++)
        {
            if (i < numSelf)
            {
                sh.q2 += top.charge[i] * top.charge[i];
            }
            for (int e = top.exclusionStart[i]; e < top.exclusionStart[i + 1]; e++)
            {
                const int j = top.exclusions[e];
                if (j <= i)
                {
                    continue;
                }
                const double qq = ic.epsfac * top.charge[i] * top.charge[j];
                const RVec   d  = pbc.dx(x[i], x[j]);
                const real   r2 = norm2(d);
                if (qq == 0 || r2 >= rc2)
                {
                    continue;
                }
                real fscal;
                if (ic.coulombType == CoulombType::Pme && r2 < real(1e-12))
                {
                    // the r -> 0 limit of erf(beta r)/r; no force
                    sh.v -= qq * 2 * beta / std::sqrt(units::pi);
                    fscal = 0;
                }
                else if (ic.coulombType == CoulombType::Pme)
                {
                    const real r    = std::sqrt(r2);
                    const real erfv = std::erf(real(beta) * r);
                    sh.v -= qq * double(erfv / r);
                    // F = -dV/dr rhat with V = -qq erf(beta r)/r
                    fscal = real(qq) * (real(2 / std::sqrt(units::pi) * beta) * std::exp(-real(beta * beta) * r2) / r - erfv / r2) / r;
                }
                else
                {
                    sh.v += qq * (ic.kRf * r2 - ic.cRf);
                    fscal = -real(2 * qq * ic.kRf);
                }
                const RVec fi = d * fscal;
                f[i] += fi;
                if (j < end)
                {
                    f[j] -= fi;
                }
                else
                {
                    sh.later.push_back({ j, fi });
                }
                if (virial)
                {
                    addVirial(sh.virial, d, fi);
                }
            }
        }
    }
    double v = 0, q2 = 0;
    for (const Share& sh : shares)
    {
        v += sh.v;
        q2 += sh.q2;
        for (const auto& [j, fi] : sh.later)
        {
            f[j] -= fi;
        }
        if (virial)
        {
            for (int a = 0; a < 3; a++)
            {
                for (int b = 0; b < 3; b++)
                {
                    (*virial)(a, b) += sh.virial(a, b);
                }
            }
        }
    }
    if (ic.coulombType == CoulombType::Pme)
    {
        v -= ic.epsfac * beta / std::sqrt(units::pi) * q2;
    }
    else
    {
        v -= 0.5 * ic.epsfac * ic.cRf * q2;
    }
    return v;
}

} // namespace putmd
