#include "app/input_options.h"

#include <cstdlib>
#include <sstream>

namespace putmd
{

std::vector<OptionSpec> inputFileOptions(const std::string& coordinatesHelp)
{
    return {
        { "p", "TOP", "topology (.top)", "topol.top" },
        { "c", "GRO", coordinatesHelp, "conf.gro" },
        { "f", "MDP", "run parameters (.mdp)", "grompp.mdp" },
        { "r", "GRO", "position-restraint reference coordinates (.gro; default: the -c file)", "" },
        { "n", "NDX", "index groups (.ndx) for tc-grps, freezegrps, compressed-x-grps, comm-grps, energygrps (default: GROMACS's default groups)", "" },
        { "I", "DIR", "extra directory to search for #include files", "", false, true },
    };
}

InputPaths inputPathsFrom(const ParsedOptions& opt)
{
    InputPaths paths;
    paths.topology    = opt.get("p");
    paths.coordinates = opt.get("c");
    paths.mdp         = opt.get("f");
    paths.restraintReference = opt.get("r");
    paths.indexFile          = opt.get("n");
    paths.includeDirs = opt.all("I");
    if (const char* gmxlib = std::getenv("GMXLIB"))
    {
        std::stringstream ss(gmxlib);
        for (std::string dir; std::getline(ss, dir, ':');)
        {
            if (!dir.empty())
            {
                paths.gmxlibDirs.push_back(dir);
            }
        }
    }
    return paths;
}

} // namespace putmd
