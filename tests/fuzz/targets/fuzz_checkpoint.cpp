/* tests/fuzz/targets/fuzz_checkpoint.cpp — libFuzzer target for the
 * checkpoint reader (io/checkpoint.h decodeCheckpoint): the input is the
 * file's bytes.
 *
 * A mutated file almost never keeps a valid checksum, so the body parser
 * would hardly be reached. Each input is therefore decoded twice: as it is,
 * and with the header's body length and the trailing checksum rewritten to
 * match (when it starts with the magic and is long enough), so the body's
 * counts, strings, flags and values are fuzzed behind a valid checksum.
 * A checkpoint that decodes must encode again to a file that decodes to the
 * same encoding (encoder and decoder agree on the format).
 */
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "io/checkpoint.h"

namespace
{

void decodeAndCheck(std::span<const std::byte> bytes)
{
    using namespace putmd;
    fuzz::expectOnlyUserErrors([&] {
        const Checkpoint c     = decodeCheckpoint(bytes, "fuzz.cpt");
        const auto       again = encodeCheckpoint(c);
        if (encodeCheckpoint(decodeCheckpoint(again, "re-encoded.cpt")) != again || c.x.size() != c.numAtoms
            || (!c.v.empty() && c.v.size() != c.numAtoms))
        {
            __builtin_trap();
        }
    });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    decodeAndCheck({ bytes, size });
    constexpr size_t header = 20, checksum = 8;
    if (size >= header + checksum && std::memcmp(data, "PUTMDCPT", 8) == 0)
    {
        std::vector<std::byte> fixed(bytes, bytes + size);
        const uint64_t         length = size - header - checksum;
        std::memcpy(fixed.data() + 12, &length, 8);
        const uint64_t sum = putmd::fnv1a64(std::span(fixed).subspan(header, length));
        std::memcpy(fixed.data() + header + length, &sum, 8);
        decodeAndCheck(fixed);
    }
    return 0;
}
