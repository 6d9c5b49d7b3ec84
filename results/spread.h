// The spread of a point's replications: the sample standard deviation as
// a share of the mean, and the 95% confidence interval of the mean rate
// from Student's t distribution (n - 1 degrees of freedom). Both are
// undefined with one replication: there is nothing to spread.
#pragma once

#include <optional>
#include <utility>

namespace vfssim::report {

// The p-quantile of Student's t with `df` degrees of freedom (Boost.Math):
// t_quantile(0.975, 4) = 2.776. Throws std::invalid_argument for df < 1
// or p outside (0, 1).
double t_quantile(double p, int df);

// stddev / mean in percent; nullopt with fewer than 2 replications or a
// zero mean.
std::optional<double> stddev_pct(double mean, double stddev, int n);

// mean -+ t(0.975, n - 1) * stddev / sqrt(n); nullopt with fewer than 2
// replications.
std::optional<std::pair<double, double>> ci95(double mean, double stddev, int n);

}  // namespace vfssim::report
