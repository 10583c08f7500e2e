/* tests/fuzz/targets/fuzz_top.cpp — libFuzzer target for the topology path
 * from text to Topology: preprocessor (io/preprocessor.h), parser
 * (topology/topology_parser.h) and buildTopology, as `putmd run -p` takes it.
 *
 * The input is topol.top. Files are in memory only (PreprocessorOptions::
 * memoryFiles), so an #include can reach nothing on the real file system: the
 * fuzz input can include "ff.itp" (a small force field, below), "mol.itp" (a
 * water molecule type) or itself. A system of more than 1e6 atoms is not
 * built (a legal input that only costs time and memory).
 */
#include <map>

#include "fuzz_common.h"
#include "io/preprocessor.h"
#include "topology/build_topology.h"
#include "topology/topology_parser.h"

namespace
{

const char* kForceField = "[ defaults ]\n"
                          "1 2 yes 0.5 0.8333\n"
                          "[ atomtypes ]\n"
                          "CH3 6 15.035 0.0 A 0.3905 0.7322\n"
                          "CH2 6 14.027 0.0 A 0.3905 0.4937\n"
                          "OW 8 15.9994 -0.8476 A 0.316557 0.650194\n"
                          "HW 1 1.008 0.4238 A 0.0 0.0\n"
                          "[ bondtypes ]\n"
                          "CH3 CH2 1 0.153 334720.0\n"
                          "CH2 CH2 1 0.153 334720.0\n"
                          "[ angletypes ]\n"
                          "CH3 CH2 CH2 1 111.0 519.65\n"
                          "[ dihedraltypes ]\n"
                          "X CH2 CH2 X 9 0.0 5.92 3\n";

const char* kWater = "[ moleculetype ]\n"
                     "SOL 2\n"
                     "[ atoms ]\n"
                     "1 OW 1 SOL OW 1 -0.8476\n"
                     "2 HW 1 SOL HW1 1 0.4238\n"
                     "3 HW 1 SOL HW2 1 0.4238\n"
                     "#ifdef FLEXIBLE\n"
                     "[ bonds ]\n"
                     "1 2 1 0.1 345000\n"
                     "1 3 1 0.1 345000\n"
                     "#else\n"
                     "[ settles ]\n"
                     "1 1 0.1 0.16330\n"
                     "#endif\n";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace putmd;
    const std::map<std::string, std::string> files{ { "topol.top", fuzz::asText(data, size) },
                                                    { "ff.itp", kForceField },
                                                    { "mol.itp", kWater } };
    PreprocessorOptions options;
    options.memoryFiles = &files;
    return fuzz::expectOnlyUserErrors([&] {
        const TopologyFile file = parseTopology(preprocessTopology("topol.top", options), "topol.top");
        long               atoms = 0;
        for (const auto& block : file.molecules)
        {
            const MoleculeType* type = file.moleculeType(block.name);
            if (type && block.count > 0)
            {
                atoms += block.count * static_cast<long>(type->atoms.size());
            }
            if (atoms > 1000000)
            {
                return;
            }
        }
        for (ConstraintsMode mode : { ConstraintsMode::None, ConstraintsMode::AllBonds })
        {
            const Topology top = buildTopology(file, mode);
            if (top.numAtoms != static_cast<int>(top.mass.size()))
            {
                __builtin_trap();
            }
        }
    });
}
