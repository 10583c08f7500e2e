/* comm/comm_util.cpp — the fatal-error path and the waiting policy.
 *
 * Waiting (Waiter::pollSlow): after kSpins busy polls, the first slow poll
 * starts the clock; polls then alternate between sched_yield() (for about
 * the first millisecond of waiting) and 50 µs naps, so that an
 * oversubscribed peer gets the core it needs to make progress. When the
 * clock passes PUTMD_COMM_TIMEOUT seconds the waiter prints its description
 * (exchange, peer, sequence number) and stops the job: a lost message or a
 * protocol bug becomes an error message instead of a silent hang.
 */
#include <sched.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "comm/comm_impl.h"
#include "core/clock.h"

namespace putmd::comm
{

double nowSeconds()
{
    return clockSeconds();
}

double commTimeoutSeconds()
{
    static const double seconds = [] {
        const char* v = std::getenv("PUTMD_COMM_TIMEOUT");
        if (v == nullptr || *v == '\0')
        {
            return 120.0;
        }
        char*        end = nullptr;
        const double t   = std::strtod(v, &end);
        if (end == v || *end != '\0' || !(t > 0))
        {
            std::fprintf(stderr,
                         "putmd comm: PUTMD_COMM_TIMEOUT='%s' is not a positive number of seconds; "
                         "using 120\n",
                         v);
            return 120.0;
        }
        return t;
    }();
    return seconds;
}

void fail(const std::string& message)
{
    std::fprintf(stderr, "putmd comm (rank %d): %s\n", Communicator::worldRank(), message.c_str());
    std::fflush(stderr);
    Communicator::abortJob(1);
}

void Waiter::pollSlow()
{
    // the clock of putmd's timings (core/clock.h): under SMPI the simulated
    // clock, since a simulation of many ranks may take minutes of real time
    // for a wait of microseconds
    const auto now = clockNow();
    if (polls_ == kSpins)
    {
        since_ = now;
    }
    const double waited = std::chrono::duration<double>(now - since_).count();
    if (waited > commTimeoutSeconds())
    {
        fail("timed out after " + std::to_string(static_cast<long>(waited)) + " s (PUTMD_COMM_TIMEOUT) "
             + describe_());
    }
#if PUTMD_SMPI
    // simulated ranks: every MPI call in the loop already hands the core to
    // the simulator; a real nap would only slow the simulation down
    return;
#endif
    if (waited < 1e-3 || (polls_ & 1) == 0)
    {
        sched_yield();
    }
    else
    {
        timespec nap{0, 50'000};
        nanosleep(&nap, nullptr);
    }
}

} // namespace putmd::comm
