#include "core/error.h"

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

} // namespace putmd
