/* core/error.h — the errors putmd reports to users.
 *
 * Every error that comes from input names where it came from (file and line
 * when there is one), the offending value, and what would be valid. Errors are
 * exceptions caught once in the command-line driver, which prints them and
 * exits with status 1; nothing in putmd calls exit() or abort() on bad input.
 */
#pragma once

#include <stdexcept>
#include <string>

namespace putmd
{

/* Where a piece of input came from. line is 1-based; 0 means "whole file". */
struct SourceLocation
{
    std::string file;
    int         line = 0;

    std::string str() const;
};

/* Bad input: a file, an option or a combination the user must change. */
class InputError : public std::runtime_error
{
public:
    InputError(SourceLocation where, const std::string& what);
    explicit InputError(const std::string& what);

    const SourceLocation& where() const { return where_; }

private:
    SourceLocation where_;
};

/* An environment variable that must be one of two words: false for `first`
 * (also when unset or empty), true for `second`. Any other value throws
 * InputError: "environment variable NAME is 'VALUE'; valid values: FIRST
 * (FIRST_MEANING, the default) or SECOND (SECOND_MEANING)". */
bool environmentChoice(const char* name, const char* first, const char* firstMeaning, const char* second,
                       const char* secondMeaning);

/* The simulation itself failed (a constraint could not be satisfied,
 * forces became non-finite): the user must change the inputs (time step,
 * starting structure), so it is reported like an input error. */
class SimulationError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/* Two atoms that interact sit at the same position: the configuration is
 * invalid. Carries the atoms so the caller can name the coordinate file. */
class AtomOverlapError : public InputError
{
public:
    AtomOverlapError(int i, int j, const std::string& what) : InputError(what), atomI(i), atomJ(j) {}
    int atomI, atomJ;
};

/* Something putmd itself cannot do (an internal limit or a bug). */
class InternalError : public std::logic_error
{
public:
    using std::logic_error::logic_error;
};

} // namespace putmd
