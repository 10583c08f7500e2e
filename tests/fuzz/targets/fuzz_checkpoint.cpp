/* tests/fuzz/targets/fuzz_checkpoint.cpp — libFuzzer target for the
 * checkpoint reader (io/checkpoint.h decodeCheckpoint): the input is the
 * file's bytes. A checkpoint that decodes must encode again to a file that
 * decodes to the same encoding (encoder and decoder agree on the format).
 */
#include <cstring>

#include "fuzz_common.h"
#include "io/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace putmd;
    return fuzz::expectOnlyUserErrors([&] {
        const Checkpoint c     = decodeCheckpoint(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.cpt");
        const auto       bytes = encodeCheckpoint(c);
        const auto       again = encodeCheckpoint(decodeCheckpoint(bytes, "re-encoded.cpt"));
        if (bytes != again || c.x.size() != c.numAtoms || (!c.v.empty() && c.v.size() != c.numAtoms))
        {
            __builtin_trap();
        }
    });
}
