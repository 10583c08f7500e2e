/* comm/shared_flag.h — flag words in memory shared between processes (an
 * MPI-3 shared window): a release store after the data it announces, an
 * acquire load before the data it guards. Used by the shm backend and the
 * pencil FFT's shm transposes. Only lock-free atomics are address-free, so
 * only they work between processes. */
#pragma once

#include <atomic>
#include <cstdint>

namespace putmd::comm
{

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "flags shared between processes need lock-free 64-bit atomics");

inline std::uint64_t loadAcquire(const void* p)
{
    return std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t*>(const_cast<void*>(p)))
            .load(std::memory_order_acquire);
}

inline void storeRelease(void* p, std::uint64_t v)
{
    std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t*>(p)).store(v, std::memory_order_release);
}

} // namespace putmd::comm
