/* core/vec.h — small fixed-size 3-vectors and 3x3 matrices.
 *
 * Vec3<T> is the value type for positions, forces and box vectors. Boxes are
 * stored as GROMACS does: three box vectors as the rows of a lower-triangular
 * matrix (a = row 0, b = row 1, c = row 2).
 */
#pragma once

#include <array>
#include <cmath>

namespace putmd
{

template<typename T>
struct Vec3
{
    T x{}, y{}, z{};

    constexpr Vec3() = default;
    constexpr Vec3(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
    template<typename U>
    constexpr explicit Vec3(const Vec3<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z))
    {
    }

    constexpr T&       operator[](int d) { return d == 0 ? x : (d == 1 ? y : z); }
    constexpr const T& operator[](int d) const { return d == 0 ? x : (d == 1 ? y : z); }

    constexpr Vec3& operator+=(const Vec3& o)
    {
        x += o.x;
        y += o.y;
        z += o.z;
        return *this;
    }
    constexpr Vec3& operator-=(const Vec3& o)
    {
        x -= o.x;
        y -= o.y;
        z -= o.z;
        return *this;
    }
    constexpr Vec3& operator*=(T s)
    {
        x *= s;
        y *= s;
        z *= s;
        return *this;
    }
    friend constexpr Vec3 operator+(Vec3 a, const Vec3& b) { return a += b; }
    friend constexpr Vec3 operator-(Vec3 a, const Vec3& b) { return a -= b; }
    friend constexpr Vec3 operator-(const Vec3& a) { return { -a.x, -a.y, -a.z }; }
    friend constexpr Vec3 operator*(Vec3 a, T s) { return a *= s; }
    friend constexpr Vec3 operator*(T s, Vec3 a) { return a *= s; }
};

template<typename T>
constexpr T dot(const Vec3<T>& a, const Vec3<T>& b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

template<typename T>
constexpr Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b)
{
    return { a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x };
}

template<typename T>
constexpr T norm2(const Vec3<T>& a)
{
    return dot(a, a);
}

template<typename T>
T norm(const Vec3<T>& a)
{
    return std::sqrt(norm2(a));
}

using DVec = Vec3<double>;

/* Row-major 3x3 matrix; for a box, row d is box vector d. */
struct Matrix3
{
    std::array<std::array<double, 3>, 3> m{};

    double&       operator()(int r, int c) { return m[r][c]; }
    const double& operator()(int r, int c) const { return m[r][c]; }
    DVec          row(int r) const { return { m[r][0], m[r][1], m[r][2] }; }
};

/* The virial contribution of force f acting at r (relative to a reference
 * point): virial -= 0.5 r (x) f, GROMACS's convention. */
template<typename T>
void addVirial(Matrix3& virial, const Vec3<T>& r, const Vec3<T>& f)
{
    for (int a = 0; a < 3; a++)
    {
        for (int b = 0; b < 3; b++)
        {
            virial(a, b) -= 0.5 * double(r[a]) * double(f[b]);
        }
    }
}

} // namespace putmd
