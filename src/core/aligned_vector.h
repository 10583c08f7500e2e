/* core/aligned_vector.h — std::vector with 64-byte aligned storage, for
 * arrays that SIMD kernels load whole registers from. */
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace putmd
{

template<typename T>
struct AlignedAllocator
{
    using value_type = T;
    static constexpr std::align_val_t alignment{ 64 };

    AlignedAllocator() = default;
    template<typename U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept
    {
    }
    T*   allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
    template<typename U>
    bool operator==(const AlignedAllocator<U>&) const noexcept
    {
        return true;
    }
};

template<typename T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

} // namespace putmd
