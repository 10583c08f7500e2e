/* core/box.h — periodic boxes (rectangular and triclinic) and minimum images.
 *
 * A box is three vectors a, b, c stored as matrix rows, in GROMACS's
 * lower-triangular form: a = (ax,0,0), b = (bx,by,0), c = (cx,cy,cz), with
 * |bx| <= ax/2, |cx| <= ax/2, |cy| <= by/2. Fractional coordinates s satisfy
 * x = s0*a + s1*b + s2*c. The perpendicular width of the box along d (the
 * distance between the two faces spanned by the other two vectors) limits the
 * cut-off: a pair interaction must see at most one image of each atom, so the
 * cut-off must be below half the smallest width.
 */
#pragma once

#include <string>

#include "core/vec.h"

namespace putmd
{

class Box
{
public:
    Box() = default;
    explicit Box(const Matrix3& vectors);

    const Matrix3& vectors() const { return v_; }
    /* Row d of the inverse: fractional coordinate d of x is dot(x, column d). */
    const Matrix3& inverse() const { return inv_; }
    double         volume() const { return volume_; }
    bool           isTriclinic() const { return triclinic_; }
    /* Distance between the faces not containing vector d. */
    double perpendicularWidth(int d) const { return width_[d]; }
    double minPerpendicularWidth() const;

    DVec toFractional(const DVec& x) const;
    DVec fromFractional(const DVec& s) const;

    /* Checks GROMACS's lower-triangular restrictions; returns "" when fine,
     * otherwise a sentence saying which element breaks which rule. */
    std::string checkGromacsForm() const;

private:
    Matrix3 v_;
    Matrix3 inv_;
    double  volume_ = 0;
    bool    triclinic_ = false;
    DVec    width_;
};

/* Minimum-image displacement for short vectors (listed interactions,
 * exclusions). Works for any box in GROMACS form: the fractional rounding
 * guess is refined over the neighbouring images when the box is triclinic. */
class Pbc
{
public:
    explicit Pbc(const Box& box);

    // always inlined, with the triclinic path a call: GCC otherwise kept
    // the whole as one out-of-line function (1.4% of a rnase run, most of
    // it SETTLE's gather)
    template<typename T>
    [[gnu::always_inline]] inline Vec3<T> dx(const Vec3<T>& xi, const Vec3<T>& xj) const; // xi - xj, minimum image
    const Box& box() const { return box_; }

private:
    template<typename T>
    [[gnu::noinline]] Vec3<T> dxTriclinic(const Vec3<T>& xi, const Vec3<T>& xj) const;

    Box    box_;
    bool   triclinic_;
    double len_[3], inv_[3]; // a rectangular box's diagonal and its inverse's
};

} // namespace putmd

#include "core/box_impl.h"
