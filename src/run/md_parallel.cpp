/* run/md_parallel.cpp — what domain decomposition adds to the MD run (see md_run.h). */
#include "run/md_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "update/kinetic.h"

namespace putmd::md_detail
{

/* A seed from the clock (seed -1) differs between ranks: use rank 0's. */
uint64_t agreedSeed(comm::Communicator* comm, uint64_t seed)
{
    if (comm && comm->size() > 1)
    {
        comm->broadcast(comm::Phase::Setup, std::as_writable_bytes(std::span<uint64_t>(&seed, 1)));
    }
    return seed;
}

/* The per-atom arrays of the home atoms after a (re)partition. */
void MdRun::refreshHomeAtoms()
{
    const Topology& home = dd_->homeTopology();
    mass_                = home.mass;
    invMass_.resize(mass_.size());
    tcGroup_.resize(mass_.size());
    comGroup_.resize(settings_.comGroupOfAtom.empty() ? 0 : mass_.size());
    freeze_.resize(settings_.freeze.empty() ? 0 : mass_.size());
    for (size_t i = 0; i < mass_.size(); i++)
    {
        invMass_[i] = mass_[i] > 0 ? real(1 / mass_[i]) : real(0);
        if (!comGroup_.empty())
        {
            comGroup_[i] = settings_.comGroupOfAtom[home.globalIndex[i]];
        }
        if (!freeze_.empty())
        {
            freeze_[i] = settings_.freeze[home.globalIndex[i]];
            if (freeze_[i] == 7)
            {
                invMass_[i] = 0;
            }
        }
        tcGroup_[i] = settings_.groups.groupOfAtom[home.globalIndex[i]];
    }
    constraints_ = std::make_unique<Constraints>(home, constraintSettings_, invMass_);
}

void MdRun::repartition()
{
    Timed t(&timers_, Stage::DomainDecomp);
    dd_->repartition(x_, v_, box_);
    refreshHomeAtoms();
}

/* Sum over ranks (in rank order: the same bits everywhere). */
void MdRun::reduce(std::span<double> values) const
{
    if (dd_)
    {
        Timed t(&timers_, Stage::EnergyReduction);
        comm_->sumInRankOrder(comm::Phase::Energies, values);
    }
}

void MdRun::removeComMotion()
{
    if (!settings_.comGroupOfAtom.empty())
    {
        // several groups (comm-grps): each group's momentum, summed over ranks
        const int           ncom = static_cast<int>(settings_.comGroupMass.size());
        std::vector<double> p(3 * ncom, 0.0);
        for (size_t i = 0; i < v_.size(); i++)
        {
            const int j = comGroup_[i];
            for (int d = 0; j >= 0 && d < 3; d++)
            {
                p[3 * j + d] += mass_[i] * double(v_[i][d]);
            }
        }
        reduce(p);
        for (size_t i = 0; i < v_.size(); i++)
        {
            const int j = comGroup_[i];
            if (j >= 0 && settings_.comGroupMass[j] > 0)
            {
                const double m = settings_.comGroupMass[j];
                v_[i] -= RVec(real(p[3 * j] / m), real(p[3 * j + 1] / m), real(p[3 * j + 2] / m));
            }
        }
        return;
    }
    if (!dd_)
    {
        removeCenterOfMassVelocity(v_, mass_);
        return;
    }
    std::array<double, 3> p{ 0, 0, 0 };
    for (size_t i = 0; i < v_.size(); i++)
    {
        for (int d = 0; d < 3; d++)
        {
            p[d] += mass_[i] * double(v_[i][d]);
        }
    }
    reduce(p);
    const RVec vcm(real(p[0] / totalMass_), real(p[1] / totalMass_), real(p[2] / totalMass_));
    for (auto& vi : v_)
    {
        vi -= vcm;
    }
}

long MdRun::collectiveCount() const
{
    // the PP communicator, and the world one that carries PP <-> PME traffic
    long n = 0;
    for (const comm::Communicator* c : { comm_, pmeClient_ ? options_.world : nullptr })
    {
        for (int p = 0; c && p < static_cast<int>(comm::Phase::Count); p++)
        {
            n += c->stats(static_cast<comm::Phase>(p)).collectives + c->stats(static_cast<comm::Phase>(p)).barriers;
        }
    }
    return n;
}

long MdRun::growthCount() const
{
    long n = 0;
    if (comm_)
    {
        for (int p = 0; p < static_cast<int>(comm::Phase::Count); p++)
        {
            n += comm_->stats(static_cast<comm::Phase>(p)).arenaGrowths;
        }
    }
    return n;
}

} // namespace putmd::md_detail
