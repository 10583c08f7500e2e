/* domdec/load_balance.h — dynamic load balancing: where domain boundaries
 * move from the work measured in each domain.
 *
 * The domain grid keeps its nx x ny x nz shape; along each cut dimension
 * the boundaries between slabs of domains (fractional coordinates; one set
 * per column of domains, staggered as domain_bounds.h says) move so that
 * each slab gets an equal share of the measured work. The work of a slab
 * is the sum of its domains' loads, spread evenly over the slab's width;
 * the new boundaries cut that piecewise-linear cumulative work into equal
 * parts. Two limits keep the decomposition valid:
 *
 *  - every slab stays at least minWidth wide (fractional): the halo
 *    distance over the dimension's halo pulses, so the planned pulses still
 *    cover the halo;
 *  - no boundary moves more than maxMove (fractional) per balance, so a
 *    group crosses at most one boundary between two searches. The move
 *    towards the target is scaled as a whole (a convex combination of two
 *    valid boundary sets is valid).
 *
 * A damping factor (three quarters of the way to the target per balance,
 * as GROMACS damps its cell-size changes) keeps the measured noise from
 * making boundaries oscillate; above kDlbUndampedImbalance there is none. Everything here is deterministic: the same loads give the
 * same bits on every rank. */
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace putmd
{

enum class DlbMode
{
    Auto, // on once the measured loss exceeds kDlbAutoPercent
    Yes,
    No
};

constexpr double kDlbAutoPercent = 5.0;
constexpr double kDlbDamping     = 0.75;
/* Above this imbalance (max/mean - 1) the boundaries go all the way to the
 * target (within the move limit): far from balance the noise matters less
 * than the time lost while converging. */
constexpr double kDlbUndampedImbalance = 0.2;

/* "auto", "yes", "no", and back (nullopt for anything else) */
const char*            dlbModeName(DlbMode m);
std::optional<DlbMode> parseDlbMode(const std::string& name);

/* New boundaries (n + 1 values, first 0, last 1) for slabs with the given
 * loads (n values, >= 0). bounds: the current ones. */
std::vector<double> balancedBounds(const std::vector<double>& bounds, const std::vector<double>& slabLoad,
                                   double minWidth, double maxMove, double damping = kDlbDamping);

/* The loss of a set of domain loads: (max - mean) / mean. */
double loadImbalance(const std::vector<double>& loads);

} // namespace putmd
