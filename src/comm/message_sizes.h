/* comm/message_sizes.h — a histogram of message sizes, kept wherever
 * messages are counted (exchanges, PME's own traffic, the FFT transposes),
 * so the performance report can say whether a phase sends many small
 * messages (latency-bound) or few large ones (bandwidth-bound).
 *
 * Bins: < 1 KiB, 1-4 KiB, 4-16 KiB, 16-64 KiB, >= 64 KiB (lower bound
 * inclusive). No MPI here: the FFT code uses it as well.
 */
#pragma once

#include <array>

namespace putmd::comm
{

struct MessageSizes
{
    static constexpr int kBins = 5;
    std::array<long, kBins> bins{};
    long                    largest = 0; // bytes of the largest message

    /* The bin of a message of this many bytes. */
    static int binOf(long bytes)
    {
        int  b     = 0;
        long limit = 1024;
        while (b < kBins - 1 && bytes >= limit)
        {
            b++;
            limit *= 4;
        }
        return b;
    }
    /* The labels of the bins, for tables and JSON. */
    static const char* binLabel(int b)
    {
        static const char* const labels[kBins] = { "<1KiB", "1-4KiB", "4-16KiB", "16-64KiB", ">=64KiB" };
        return labels[b];
    }
    void record(long bytes)
    {
        bins[binOf(bytes)]++;
        if (bytes > largest)
        {
            largest = bytes;
        }
    }
    void merge(const MessageSizes& o)
    {
        for (int b = 0; b < kBins; b++)
        {
            bins[b] += o.bins[b];
        }
        if (o.largest > largest)
        {
            largest = o.largest;
        }
    }
};

} // namespace putmd::comm
