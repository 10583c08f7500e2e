/* The plain twin of the SIMD cluster kernel: one pair at a time, in double,
 * with the C library's erfc; no shortcuts, so that it can be read against
 * the physics and the SIMD kernel can be tested against it. */
#include <cmath>

#include "nonbonded/cluster_kernel.h"

namespace putmd
{

namespace
{

constexpr double c_twoOverSqrtPi = 1.1283791670955126;

void forceSwitched(const double s[3], int alpha, double r1, double r, double* fOverR, double* v)
{
    const double rinv      = 1 / r;
    const double rinvAlpha = std::pow(rinv, alpha);
    const double dr        = std::max(0.0, r - r1);
    *v                     = rinvAlpha - s[0] / 3 * dr * dr * dr - s[1] / 4 * dr * dr * dr * dr - s[2];
    *fOverR                = (alpha * rinvAlpha * rinv + s[0] * dr * dr + s[1] * dr * dr * dr) * rinv;
}

} // namespace

void clusterKernelReference(const ClusterKernelSetup& k, const ClusterKernelInput& in, ClusterKernelOutput& out)
{
    for (int ie = in.iBegin; ie < in.iEnd; ie++)
    {
        const ClusterPairI& e  = in.iEntries[ie];
        const float*        sv = in.shift + 3 * e.shift;
        for (int p = e.jBegin; p < e.jEnd; p++)
        {
            const ClusterPairJ& je = in.jEntries[p];
            for (int ii = 0; ii < c_clusterSize; ii++)
            {
                for (int jj = 0; jj < c_clusterSize; jj++)
                {
                    if (!(je.mask >> (c_clusterSize * ii + jj) & 1))
                    {
                        continue;
                    }
                    const int    si = e.ci * c_clusterSize + ii, sj = je.cj * c_clusterSize + jj;
                    const double d[3] = { double(in.x[si] + sv[0]) - in.x[sj], double(in.y[si] + sv[1]) - in.y[sj],
                                          double(in.z[si] + sv[2]) - in.z[sj] };
                    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    if (r2 >= k.rcoulomb2 && r2 >= k.rvdw2)
                    {
                        continue;
                    }
                    if (r2 < 1e-12)
                    {
                        out.overlapSlot[0] = si;
                        out.overlapSlot[1] = sj;
                        continue;
                    }
                    const double r = std::sqrt(r2), rinv = 1 / r, rinv2 = rinv * rinv;
                    double       fscal = 0;
                    if (r2 < k.rcoulomb2)
                    {
                        const double qq = double(in.q[si]) * in.q[sj];
                        if (k.coulomb == ClusterCoulomb::Ewald)
                        {
                            const double erfc = std::erfc(k.beta * r);
                            fscal += qq * (erfc * rinv + c_twoOverSqrtPi * k.beta * std::exp(-k.beta * k.beta * r2)) * rinv2;
                            out.vcoul += qq * (erfc * rinv - k.shEwald);
                        }
                        else
                        {
                            fscal += qq * (rinv * rinv2 - 2 * k.kRf);
                            out.vcoul += qq * (rinv + k.kRf * r2 - k.cRf);
                        }
                    }
                    if (r2 < k.rvdw2)
                    {
                        const int    t   = in.type[si] * k.numTypes + in.type[sj];
                        const double c6  = k.c6[t], c12 = k.c12[t];
                        if (k.vdw == ClusterVdw::ForceSwitch)
                        {
                            double f6, v6, f12, v12;
                            forceSwitched(k.fs6, 6, k.rswitch, r, &f6, &v6);
                            forceSwitched(k.fs12, 12, k.rswitch, r, &f12, &v12);
                            fscal += c12 * f12 - c6 * f6;
                            out.vlj += c12 * v12 - c6 * v6;
                        }
                        else
                        {
                            const double rinv6 = rinv2 * rinv2 * rinv2;
                            fscal += (12 * c12 * rinv6 - 6 * c6) * rinv6 * rinv2;
                            out.vlj += c12 * (rinv6 * rinv6 - k.shiftC12) - c6 * (rinv6 - k.shiftC6);
                        }
                    }
                    for (int c = 0; c < 3; c++)
                    {
                        const double f = fscal * d[c];
                        (c == 0 ? out.fx : c == 1 ? out.fy : out.fz)[si] += float(f);
                        (c == 0 ? out.fx : c == 1 ? out.fy : out.fz)[sj] -= float(f);
                        out.fshift[e.shift][c] += f;
                    }
                }
            }
        }
    }
}

void clusterPruneReference(const ClusterKernelInput& in, float rlist2, ClusterPruneOutput& out)
{
    int nj = 0;
    for (int ie = in.iBegin; ie < in.iEnd; ie++)
    {
        const ClusterPairI& e      = in.iEntries[ie];
        const float*        sv     = in.shift + 3 * e.shift;
        const int           jBegin = nj;
        for (int p = e.jBegin; p < e.jEnd; p++)
        {
            const ClusterPairJ& je   = in.jEntries[p];
            bool                keep = false;
            // every atom pair, the mask aside (an entry whose pairs in range
            // are all excluded is kept: the kernel masks them)
            for (int b = 0; b < c_clusterSize * c_clusterSize && !keep; b++)
            {
                const int   si = e.ci * c_clusterSize + b / c_clusterSize, sj = je.cj * c_clusterSize + b % c_clusterSize;
                const float dx = (in.x[si] + sv[0]) - in.x[sj];
                const float dy = (in.y[si] + sv[1]) - in.y[sj];
                const float dz = (in.z[si] + sv[2]) - in.z[sj];
                keep           = dx * dx + dy * dy + dz * dz < rlist2;
            }
            if (keep)
            {
                out.j[nj++] = je;
            }
        }
        if (nj > jBegin)
        {
            out.i[out.numI++] = { e.ci, e.shift, out.jOffset + jBegin, out.jOffset + nj };
        }
    }
}

} // namespace putmd
