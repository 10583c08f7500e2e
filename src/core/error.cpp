#include "core/error.h"

#include <cstdlib>
#include <cstring>

namespace putmd
{

std::string SourceLocation::str() const
{
    if (file.empty())
    {
        return {};
    }
    return line > 0 ? file + ":" + std::to_string(line) : file;
}

static std::string withLocation(const SourceLocation& where, const std::string& what)
{
    const std::string loc = where.str();
    return loc.empty() ? what : loc + ": " + what;
}

InputError::InputError(SourceLocation where, const std::string& what) :
    std::runtime_error(withLocation(where, what)), where_(std::move(where))
{
}

InputError::InputError(const std::string& what) : std::runtime_error(what) {}

bool environmentChoice(const char* name, const char* first, const char* firstMeaning, const char* second,
                       const char* secondMeaning)
{
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0' || std::strcmp(v, first) == 0)
    {
        return false;
    }
    if (std::strcmp(v, second) == 0)
    {
        return true;
    }
    throw InputError(std::string("environment variable ") + name + " is '" + v + "'; valid values: " + first + " ("
                     + firstMeaning + ", the default) or " + second + " (" + secondMeaning + ")");
}

} // namespace putmd
