#include "results/spread.h"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vfssim::report {

double t_quantile(double p, int df) {
  if (df < 1) throw std::invalid_argument("t quantile: " + std::to_string(df) + " degrees of freedom (need at least 1)");
  if (!(p > 0 && p < 1)) throw std::invalid_argument("t quantile: probability " + std::to_string(p) + " is not in (0, 1)");
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

std::optional<double> stddev_pct(double mean, double stddev, int n) {
  if (n < 2 || mean == 0) return std::nullopt;
  return stddev / std::abs(mean) * 100;
}

std::optional<std::pair<double, double>> ci95(double mean, double stddev, int n) {
  if (n < 2) return std::nullopt;
  const double half = t_quantile(0.975, n - 1) * stddev / std::sqrt(static_cast<double>(n));
  return std::make_pair(mean - half, mean + half);
}

}  // namespace vfssim::report
