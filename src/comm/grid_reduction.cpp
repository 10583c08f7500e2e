#include "comm/grid_reduction.h"

#include <chrono>

#include <mpi.h>

namespace putmd::comm
{

namespace
{

template<typename T>
void sum(Communicator& comm, Phase phase, std::span<T> values, MPI_Datatype type)
{
    if (comm.size() == 1 || values.empty())
    {
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), type, MPI_SUM, MPI_COMM_WORLD);
    auto& s = comm.mutableStats(phase);
    s.collectives++;
    s.bytes += static_cast<long>(values.size_bytes());
    s.waitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

void sumOverRanks(Communicator& comm, Phase phase, std::span<float> values)
{
    sum(comm, phase, values, MPI_FLOAT);
}

void sumOverRanks(Communicator& comm, Phase phase, std::span<double> values)
{
    sum(comm, phase, values, MPI_DOUBLE);
}

} // namespace putmd::comm
