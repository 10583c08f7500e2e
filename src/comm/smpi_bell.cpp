/* comm/smpi_bell.cpp — see smpi_bell.h. */
#include "comm/smpi_bell.h"

#if PUTMD_SMPI

#include <simgrid/semaphore.h>
#include <smpi/smpi.h>

#include <cstdint>

#include "comm/waiter.h"
#include "core/clock.h"

namespace putmd::comm
{

SmpiBells::SmpiBells(MPI_Comm comm)
{
    int size = 0;
    MPI_Comm_size(comm, &size);
    own_                   = sg_sem_init(0);
    const std::uint64_t me = reinterpret_cast<std::uintptr_t>(own_);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
    MPI_Allgather(&me, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
    for (std::uint64_t b : all)
    {
        all_.push_back(reinterpret_cast<void*>(static_cast<std::uintptr_t>(b)));
    }
}

SmpiBells::~SmpiBells()
{
    sg_sem_destroy(static_cast<sg_sem_t>(own_));
}

void SmpiBells::ring(int rank)
{
    // a simulator call: the other ranks run meanwhile in this thread, so
    // SMPI's computation timer is stopped around it, or their CPU time
    // would be charged to this rank as computation
    smpi_bench_end();
    sg_sem_release(static_cast<sg_sem_t>(all_[static_cast<std::size_t>(rank)]));
    smpi_bench_begin();
}

void SmpiBells::wait(double since, const std::function<std::string()>& describe)
{
    const double timeout = commTimeoutSeconds();
    const double left    = timeout - (clockSeconds() - since);
    // SMPI's computation timer is stopped around the sleep: the simulator
    // runs the other ranks in this thread meanwhile (the wrapped
    // smpi_bench_begin also resynchronises putmd's clock, smpi_clock.h)
    smpi_bench_end();
    const bool timedOut = left <= 0 || sg_sem_acquire_timeout(static_cast<sg_sem_t>(own_), left) != 0;
    smpi_bench_begin();
    if (timedOut)
    {
        fail("timed out after " + std::to_string(static_cast<long>(timeout)) + " s (PUTMD_COMM_TIMEOUT) "
             + describe());
    }
}

} // namespace putmd::comm

#endif // PUTMD_SMPI
