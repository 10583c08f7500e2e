/* tests/test_names.h — GoogleTest parameter names from free text. */
#pragma once

#include <cctype>
#include <string>

namespace putmd::test
{

/* Letters and digits kept, everything else '_' (GoogleTest's rule). */
inline std::string sanitizedTestName(std::string name)
{
    for (char& c : name)
    {
        if (!std::isalnum(static_cast<unsigned char>(c)))
        {
            c = '_';
        }
    }
    return name;
}

} // namespace putmd::test
