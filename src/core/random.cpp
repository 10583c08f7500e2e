#include "core/random.h"

#include <cmath>

#include "core/units.h"

namespace putmd
{

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k)
{
    constexpr uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
    constexpr uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
    for (int round = 0; round < 10; round++)
    {
        const uint64_t p0 = uint64_t(m0) * c[0];
        const uint64_t p1 = uint64_t(m1) * c[2];
        c = { uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0) };
        k[0] += w0;
        k[1] += w1;
    }
    return c;
}

CounterRandom::CounterRandom(uint64_t seed, RandomPurpose purpose, uint64_t step, uint32_t index) :
    key_{ uint32_t(seed), uint32_t(seed >> 32) },
    counter_{ uint32_t(step), uint32_t(step >> 32), index, uint32_t(purpose) << 24 }
{
}

std::array<uint32_t, 4> CounterRandom::next4()
{
    const auto out = philox4x32(counter_, key_);
    counter_[3]++; // the low 24 bits of word 3 count the draws of this stream
    return out;
}

double CounterRandom::uniform()
{
    if (used_ >= 3)
    {
        buffer_ = next4();
        used_   = 0;
    }
    // 53 random bits from two words, shifted into (0, 1)
    const uint64_t hi = buffer_[used_] >> 5, lo = buffer_[used_ + 1] >> 6;
    used_ += 2;
    return (double(hi * 67108864ull + lo) + 0.5) / 9007199254740992.0;
}

double CounterRandom::normal()
{
    if (haveSpareNormal_)
    {
        haveSpareNormal_ = false;
        return spareNormal_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double r  = std::sqrt(-2 * std::log(u1));
    spareNormal_     = r * std::sin(2 * units::pi * u2);
    haveSpareNormal_ = true;
    return r * std::cos(2 * units::pi * u2);
}

double CounterRandom::gamma(double shape)
{
    if (shape < 1)
    {
        // boost: Gamma(a) = Gamma(a+1) U^(1/a)
        return gamma(shape + 1) * std::pow(uniform(), 1 / shape);
    }
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    while (true)
    {
        double x, v;
        do
        {
            x = normal();
            v = 1 + c * x;
        } while (v <= 0);
        v           = v * v * v;
        const double u = uniform();
        if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))
        {
            return d * v;
        }
    }
}

} // namespace putmd
