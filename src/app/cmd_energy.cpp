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
#include "app/input_options.h"
#include "core/real.h"
#include "io/atomic_file.h"
#include "io/text.h"
#include "run/single_point.h"
#include "run/system_inputs.h"

namespace putmd
{

namespace
{

std::vector<OptionSpec> energyOptions()
{
    auto specs = inputFileOptions("coordinates (.gro)");
    specs.push_back({ "o", "JSON", "output: energies and forces as JSON", "energy.json" });
    specs.push_back({ "h", "", "print this help", "" });
    return specs;
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
    if (!r.groupTermNames.empty())
    {
        nlohmann::ordered_json g = nlohmann::ordered_json::object();
        for (size_t k = 0; k < r.groupTermNames.size(); k++)
        {
            g[r.groupTermNames[k]] = r.groupTerms[k];
        }
        j["group_energies"] = g;
    }
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
    for (size_t k = 0; k < r.groupTermNames.size(); k++)
    {
        std::cout << fmt::format("{:<16} {:>24.10f}\n", r.groupTermNames[k], r.groupTerms[k]);
    }
}

} // namespace

int runEnergyCommand(const std::vector<std::string>& args)
{
    const auto  specs   = energyOptions();
    const char* summary = "single-point energies and forces of one configuration (as gmx mdrun -rerun)";
    const auto  opt     = parseOptions("energy", specs, args);
    if (opt.has("h"))
    {
        std::cout << usage("energy", summary, specs);
        return 0;
    }
    const InputPaths paths = inputPathsFrom(opt);

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
