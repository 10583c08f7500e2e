#include "io/preprocessor.h"

#include <filesystem>
#include <unordered_map>

#include "io/text.h"

namespace putmd
{

namespace
{

namespace fs = std::filesystem;

bool isIdentChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

struct Conditional
{
    bool           parentActive; // was the enclosing region active
    bool           condition;    // value of the #ifdef/#ifndef test
    bool           inElse = false;
    SourceLocation opened;
};

class Preprocessor
{
public:
    explicit Preprocessor(const PreprocessorOptions& options) : options_(options)
    {
        for (const auto& [k, v] : options.defines)
        {
            defines_[k] = v;
        }
    }

    void processFile(const std::string& path, const SourceLocation& includedFrom, int depth);

    std::vector<SourceLine> output;

private:
    bool        active() const { return conditionals_.empty() || (conditionals_.back().parentActive && currentCondition()); }
    bool        currentCondition() const { return conditionals_.back().inElse ? !conditionals_.back().condition : conditionals_.back().condition; }
    void        directive(const std::string& line, const SourceLocation& at, const std::string& file, int depth);
    std::string substitute(const std::string& line) const;
    std::string findInclude(const std::string& name, const std::string& includer, const SourceLocation& at) const;
    bool        isFile(const fs::path& p) const;
    std::string read(const std::string& path) const;

    const PreprocessorOptions&                   options_;
    std::unordered_map<std::string, std::string> defines_;
    std::vector<Conditional>                     conditionals_;
};

std::string stripComment(const std::string& s)
{
    const auto p = s.find(';');
    return p == std::string::npos ? s : s.substr(0, p);
}

std::string Preprocessor::substitute(const std::string& line) const
{
    if (defines_.empty())
    {
        return line;
    }
    std::string out;
    out.reserve(line.size());
    size_t i = 0;
    while (i < line.size())
    {
        if (isIdentChar(line[i]) && !std::isdigit(static_cast<unsigned char>(line[i])))
        {
            size_t j = i;
            while (j < line.size() && isIdentChar(line[j]))
            {
                j++;
            }
            const std::string word = line.substr(i, j - i);
            auto              it   = defines_.find(word);
            out += (it != defines_.end()) ? it->second : word;
            i = j;
        }
        else if (isIdentChar(line[i]))
        {
            // a token starting with a digit (a number such as 1e-3): copy whole
            size_t j = i;
            while (j < line.size() && (isIdentChar(line[j]) || line[j] == '.' || line[j] == '+' || line[j] == '-'))
            {
                j++;
            }
            out += line.substr(i, j - i);
            i = j;
        }
        else
        {
            out += line[i++];
        }
    }
    return out;
}

bool Preprocessor::isFile(const fs::path& p) const
{
    if (options_.memoryFiles)
    {
        return options_.memoryFiles->count(p.lexically_normal().string()) > 0;
    }
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

std::string Preprocessor::read(const std::string& path) const
{
    if (options_.memoryFiles)
    {
        const auto it = options_.memoryFiles->find(fs::path(path).lexically_normal().string());
        if (it == options_.memoryFiles->end())
        {
            throw InputError(SourceLocation{ path, 0 }, "cannot open file for reading: no such in-memory file");
        }
        return it->second;
    }
    return readFile(path);
}

std::string Preprocessor::findInclude(const std::string& name, const std::string& includer, const SourceLocation& at) const
{
    std::vector<std::string> tried;
    auto                     tryDir = [&](const fs::path& dir) -> std::string {
        const fs::path p = dir / name;
        tried.push_back(p.string());
        return isFile(p) ? p.string() : std::string();
    };
    if (fs::path(name).is_absolute())
    {
        if (isFile(name))
        {
            return name;
        }
        throw InputError(at, "included file '" + name + "' does not exist");
    }
    std::vector<fs::path> dirs{ fs::path(includer).parent_path() };
    for (const auto& d : options_.includeDirs)
    {
        dirs.emplace_back(d);
    }
    for (const auto& d : options_.gmxlibDirs)
    {
        dirs.emplace_back(d);
    }
    if (!options_.dataDir.empty())
    {
        dirs.emplace_back(options_.dataDir);
    }
    for (const auto& d : dirs)
    {
        if (auto found = tryDir(d.empty() ? fs::path(".") : d); !found.empty())
        {
            return found;
        }
    }
    std::string msg = "cannot find included file '" + name + "'; looked for:";
    for (const auto& t : tried)
    {
        msg += "\n    " + t;
    }
    msg += "\n  add the directory that holds it with -I DIR (or the mdp key 'include = -IDIR'), or set GMXLIB";
    throw InputError(at, msg);
}

void Preprocessor::directive(const std::string& rawLine, const SourceLocation& at, const std::string& file, int depth)
{
    const std::string        line = std::string(trim(stripComment(rawLine)));
    const auto               tok  = splitWhitespace(line.substr(1));
    const std::string        name = tok.empty() ? std::string() : tok[0];
    auto                     need = [&](size_t n, const char* what) {
        if (tok.size() < n + 1)
        {
            throw InputError(at, "#" + name + " needs " + what);
        }
    };
    if (name == "ifdef" || name == "ifndef")
    {
        need(1, "a macro name");
        const bool defined = defines_.count(tok[1]) > 0;
        conditionals_.push_back({ active(), name == "ifdef" ? defined : !defined, false, at });
        return;
    }
    if (name == "else")
    {
        if (conditionals_.empty() || conditionals_.back().inElse)
        {
            throw InputError(at, "#else without a matching #ifdef or #ifndef");
        }
        conditionals_.back().inElse = true;
        return;
    }
    if (name == "endif")
    {
        if (conditionals_.empty())
        {
            throw InputError(at, "#endif without a matching #ifdef or #ifndef");
        }
        conditionals_.pop_back();
        return;
    }
    if (!active())
    {
        return; // other directives inside a false branch are skipped
    }
    if (name == "define")
    {
        need(1, "a macro name");
        // the name's first occurrence after the keyword ("#define e 1" must
        // not find the 'e' of "define")
        const auto   pos   = line.find(tok[1], line.find("define") + 6);
        const size_t start = pos + tok[1].size();
        defines_[tok[1]]   = std::string(trim(line.substr(start)));
    }
    else if (name == "undef")
    {
        need(1, "a macro name");
        defines_.erase(tok[1]);
    }
    else if (name == "include")
    {
        need(1, "a file name in quotes or angle brackets");
        const std::string rest = std::string(trim(line.substr(line.find("include") + 7)));
        if (rest.size() < 2 || !((rest.front() == '"' && rest.back() == '"') || (rest.front() == '<' && rest.back() == '>')))
        {
            throw InputError(at, "#include needs a file name in quotes or angle brackets, found '" + rest + "'");
        }
        const std::string inc = rest.substr(1, rest.size() - 2);
        processFile(findInclude(inc, file, at), at, depth + 1);
    }
    else if (name == "if" || name == "elif")
    {
        throw InputError(at, "#" + name + " expressions are not supported by GROMACS topologies; use #ifdef/#ifndef/#else/#endif");
    }
    else
    {
        throw InputError(at, "unknown preprocessor directive '#" + name
                                     + "'; valid: #include, #define, #undef, #ifdef, #ifndef, #else, #endif");
    }
}

void Preprocessor::processFile(const std::string& path, const SourceLocation& includedFrom, int depth)
{
    if (depth > 64)
    {
        throw InputError(includedFrom, "#include nested more than 64 deep (does a file include itself?)");
    }
    std::string text;
    try
    {
        text = read(path);
    }
    catch (const InputError& e)
    {
        if (includedFrom.file.empty())
        {
            throw;
        }
        throw InputError(includedFrom, std::string("cannot read included file: ") + e.what());
    }
    const auto   lines       = splitLines(text);
    const size_t depthBefore = conditionals_.size();
    for (size_t i = 0; i < lines.size(); i++)
    {
        SourceLocation at{ path, static_cast<int>(i) + 1 };
        std::string    line = lines[i];
        while (!line.empty() && line.back() == '\\' && i + 1 < lines.size())
        {
            line.pop_back();
            line += " " + lines[++i];
        }
        const std::string_view t = trim(line);
        if (!t.empty() && t[0] == '#')
        {
            directive(std::string(t), at, path, depth);
            continue;
        }
        if (!active())
        {
            continue;
        }
        std::string code = stripComment(line);
        if (trim(code).empty())
        {
            continue;
        }
        output.push_back({ substitute(code), at });
    }
    if (conditionals_.size() > depthBefore)
    {
        throw InputError(conditionals_.back().opened, "unterminated #ifdef/#ifndef: no #endif before the end of " + path);
    }
}

} // namespace

std::vector<SourceLine> preprocessTopology(const std::string& path, const PreprocessorOptions& options)
{
    Preprocessor pp(options);
    pp.processFile(path, SourceLocation{}, 0);
    return std::move(pp.output);
}

} // namespace putmd
