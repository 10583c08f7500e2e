#include "io/text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace putmd
{

std::string_view trim(std::string_view s)
{
    const char* ws    = " \t\r\n\f\v";
    const auto  first = s.find_first_not_of(ws);
    if (first == std::string_view::npos)
    {
        return {};
    }
    const auto last = s.find_last_not_of(ws);
    return s.substr(first, last - first + 1);
}

std::vector<std::string> splitWhitespace(std::string_view s)
{
    std::vector<std::string> out;
    size_t                   i = 0;
    while (i < s.size())
    {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        {
            i++;
        }
        size_t j = i;
        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])))
        {
            j++;
        }
        if (j > i)
        {
            out.emplace_back(s.substr(i, j - i));
        }
        i = j;
    }
    return out;
}

std::string toLower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
    {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

std::optional<double> tryParseDouble(std::string_view token)
{
    const std::string t(trim(token));
    if (t.empty())
    {
        return std::nullopt;
    }
    errno     = 0;
    char* end = nullptr;
    // Fortran-style exponents (1.0d-3) appear in some force-field files
    std::string tt = t;
    for (char& c : tt)
    {
        if (c == 'd' || c == 'D')
        {
            c = 'e';
        }
    }
    const double v = std::strtod(tt.c_str(), &end);
    if (end != tt.c_str() + tt.size() || errno == ERANGE || !std::isfinite(v))
    {
        return std::nullopt;
    }
    return v;
}

std::optional<long> tryParseInt(std::string_view token)
{
    const std::string t(trim(token));
    if (t.empty())
    {
        return std::nullopt;
    }
    errno        = 0;
    char*      end = nullptr;
    const long v   = std::strtol(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || errno == ERANGE)
    {
        return std::nullopt;
    }
    return v;
}

double parseDouble(std::string_view token, const SourceLocation& where, const std::string& what)
{
    if (auto v = tryParseDouble(token))
    {
        return *v;
    }
    throw InputError(where, "expected a real number for " + what + ", found '" + std::string(token) + "'");
}

long parseInt(std::string_view token, const SourceLocation& where, const std::string& what)
{
    if (auto v = tryParseInt(token))
    {
        return *v;
    }
    throw InputError(where, "expected an integer for " + what + ", found '" + std::string(token) + "'");
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw InputError(SourceLocation{ path, 0 },
                         std::string("cannot open file for reading: ") + std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    size_t                   start = 0;
    while (start < text.size())
    {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
        {
            end = text.size();
        }
        size_t len = end - start;
        if (len > 0 && text[start + len - 1] == '\r')
        {
            len--;
        }
        lines.emplace_back(text, start, len);
        start = end + 1;
    }
    return lines;
}

} // namespace putmd
