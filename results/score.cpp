#include "results/score.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vfssim::report {

double factor_between(double a, double b) {
  if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) return std::numeric_limits<double>::infinity();
  return std::max(a / b, b / a);
}

FigureScore score_figure(const std::string& kind, double reported, double tolerance, const std::string& bound,
                         double predicted) {
  FigureScore s;
  if (kind != "value" && std::abs(reported - 1) > kNoDirection)
    s.direction_ok = std::isfinite(predicted) && predicted != 1 && (predicted > 1) == (reported > 1);
  double miss = predicted - reported;  // for a change, Δpredicted - Δreported
  const bool bound_met = (bound == "at_least" && miss > 0) || (bound == "at_most" && miss < 0);
  if (bound_met) miss = 0;
  const double scale = kind == "change" ? std::max(std::abs(reported - 1), kChangeFloor) : std::abs(reported);
  s.error = scale != 0 ? std::abs(miss) / scale : std::abs(miss);
  if (!std::isfinite(s.error)) s.error = std::numeric_limits<double>::infinity();
  s.within = s.error <= tolerance;
  s.factor = bound_met ? 1 : factor_between(predicted, reported);
  return s;
}

}  // namespace vfssim::report
