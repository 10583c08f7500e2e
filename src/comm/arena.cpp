/* comm/arena.cpp — block allocation and geometric growth of the arena
 * (the algorithm is described in arena.h). */
#include "comm/arena.h"

#include <algorithm>
#include <numeric>

namespace putmd::comm
{

std::size_t Arena::bytes() const
{
    std::size_t n = 0;
    for (const auto& g : gens_)
    {
        n += g.size;
    }
    return n;
}

std::vector<ArenaBlock> Arena::allocate(Phase phase, std::span<const std::size_t> sizes, std::uint64_t& sequence)
{
    std::size_t total = 0;
    for (std::size_t s : sizes)
    {
        total += aligned(std::max(s, kAlign));
    }
    const bool  fits    = !gens_.empty() && gens_.back().used + total <= gens_.back().size;
    std::size_t newest  = gens_.empty() ? 0 : gens_.back().size;
    long        request = 0;
    if (!fits && total > 0)
    {
        // At least 64 KiB, at least double the newest generation.
        request = static_cast<long>(std::max({total, 2 * newest, std::size_t{1} << 16}));
    }

    // Every rank learns the largest request: all create the same generation.
    long mine[2] = {request, static_cast<long>(sequence)};
    long most[2] = {0, 0};
    MPI_Allreduce(mine, most, 2, MPI_LONG, MPI_MAX, comm_.comm);
    comm_.at(Phase::Setup).collectives++;
    const long largest = most[0];
    sequence           = static_cast<std::uint64_t>(most[1]);
    if (largest > 0)
    {
        comm_.at(Phase::Setup).collectives +=
                creationLock_.run([&] { gens_.push_back(create(static_cast<std::size_t>(largest))); });
        comm_.at(Phase::Setup).collectives++;
        comm_.at(Phase::Setup).barriers++; // window / symmetric allocation synchronises
        comm_.at(phase).arenaGrowths++;
    }

    std::vector<ArenaBlock> blocks;
    blocks.reserve(sizes.size());
    // Bump into the newest generation if the blocks fit there (a rank that
    // did not ask for the growth may still use the previous one's tail).
    Generation* g = nullptr;
    int         gi = -1;
    if (fits)
    {
        gi = static_cast<int>(gens_.size()) - (largest > 0 ? 2 : 1);
    }
    else if (total > 0)
    {
        gi = static_cast<int>(gens_.size()) - 1;
    }
    if (gi < 0)
    {
        return blocks; // nothing asked
    }
    g = &gens_[gi];
    for (std::size_t s : sizes)
    {
        ArenaBlock b;
        b.gen    = gi;
        b.offset = g->used;
        g->used += aligned(std::max(s, kAlign));
        blocks.push_back(b);
    }
    return blocks;
}

} // namespace putmd::comm
