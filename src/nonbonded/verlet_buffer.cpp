#include "nonbonded/verlet_buffer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "nonbonded/interaction_const.h"

namespace putmd
{

namespace
{

/* -V', V'' and -V''' at the cut-off, per unit C6, C12 or charge product. */
struct PotentialDerivatives
{
    double md1 = 0, d2 = 0, md3 = 0;
};

/* Displacement variances of one kind: rotation about the constraint
 * partner (2D) and motion of the pair's centre of mass or the atom (3D). */
struct KindVariance
{
    double s2Rot = 0, s2Com = 0;
};

constexpr double bufferResolution = 0.001; // nm, GROMACS's grid for rlist
constexpr double nveZeroTBuffer   = 0.1;   // fraction of the cut-off at 0 K
constexpr int    referenceNstlist = 10;
constexpr int    nstlistTry[]     = { 20, 25, 40, 50, 80, 100 };
constexpr double listFactorMargin = 0.1; // over the allowed growth, at most

bool isDynamics(const MdpOptions& mdp)
{
    return mdp.integrator == Integrator::Md || mdp.integrator == Integrator::MdVv;
}

bool isNve(const MdpOptions& mdp)
{
    return isDynamics(mdp) && mdp.tcoupl == TCoupl::No;
}

double cutoffOf(const MdpOptions& mdp)
{
    return std::max(mdp.rvdw, mdp.rcoulomb);
}

/* The partner of each atom for the displacement model: the heaviest atom
 * it is constrained to (the first of equal masses), or for SETTLE the
 * other-kind atom at the O-H distance. */
void findConstraintPartners(const Topology& top, std::vector<double>& partnerMass, std::vector<double>& partnerDist)
{
    partnerMass.assign(top.numAtoms, 0);
    partnerDist.assign(top.numAtoms, 0);
    for (const auto& c : top.constraints)
    {
        if (c.length <= 0)
        {
            continue; // flexible constraints are not counted
        }
        const int ends[2][2] = { { c.i, c.j }, { c.j, c.i } };
        for (const auto& e : ends)
        {
            if (top.mass[e[1]] > partnerMass[e[0]])
            {
                partnerMass[e[0]] = top.mass[e[1]];
                partnerDist[e[0]] = c.length;
            }
        }
    }
    for (const auto& s : top.settles)
    {
        partnerMass[s.o]  = top.mass[s.h1];
        partnerDist[s.o]  = s.doh;
        partnerMass[s.h1] = top.mass[s.o];
        partnerDist[s.h1] = s.doh;
        partnerMass[s.h2] = top.mass[s.o];
        partnerDist[s.h2] = s.doh;
    }
}

/* kTfac = kB T t^2: divided by a mass it is the variance per dimension. */
KindVariance kindVariance(double kTfac, const AtomKind& k)
{
    KindVariance v;
    if (!k.constrained)
    {
        v.s2Com = kTfac / k.mass;
        return v;
    }
    // rotation of the atom about the pair's centre of mass, arc variance
    const double massFraction = k.partnerMass / (k.mass + k.partnerMass);
    const double arm          = k.partnerDist * massFraction;
    // mean square chord over arm^2 for an angular variance x grows as x at
    // first and saturates; GROMACS fits x / (1 + x/3 + 2x^2/45), kept
    // constant beyond its maximum at x = sqrt(45/2)
    const double a     = 1.0 / 3.0;
    const double b     = 2.0 / 45.0;
    double       s2Rel = kTfac * massFraction / k.mass / (arm * arm);
    s2Rel              = std::min(s2Rel, 1 / std::sqrt(b));
    v.s2Rot            = arm * arm * s2Rel / (1 + a * s2Rel + b * s2Rel * s2Rel);
    v.s2Com            = kTfac / (k.mass + k.partnerMass);
    return v;
}

/* The 2D displacement density sqrt(pi/2) erfc(r/(sqrt2 s))/(2s) bounded
 * from above by scale * Gaussian(r + shift), matched in value and slope at
 * r = x. */
void approximate2Dof(double s2, double x, double* shift, double* scale)
{
    const double ex = std::exp(-x * x / (2 * s2));
    const double er = std::erfc(x / std::sqrt(2 * s2));
    *shift          = -x + std::sqrt(2 * s2 / units::pi) * ex / er;
    *scale          = 0.5 * units::pi * std::exp(ex * ex / (units::pi * er * er)) * er;
}

/* The part of a pair's energy error that depends on the displacements and
 * the buffer only, not on the potential: the scale of the 2D bound and the
 * three integrals over the part of the Gaussian relative displacement
 * (variance s2) that crosses the buffer, which multiply -V'/2, V''/6 and
 * -V'''/24. Kinds that move alike share it (see systemDrift). */
struct DriftShape
{
    double scale = 1, x1 = 0, x2 = 0, x3 = 0;
};

DriftShape driftShape(bool constrainedI, bool constrainedJ, double s2, double s2RotI, double s2RotJ, double buffer)
{
    // beyond 8 sigma-units erfc underflows in GROMACS's float; the pair
    // contributes nothing there
    const double erfcArgMax = 8.0;
    double       rsh        = buffer;
    DriftShape   d;
    double       cExp = 0, cErfc = 0;
    if (rsh * rsh <= 2 * s2 * erfcArgMax * erfcArgMax)
    {
        const bool   constrained[2] = { constrainedI, constrainedJ };
        const double s2Rot[2]       = { s2RotI, s2RotJ };
        for (int n = 0; n < 2; n++)
        {
            if (constrained[n])
            {
                double sh, sc;
                approximate2Dof(s2Rot[n], buffer * s2Rot[n] / s2, &sh, &sc);
                rsh += sh;
                d.scale *= sc;
            }
        }
        cExp  = std::exp(-rsh * rsh / (2 * s2)) / std::sqrt(2 * units::pi);
        cErfc = 0.5 * std::erfc(rsh / std::sqrt(2 * s2));
    }
    const double s    = std::sqrt(s2);
    const double rsh2 = rsh * rsh;
    d.x1              = (rsh2 + s2) * cErfc - rsh * s * cExp;
    d.x2              = s * (rsh2 + 2 * s2) * cExp - rsh * (rsh2 + 3 * s2) * cErfc;
    d.x3              = (rsh2 * rsh2 + 6 * rsh2 * s2 + 3 * s2 * s2) * cErfc - rsh * s * (rsh2 + 5 * s2) * cExp;
    return d;
}

/* Energy error of one atom pair (energy times length; the line density is
 * applied by the caller): the potential expanded to third order beyond the
 * cut-off, integrated against the displacement (driftShape). */
double pairDrift(const DriftShape& d, const PotentialDerivatives& der)
{
    const double pot1 = der.md1 / 2 * d.x1;
    const double pot2 = der.d2 / 6 * d.x2;
    const double pot3 = der.md3 / 24 * d.x3;
    return d.scale * (pot1 + pot2 + pot3);
}

/* GROMACS's -V''' of the force-switched r^-p at rc (see the header). */
double forceSwitchMd3(double p, double rswitch, double rc)
{
    const double d     = rc - rswitch;
    const double a     = -((p + 4) * rc - (p + 1) * rswitch) / (std::pow(rc, p + 2) * d * d);
    const double b     = ((p + 3) * rc - (p + 1) * rswitch) / (std::pow(rc, p + 2) * d * d * d);
    const double md3Lj = (p + 2) * (p + 1) * p * std::pow(rc, p + 3);
    return md3Lj + 2 * a + 6 * b * d;
}

/* Derivatives per unit C6 (dispersion, V = -C6/r^6) and C12 (repulsion). */
void vdwDerivatives(const MdpOptions& mdp, PotentialDerivatives* disp, PotentialDerivatives* rep)
{
    const double rc = mdp.rvdw;
    switch (mdp.vdwModifier)
    {
        case InteractionModifier::None:
        case InteractionModifier::PotentialShift:
            disp->md1 = -6 * std::pow(rc, -7.0);
            rep->md1  = 12 * std::pow(rc, -13.0);
            break;
        case InteractionModifier::ForceSwitch:
            // V = V' = V'' = 0 at the cut-off
            disp->md3 = -forceSwitchMd3(6.0, mdp.rvdwSwitch, rc);
            rep->md3  = forceSwitchMd3(12.0, mdp.rvdwSwitch, rc);
            break;
    }
}

/* Derivatives per unit charge product, including 1/(4 pi eps0 eps_r). */
PotentialDerivatives elecDerivatives(const MdpOptions& mdp)
{
    const double         elfac = units::one4PiEps0 / mdp.epsilonR;
    const double         rc    = mdp.rcoulomb;
    PotentialDerivatives elec;
    if (mdp.coulombType == CoulombType::Pme)
    {
        const double beta = ewaldCoefficient(rc, mdp.ewaldRtol);
        const double br   = beta * rc;
        const double g    = 2 / std::sqrt(units::pi) * std::exp(-br * br);
        elec.md1          = elfac * (beta * g / rc + std::erfc(br) / (rc * rc));
        elec.d2           = elfac / (rc * rc) * (2 * beta * (1 + br * br) * g + 2 * std::erfc(br) / rc);
        return elec;
    }
    // plain cut-off: reaction-field with eps-rf = 1, k_rf = 0; GROMACS
    // divides eps-rf by eps-r here, so that is what its buffer uses
    double epsRf = 1, kRf = 0;
    if (mdp.coulombType == CoulombType::ReactionField)
    {
        epsRf = mdp.epsilonRf / mdp.epsilonR;
        kRf   = epsRf != 0 ? (epsRf - mdp.epsilonR) / (std::pow(rc, 3) * (2 * epsRf + mdp.epsilonR))
                           : 0.5 / std::pow(rc, 3);
    }
    if (epsRf > 0)
    {
        elec.md1 = elfac * (1 / (rc * rc) - 2 * kRf * rc);
    }
    elec.d2 = elfac * (2 / std::pow(rc, 3) + 2 * kRf);
    return elec;
}

/* Fraction of a cluster's atoms at distance rlist when the cluster is at
 * rlist: the area around the cluster (a regular tetrahedron of atoms at
 * the HCP spacing for 4, a Taylor expansion) relative to a sphere,
 * divided by the cluster size. */
double surfaceFraction(int clusterSize, double particleDistance, double rlist)
{
    if (rlist < 0.5 * particleDistance)
    {
        return 1.0;
    }
    const double d = 0.5 * particleDistance / rlist;
    double       areaRel;
    switch (clusterSize)
    {
        case 1: areaRel = 1.0; break;
        case 2: areaRel = 1.0 + d; break;
        case 4:
        {
            const double d2     = d * d;
            const double series = 1.0 + 5.0 / 18.0 * d2 + 7.0 / 45.0 * d2 * d2 + 83.0 / 756.0 * d2 * d2 * d2;
            areaRel = 1.0 + (6 * std::acos(1 / std::sqrt(3.0)) * d + std::sqrt(3.0) * d2 * series) / units::pi;
            break;
        }
        default: throw InternalError("surfaceFraction: cluster size must be 1, 2 or 4");
    }
    return areaRel / clusterSize;
}

int driftClusterSize(int n)
{
    if (n != 1 && n != 2 && n % 4 != 0)
    {
        throw InternalError(fmt::format("pair-list cluster size {} is not 1, 2 or a multiple of 4", n));
    }
    return std::min(n, 4);
}

/* Everything about the system the drift needs, independent of rlist. */
struct DriftModel
{
    std::vector<AtomKind>     kinds;
    std::vector<KindVariance> variance;
    /* Kinds that move alike (constrained or not, the same variances) share
     * a motion class: the class of each kind, and how many there are. */
    std::vector<int> motionClass;
    int              numClasses = 0;
    PotentialDerivatives      disp, rep, elec;
    const Topology*           top = nullptr;
    double rvdw = 1, rcoulomb = 1, volume = 1, numAtoms = 0, kTfac = 0, maxSigma = 0;
    double time = 0; // nstlist dt, the period the drift is spread over
};

DriftModel makeDriftModel(const Topology& top, const std::vector<AtomKind>& kinds, const MdpOptions& mdp, const Box& box,
                          int nstlist, double temperature)
{
    DriftModel m;
    m.top      = &top;
    m.kinds    = kinds;
    m.rvdw     = mdp.rvdw;
    m.rcoulomb = mdp.rcoulomb;
    m.volume   = box.volume();
    m.numAtoms = top.numAtoms;
    m.time     = nstlist * mdp.dt;
    vdwDerivatives(mdp, &m.disp, &m.rep);
    m.elec               = elecDerivatives(mdp);
    const double lifetime = (nstlist - 1) * mdp.dt;
    m.kTfac               = units::kBoltzmann * temperature * lifetime * lifetime;
    double smallestMass   = 0;
    std::map<std::tuple<bool, double, double>, int> classes;
    for (const auto& k : m.kinds)
    {
        const KindVariance v = kindVariance(m.kTfac, k);
        m.variance.push_back(v);
        smallestMass = smallestMass == 0 ? k.mass : std::min(smallestMass, k.mass);
        const auto it = classes.try_emplace({ k.constrained, v.s2Rot, v.s2Com }, m.numClasses).first;
        m.numClasses  = std::max(m.numClasses, it->second + 1);
        m.motionClass.push_back(it->second);
    }
    m.maxSigma = smallestMass > 0 ? 2 * std::sqrt(m.kTfac / smallestMass) : 0;
    return m;
}

/* Drift of the whole system for an atom-pair list of radius rlist. The
 * displacement part of a kind pair (erfc and exp, driftShape) depends only
 * on the two kinds' motion classes: it is computed once per class pair (a
 * protein's hundreds of kinds fall in a few classes; per kind pair it took
 * 2 s of rnase-amber-cubic's start-up), by the same operations in the same
 * order as per kind pair, so to the same bits. */
double systemDrift(const DriftModel& m, double rlist)
{
    if (m.kTfac == 0)
    {
        return 0;
    }
    const Topology& top = *m.top;
    struct ClassPair
    {
        bool       done = false;
        DriftShape vdw, coulomb;
        double     lineDensity = 0;
    };
    const size_t           numClasses = size_t(m.numClasses);
    std::vector<ClassPair> classPairs(numClasses * numClasses);
    double                 total = 0;
    for (size_t i = 0; i < m.kinds.size(); i++)
    {
        const AtomKind&     ki = m.kinds[i];
        const KindVariance& vi = m.variance[i];
        for (size_t j = i; j < m.kinds.size(); j++)
        {
            const AtomKind&     kj = m.kinds[j];
            const KindVariance& vj = m.variance[j];
            ClassPair&          cp = classPairs[size_t(m.motionClass[i]) * numClasses + size_t(m.motionClass[j])];
            if (!cp.done)
            {
                const double s2 = vi.s2Rot + vi.s2Com + vj.s2Rot + vj.s2Com;
                cp.vdw          = driftShape(ki.constrained, kj.constrained, s2, vi.s2Rot, vj.s2Rot, rlist - m.rvdw);
                cp.coulomb = driftShape(ki.constrained, kj.constrained, s2, vi.s2Rot, vj.s2Rot, rlist - m.rcoulomb);
                // line density at the list radius, with the mean r^2 taken
                // as (rlist + sigma)^2
                cp.lineDensity = 4 * units::pi * std::pow(rlist + std::sqrt(s2), 2) / m.volume;
                cp.done        = true;
            }
            const double         c6 = top.c6Of(ki.ljType, kj.ljType), c12 = top.c12Of(ki.ljType, kj.ljType);
            PotentialDerivatives lj;
            lj.md1 = c6 * m.disp.md1 + c12 * m.rep.md1;
            lj.d2  = c6 * m.disp.d2 + c12 * m.rep.d2;
            lj.md3 = c6 * m.disp.md3 + c12 * m.rep.md3;
            PotentialDerivatives qq;
            qq.md1     = m.elec.md1 * ki.charge * kj.charge;
            qq.d2      = m.elec.d2 * ki.charge * kj.charge;
            double pot = pairDrift(cp.vdw, lj) + pairDrift(cp.coulomb, qq);
            pot *= i == j ? ki.count * (ki.count - 1) / 2 : ki.count * kj.count;
            pot *= cp.lineDensity;
            total += std::abs(pot);
        }
    }
    return total;
}

/* Drift per atom per ps for a cluster pair list. */
double driftPerAtom(const DriftModel& m, double rlist, PairListSetup setup)
{
    const double particleDistance = std::cbrt(std::sqrt(2.0) * m.volume / m.numAtoms); // HCP at the mean density
    const double clusterFactor    = surfaceFraction(driftClusterSize(setup.clusterSizeI), particleDistance, rlist)
                                 * surfaceFraction(driftClusterSize(setup.clusterSizeJ), particleDistance, rlist);
    return systemDrift(m, rlist) * clusterFactor / (m.time * m.numAtoms);
}

/* Smallest rlist on the 0.001 nm grid within the tolerance (bisection, as
 * GROMACS: the drift decreases with the buffer). */
double bufferedRlist(const DriftModel& m, double tolerance, PairListSetup setup)
{
    const double rc = std::max(m.rvdw, m.rcoulomb);
    int          lo = -1; // known too small
    int          hi = static_cast<int>(5 * m.maxSigma / bufferResolution) + 1;
    while (hi - lo > 1)
    {
        const int mid = (lo + hi) / 2;
        if (std::abs(driftPerAtom(m, rc + mid * bufferResolution, setup)) > tolerance)
        {
            lo = mid;
        }
        else
        {
            hi = mid;
        }
    }
    return rc + hi * bufferResolution;
}

void checkTolerance(const MdpOptions& mdp)
{
    if (mdp.verletBufferTolerance == 0)
    {
        throw InputError(mdp.where("verlet-buffer-tolerance"),
                         "verlet-buffer-tolerance = 0 is not allowed: give a positive drift (kJ/mol/ps per atom) "
                         "or -1 to use rlist from the mdp");
    }
}

/* GROMACS's max_cutoff2: half the shortest box vector, and at most the
 * smallest diagonal element (corrected for the c-vector's y shift). */
double maxCutoff(const Box& box)
{
    const Matrix3& v      = box.vectors();
    double         minLen = 1e300;
    for (int d = 0; d < 3; d++)
    {
        minLen = std::min(minLen, std::sqrt(v(d, 0) * v(d, 0) + v(d, 1) * v(d, 1) + v(d, 2) * v(d, 2)));
    }
    const double minDiag = std::min({ v(0, 0), v(1, 1) - std::abs(v(2, 1)), v(2, 2) });
    return std::min(0.5 * minLen, minDiag);
}

/* mdrun's extra list radius of a cluster list over an atom list. */
double effectiveRadiusIncrease(PairListSetup setup, double density)
{
    const double iVolume = (4 - 1) / density; // GROMACS always takes 4 for i
    const double jVolume = (setup.clusterSizeJ - 1) / density;
    return 0.6 * std::cbrt(iVolume + jVolume);
}

} // namespace

std::vector<AtomKind> atomKinds(const Topology& top)
{
    std::vector<double> partnerMass, partnerDist;
    findConstraintPartners(top, partnerMass, partnerDist);

    using Key = std::tuple<double, int, double, bool, double, double>;
    std::map<Key, AtomKind> kinds;
    for (int i = 0; i < top.numAtoms; i++)
    {
        if (top.mass[i] == 0)
        {
            continue; // massless particles do not move on their own
        }
        AtomKind k;
        k.mass        = top.mass[i];
        k.ljType      = top.ljType[i];
        k.charge      = top.charge[i];
        k.constrained = partnerMass[i] > 0.4 * top.mass[i];
        k.partnerMass = partnerMass[i];
        k.partnerDist = partnerDist[i];
        const Key key{ k.mass, k.ljType, k.charge, k.constrained, k.partnerMass, k.partnerDist };
        auto      it = kinds.try_emplace(key, k).first;
        it->second.count += 1;
    }
    std::vector<AtomKind> out;
    for (const auto& [key, k] : kinds)
    {
        out.push_back(k);
    }
    return out;
}

double maxReferenceTemperature(const MdpOptions& mdp)
{
    if (!isDynamics(mdp))
    {
        return 0;
    }
    if (isNve(mdp))
    {
        return -1;
    }
    double t = 0;
    for (size_t g = 0; g < mdp.refT.size(); g++)
    {
        if (g >= mdp.tauT.size() || mdp.tauT[g] >= 0)
        {
            t = std::max(t, mdp.refT[g]);
        }
    }
    return t;
}

double initialTemperature(const Topology& top, const std::vector<DVec>& v, double degreesOfFreedom)
{
    if (v.size() != static_cast<size_t>(top.numAtoms))
    {
        throw InputError(fmt::format("initialTemperature: {} velocities for {} atoms", v.size(), top.numAtoms));
    }
    if (degreesOfFreedom <= 0)
    {
        return 0;
    }
    double sumMv2 = 0;
    for (int i = 0; i < top.numAtoms; i++)
    {
        sumMv2 += top.mass[i] * dot(v[i], v[i]);
    }
    return sumMv2 / (degreesOfFreedom * units::kBoltzmann);
}

double estimateDriftPerAtom(const Topology& top, const MdpOptions& mdp, const Box& box, int nstlist,
                            double referenceTemperature, double rlist, PairListSetup setup)
{
    const DriftModel m = makeDriftModel(top, atomKinds(top), mdp, box, nstlist, referenceTemperature);
    return driftPerAtom(m, rlist, setup);
}

double estimateRlist(const Topology& top, const MdpOptions& mdp, const Box& box, int nstlist,
                     double referenceTemperature, PairListSetup setup)
{
    return estimateRlist(top, atomKinds(top), mdp, box, nstlist, referenceTemperature, setup);
}

double estimateRlist(const Topology& top, const std::vector<AtomKind>& kinds, const MdpOptions& mdp, const Box& box,
                     int nstlist, double referenceTemperature, PairListSetup setup)
{
    const double rc = cutoffOf(mdp);
    checkTolerance(mdp);
    if (mdp.verletBufferTolerance < 0)
    {
        if (mdp.rlist < rc)
        {
            throw InputError(mdp.where("rlist"),
                             fmt::format("rlist ({:g} nm) is shorter than the cut-off max(rvdw, rcoulomb) = {:g} nm; "
                                         "with verlet-buffer-tolerance = -1 rlist must be at least the cut-off",
                                         mdp.rlist, rc));
        }
        return mdp.rlist;
    }
    if (!isDynamics(mdp))
    {
        return rc; // minimisation searches every step
    }
    if (nstlist < 1)
    {
        throw InputError(mdp.where("nstlist"), fmt::format("nstlist = {} must be at least 1", nstlist));
    }
    if (!(referenceTemperature >= 0))
    {
        throw InputError(mdp.where("ref-t"),
                         fmt::format("the Verlet buffer needs a reference temperature >= 0 K (with tcoupl = no, "
                                     "the initial temperature), got {:g}",
                                     referenceTemperature));
    }
    if (isNve(mdp) && referenceTemperature == 0)
    {
        return rc * (1 + nveZeroTBuffer);
    }
    const DriftModel m = makeDriftModel(top, kinds, mdp, box, nstlist, referenceTemperature);
    return bufferedRlist(m, mdp.verletBufferTolerance, setup);
}

VerletBufferResult chooseNstlistAndRlist(const Topology& top, const MdpOptions& mdp, const Box& box,
                                         double referenceTemperature, PairListSetup setup, double listGrowth)
{
    const double listFactorOk = listGrowth;
    const std::vector<AtomKind> kinds = atomKinds(top); // once for every nstlist tried
    VerletBufferResult r;
    r.nstlist = mdp.nstlist;
    r.rlist   = estimateRlist(top, kinds, mdp, box, mdp.nstlist, referenceTemperature, setup);
    if (r.rlist >= maxCutoff(box))
    {
        throw InputError(mdp.where("nstlist"),
                         fmt::format("The pair-list cut-off ({:g} nm) is longer than half the shortest box vector or "
                                     "longer than the smallest box diagonal element ({:g} nm). Increase the box size "
                                     "or decrease nstlist or increase verlet-buffer-tolerance.",
                                     r.rlist, maxCutoff(box)));
    }
    if (mdp.verletBufferTolerance > 0 && isDynamics(mdp))
    {
        if (isNve(mdp) && referenceTemperature == 0)
        {
            r.notes.push_back(
                    fmt::format("NVE at 0 K: rlist {:.3f} nm, a {:.0f}% buffer", r.rlist, nveZeroTBuffer * 100));
        }
        else
        {
            r.notes.push_back(fmt::format("rlist {:.3f} nm for nstlist {}, {}x{} pair list, tolerance {:g} kJ/mol/ps "
                                          "per atom at {:g} K",
                                          r.rlist, r.nstlist, setup.clusterSizeI, setup.clusterSizeJ,
                                          mdp.verletBufferTolerance, referenceTemperature));
        }
    }
    if (!isDynamics(mdp) || mdp.nstlist == 1 || mdp.nstlist >= nstlistTry[std::size(nstlistTry) - 1])
    {
        return r;
    }
    if (isNve(mdp))
    {
        r.notes.push_back("Can not increase nstlist because an NVE ensemble is used");
        return r;
    }
    if (mdp.verletBufferTolerance < 0)
    {
        r.notes.push_back("Can not increase nstlist because verlet-buffer-tolerance is not set or used");
        return r;
    }

    // the pair list may grow by listFactorOk (at most + margin) over that
    // of nstlist 10, in volume including the cluster overhang
    const double rlistRef = estimateRlist(top, kinds, mdp, box, referenceNstlist, referenceTemperature, setup);
    const double inc      = effectiveRadiusIncrease(setup, top.numAtoms / box.volume());
    const double rlistOk  = (rlistRef + inc) * std::cbrt(listFactorOk) - inc;
    const double rlistMax = (rlistRef + inc) * std::cbrt(listFactorOk + listFactorMargin) - inc;

    const int    nstlistOrig = r.nstlist;
    const double rlistOrig   = r.rlist;
    for (int tryNstlist : nstlistTry)
    {
        if (tryNstlist <= nstlistOrig)
        {
            continue;
        }
        const double rlistNew = estimateRlist(top, kinds, mdp, box, tryNstlist, referenceTemperature, setup);
        if (rlistNew >= maxCutoff(box) || rlistNew > rlistMax)
        {
            break; // stay with the previous value
        }
        r.nstlist = tryNstlist;
        r.rlist   = rlistNew;
        if (rlistNew >= rlistOk)
        {
            break;
        }
    }
    if (r.nstlist != nstlistOrig || r.rlist != rlistOrig)
    {
        r.notes.push_back(fmt::format("Changing nstlist from {} to {}, rlist from {:g} to {:g}", nstlistOrig,
                                      r.nstlist, rlistOrig, r.rlist));
    }
    return r;
}

} // namespace putmd
