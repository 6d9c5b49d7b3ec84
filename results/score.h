// How `vfssim validate` (and Python's vfssim.score) scores one expected
// figure against the model's prediction: one rule for both.
#pragma once

#include <optional>
#include <string>

namespace vfssim::report {

// A reported ratio within this much of 1 claims no direction.
inline constexpr double kNoDirection = 0.02;
// A change's error is relative to the reported change, but never to less
// than this: a reported +2% is not missed by 100% when the model says +4%.
inline constexpr double kChangeFloor = 0.10;

struct FigureScore {
  double error = 0;                  // see score_figure (infinity when undefined)
  double factor = 1;                 // max(p/r, r/p) (for a change, of the ratios 1 + change); infinity
                                     // when either is not positive
  bool within = false;               // error <= tolerance
  std::optional<bool> direction_ok;  // ratios and changes that claim a direction only
};

// kind: "value", "ratio" or "change"; `reported` and `predicted` of a change
// are the ratios 1 + change. bound: "about", "at_least" or "at_most" (a bound
// is met anywhere on its side; past it the shortfall is the error).
//   value, ratio: error = |predicted - reported| / |reported|
//   change:       error = |Δpredicted - Δreported| / max(|Δreported|, 10%)
FigureScore score_figure(const std::string& kind, double reported, double tolerance, const std::string& bound,
                         double predicted);

// max(a/b, b/a) for two positive numbers, infinity otherwise.
double factor_between(double a, double b);

}  // namespace vfssim::report
