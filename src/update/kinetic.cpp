#include "update/kinetic.h"

#include <omp.h>

#include <algorithm>

#include "core/units.h"

namespace putmd
{

Matrix3 kineticEnergyTensor(const std::vector<Vec3<real>>& v, const std::vector<double>& mass)
{
    // equal shares of the atoms over OpenMP's threads (-nt), partial sums
    // added in thread order: reproducible for a given thread count
    const int            nt = std::max(1, std::min(omp_get_max_threads(), static_cast<int>(v.size() / 1024) + 1));
    std::vector<Matrix3> part(nt);
#pragma omp parallel num_threads(nt)
    {
        const int    t     = nt > 1 ? omp_get_thread_num() : 0;
        const size_t begin = v.size() * t / nt, end = v.size() * (t + 1) / nt;
        // six independent local sums (the tensor is symmetric): a Matrix3
        // accumulator may alias mass[] for the compiler and went through
        // memory on every atom
        double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
        for (size_t i = begin; i < end; i++)
        {
            const double m = mass[i], vx = v[i][0], vy = v[i][1], vz = v[i][2];
            const double mx = m * vx, my = m * vy;
            xx += mx * vx;
            yy += my * vy;
            zz += m * vz * vz;
            xy += mx * vy;
            xz += mx * vz;
            yz += my * vz;
        }
        Matrix3 k;
        k(0, 0) = 0.5 * xx;
        k(1, 1) = 0.5 * yy;
        k(2, 2) = 0.5 * zz;
        k(0, 1) = k(1, 0) = 0.5 * xy;
        k(0, 2) = k(2, 0) = 0.5 * xz;
        k(1, 2) = k(2, 1) = 0.5 * yz;
        part[t] = k;
    }
    Matrix3 k;
    for (const Matrix3& p : part)
    {
        for (int a = 0; a < 3; a++)
        {
            for (int b = 0; b < 3; b++)
            {
                k(a, b) += p(a, b);
            }
        }
    }
    return k;
}

double trace(const Matrix3& m)
{
    return m(0, 0) + m(1, 1) + m(2, 2);
}

Matrix3 averageOf(const Matrix3& a, const Matrix3& b)
{
    Matrix3 r;
    for (int i = 0; i < 3; i++)
    {
        for (int j = 0; j < 3; j++)
        {
            r(i, j) = 0.5 * (a(i, j) + b(i, j));
        }
    }
    return r;
}

double temperatureOf(double kineticEnergy, double degreesOfFreedom)
{
    return degreesOfFreedom > 0 ? 2 * kineticEnergy / (degreesOfFreedom * units::kBoltzmann) : 0;
}

DVec removeCenterOfMassVelocity(std::vector<Vec3<real>>& v, const std::vector<double>& mass)
{
    DVec   p;
    double m = 0;
    for (size_t i = 0; i < v.size(); i++)
    {
        p += DVec(v[i]) * mass[i];
        m += mass[i];
    }
    const DVec vcm = p * (1 / m);
    for (auto& vi : v)
    {
        vi -= Vec3<real>(vcm);
    }
    return vcm;
}

} // namespace putmd
