#include "core/box.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace putmd
{

Box::Box(const Matrix3& v) : v_(v)
{
    const DVec a = v.row(0), b = v.row(1), c = v.row(2);
    volume_      = dot(a, cross(b, c));
    if (std::abs(volume_) > 0)
    {
        // inverse of the row matrix: columns are the reciprocal vectors
        const DVec ra = cross(b, c) * (1.0 / volume_);
        const DVec rb = cross(c, a) * (1.0 / volume_);
        const DVec rc = cross(a, b) * (1.0 / volume_);
        for (int d = 0; d < 3; d++)
        {
            inv_(d, 0) = ra[d];
            inv_(d, 1) = rb[d];
            inv_(d, 2) = rc[d];
        }
        width_ = { volume_ / norm(cross(b, c)), volume_ / norm(cross(c, a)), volume_ / norm(cross(a, b)) };
    }
    triclinic_ = v(0, 1) != 0 || v(0, 2) != 0 || v(1, 0) != 0 || v(1, 2) != 0 || v(2, 0) != 0
                 || v(2, 1) != 0;
}

double Box::minPerpendicularWidth() const
{
    return std::min({ width_.x, width_.y, width_.z });
}

DVec Box::toFractional(const DVec& x) const
{
    DVec s;
    for (int d = 0; d < 3; d++)
    {
        s[d] = x.x * inv_(0, d) + x.y * inv_(1, d) + x.z * inv_(2, d);
    }
    return s;
}

DVec Box::fromFractional(const DVec& s) const
{
    return v_.row(0) * s.x + v_.row(1) * s.y + v_.row(2) * s.z;
}

std::string Box::checkGromacsForm() const
{
    std::ostringstream out;
    const auto&        m = v_;
    if (m(0, 0) <= 0 || m(1, 1) <= 0 || m(2, 2) <= 0)
    {
        out << "the diagonal box elements must be positive (got " << m(0, 0) << ", " << m(1, 1)
            << ", " << m(2, 2) << ")";
    }
    else if (m(0, 1) != 0 || m(0, 2) != 0 || m(1, 2) != 0)
    {
        out << "the box must be lower-triangular (a along x, b in the xy plane): a_y, a_z and "
               "b_z must be 0";
    }
    else if (std::abs(m(1, 0)) > 0.5 * m(0, 0) * (1 + 1e-6) || std::abs(m(2, 0)) > 0.5 * m(0, 0) * (1 + 1e-6)
             || std::abs(m(2, 1)) > 0.5 * m(1, 1) * (1 + 1e-6))
    {
        out << "the box is too skewed: |b_x| and |c_x| must be at most a_x/2 and |c_y| at most "
               "b_y/2 (use 'gmx trjconv -pbc mol' or 'gmx editconf' to put it in GROMACS's "
               "reduced form)";
    }
    return out.str();
}

Pbc::Pbc(const Box& box) : box_(box), triclinic_(box.isTriclinic())
{
    for (int c = 0; c < 3; c++)
    {
        len_[c] = box.vectors()(c, c);
        inv_[c] = box.inverse()(c, c);
    }
}

} // namespace putmd
