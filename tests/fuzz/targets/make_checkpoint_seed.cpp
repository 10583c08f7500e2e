/* tests/fuzz/targets/make_checkpoint_seed.cpp — writes small valid
 * checkpoints for the checkpoint fuzz target's seed corpus:
 *   make_checkpoint_seed DIR */
#include <cstdio>
#include <fstream>

#include "io/checkpoint.h"

int main(int argc, char** argv)
{
    using namespace putmd;
    if (argc != 2)
    {
        std::fprintf(stderr, "usage: make_checkpoint_seed DIR\n");
        return 2;
    }
    Checkpoint c;
    c.precisionBytes = 4;
    c.version        = "0.1.0";
    c.step           = 1000;
    c.time           = 2.0;
    c.numAtoms       = 3;
    c.topologyFingerprint = 0x1234abcd5678ef90ull;
    c.systemName     = "one water";
    c.box(0, 0) = c.box(1, 1) = c.box(2, 2) = 1.86;
    c.x = { { 0.1, 0.2, 0.3 }, { 0.2, 0.2, 0.3 }, { 0.1, 0.3, 0.3 } };
    c.v = { { 0.5, -0.1, 0.0 }, { 1.0, 0.2, -0.3 }, { -0.4, 0.0, 0.9 } };
    c.thermostatIntegral = -1.5;
    c.rlist              = 1.1;
    c.nstlist            = 10;
    c.ldSeed             = 12345;
    c.noseHooverXi       = { 0.25 };
    c.averageNames       = { "Potential", "Temperature" };
    c.averageSums        = { -410.0, 3000.0 };
    c.averageCount       = 10;
    c.stepOutputsWritten = true;
    c.ranks              = 2;
    c.backend            = "p2p";
    c.files              = { { "md.edr", 1200, 99 }, { "md.xtc", 4000, 7 } };
    const std::string dir = argv[1];
    auto write = [&](const std::string& name, const Checkpoint& ck) {
        const auto    bytes = encodeCheckpoint(ck);
        std::ofstream out(dir + "/" + name, std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    };
    write("water.cpt", c);
    Checkpoint empty;
    empty.precisionBytes = 8;
    empty.rlist          = 0.9;
    empty.nstlist        = 1;
    write("empty.cpt", empty);
    return 0;
}
