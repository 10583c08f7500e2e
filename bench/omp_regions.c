/* bench/omp_regions.c — where a threaded run loses time between its
 * threads, per OpenMP parallel region.
 *
 * An LD_PRELOAD shim over libgomp's GOMP_parallel (what GCC emits for
 * `#pragma omp parallel`, with or without `for`): each region's body is
 * timed on every thread, and per region (by the address of its outlined
 * body) the shim sums at exit
 *   - calls and wall time (fork to join, on the calling thread);
 *   - each thread's busy time inside the body;
 *   - lost = wall - the threads' mean busy time: what the region's
 *     imbalance, fork and join cost the run;
 *   - gap = the calling thread's time since the previous region ended
 *     (serial work, while the other threads wait);
 *   - per thread, late = from the fork to the start of its body (waking
 *     the team) and slack = from the end of its body to the join (waiting
 *     for the others, then the join itself). Where the busy times are
 *     equal but the slacks are not small, the threads finish apart call
 *     by call, in turn: per-call imbalance that the sums hide.
 * It writes one line per region to stderr (bench/omp_regions.sh names the
 * bodies and sorts them). Only GOMP_parallel is wrapped (not the older
 * GOMP_parallel_start/end pair, nor tasks). Written for putmd's
 * diagnostics; it adds two clock reads per thread per region.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxThreads = 16, kMaxRegions = 512 };

typedef void (*Body)(void*);

struct Call
{
    Body   body;
    void*  data;
    double busy[kMaxThreads], start[kMaxThreads], end[kMaxThreads];
};

struct Region
{
    Body   body;
    double calls, wall, gap, busy[kMaxThreads], late[kMaxThreads], slack[kMaxThreads];
};

static struct Region regions[kMaxRegions];
static int           numRegions, maxThreads;
static double        lastEnd;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void timedBody(void* p)
{
    struct Call* c = p;
    const int    t = omp_get_thread_num();
    const double s = now();
    c->body(c->data);
    if (t < kMaxThreads)
    {
        c->start[t] = s;
        c->end[t]   = now();
        c->busy[t]  = c->end[t] - s;
    }
}

static void report(void)
{
    for (int r = 0; r < numRegions; r++)
    {
        const struct Region* g = &regions[r];
        Dl_info              info;
        const char*          file = "?";
        unsigned long        offset = 0;
        if (dladdr((void*)g->body, &info) && info.dli_fname)
        {
            file   = info.dli_fname;
            offset = (unsigned long)((char*)g->body - (char*)info.dli_fbase);
        }
        double sum = 0;
        for (int t = 0; t < maxThreads; t++)
        {
            sum += g->busy[t];
        }
        const double mean = maxThreads > 0 ? sum / maxThreads : 0;
        fprintf(stderr, "OMPREGION calls %.0f wall %.6f lost %.6f gap %.6f busy", g->calls, g->wall, g->wall - mean, g->gap);
        for (int t = 0; t < maxThreads; t++)
        {
            fprintf(stderr, " %.6f", g->busy[t]);
        }
        fprintf(stderr, " late");
        for (int t = 0; t < maxThreads; t++)
        {
            fprintf(stderr, " %.6f", g->late[t]);
        }
        fprintf(stderr, " slack");
        for (int t = 0; t < maxThreads; t++)
        {
            fprintf(stderr, " %.6f", g->slack[t]);
        }
        fprintf(stderr, " at %s 0x%lx\n", file, offset);
    }
}

void GOMP_parallel(Body body, void* data, unsigned numThreads, unsigned flags)
{
    static void (*real)(Body, void*, unsigned, unsigned);
    if (!real)
    {
        real = (void (*)(Body, void*, unsigned, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel");
        atexit(report);
    }
    struct Call c;
    memset(&c, 0, sizeof c);
    c.body         = body;
    c.data         = data;
    const double s = now();
    real(timedBody, &c, numThreads, flags);
    const double e = now();
    int          r = 0;
    while (r < numRegions && regions[r].body != body)
    {
        r++;
    }
    if (r == numRegions)
    {
        if (numRegions == kMaxRegions)
        {
            lastEnd = e;
            return;
        }
        regions[numRegions++].body = body;
    }
    struct Region* g = &regions[r];
    g->calls += 1;
    g->wall += e - s;
    g->gap += lastEnd > 0 ? s - lastEnd : 0;
    for (int t = 0; t < kMaxThreads; t++)
    {
        g->busy[t] += c.busy[t];
        if (c.busy[t] > 0)
        {
            g->late[t] += c.start[t] - s;
            g->slack[t] += e - c.end[t];
        }
        if (c.busy[t] > 0 && t + 1 > maxThreads)
        {
            maxThreads = t + 1;
        }
    }
    lastEnd = e;
}
