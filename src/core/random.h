/* core/random.h — counter-based random numbers.
 *
 * Philox4x32-10 (Salmon et al., SC'11): a keyed bijection of a 128-bit
 * counter, so the random numbers of (seed, step, purpose, index) are a pure
 * function of those values. A run is reproducible from its seed, a
 * restart needs no saved generator state, and numbers do not depend on the
 * number of ranks or the order of calls. On top: uniform doubles in (0,1),
 * standard normals (Box-Muller) and gamma deviates (Marsaglia-Tsang).
 */
#pragma once

#include <array>
#include <cstdint>

namespace putmd
{

enum class RandomPurpose : uint32_t
{
    VelocityGeneration = 1,
    VRescale           = 2,
    CRescale           = 3,
};

/* One stream: (seed, purpose, step, index) -> a sequence of numbers. */
class CounterRandom
{
public:
    CounterRandom(uint64_t seed, RandomPurpose purpose, uint64_t step, uint32_t index);

    double uniform();  // in (0, 1)
    double normal();   // mean 0, variance 1
    double gamma(double shape); // shape > 0, scale 1

private:
    std::array<uint32_t, 4> next4();

    std::array<uint32_t, 2> key_;
    std::array<uint32_t, 4> counter_;
    std::array<uint32_t, 4> buffer_{};
    int                     used_ = 4;
    bool                    haveSpareNormal_ = false;
    double                  spareNormal_     = 0;
};

/* The raw Philox4x32-10 bijection (exposed for tests). */
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

} // namespace putmd
