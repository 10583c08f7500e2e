/* comm/waiter.h — the waiting policy and the fatal-error path of src/comm,
 * also used by the rma transposes of the pencil FFT (src/fft/transpose.cpp).
 *
 * A wait spins a little (the peer is usually a few microseconds behind),
 * then yields the core with sched_yield (tests run 8 ranks on 2 cores, and a
 * spinning rank would starve the very peer it waits for), then sleeps in
 * short naps. After PUTMD_COMM_TIMEOUT seconds (default 120; simulated
 * seconds in the SMPI build) without progress it prints what it was
 * waiting for and stops the whole job, so that a rank never hangs silently
 * (implemented in comm_util.cpp).
 */
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace putmd::comm
{

/* Print "putmd comm (rank R): message" on stderr (R: the world rank) and stop
 * the job. */
[[noreturn]] void fail(const std::string& message);

/* Seconds a wait may last before the job is stopped (PUTMD_COMM_TIMEOUT). */
double commTimeoutSeconds();

/* One wait loop. Call poll() each time the condition is still false; it
 * spins, yields or naps, and after the timeout calls fail(describe()). */
class Waiter
{
public:
    template<typename Describe>
    explicit Waiter(Describe describe) : describe_(std::move(describe))
    {
    }
    void poll()
    {
        ++polls_;
        if (polls_ < kSpins)
        {
            return;
        }
        pollSlow();
    }

private:
    static constexpr long kSpins = 64;
    void                  pollSlow();

    std::function<std::string()>          describe_;
    long                                  polls_ = 0;
    std::chrono::steady_clock::time_point since_{};
};

} // namespace putmd::comm
