/* tests/fuzz/targets/fuzz_gro.cpp — libFuzzer target for the .gro reader
 * (io/gro.h parseGro): the input is the file's text. */
#include "fuzz_common.h"
#include "io/gro.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    return putmd::fuzz::expectOnlyUserErrors([&] {
        const putmd::GroFile g = putmd::parseGro(putmd::fuzz::asText(data, size), "fuzz.gro");
        // what a successful read promises
        if (g.atoms.size() != g.x.size() || (!g.v.empty() && g.v.size() != g.x.size()))
        {
            __builtin_trap();
        }
    });
}
