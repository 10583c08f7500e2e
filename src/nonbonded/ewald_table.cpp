#include "nonbonded/ewald_table.h"

#include "core/units.h"

namespace putmd
{

EwaldTable::EwaldTable(double beta, double rmax)
{
    const double spacing = 1.0 / scale_;
    last_                = static_cast<int>(std::ceil(rmax / spacing)) + 1;
    value_.resize(last_ + 1);
    slope_.resize(last_ + 1);
    for (int i = 0; i <= last_; i++)
    {
        const double r = i * spacing;
        value_[i]      = real(std::erfc(beta * r));
        slope_[i]      = real(-2 * beta / std::sqrt(units::pi) * std::exp(-beta * beta * r * r));
    }
}

} // namespace putmd
