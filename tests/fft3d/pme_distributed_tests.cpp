/* tests/fft3d/pme_distributed_tests.cpp — DistributedPme against the
 * one-rank reference Pme (double build), under mpirun and without a
 * launcher.
 *
 * Random atoms with random charges in a triclinic box; atom a is handed to
 * rank a % P (so redistribution has to move almost every atom). For several
 * grids and spline orders — including odd and prime sizes, and blocks
 * thinner than the spline's reach (order 6 on a 9-point grid over 4 ranks,
 * so a border spans several ranks) — and every process grid the rank count
 * allows and every transpose algorithm:
 *   - every atom's force equals the reference within 1e-9 of the RMS force;
 *   - the energy (summed over ranks) and virial within 1e-9 relative;
 *   - the three transpose algorithms give the same bits.
 * Exit status 0 when every rank passed.
 */
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"
#include "pme/pme.h"
#include "pme/pme_distributed.h"
#include "pme/pme_ranks.h"

using namespace putmd;
using RVec = Vec3<real>;

namespace
{

int failures = 0;

void check(bool ok, const std::string& what)
{
    if (!ok)
    {
        failures++;
        std::fprintf(stderr, "rank %d: FAILED: %s\n", comm::Communicator::worldRank(), what.c_str());
    }
}

struct Case
{
    std::array<int, 3> grid;
    int                order;
};

/* Sums a global per-atom array over ranks (each rank filled its own atoms). */
void sumOver(comm::Communicator& comm, std::vector<double>& v)
{
    if (comm.mpiComm() != MPI_COMM_NULL)
    {
        MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, comm.mpiComm());
    }
}

/* Links planned from the home atoms (planRedistribution with home and
 * box): 4 or more ranks, each holding the atoms of one x slab of a 6 nm
 * box, as domain decomposition hands them over. Each rank must link to
 * fewer ranks than there are, the forces must match the reference, and an
 * atom moved half the box since the plan must stop the computation with
 * SimulationError on every rank (all move one, so none waits for the
 * others). */
void checkPlannedLinks(comm::Communicator& comm)
{
    const int P = comm.size(), me = comm.rank();
    if (P < 4)
    {
        return;
    }
    Matrix3 vectors;
    vectors(0, 0) = vectors(1, 1) = vectors(2, 2) = 6.0;
    const Box           box(vectors);
    const int           natoms = 2000;
    std::mt19937_64     rng(777);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<RVec>   x(natoms);
    std::vector<double> q(natoms);
    for (int a = 0; a < natoms; a++)
    {
        x[a] = RVec(real(6 * u(rng)), real(6 * u(rng)), real(6 * u(rng)));
        q[a] = a % 2 ? 0.5 : -0.5;
    }
    PmeParameters params;
    params.gridSize   = { 24, 24, 24 };
    params.order      = 4;
    params.ewaldCoeff = 3.12;
    params.epsfac     = 138.935458;
    Pme               reference(params);
    std::vector<RVec> fRef(natoms);
    reference.compute(box, x, q, fRef);
    std::vector<int>    mine;
    std::vector<RVec>   xm;
    std::vector<double> qm;
    for (int a = 0; a < natoms; a++)
    {
        if (static_cast<int>(x[a][0] / 6.0 * P) == me)
        {
            mine.push_back(a);
            xm.push_back(x[a]);
            qm.push_back(q[a]);
        }
    }
    DistributedPme dpme(params, comm, { P, 1 }, TransposeAlgorithm::Pairwise, 0.0);
    dpme.planRedistribution(static_cast<int>(xm.size()), xm, &box);
    check(dpme.numRedistTargets() < P, "planned links: rank " + std::to_string(me) + " sends to "
                                               + std::to_string(dpme.numRedistTargets()) + " of " + std::to_string(P)
                                               + " ranks, expected fewer");
    std::vector<RVec> fm(xm.size());
    dpme.compute(box, xm, qm, fm, nullptr);
    double worst = 0, rms = 0;
    for (const auto& f : fRef)
    {
        rms += norm2(DVec(f));
    }
    rms = std::sqrt(rms / natoms);
    for (size_t k = 0; k < mine.size(); k++)
    {
        worst = std::max(worst, std::sqrt(norm2(DVec(fm[k]) - DVec(fRef[mine[k]]))) / rms);
    }
    check(worst < 1e-9, "planned links: largest force difference " + std::to_string(worst) + " of the RMS force");
    if (xm.empty())
    {
        return;
    }
    xm[0][0] += real(3.0); // half the box: beyond the margin on every rank
    bool stopped = false;
    try
    {
        dpme.compute(box, xm, qm, fm, nullptr);
    }
    catch (const SimulationError& e)
    {
        stopped = std::string(e.what()).find("moved more than") != std::string::npos;
    }
    check(stopped, "planned links: an atom moved 3 nm did not stop the computation with a message");
}

} // namespace

int main(int argc, char** argv)
{
    comm::Communicator::initialize(&argc, &argv);
    {
        comm::Communicator comm(comm::Backend::P2p);
        const int          P = comm.size(), me = comm.rank();

        Matrix3 vectors;
        vectors(0, 0) = 3.1;
        vectors(1, 0) = 0.4;
        vectors(1, 1) = 2.9;
        vectors(2, 0) = -0.3;
        vectors(2, 1) = 0.5;
        vectors(2, 2) = 2.7;
        const Box box(vectors);

        const int           natoms = 300;
        std::mt19937_64     rng(12345);
        std::uniform_real_distribution<double> u(0, 1);
        std::vector<RVec>   x(natoms);
        std::vector<double> q(natoms);
        double              qsum = 0;
        for (int a = 0; a < natoms; a++)
        {
            const double s[3] = { u(rng), u(rng), u(rng) };
            for (int d = 0; d < 3; d++)
            {
                x[a][d] = real(s[0] * vectors(0, d) + s[1] * vectors(1, d) + s[2] * vectors(2, d));
            }
            q[a] = u(rng) - 0.5;
            qsum += q[a];
        }
        q[0] -= 0.5 * qsum; // a net charge remains: the background term is exercised too
        qsum = 0;
        for (double c : q)
        {
            qsum += c;
        }

        const std::vector<Case> cases = { { { 16, 15, 14 }, 4 }, { { 7, 11, 13 }, 4 }, { { 9, 9, 9 }, 6 },
                                          { { 12, 10, 9 }, 5 } };
        for (const Case& c : cases)
        {
            PmeParameters params;
            params.gridSize   = c.grid;
            params.order      = c.order;
            params.ewaldCoeff = 3.12;
            params.epsfac     = 138.935458;
            Pme               reference(params);
            std::vector<RVec> fRef(natoms);
            Matrix3           vRef;
            const double      eRef = reference.compute(box, x, q, fRef, &vRef);
            double            rms  = 0;
            for (const auto& f : fRef)
            {
                rms += norm2(DVec(f));
            }
            rms = std::sqrt(rms / natoms);

            // my atoms: a % P == me
            std::vector<int> mine;
            for (int a = me; a < natoms; a += P)
            {
                mine.push_back(a);
            }
            std::vector<RVec>   xm, fm;
            std::vector<double> qm;
            for (int a : mine)
            {
                xm.push_back(x[a]);
                qm.push_back(q[a]);
            }
            std::vector<std::array<int, 2>> grids;
            for (int px = 1; px <= P; px++)
            {
                if (P % px == 0)
                {
                    grids.push_back({ px, P / px });
                }
            }
            for (const auto& pg : grids)
            {
                std::vector<double> firstBits;
                for (auto alg : { TransposeAlgorithm::Alltoallv, TransposeAlgorithm::Pairwise, TransposeAlgorithm::Rma,
                                  TransposeAlgorithm::Shm })
                {
                    const std::string label = "grid " + std::to_string(c.grid[0]) + "x" + std::to_string(c.grid[1]) + "x"
                                              + std::to_string(c.grid[2]) + " order " + std::to_string(c.order)
                                              + ", process grid " + std::to_string(pg[0]) + "x"
                                              + std::to_string(pg[1]) + ", " + transposeAlgorithmName(alg);
                    // one computation's forces (global order), energy and
                    // virial, summed over the ranks
                    auto computeGlobal = [&](DistributedPme& pme) {
                        fm.assign(xm.size(), RVec());
                        Matrix3              vir;
                        const double         e = pme.compute(box, xm, qm, fm, &vir);
                        std::vector<double> g(size_t(natoms) * 3 + 10, 0.0);
                        for (size_t k = 0; k < mine.size(); k++)
                        {
                            for (int d = 0; d < 3; d++)
                            {
                                g[size_t(mine[k]) * 3 + d] = fm[k][d];
                            }
                        }
                        g[size_t(natoms) * 3] = e;
                        for (int i = 0; i < 9; i++)
                        {
                            g[size_t(natoms) * 3 + 1 + i] = vir(i / 3, i % 3);
                        }
                        sumOver(comm, g);
                        return g;
                    };
                    DistributedPme dpme(params, comm, pg, alg, qsum);
                    // twice: the second call must not see leftovers of the first
                    computeGlobal(dpme);
                    const std::vector<double> global = computeGlobal(dpme);
                    double worst = 0;
                    for (int a = 0; a < natoms; a++)
                    {
                        DVec diff;
                        for (int d = 0; d < 3; d++)
                        {
                            diff[d] = global[size_t(a) * 3 + d] - fRef[a][d];
                        }
                        worst = std::max(worst, std::sqrt(norm2(diff)) / rms);
                    }
                    check(worst < 1e-9, label + ": largest force difference " + std::to_string(worst) + " of the RMS force");
                    const double eSum = global[size_t(natoms) * 3];
                    check(std::abs(eSum - eRef) <= 1e-9 * std::abs(eRef),
                          label + ": energy " + std::to_string(eSum) + " vs " + std::to_string(eRef));
                    double vmax = 0;
                    for (int i = 0; i < 9; i++)
                    {
                        vmax = std::max(vmax, std::abs(vRef(i / 3, i % 3)));
                    }
                    for (int i = 0; i < 9; i++)
                    {
                        check(std::abs(global[size_t(natoms) * 3 + 1 + i] - vRef(i / 3, i % 3)) <= 1e-9 * vmax,
                              label + ": virial component " + std::to_string(i));
                    }
                    if (firstBits.empty())
                    {
                        firstBits = global;
                        // threads (slabs of the spread, shares of the
                        // gather) change no bit
                        DistributedPme threaded(params, comm, pg, alg, qsum);
                        threaded.setNumThreads(3);
                        const std::vector<double> g3 = computeGlobal(threaded);
                        size_t firstDiff = 0;
                        while (firstDiff < g3.size() && g3[firstDiff] == global[firstDiff])
                        {
                            firstDiff++;
                        }
                        check(g3 == global, label + ": 3 threads not bitwise identical to 1 (first difference at value "
                                                    + std::to_string(firstDiff) + " of " + std::to_string(g3.size()) + ")");
                    }
                    else
                    {
                        check(firstBits == global, label + ": not bitwise identical to alltoallv");
                    }
                }
            }
        }
        checkPlannedLinks(comm);
        const int mineFailed = failures > 0 ? 1 : 0;
        int       anyFailed  = mineFailed;
        if (comm.mpiComm() != MPI_COMM_NULL)
        {
            MPI_Allreduce(&mineFailed, &anyFailed, 1, MPI_INT, MPI_MAX, comm.mpiComm());
        }
        if (me == 0)
        {
            std::printf("DistributedPme against the reference on %d rank%s: %s\n", P, P > 1 ? "s" : "",
                        anyFailed ? "FAILED" : "all checks passed");
        }
        failures = anyFailed;
    }
    comm::Communicator::finalize();
    return failures ? 1 : 0;
}
