/* topology/name_list.h — per-atom names (atom, residue and type names),
 * interned.
 *
 * A system has few distinct names (water-spce-96k: three atom names, one
 * residue name) and many atoms. As one std::string per atom the three
 * lists took 96 bytes an atom (12.6 MB for 98,319 atoms on every rank,
 * the largest part of a simulated rank's memory at large rank counts);
 * here an atom costs a 4-byte index into the list's table of distinct
 * names. Reading is as with a vector of strings (list[i], size()). A local
 * topology (domain decomposition) shares the whole system's table and
 * copies indices (shareTable, copyFrom), so a repartition moves 4 bytes
 * per atom and name.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace putmd
{

class NameList
{
public:
    std::size_t        size() const { return ids_.size(); }
    bool               empty() const { return ids_.empty(); }
    const std::string& operator[](std::size_t i) const { return table_->names[ids_[i]]; }
    void               push_back(const std::string& name) { ids_.push_back(intern(name)); }
    /* New entries are empty names. */
    void resize(std::size_t n) { ids_.resize(n, intern(std::string())); }
    void set(std::size_t i, const std::string& name) { ids_[i] = intern(name); }
    void clear() { ids_.clear(); }
    /* Use other's table of names (before copyFrom). */
    void shareTable(const NameList& other) { table_ = other.table_; }
    /* Entry i becomes other's entry j; the tables must be shared. */
    void copyFrom(std::size_t i, const NameList& other, std::size_t j) { ids_[i] = other.ids_[j]; }
    /* Distinct names in the table. */
    std::size_t distinct() const { return table_->names.size(); }

private:
    struct Table
    {
        std::vector<std::string>                        names;
        std::unordered_map<std::string, std::uint32_t> index;
    };
    std::uint32_t intern(const std::string& name)
    {
        if (table_.use_count() > 1)
        {
            table_ = std::make_shared<Table>(*table_); // shared with a copy: add to a private one
        }
        const auto it = table_->index.find(name);
        if (it != table_->index.end())
        {
            return it->second;
        }
        const auto id = static_cast<std::uint32_t>(table_->names.size());
        table_->names.push_back(name);
        table_->index.emplace(name, id);
        return id;
    }
    std::shared_ptr<Table>     table_ = std::make_shared<Table>();
    std::vector<std::uint32_t> ids_;
};

} // namespace putmd
