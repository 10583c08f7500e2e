/* tests/fuzz/targets/fuzz_common.h — what every putmd fuzz target treats as
 * the expected outcome of bad input.
 *
 * The readers report bad input with the documented user-facing errors of
 * core/error.h: InputError (and its AtomOverlapError) and SimulationError.
 * Those are caught here and the input is simply rejected. Anything else
 * (InternalError, std::out_of_range, std::bad_alloc, ...) escapes, reaches
 * std::terminate and libFuzzer reports it as a crash: a finding.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace putmd::fuzz
{

template<typename F>
int expectOnlyUserErrors(F&& f)
{
    try
    {
        f();
    }
    catch (const InputError&)
    {
    }
    catch (const SimulationError&)
    {
    }
    return 0;
}

inline std::string asText(const uint8_t* data, size_t size)
{
    return std::string(reinterpret_cast<const char*>(data), size);
}

} // namespace putmd::fuzz
