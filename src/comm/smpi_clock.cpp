/* comm/smpi_clock.cpp — see smpi_clock.h. Compiled in every build; only
 * the SMPI build (PUTMD_SMPI) has a body. */
#include "comm/smpi_clock.h"

#if PUTMD_SMPI

// The system's clock_gettime, declared before SMPI's headers (which may
// turn clock_gettime into SMPI's simulated one).
#include <time.h>

namespace
{
double threadCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
} // namespace

#include <mpi.h>
#include <simgrid/engine.h>

extern "C" double __real_MPI_Wtime(void); // SMPI's, under the wrapper below

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "comm/smpi_record_hooks.h"

namespace putmd::smpi_clock
{
namespace
{

enum class Mode
{
    Fast,
    Flush,
    Check
};

// One per simulated rank: SMPI's privatization gives every rank its own
// copy of the program's data.
struct State
{
    bool   active = false;
    Mode   mode   = Mode::Fast;
    double sim    = 0; // engine clock at the last synchronisation
    double cpu    = 0; // this thread's CPU time then
    double ratio  = 1; // simulated seconds per CPU second
    double last   = 0; // the last value returned (monotonic)
    bool   stale  = false; // cpu not read since sim moved (endBurst): flush
    long   reads = 0, flushed = 0;
    // check mode: reads compared with MPI_Wtime, how many differ by more
    // than 10 us, the sum of the differences, the largest
    long   compared = 0, over10us = 0;
    double sumDiff = 0, maxDiff = 0, maxDiffInterval = 0;
    const char* syncedBy = "MPI_Init_thread"; // the call of the last synchronisation
    const char* maxDiffAfter = "";
};
State g;

Mode modeFromEnvironment()
{
    const char* v = std::getenv("PUTMD_SMPI_CLOCK");
    if (v == nullptr || std::strcmp(v, "fast") == 0 || *v == '\0')
    {
        return Mode::Fast;
    }
    if (std::strcmp(v, "flush") == 0)
    {
        return Mode::Flush;
    }
    if (std::strcmp(v, "check") == 0)
    {
        return Mode::Check;
    }
    std::fprintf(stderr, "error: PUTMD_SMPI_CLOCK=%s: valid values are fast (the default), flush and check\n", v);
    std::exit(2);
}

// After a call that restarted SMPI's CPU timer: the rank's simulated time is
// the engine's clock, and no computation is pending.
void synchronise(const char* call)
{
    g.syncedBy = call;
    g.sim = simgrid_get_clock();
    g.cpu = threadCpuSeconds();
    g.stale = false;
}

} // namespace

bool active()
{
    return g.active;
}

double now()
{
    g.reads++;
    double t = 0;
    if (g.mode == Mode::Flush || g.stale || simgrid_get_clock() != g.sim)
    {
        // MPI_Wtime goes through its wrapper, which synchronises
        t = MPI_Wtime();
        g.flushed++;
    }
    else
    {
        const double interval = threadCpuSeconds() - g.cpu;
        t                     = g.sim + interval * g.ratio;
        if (g.mode == Mode::Check)
        {
            const double base    = g.sim;
            const double flushed = MPI_Wtime();
            const double diff    = t - flushed;
            g.compared++;
            g.sumDiff += diff;
            if (std::fabs(diff) > 10e-6)
            {
                g.over10us++;
            }
            if (std::fabs(diff) > std::fabs(g.maxDiff))
            {
                g.maxDiff         = diff;
                g.maxDiffInterval = flushed - base;
                g.maxDiffAfter    = g.syncedBy;
            }
            t = flushed;
            g.flushed++;
        }
    }
    t      = std::max(t, g.last);
    g.last = t;
    return t;
}

double endBurst()
{
    // SMPI's MPI_Wtime ends the burst, simulates it and restarts the timer;
    // the CPU time is read at the next synchronisation (the MPI call this
    // precedes, or resume()): a read here would be simulated computation
    const double t = __real_MPI_Wtime();
    const double c = t - g.sim;
    g.sim          = t;
    g.stale        = true;
    return c;
}

void resume()
{
    synchronise("a recorded step mark");
}

double lastSynchronised()
{
    return g.sim;
}

namespace
{

// MPI_Init_thread's wrapper: start, and measure SMPI's scale of CPU time
// (smpi/host-speed against this host's speed) over 1 ms of computation,
// after a first MPI_Wtime (the first calls of a rank's copy of the program
// bind its symbols: tens of microseconds SMPI counts as computation).
// Measured twice and the smaller taken: CPU time SMPI counts outside the
// measured millisecond (a page fault, an interruption between its timer
// and ours) only adds to the simulated side, and once made 1.6% of a
// single measurement (a CI run of Simgrid.ClockMatchesFlushedReads).
double measureScale()
{
    MPI_Wtime();
    const double sim0 = g.sim, cpu0 = g.cpu;
    double       cpu1 = cpu0;
    volatile double sink = 0;
    while ((cpu1 = threadCpuSeconds()) - cpu0 < 1e-3)
    {
        for (int i = 0; i < 100; i++)
        {
            sink = sink + 1.0;
        }
    }
    const double sim1 = MPI_Wtime();
    return (sim1 - sim0) / (cpu1 - cpu0);
}

void start()
{
    g.mode   = modeFromEnvironment();
    double r = std::min(measureScale(), measureScale());
    // the measurement's own error is about a microsecond in 1,000: a ratio
    // this close to 1 is the platforms' calibration (tools/simgrid), 1:1
    if (!(r > 0) || std::fabs(r - 1) < 0.01)
    {
        r = 1;
    }
    g.ratio  = r;
    g.last   = MPI_Wtime();
    g.active = true;
}

// MPI_Finalize's wrapper, before the real call.
void stop()
{
    if (g.mode == Mode::Check)
    {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        std::fprintf(stderr,
                     "putmd_smpi clock check: rank %d: %ld reads, %ld compared with MPI_Wtime, %ld differ by more than "
                     "10 us, mean difference %.3f us, largest %.3f us (over %.3f us, after %s), scale %.4f\n",
                     rank, g.reads, g.compared, g.over10us, g.compared > 0 ? 1e6 * g.sumDiff / g.compared : 0.0,
                     g.maxDiff * 1e6, g.maxDiffInterval * 1e6, g.maxDiffAfter, g.ratio);
    }
    g.active = false;
}

} // namespace
} // namespace putmd::smpi_clock

// The wrappers (-Wl,--wrap=NAME for each NAME below; CMakeLists.txt reads the
// names from this file). Each runs the real call, then records the clock.
// Only functions that end and restart SMPI's CPU timer belong here (SimGrid
// 3.32's PMPI layer: its SmpiBenchGuard or smpi_bench_begin); wrapping one
// that does not would drop the computation SMPI still has pending.
// tools/simgrid/check_clock_wraps.sh checks that every MPI function
// putmd_smpi imports is here or in its list of functions that leave the
// timer alone.
// The recorder (smpi_record.h) sees each call too: the computation before
// it (which it has SMPI simulate first, to record its simulated length),
// and (PUTMD_SMPI_WRAP_RECORDED) what it sends and receives, before or
// after the real call; the others are recorded as calls a replay cannot
// run.
#define PUTMD_SMPI_WRAP_RECORDED(ret, name, params, args, before, after)                              \
    extern "C" ret __real_##name params;                                                              \
    extern "C" ret __wrap_##name params                                                               \
    {                                                                                                 \
        putmd::smpi_record::burst();                                                                  \
        before;                                                                                       \
        const ret result_ = __real_##name args;                                                       \
        putmd::smpi_clock::synchronise(#name);                                                        \
        after;                                                                                        \
        return result_;                                                                               \
    }                                                                                                 \
    static_assert(std::is_same_v<decltype(name), decltype(__wrap_##name)>,                            \
                  #name "'s wrapper must have SMPI's signature")
#define PUTMD_SMPI_WRAP(ret, name, params, args)                                                      \
    PUTMD_SMPI_WRAP_RECORDED(ret, name, params, args, (void)0, putmd::smpi_record::unreplayable(#name))

namespace rec = putmd::smpi_record;

// clang-format off
PUTMD_SMPI_WRAP(int, MPI_Abort, (MPI_Comm comm, int code), (comm, code));
PUTMD_SMPI_WRAP(int, MPI_Accumulate, (const void* o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w), (o, oc, ot, r, d, tc, tt, op, w));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Allgather, (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c), (s, sc, st, r, rc, rt, c), (void)0, rec::collective("allgather", c, 0, sc, st, rc, rt));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Allreduce, (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c), (void)0, rec::allreduce(c, n, t));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Alltoall, (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c), (s, sc, st, r, rc, rt, c), (void)0, rec::collective("alltoall", c, 0, sc, st, rc, rt));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Alltoallv, (const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r, const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm c), (s, sc, sd, st, r, rc, rd, rt, c), (void)0, rec::alltoallv(c, sc, st, rc, rt));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Barrier, (MPI_Comm c), (c), (void)0, rec::collective("barrier", c, 0, 0, MPI_BYTE, 0, MPI_BYTE));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Bcast, (void* b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c), (void)0, rec::collective("bcast", c, root, n, t, 0, MPI_BYTE));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm* out), (c, color, key, out), (void)0, rec::split(c, color, key, *out));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out), (c, type, key, info, out), (void)0, rec::splitType(c, type, key, *out));
PUTMD_SMPI_WRAP(int, MPI_Fetch_and_op, (const void* o, void* r, MPI_Datatype t, int rank, MPI_Aint d, MPI_Op op, MPI_Win w), (o, r, t, rank, d, op, w));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Gather, (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root, MPI_Comm c), (s, sc, st, r, rc, rt, root, c), (void)0, rec::collective("gather", c, root, sc, st, rc, rt));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Gatherv, (const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* rd, MPI_Datatype rt, int root, MPI_Comm c), (s, sc, st, r, rc, rd, rt, root, c), (void)0, rec::gatherv(c, root, sc, st, rc, rt));
PUTMD_SMPI_WRAP(int, MPI_Iprobe, (int src, int tag, MPI_Comm c, int* flag, MPI_Status* st), (src, tag, c, flag, st));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Irecv, (void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request* q), (b, n, t, src, tag, c, q), (void)0, rec::pointToPoint("irecv", c, src, tag, n, t, q));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Isend, (const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c, MPI_Request* q), (b, n, t, dst, tag, c, q), (void)0, rec::pointToPoint("isend", c, dst, tag, n, t, q));
PUTMD_SMPI_WRAP(int, MPI_Put, (const void* o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Win w), (o, oc, ot, r, d, tc, tt, w));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Recv, (void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status* st), (b, n, t, src, tag, c, st), (void)0, rec::pointToPoint("recv", c, src, tag, n, t, nullptr));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Send, (const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c), (b, n, t, dst, tag, c), (void)0, rec::pointToPoint("send", c, dst, tag, n, t, nullptr));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Sendrecv, (const void* s, int sc, MPI_Datatype st, int dst, int stag, void* r, int rc, MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status* status), (s, sc, st, dst, stag, r, rc, rt, src, rtag, c, status), (void)0, rec::sendRecv(c, dst, stag, sc, st, src, rtag, rc, rt));
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Wait, (MPI_Request* q, MPI_Status* st), (q, st), rec::waitOn(1, q), (void)0);
PUTMD_SMPI_WRAP_RECORDED(int, MPI_Waitall, (int n, MPI_Request q[], MPI_Status st[]), (n, q, st), rec::waitOn(n, q), (void)0);
PUTMD_SMPI_WRAP(int, MPI_Win_allocate, (MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void* base, MPI_Win* w), (size, unit, info, c, base, w));
PUTMD_SMPI_WRAP(int, MPI_Win_allocate_shared, (MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void* base, MPI_Win* w), (size, unit, info, c, base, w));
PUTMD_SMPI_WRAP(int, MPI_Win_flush, (int rank, MPI_Win w), (rank, w));
PUTMD_SMPI_WRAP(int, MPI_Win_flush_all, (MPI_Win w), (w));
PUTMD_SMPI_WRAP(int, MPI_Win_free, (MPI_Win* w), (w));
PUTMD_SMPI_WRAP(int, MPI_Win_lock, (int type, int rank, int a, MPI_Win w), (type, rank, a, w));
PUTMD_SMPI_WRAP(int, MPI_Win_lock_all, (int a, MPI_Win w), (a, w));
PUTMD_SMPI_WRAP(int, MPI_Win_unlock, (int rank, MPI_Win w), (rank, w));
PUTMD_SMPI_WRAP(int, MPI_Win_unlock_all, (MPI_Win w), (w));
PUTMD_SMPI_WRAP_RECORDED(double, MPI_Wtime, (void), (), (void)0, (void)0);
// clang-format on

// smpi_bench_begin restarts SMPI's timer by itself (putmd calls it around
// MPI_Comm_dup, after smpi_bench_end, which ends a burst); smpi_sleep ends
// and restarts it.
extern "C" void __real_smpi_bench_end();
extern "C" void __wrap_smpi_bench_end()
{
    putmd::smpi_record::burst();
    __real_smpi_bench_end();
}
static_assert(std::is_same_v<decltype(smpi_bench_end), decltype(__wrap_smpi_bench_end)>);
extern "C" void __real_smpi_bench_begin();
extern "C" void __wrap_smpi_bench_begin()
{
    __real_smpi_bench_begin();
    putmd::smpi_clock::synchronise("smpi_bench_begin");
}
static_assert(std::is_same_v<decltype(smpi_bench_begin), decltype(__wrap_smpi_bench_begin)>);
extern "C" unsigned int __real_smpi_sleep(unsigned int secs);
extern "C" unsigned int __wrap_smpi_sleep(unsigned int secs)
{
    putmd::smpi_record::burst();
    putmd::smpi_record::unreplayable("smpi_sleep");
    const unsigned int r = __real_smpi_sleep(secs);
    putmd::smpi_clock::synchronise("smpi_sleep");
    return r;
}

// Init and Finalize start and stop the clock and the recorder.
extern "C" int __real_MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
extern "C" int __wrap_MPI_Init_thread(int* argc, char*** argv, int required, int* provided)
{
    const int r = __real_MPI_Init_thread(argc, argv, required, provided);
    putmd::smpi_clock::start();
    putmd::smpi_record::start();
    return r;
}
static_assert(std::is_same_v<decltype(MPI_Init_thread), decltype(__wrap_MPI_Init_thread)>);
extern "C" int __real_MPI_Finalize();
extern "C" int __wrap_MPI_Finalize()
{
    putmd::smpi_record::stop();
    putmd::smpi_clock::stop();
    return __real_MPI_Finalize();
}
static_assert(std::is_same_v<decltype(MPI_Finalize), decltype(__wrap_MPI_Finalize)>);

#endif // PUTMD_SMPI
