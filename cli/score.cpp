#include "cli/score.h"

#include <cmath>
#include <limits>

namespace vfssim::report {

FigureScore score_figure(const std::string& kind, double reported, double tolerance, const std::string& bound,
                         double predicted) {
  FigureScore s;
  if (kind != "value" && std::abs(reported - 1) > kNoDirection)
    s.direction_ok = std::isfinite(predicted) && predicted != 1 && (predicted > 1) == (reported > 1);
  double miss = predicted - reported;
  if ((bound == "at_least" && miss > 0) || (bound == "at_most" && miss < 0)) miss = 0;
  s.error = reported != 0 ? std::abs(miss) / std::abs(reported) : std::abs(miss);
  if (!std::isfinite(s.error)) s.error = std::numeric_limits<double>::infinity();
  s.within = s.error <= tolerance;
  return s;
}

}  // namespace vfssim::report
