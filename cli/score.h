// How `vfssim validate` (and Python's vfssim.score) scores one expected
// figure against the model's prediction: one rule for both.
#pragma once

#include <optional>
#include <string>

namespace vfssim::report {

// A reported ratio within this much of 1 claims no direction.
inline constexpr double kNoDirection = 0.02;

struct FigureScore {
  double error = 0;                 // |predicted - reported| / |reported| (infinity when undefined)
  bool within = false;              // error <= tolerance
  std::optional<bool> direction_ok; // ratios and changes that claim a direction only
};

// kind: "value", "ratio" or "change" (a change as the ratio 1 + change, in
// both reported and predicted); bound: "about", "at_least" or "at_most" (a
// bound is met anywhere on its side, past it the shortfall is the error).
FigureScore score_figure(const std::string& kind, double reported, double tolerance, const std::string& bound,
                         double predicted);

}  // namespace vfssim::report
