/* run/minimize.h — steepest-descent energy minimisation (integrator steep).
 *
 * As GROMACS: every step moves each atom by stepsize * F_i / Fmax (then
 * constrains), accepts the move if the potential energy went down (and
 * grows the step by 1.2) or rejects it (and shrinks the step by 0.2).
 * Stops when the largest force is below emtol, after nsteps, or when the
 * step can no longer change the coordinates in the build's precision.
 * With constraints, forces are projected onto the constraint surface
 * before Fmax is measured. Writes NAME.log, NAME.csv (Potential and Fmax
 * per accepted step) and NAME.gro.
 *
 * On several ranks (options.comm) the force evaluations are decomposed:
 * each partitions the trial coordinates afresh and gathers the forces and
 * summed energies to every rank; the minimiser itself runs replicated, on
 * the same bits everywhere, so every rank takes the same decisions.
 */
#pragma once

#include "run/md_runner.h"

namespace putmd
{

struct MinimizeResult
{
    bool   converged = false;
    long   steps     = 0;
    double potential = 0;
    double maxForce  = 0;
    int    maxForceAtom = -1;
};

MinimizeResult minimize(const SystemInputs& inputs, const RunOptions& options);

} // namespace putmd
