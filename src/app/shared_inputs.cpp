#include "app/shared_inputs.h"

#include <cstdint>
#include <exception>
#include <string>

#include <mpi.h>

#include "comm/communicator.h"
#include "core/error.h"

namespace putmd
{

std::shared_ptr<const SystemInputs> loadSystemForRank(const InputPaths& paths)
{
    if (!PUTMD_SMPI || comm::Communicator::worldSize() == 1)
    {
        return std::make_shared<const SystemInputs>(loadSystem(paths));
    }
    // rank 0's copy is never freed: the other simulated ranks may use it
    // until the end of the simulation, after rank 0 has finished
    const bool         root    = comm::Communicator::worldRank() == 0;
    const SystemInputs* loaded = nullptr;
    std::exception_ptr failure;
    std::string        message;
    if (root)
    {
        try
        {
            loaded = new SystemInputs(loadSystem(paths));
        }
        catch (const std::exception& e)
        {
            failure = std::current_exception();
            message = e.what();
        }
    }
    std::uint64_t address = reinterpret_cast<std::uintptr_t>(loaded);
    MPI_Bcast(&address, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (address == 0)
    {
        int length = static_cast<int>(message.size());
        MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
        message.resize(static_cast<std::size_t>(length));
        MPI_Bcast(message.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (failure)
        {
            std::rethrow_exception(failure);
        }
        throw InputError(message);
    }
    return std::shared_ptr<const SystemInputs>(reinterpret_cast<const SystemInputs*>(address),
                                               [](const SystemInputs*) {});
}

} // namespace putmd
