/* app/command_line.h — GROMACS-style command-line options, typed and parsed
 * in one place.
 *
 * Options are single-dash words as in gmx (-p, -c, -f, -o, -I, -deffnm);
 * each command declares its options with a help line, and anything
 * unknown, repeated (unless repeatable) or missing is an error that lists the
 * valid options.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

namespace putmd
{

struct OptionSpec
{
    std::string name;       // without the dash, e.g. "p"
    std::string valueName;  // e.g. "TOP"; empty for flags
    std::string help;
    std::string defaultValue;
    bool        required   = false;
    bool        repeatable = false;
    int         numValues  = 1; // values after the option (-dd 2 1 1 takes 3)
};

class ParsedOptions
{
public:
    bool                            has(const std::string& name) const { return values_.count(name) > 0; }
    const std::string&              get(const std::string& name) const;
    const std::vector<std::string>& all(const std::string& name) const;

private:
    friend ParsedOptions parseOptions(const std::string&, const std::vector<OptionSpec>&, const std::vector<std::string>&);
    std::map<std::string, std::vector<std::string>> values_;
};

/* Throws InputError with a usage summary on bad arguments. */
ParsedOptions parseOptions(const std::string& command, const std::vector<OptionSpec>& specs, const std::vector<std::string>& args);

std::string usage(const std::string& command, const std::string& summary, const std::vector<OptionSpec>& specs);

} // namespace putmd
