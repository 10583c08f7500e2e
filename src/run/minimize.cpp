#include "run/minimize.h"
#include "update/virtual_sites.h"

#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "domdec/domdec.h"
#include "fft/fft3d.h"
#include "io/energy_file.h"
#include "io/trajectory.h"
#include "run/force_calculator.h"
#include "run/md_output.h"
#include "run/md_setup.h"
#include "update/constraints.h"

namespace putmd
{

namespace
{

using RVec = Vec3<real>;

struct Evaluation
{
    ForceOutput out;
    double      fmax = 0;
    int         fmaxAtom = 0;
};

/* Forces with the constraint directions removed (mass-weighted). */
void projectForces(const Constraints& c, const std::vector<RVec>& x, const Box& box, const std::vector<double>& mass,
                   std::vector<RVec>& f)
{
    if (c.empty())
    {
        return;
    }
    std::vector<RVec> a(f.size());
    for (size_t i = 0; i < f.size(); i++)
    {
        a[i] = mass[i] > 0 ? f[i] * real(1 / mass[i]) : RVec();
    }
    c.projectVelocities(x, a, box);
    for (size_t i = 0; i < f.size(); i++)
    {
        f[i] = a[i] * real(mass[i]);
    }
}

} // namespace

MinimizeResult minimize(const SystemInputs& in, const RunOptions& options)
{
    const MdpOptions& mdp = in.mdp;
    const Topology&   top = in.topology;
    const long        nsteps = options.nstepsOverride > -2 ? options.nstepsOverride : mdp.nsteps;
    if (!mdp.freezeGrps.empty())
    {
        throw InputError(mdp.where("freezegrps"), "freezegrps is implemented for integrator = md only, not for "
                                                  "energy minimisation yet");
    }
    std::vector<real> invMass(top.numAtoms);
    for (int i = 0; i < top.numAtoms; i++)
    {
        invMass[i] = top.mass[i] > 0 ? real(1 / top.mass[i]) : real(0);
    }
    ConstraintSettings cs{ mdp.constraintAlgorithm, mdp.lincsOrder, mdp.lincsIter, mdp.shakeTol };
    Constraints        constraints(top, cs, invMass);
    const double       rc = std::max(mdp.rcoulomb, mdp.rvdw);
    ForceCalculator    forces(top, mdp, in.coordinates.box, rc);
    const Box          box = in.coordinates.box;
    comm::Communicator* comm = options.comm;
    const bool          root = !comm || comm->rank() == 0;
    MdLog               log(root ? options.deffnm + ".log" : std::string());
    log.line(fmt::format("putmd {} ({} precision): steepest descent, emtol {} kJ/mol/nm, emstep {} nm, nsteps {}", PUTMD_VERSION,
                         precisionName(), mdp.emtol, mdp.emstep, nsteps));
    log.line("command: " + options.commandLine);

    std::vector<RVec> x;
    for (const auto& p : in.coordinates.x)
    {
        x.push_back(RVec(p));
    }
    if (!constraints.empty())
    {
        std::vector<RVec> xc = x;
        constraints.apply(x, xc, nullptr, 1.0, box, nullptr);
        x = xc;
    }
    // On several ranks the forces are decomposed: every evaluation
    // partitions the trial coordinates afresh (minimisation moves atoms by
    // up to emstep per step), the ranks compute their domains' forces, and
    // the summed energies and gathered forces go to every rank. The
    // minimiser's own work (the move, constraints, virtual sites) is
    // replicated on every rank, on the same bits, so all ranks take the same
    // decisions.
    std::unique_ptr<DomainDecomposition> dd;
    if (comm)
    {
        dd = std::make_unique<DomainDecomposition>(*comm, top, x, box, rc, options.dd);
        ForceCalculator::ParallelPme ppme;
        ppme.transpose   = options.transpose;
        ppme.fftPlanning = FftPlanning::Estimate;
        forces.setDomainDecomposition(dd.get(), comm, ppme);
        log.line(fmt::format("domain decomposition: {} ranks, grid {}; the forces are decomposed, the minimiser's "
                             "O(N) work is done on every rank",
                             comm->size(), describeGrid(dd->grid())));
    }
    auto computeForces = [&](const std::vector<RVec>& pos, ForceOutput& out) {
        if (!dd)
        {
            forces.compute(pos, box, true, false, out);
            return;
        }
        std::vector<RVec> xHome, vHome;
        dd->distribute(pos, {}, box, xHome, vHome);
        ForceOutput local;
        forces.compute(xHome, box, true, false, local);
        std::vector<double> e;
        for (int t = 0; t < numEnergyTerms; t++)
        {
            e.push_back(local.energies.value[t]);
            e.push_back(local.energies.present[t] ? 1.0 : 0.0);
        }
        comm->sumInRankOrder(comm::Phase::Energies, e);
        out.energies = EnergyTerms();
        for (int t = 0; t < numEnergyTerms; t++)
        {
            out.energies.value[t]   = e[2 * t];
            out.energies.present[t] = e[2 * t + 1] > 0;
        }
        out.energies.sumPotential();
        out.f = dd->gatherHome(local.f);
        out.f.resize(pos.size());
        comm->broadcast(comm::Phase::Setup, std::as_writable_bytes(std::span(out.f)));
    };
    auto evaluate = [&](const std::vector<RVec>& pos) {
        Evaluation e;
        computeForces(pos, e.out);
        projectForces(constraints, pos, box, top.mass, e.out.f);
        for (int i = 0; i < top.numAtoms; i++)
        {
            const double f = std::sqrt(double(norm2(e.out.f[i])));
            if (f > e.fmax)
            {
                e.fmax     = f;
                e.fmaxAtom = i;
            }
        }
        return e;
    };
    std::optional<EnergyFile> csv;
    if (root)
    {
        csv.emplace(options.deffnm + ".csv", std::vector<std::string>{ "Potential", "Fmax", "Fmax atom", "Step size" });
    }
    constructVirtualSites(top.virtualSites, x, box);
    Evaluation current  = evaluate(x);
    double     stepsize = mdp.emstep;
    MinimizeResult result;
    long       step = 0;
    if (csv) csv->write(0, 0, { current.out.energies[EnergyTerm::Potential], current.fmax, double(current.fmaxAtom + 1), stepsize });
    while (step < nsteps && current.fmax >= mdp.emtol && current.fmax > 0)
    {
        std::vector<RVec> trial(x.size());
        const real        scale = real(stepsize / current.fmax);
        for (size_t i = 0; i < x.size(); i++)
        {
            trial[i] = x[i] + current.out.f[i] * scale;
        }
        step++;
        bool constrained = true;
        if (!constraints.empty())
        {
            try
            {
                constraints.apply(x, trial, nullptr, 1.0, box, nullptr);
            }
            catch (const ConstraintError&)
            {
                constrained = false; // too large a move for the constraints: a smaller step
            }
        }
        if (!constrained)
        {
            stepsize *= 0.2;
            continue;
        }
        constructVirtualSites(top.virtualSites, trial, box);
        Evaluation next = evaluate(trial);
        if (next.out.energies[EnergyTerm::Potential] < current.out.energies[EnergyTerm::Potential])
        {
            x.swap(trial);
            current = std::move(next);
            stepsize *= 1.2;
            if (csv) csv->write(step, step, { current.out.energies[EnergyTerm::Potential], current.fmax, double(current.fmaxAtom + 1), stepsize });
        }
        else
        {
            stepsize *= 0.2;
        }
        if (stepsize < std::numeric_limits<real>::epsilon())
        {
            log.line("step size below the machine precision of the coordinates: stopping");
            break;
        }
    }
    result.converged    = current.fmax < mdp.emtol;
    result.steps        = step;
    result.potential    = current.out.energies[EnergyTerm::Potential];
    result.maxForce     = current.fmax;
    result.maxForceAtom = current.fmaxAtom;
    log.line(fmt::format("Steepest descent {} to Fmax < {} in {} steps", result.converged ? "converged" : "did not converge",
                         mdp.emtol, step));
    log.line(fmt::format("Potential Energy  = {:.8e}", result.potential));
    log.line(fmt::format("Maximum force     = {:.8e} on {}", result.maxForce, top.describeAtom(result.maxForceAtom)));
    if (root)
    {
        writeGro(options.deffnm + ".gro", top.systemName, in.coordinates.atoms, x, nullptr, box);
    }
    return result;
}

} // namespace putmd
