#include "io/index_file.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/text.h"

namespace putmd
{

std::vector<IndexGroup> parseIndexFile(const std::string& text, const std::string& path)
{
    std::vector<IndexGroup> groups;
    std::istringstream      in(text);
    std::string             line;
    int                     lineNo = 0;
    while (std::getline(in, line))
    {
        lineNo++;
        const auto trimmed = std::string(trim(line));
        if (trimmed.empty())
        {
            continue;
        }
        const SourceLocation at{ path, lineNo };
        if (trimmed[0] == '[')
        {
            const auto close = trimmed.find(']');
            if (close == std::string::npos)
            {
                throw InputError(at, "group header '" + trimmed + "' has no closing ']'");
            }
            IndexGroup g;
            g.name  = std::string(trim(trimmed.substr(1, close - 1)));
            g.where = at;
            if (g.name.empty())
            {
                throw InputError(at, "group header '" + trimmed + "' has no name");
            }
            groups.push_back(std::move(g));
            continue;
        }
        if (groups.empty())
        {
            throw InputError(at, "atom numbers before the first [ group ] header; an index file starts with '[ name ]'");
        }
        std::istringstream fields(trimmed);
        for (std::string tok; fields >> tok;)
        {
            const long a = parseInt(tok, at, "an atom number");
            if (a < 1)
            {
                throw InputError(at, "atom number " + tok + " in group '" + groups.back().name
                                             + "' is not valid; atom numbers start at 1");
            }
            groups.back().atoms.push_back(static_cast<int>(a - 1));
            groups.back().lines.push_back(lineNo);
        }
    }
    return groups;
}

std::vector<IndexGroup> readIndexFile(const std::string& path)
{
    std::ifstream f(path);
    if (!f)
    {
        throw InputError(SourceLocation{ path, 0 }, "cannot open the index file");
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    return parseIndexFile(ss.str(), path);
}

} // namespace putmd
