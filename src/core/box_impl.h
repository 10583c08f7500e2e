/* core/box_impl.h — template body of Pbc::dx (included by box.h). */
#pragma once

#include <cmath>

namespace putmd
{

namespace detail
{

/* s rounded to the nearest integer, ties to even as std::nearbyint in the
 * default rounding mode, without the library call (x86-64's baseline has no
 * rounding instruction): adding and removing 1.5 * 2^52 leaves no fraction
 * bits. Exact for |s| < 2^51; larger values are already whole numbers. */
inline double roundNearest(double s)
{
    constexpr double magic = 6755399441055744.0;
    return std::abs(s) < 2251799813685248.0 ? (s + magic) - magic : s;
}

/* The same in float (1.5 * 2^23; exact for |s| < 2^22), for code that
 * works in the mixed build's precision (SETTLE's blocks). */
inline float roundNearest(float s)
{
    constexpr float magic = 12582912.0f;
    return std::abs(s) < 4194304.0f ? (s + magic) - magic : s;
}

} // namespace detail

/* A rectangular box: per dimension, inline (SETTLE's gather and the listed
 * forces call this for every vector; the general path below was a call
 * with a matrix product per dimension). The same arithmetic as the general
 * path gives for such a box, so the same bits. */
template<typename T>
Vec3<T> Pbc::dx(const Vec3<T>& xi, const Vec3<T>& xj) const
{
    if (triclinic_)
    {
        return dxTriclinic(xi, xj);
    }
    Vec3<T> d = xi - xj;
    for (int c = 0; c < 3; c++)
    {
        d[c] -= T(detail::roundNearest(d[c] * inv_[c]) * len_[c]);
    }
    return d;
}

template<typename T>
Vec3<T> Pbc::dxTriclinic(const Vec3<T>& xi, const Vec3<T>& xj) const
{
    const Matrix3& b   = box_.vectors();
    const Matrix3& inv = box_.inverse();
    Vec3<T>        d   = xi - xj;
    // Remove whole box vectors, c first, as the matrix is lower-triangular.
    for (int dim = 2; dim >= 0; dim--)
    {
        // fractional coordinate dim of d (only rows >= dim contribute through the
        // triangular inverse, but the full product is cheap and general)
        const double s     = d.x * inv(0, dim) + d.y * inv(1, dim) + d.z * inv(2, dim);
        const double shift = detail::roundNearest(s);
        if (shift != 0)
        {
            d.x -= T(shift * b(dim, 0));
            d.y -= T(shift * b(dim, 1));
            d.z -= T(shift * b(dim, 2));
        }
    }
    Vec3<T> best   = d;
    T       bestR2 = norm2(d);
    for (int i = -1; i <= 1; i++)
    {
        for (int j = -1; j <= 1; j++)
        {
            for (int k = -1; k <= 1; k++)
            {
                if (i == 0 && j == 0 && k == 0)
                {
                    continue;
                }
                Vec3<T> t = d;
                for (int c = 0; c < 3; c++)
                {
                    t[c] += T(i * b(0, c) + j * b(1, c) + k * b(2, c));
                }
                const T r2 = norm2(t);
                if (r2 < bestR2)
                {
                    bestR2 = r2;
                    best   = t;
                }
            }
        }
    }
    return best;
}

} // namespace putmd
