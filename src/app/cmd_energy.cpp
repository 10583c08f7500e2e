/* app/cmd_energy.cpp — `putmd energy`: a single-point energy and force
 * evaluation, as `gmx mdrun -rerun` does for one frame. Prints the energy
 * terms as a table and writes them with the forces as JSON. */
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/command_line.h"
#include "app/commands.h"
#include "core/real.h"
#include "io/atomic_file.h"
#include "io/text.h"
#include "run/single_point.h"
#include "run/system_inputs.h"

namespace putmd
{

namespace
{

const std::vector<OptionSpec>& energyOptions()
{
    static const std::vector<OptionSpec> specs = {
        { "p", "TOP", "topology (.top)", "topol.top" },
        { "c", "GRO", "coordinates (.gro)", "conf.gro" },
        { "f", "MDP", "run parameters (.mdp)", "grompp.mdp" },
        { "o", "JSON", "output: energies and forces as JSON", "energy.json" },
        { "I", "DIR", "extra directory to search for #include files", "", false, true },
        { "h", "", "print this help", "" },
    };
    return specs;
}

std::vector<std::string> splitPathList(const char* s)
{
    std::vector<std::string> out;
    if (!s)
    {
        return out;
    }
    std::stringstream ss(s);
    std::string       item;
    while (std::getline(ss, item, ':'))
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

std::string toJson(const SystemInputs& in, const SinglePointResult& r)
{
    nlohmann::ordered_json j;
    j["natoms"] = in.topology.numAtoms;
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (r.energies.present[t])
        {
            e[energyTermName(static_cast<EnergyTerm>(t))] = r.energies.value[t];
        }
    }
    j["energies"] = e;
    nlohmann::ordered_json f = nlohmann::ordered_json::array();
    for (const auto& v : r.forces)
    {
        f.push_back({ double(v.x), double(v.y), double(v.z) });
    }
    j["forces"] = std::move(f);
    if (r.pmeGrid[0] > 0)
    {
        j["pme_grid"]          = { r.pmeGrid[0], r.pmeGrid[1], r.pmeGrid[2] };
        j["ewald_coefficient"] = r.ewaldCoeff;
    }
    j["putmd"] = { { "version", PUTMD_VERSION }, { "precision", precisionName() } };
    return j.dump(1) + "\n";
}

void printTable(const SystemInputs& in, const SinglePointResult& r)
{
    std::cout << fmt::format("putmd {} ({} precision): single point of {} atoms\n", PUTMD_VERSION, precisionName(),
                             in.topology.numAtoms);
    if (r.pmeGrid[0] > 0)
    {
        std::cout << fmt::format("PME grid {} x {} x {}, order {}, Ewald coefficient {:.6f} nm^-1\n", r.pmeGrid[0],
                                 r.pmeGrid[1], r.pmeGrid[2], in.mdp.pmeOrder, r.ewaldCoeff);
    }
    std::cout << fmt::format("{:<16} {:>24}\n", "Energy", "kJ/mol");
    for (int t = 0; t < numEnergyTerms; t++)
    {
        if (r.energies.present[t])
        {
            std::cout << fmt::format("{:<16} {:>24.10f}\n", energyTermName(static_cast<EnergyTerm>(t)), r.energies.value[t]);
        }
    }
    if (in.mdp.dispCorr == DispCorr::EnerPres)
    {
        std::cout << fmt::format("{:<16} {:>24.10f}\n", "Pres. DC (bar)", r.dispCorrPressure);
    }
}

} // namespace

int runEnergyCommand(const std::vector<std::string>& args)
{
    const auto& specs = energyOptions();
    const char* summary = "single-point energies and forces of one configuration (as gmx mdrun -rerun)";
    const auto  opt     = parseOptions("energy", specs, args);
    if (opt.has("h"))
    {
        std::cout << usage("energy", summary, specs);
        return 0;
    }
    InputPaths paths;
    paths.topology    = opt.get("p");
    paths.coordinates = opt.get("c");
    paths.mdp         = opt.get("f");
    paths.includeDirs = opt.all("I");
    // GMXLIB is GROMACS's own search path convention for force fields.
    paths.gmxlibDirs = splitPathList(std::getenv("GMXLIB"));

    const SystemInputs in = loadSystem(paths);
    for (const auto& w : in.warnings)
    {
        std::cerr << "warning: " << w << "\n";
    }
    const SinglePointResult r = computeSinglePoint(in.topology, in.mdp, in.coordinates.box, in.coordinates.x, paths.coordinates);
    printTable(in, r);
    writeFileAtomically(opt.get("o"), toJson(in, r));
    std::cout << "wrote " << opt.get("o") << "\n";
    return 0;
}

} // namespace putmd
