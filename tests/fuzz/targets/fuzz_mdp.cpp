/* tests/fuzz/targets/fuzz_mdp.cpp — libFuzzer target for the .mdp reader
 * (io/mdp.h parseMdp): the input is the file's text. */
#include "fuzz_common.h"
#include "io/mdp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    return putmd::fuzz::expectOnlyUserErrors([&] {
        const auto r = putmd::parseMdp(putmd::fuzz::asText(data, size), "fuzz.mdp");
        for (const auto& [key, where] : r.options.setAt)
        {
            (void)r.options.where(key);
        }
    });
}
