/* io/text.h — strict tokenising and number parsing for input files.
 *
 * Every reader goes through these helpers so that a bad number is always
 * reported the same way: the file and line, the text that was found and what
 * was expected. Numbers must consume their whole token ("1.0x" is an error).
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace putmd
{

std::string_view         trim(std::string_view s);
std::vector<std::string> splitWhitespace(std::string_view s);
std::string              toLower(std::string_view s);
bool                     startsWith(std::string_view s, std::string_view prefix);

std::optional<double> tryParseDouble(std::string_view token);
std::optional<long>   tryParseInt(std::string_view token);

/* Parse or throw InputError naming `what` (e.g. "charge of atom 3"). */
double parseDouble(std::string_view token, const SourceLocation& where, const std::string& what);
long   parseInt(std::string_view token, const SourceLocation& where, const std::string& what);

/* Read a whole file; throws InputError if it cannot be opened. */
std::string readFile(const std::string& path);
/* Split into lines without the terminators (handles \n and \r\n). */
std::vector<std::string> splitLines(const std::string& text);

} // namespace putmd
