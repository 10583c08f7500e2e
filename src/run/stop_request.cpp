#include "run/stop_request.h"

#include <atomic>
#include <csignal>

namespace putmd
{

namespace
{
std::atomic<int> g_requests{ 0 };
std::atomic<int> g_firstSignal{ 0 };

extern "C" void onStopSignal(int sig)
{
    requestStop(sig);
}
} // namespace

void requestStop(int signalNumber)
{
    int expected = 0;
    g_firstSignal.compare_exchange_strong(expected, signalNumber);
    g_requests.fetch_add(1);
}

void installStopSignalHandlers()
{
    std::signal(SIGTERM, onStopSignal);
    std::signal(SIGINT, onStopSignal);
    // beyond a file-size limit a write should fail with EFBIG (reported with
    // the file's name) rather than kill the process
    std::signal(SIGXFSZ, SIG_IGN);
}

int stopRequestCount()
{
    return g_requests.load();
}

std::string stopRequestReason()
{
    switch (g_firstSignal.load())
    {
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        case 0: return "";
        default: return "signal " + std::to_string(g_firstSignal.load());
    }
}

void resetStopRequests()
{
    g_requests    = 0;
    g_firstSignal = 0;
}

} // namespace putmd
