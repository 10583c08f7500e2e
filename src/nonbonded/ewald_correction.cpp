#include "nonbonded/ewald_correction.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace putmd
{

namespace
{

constexpr double c_twoOverSqrtPi = 1.1283791670955126;

/* Chebyshev interpolation coefficients of f on [a, b], degree n. */
template<typename F>
std::vector<double> chebyshevFit(F&& f, double a, double b, int n)
{
    const int           m = n + 1;
    std::vector<double> values(m), c(m, 0.0);
    for (int k = 0; k < m; k++)
    {
        const double t = std::cos(M_PI * (k + 0.5) / m);
        values[k]      = f(a + 0.5 * (t + 1) * (b - a));
    }
    for (int j = 0; j < m; j++)
    {
        double sum = 0;
        for (int k = 0; k < m; k++)
        {
            sum += values[k] * std::cos(M_PI * j * (k + 0.5) / m);
        }
        c[j] = 2.0 / m * sum;
    }
    c[0] *= 0.5;
    return c;
}

/* Chebyshev series -> monomials in t (double). */
std::vector<double> toMonomials(const std::vector<double>& c)
{
    const int           n = static_cast<int>(c.size());
    std::vector<double> m(n, 0.0), tPrev(n, 0.0), tCur(n, 0.0), tNext(n, 0.0);
    tPrev[0] = 1; // T_0
    if (n > 1)
    {
        tCur[1] = 1; // T_1
    }
    for (int k = 0; k < n; k++)
    {
        const std::vector<double>& tk = k == 0 ? tPrev : tCur;
        for (int i = 0; i < n; i++)
        {
            m[i] += c[k] * tk[i];
        }
        if (k >= 1 && k + 1 < n)
        {
            // T_{k+1} = 2 t T_k - T_{k-1}
            for (int i = 0; i < n; i++)
            {
                tNext[i] = (i > 0 ? 2 * tCur[i - 1] : 0.0) - tPrev[i];
            }
            tPrev.swap(tCur);
            tCur.swap(tNext);
        }
    }
    return m;
}

float horner(const std::vector<float>& c, float t)
{
    float acc = 0;
    for (int k = static_cast<int>(c.size()) - 1; k >= 0; k--)
    {
        acc = std::fma(acc, t, c[k]);
    }
    return acc;
}

/* The largest |f| on [0, smax] (the scale of the tolerance). */
template<typename F>
double largestValue(F&& f, double smax)
{
    double scale = 0;
    for (int k = 0; k <= 2000; k++)
    {
        scale = std::max(scale, std::abs(f(smax * k / 2000)));
    }
    return scale;
}

template<typename F>
std::vector<float> fitToTolerance(F&& f, double smax, double* maxError)
{
    const double scale = largestValue(f, smax);
    for (int n = 6; n < EwaldCorrection::c_maxCoefficients; n++)
    {
        const std::vector<double> cd = toMonomials(chebyshevFit(f, 0.0, smax, n));
        std::vector<float>        c(cd.begin(), cd.end());
        double                    err = 0;
        for (int k = 0; k <= 2000; k++)
        {
            const double s = smax * k / 2000;
            const float  t = float(2 * s / smax - 1);
            err            = std::max(err, std::abs(double(horner(c, t)) - f(s)));
        }
        if (err <= 2e-7 * scale || n == EwaldCorrection::c_maxCoefficients - 1)
        {
            *maxError = err;
            return c;
        }
    }
    return {};
}

} // namespace

EwaldPieces EwaldPieces::fit(double beta, double smax, int n, int c)
{
    if (n < 1 || (n & (n - 1)) != 0 || c < 1)
    {
        // the piece is read from the low bits of a float sum (mod n)
        throw SimulationError("the Ewald fit in pieces needs a power of two pieces and at least one coefficient (got "
                              + std::to_string(n) + " pieces, " + std::to_string(c) + " coefficients)");
    }
    EwaldPieces p;
    p.pieces       = n;
    p.coefficients = c;
    p.scale        = float((n - 0.5) / (smax * (1 + 1e-5)));
    p.coef.assign(static_cast<size_t>(n) * c, 0.0f);
    auto f = [&](double s) { return EwaldCorrection::exactForce(beta, s); };
    // each piece on u in [-h, h], h a little over 1/2 (x rounds in float);
    // piece 0 reaches below s = 0, where the force's series still holds
    const double h = 0.5 + 1e-3;
    for (int k = 0; k < n; k++)
    {
        const std::vector<double> m =
                toMonomials(chebyshevFit([&](double u) { return f((k + u) / double(p.scale)); }, -h, h, c - 1));
        for (int i = 0; i < c; i++)
        {
            // monomials in t = u / h -> in u
            p.coef[static_cast<size_t>(i) * n + k] = float(m[i] / std::pow(h, i));
        }
    }
    for (int k = 0; k <= 20000; k++)
    {
        const float s = float(smax * k / 20000);
        p.maxError    = std::max(p.maxError, std::abs(double(p.evaluate(s)) - f(s)));
    }
    p.usable = p.maxError <= 2e-7 * largestValue(f, smax);
    return p;
}

float EwaldPieces::evaluate(float s) const
{
    const float y = std::fma(s, scale, c_magic);
    uint32_t    bits;
    std::memcpy(&bits, &y, sizeof bits);
    const int   k   = static_cast<int>(bits & static_cast<uint32_t>(pieces - 1));
    const float u   = std::fma(s, scale, c_magic - y);
    float       acc = 0;
    for (int i = coefficients - 1; i >= 0; i--)
    {
        acc = std::fma(acc, u, coef[static_cast<size_t>(i) * pieces + k]);
    }
    return acc;
}

double EwaldCorrection::exactForce(double beta, double s)
{
    const double z2 = beta * beta * s;
    if (z2 < 0.25)
    {
        // sum_{n>=1} (-1)^(n+1) 2n / (n! (2n+1)) z^(2n-2)
        double sum = 0, term = 1; // term = z^(2n-2) / n!
        for (int n = 1; n < 30; n++)
        {
            term = n == 1 ? 1 : term * z2 / n;
            sum += (n % 2 ? 1 : -1) * 2.0 * n / (2 * n + 1) * term;
        }
        return beta * beta * beta * c_twoOverSqrtPi * sum;
    }
    const double r = std::sqrt(s);
    return std::erf(beta * r) / (s * r) - c_twoOverSqrtPi * beta * std::exp(-z2) / s;
}

double EwaldCorrection::exactEnergy(double beta, double s)
{
    const double z2 = beta * beta * s;
    if (z2 < 0.25)
    {
        // erf(z)/z = 2/sqrt(pi) sum_n (-1)^n z^(2n) / (n! (2n+1))
        double sum = 0, term = 1;
        for (int n = 0; n < 30; n++)
        {
            term = n == 0 ? 1 : term * z2 / n;
            sum += (n % 2 ? -1 : 1) * term / (2 * n + 1);
        }
        return beta * c_twoOverSqrtPi * sum;
    }
    const double r = std::sqrt(s);
    return std::erf(beta * r) / r;
}

EwaldCorrection EwaldCorrection::fit(double beta, double rmax)
{
    if (!(beta > 0) || !(rmax > 0))
    {
        throw SimulationError("the Ewald real-space fit needs a positive beta and cut-off (got beta " + std::to_string(beta)
                              + ", rmax " + std::to_string(rmax) + ")");
    }
    EwaldCorrection e;
    e.beta   = beta;
    e.smax   = rmax * rmax;
    e.force  = fitToTolerance([&](double s) { return exactForce(beta, s); }, e.smax, &e.maxForceError);
    e.energy = fitToTolerance([&](double s) { return exactEnergy(beta, s); }, e.smax, &e.maxEnergyError);
    e.forceIn8  = EwaldPieces::fit(beta, e.smax, 8, EwaldPieces::c_coefficientsIn8);
    e.forceIn16 = EwaldPieces::fit(beta, e.smax, 16, EwaldPieces::c_coefficientsIn16);
    return e;
}

float EwaldCorrection::evaluateForce(float s) const
{
    return horner(force, float(2 / smax) * s - 1);
}

float EwaldCorrection::evaluateEnergy(float s) const
{
    return horner(energy, float(2 / smax) * s - 1);
}

} // namespace putmd
