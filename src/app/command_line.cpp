#include "app/command_line.h"

#include <algorithm>

#include "core/error.h"

namespace putmd
{

const std::string& ParsedOptions::get(const std::string& name) const
{
    static const std::string empty;
    auto                     it = values_.find(name);
    return it == values_.end() || it->second.empty() ? empty : it->second.back();
}

const std::vector<std::string>& ParsedOptions::all(const std::string& name) const
{
    static const std::vector<std::string> none;
    auto                                  it = values_.find(name);
    return it == values_.end() ? none : it->second;
}

std::string usage(const std::string& command, const std::string& summary, const std::vector<OptionSpec>& specs)
{
    std::string u = "usage: putmd " + command;
    for (const auto& s : specs)
    {
        std::string o = "-" + s.name + (s.valueName.empty() ? "" : " " + s.valueName);
        u += " " + (s.required ? o : "[" + o + "]");
    }
    u += "\n  " + summary + "\noptions:\n";
    for (const auto& s : specs)
    {
        std::string o = "  -" + s.name + (s.valueName.empty() ? "" : " " + s.valueName);
        o.resize(std::max<size_t>(o.size() + 1, 20), ' ');
        u += o + s.help + (s.defaultValue.empty() ? "" : " (default: " + s.defaultValue + ")")
             + (s.repeatable ? " (may be repeated)" : "") + "\n";
    }
    return u;
}

ParsedOptions parseOptions(const std::string& command, const std::vector<OptionSpec>& specs, const std::vector<std::string>& args)
{
    ParsedOptions parsed;
    auto          find = [&](const std::string& name) -> const OptionSpec* {
        for (const auto& s : specs)
        {
            if (s.name == name)
            {
                return &s;
            }
        }
        return nullptr;
    };
    auto valid = [&]() {
        std::string v;
        for (const auto& s : specs)
        {
            v += (v.empty() ? "-" : ", -") + s.name;
        }
        return v;
    };
    for (size_t i = 0; i < args.size(); i++)
    {
        const std::string& a = args[i];
        if (a.size() < 2 || a[0] != '-')
        {
            throw InputError("putmd " + command + ": unexpected argument '" + a + "'; options start with '-' (valid: " + valid() + ")");
        }
        const std::string name = a.substr(a[1] == '-' ? 2 : 1);
        const OptionSpec* s    = find(name);
        if (!s)
        {
            throw InputError("putmd " + command + ": unknown option '" + a + "'; valid options: " + valid());
        }
        if (parsed.values_.count(name) && !s->repeatable)
        {
            throw InputError("putmd " + command + ": option -" + name + " given twice");
        }
        if (s->valueName.empty())
        {
            parsed.values_[name].push_back("yes");
            continue;
        }
        if (i + static_cast<size_t>(s->numValues) >= args.size())
        {
            throw InputError("putmd " + command + ": option -" + name + " needs "
                             + (s->numValues == 1 ? std::string("a value") : std::to_string(s->numValues) + " values")
                             + " (" + s->valueName + ")");
        }
        for (int k = 0; k < s->numValues; k++)
        {
            parsed.values_[name].push_back(args[++i]);
        }
    }
    for (const auto& s : specs)
    {
        if (!parsed.has(s.name))
        {
            if (s.required)
            {
                throw InputError("putmd " + command + ": missing required option -" + s.name + " " + s.valueName + " (" + s.help + ")");
            }
            if (!s.defaultValue.empty())
            {
                parsed.values_[s.name].push_back(s.defaultValue);
            }
        }
    }
    return parsed;
}

} // namespace putmd
