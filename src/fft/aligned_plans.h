/* fft/aligned_plans.h — FFTW plans of one pass kept per alignment class.
 *
 * FFTW's new-array execute (fftw_execute_dft on other arrays than the
 * plan's) needs arrays of the alignment the plan was made with. A pass that
 * runs one plan over many rows of a grid (Fft3d::convolve, PencilFft3d::
 * convolve) whose rows do not all share an alignment gets one plan per
 * class of its (input, output) pointers; planning the pass unaligned
 * instead (FFTW_UNALIGNED) cost 15% of the transform pair on a 60^3 grid,
 * whose ky rows (31 complex, 248 bytes) alternate between two classes.
 */
#pragma once

#include <vector>

#include "fft/fftw_precision.h"

namespace putmd
{

/* One pass's plans by the alignment class of its (input, output). */
struct AlignedPlans
{
    struct Variant
    {
        int              in = 0, out = 0;
        PUTMD_FFTW(plan) plan = nullptr;
    };
    std::vector<Variant> variants;

    static int classOf(const void* p) { return PUTMD_FFTW(alignment_of)(static_cast<real*>(const_cast<void*>(p))); }
    PUTMD_FFTW(plan) find(const void* in, const void* out) const
    {
        const int ci = classOf(in), co = classOf(out);
        for (const Variant& v : variants)
        {
            if (v.in == ci && v.out == co)
            {
                return v.plan;
            }
        }
        return nullptr;
    }
    /* Plans made by make(in(i), out(i)) for the first i of every class
     * among i = 0 .. count-1; false when FFTW could not plan. */
    template<typename In, typename Out, typename Make>
    bool plan(int count, In in, Out out, Make make)
    {
        for (int i = 0; i < count; i++)
        {
            if (!find(in(i), out(i)))
            {
                PUTMD_FFTW(plan) p = make(in(i), out(i));
                if (!p)
                {
                    return false;
                }
                variants.push_back({ classOf(in(i)), classOf(out(i)), p });
            }
        }
        return true;
    }
    AlignedPlans() = default;
    AlignedPlans(const AlignedPlans&) = delete;
    AlignedPlans& operator=(const AlignedPlans&) = delete;
    ~AlignedPlans()
    {
        for (const Variant& v : variants)
        {
            PUTMD_FFTW(destroy_plan)(v.plan);
        }
    }
};

} // namespace putmd
