/* run/md_energies.cpp — the MD run's energy stage (see md_run.h): the
 * step's energies, kinetic energy and virials summed over the ranks, the
 * pressure, the first-order barostats (their work joins the step's
 * conserved energy, as GROMACS reports it), the averages, and the energy
 * files and log. */
#include "run/md_run.h"

#include "core/units.h"
#include "run/energy_groups.h"
#include "run/force_calculator.h"
#include "run/md_output.h"

namespace putmd::md_detail
{

StepEnergies MdRun::energies(const ForceOutput& forces, const Matrix3& kinetic, const Matrix3& virial) const
{
    StepEnergies e;
    e.terms       = forces.energies;
    e.kinetic     = trace(kinetic);
    e.total       = e.terms[EnergyTerm::Potential] + e.kinetic;
    e.conserved   = e.total + thermostatIntegral_ + barostatIntegral_;
    if (mdp_.pcoupl == PCoupl::ParrinelloRahman)
    {
        // the box's kinetic energy and P0 V, with the box after this step's move (as GROMACS)
        e.conserved += pr_.conservedEnergy(mdp_, prApply_ ? prNextBox_ : box_);
    }
    e.temperature = temperatureOf(e.kinetic, settings_.totalDof);
    const double volume = box_.volume();
    double       p      = 0;
    for (int d = 0; d < 3; d++)
    {
        p += 2 / volume * (kinetic(d, d) - virial(d, d)) * units::presfac;
    }
    e.pressure = p / 3;
    e.box      = box_;
    e.density  = totalMass_ / volume * units::amuPerNm3ToKgPerM3;
    return e;
}

void MdRun::outputEnergies(long step, bool last, const ForceOutput& forces, const Matrix3& kineticIn,
                           const Matrix3& constraintVirialIn, bool computeE, Matrix3* pressureOut, double* temperatureOut,
                           Matrix3* virialOut, Matrix3* kineticOut)
{
    if (!computeE)
    {
        return;
    }
    Matrix3     kinetic          = kineticIn;
    Matrix3     constraintVirial = constraintVirialIn;
    ForceOutput reduced;
    if (dd_)
    {
        // one reduction for every energy term, the kinetic energy and the virials
        std::vector<double> all;
        for (int t = 0; t < numEnergyTerms; t++)
        {
            all.push_back(forces.energies.value[t]);
            all.push_back(forces.energies.present[t] ? 1.0 : 0.0);
        }
        for (const Matrix3* m : std::initializer_list<const Matrix3*>{ &kinetic, &forces.virial, &constraintVirial })
        {
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    all.push_back((*m)(a, b));
        }
        reduce(all);
        size_t k = 0;
        for (int t = 0; t < numEnergyTerms; t++, k += 2)
        {
            reduced.energies.value[t]   = all[k];
            reduced.energies.present[t] = all[k + 1] > 0;
        }
        reduced.energies.sumPotential();
        for (Matrix3* m : { &kinetic, &reduced.virial, &constraintVirial })
        {
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    (*m)(a, b) = all[k++];
        }
    }
    const ForceOutput& total = dd_ ? reduced : forces;
    Matrix3 virial = total.virial;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            virial(a, b) += constraintVirial(a, b);
    StepEnergies  e = energies(total, kinetic, virial);
    const Box     box = box_; // this step's box, before a barostat moves it
    Matrix3       pressure;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            pressure(a, b) = 2 / box.volume() * (kinetic(a, b) - virial(a, b)) * units::presfac;
    if (mdp_.pcoupl == PCoupl::CRescale || mdp_.pcoupl == PCoupl::Berendsen)
    {
        // the first-order barostats act now, and their work joins this
        // step's conserved energy (as GROMACS reports it); on the last step
        // only the work is counted (the final state keeps its box)
        const double before = barostatIntegral_;
        pressureCoupling(step, pressure, e.temperature, virial, kinetic, !last);
        e.conserved += barostatIntegral_ - before;
    }
    if (!outputsSkipped(step))
    {
        const bool   withDC = mdp_.dispCorr == DispCorr::EnerPres;
        StepEnergies row    = e;
        row.pressureDC      = forces_->dispersionPressure(box.volume());
        const auto values   = energyRow(row, withDC);
        if (averageNames_.empty())
        {
            averageNames_ = energyColumns(e.terms, withDC);
            averageSums_.assign(values.size(), 0.0);
        }
        for (size_t k = 0; k < values.size() && k < averageSums_.size(); k++)
        {
            averageSums_[k] += values[k];
        }
        averageCount_++;
    }
    if (!outputsSkipped(step) && (every(step, mdp_.nstenergy) || (last && mdp_.nstenergy > 0)))
    {
        const bool withDC = mdp_.dispCorr == DispCorr::EnerPres;
        // energygrps: a separate plain pass over the whole system, on the
        // written steps only; decomposed, on rank 0 from the gathered
        // coordinates (a gather on these steps, none in normal steps)
        std::vector<double> groupTerms;
        if (energyGroups_.active())
        {
            const std::vector<RVec> xAll = dd_ ? dd_->gatherHome(x_) : std::vector<RVec>();
            if (root_)
            {
                groupTerms = computeEnergyGroupTerms(energyGroups_, top_, forces_->interactionConst(), box,
                                                     dd_ ? xAll : x_);
            }
        }
        if (!root_)
        {
            // only the first rank writes
        }
        else if (!energyFile_)
        {
            auto columns = energyColumns(e.terms, withDC);
            if (energyGroups_.active())
            {
                const auto g = energyGroups_.termNames();
                columns.insert(columns.end(), g.begin(), g.end());
            }
            energyFile_ = std::make_unique<EnergyFile>(options_.deffnm + ".csv", columns, appendEnergyFile_);
            edrFile_    = std::make_unique<EdrFile>(options_.deffnm + ".edr", columns, mdp_.dt, appendEdrFile_);
        }
        StepEnergies row = e;
        row.pressureDC   = forces_->dispersionPressure(box.volume());
        if (energyFile_)
        {
            auto values = energyRow(row, withDC);
            values.insert(values.end(), groupTerms.begin(), groupTerms.end());
            energyFile_->write(step, mdp_.tinit + step * mdp_.dt, values);
            edrFile_->write(step, mdp_.tinit + step * mdp_.dt, values);
        }
    }
    if (!outputsSkipped(step) && (every(step, mdp_.nstlog) || last))
    {
        log_->energies(step, mdp_.tinit + step * mdp_.dt, e);
    }
    if (kineticOut)
    {
        *kineticOut = kinetic; // summed over ranks
    }
    if (virialOut)
    {
        *virialOut = virial;
    }
    if (pressureOut)
    {
        *pressureOut = pressure;
    }
    if (temperatureOut)
    {
        *temperatureOut = e.temperature;
    }
}

} // namespace putmd::md_detail
