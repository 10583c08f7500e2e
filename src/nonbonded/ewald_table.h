/* nonbonded/ewald_table.h — erfc(beta r) and its derivative from a table,
 * for the pair-list kernel of dynamics.
 *
 * Cubic Hermite interpolation of g(r) = erfc(beta r) on nodes 1/2000 nm
 * apart, with the exact value and derivative g'(r) = -2 beta/sqrt(pi)
 * exp(-beta^2 r^2) stored at each node: g is accurate to ~1e-13 and g' to
 * ~1e-10 of their scale, far below single precision. Replaces the erfc and
 * exp calls, which took a third of the kernel's time. The reference kernel
 * keeps the library functions, and the two are compared in the tests.
 */
#pragma once

#include <cmath>
#include <vector>

#include "core/real.h"

namespace putmd
{

class EwaldTable
{
public:
    EwaldTable() = default;
    EwaldTable(double beta, double rmax);

    bool empty() const { return value_.empty(); }

    /* The nodes, for the SIMD twin of evaluate() (pair_batch_simd.cpp). */
    const real* values() const { return value_.data(); }
    const real* slopes() const { return slope_.data(); }
    real        scale() const { return scale_; }
    real        spacing() const { return h_; }
    int         last() const { return last_; }

    /* g = erfc(beta r), dg = d erfc(beta r)/dr, for 0 <= r <= rmax. */
    void evaluate(real r, real* g, real* dg) const
    {
        const real x  = r * scale_;
        int        i  = static_cast<int>(x);
        i             = i < last_ ? i : last_ - 1;
        const real t  = x - real(i);
        const real g0 = value_[i], g1 = value_[i + 1];
        const real d0 = slope_[i] * h_, d1 = slope_[i + 1] * h_;
        // Hermite basis in t, and its derivative
        const real t2 = t * t, t3 = t2 * t;
        *g  = (2 * t3 - 3 * t2 + 1) * g0 + (t3 - 2 * t2 + t) * d0 + (-2 * t3 + 3 * t2) * g1 + (t3 - t2) * d1;
        *dg = ((6 * t2 - 6 * t) * g0 + (3 * t2 - 4 * t + 1) * d0 + (-6 * t2 + 6 * t) * g1 + (3 * t2 - 2 * t) * d1) * scale_;
    }

private:
    std::vector<real> value_, slope_;
    real              scale_ = 2000; // nodes per nm
    real              h_     = real(1) / 2000;
    int               last_  = 0;
};

} // namespace putmd
