// Scoring a set of scenarios' expected figures against the model: the
// engine of `vfssim validate` and of Python's vfssim.score (one place
// evaluates metrics, detects restated figures and keeps the summaries).
//
// A figure is a prediction unless it is fitted (a constant was tuned to
// it) or restated: every point it reads is the same simulation as a
// fitted figure's point (same point_fingerprint), or it reads the same
// simulations with the same kind and metric as an earlier prediction, both
// within its own scenario file.
// Restated figures are shown and stored, never scored.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

namespace vfssim::report {

// One point a figure reads.
struct NeededPoint {
  std::size_t scenario = 0;  // index into the scenarios given
  models::Expectation::PointRef ref;
  std::string fingerprint;   // models::point_fingerprint
};

struct ScoredFigure {
  std::size_t scenario = 0;
  const models::Expectation* e = nullptr;
  double predicted = 0;       // value, ratio, 1 + change, peak height, spread: fastest task
  double predicted_high = 0;  // spread: the slowest task
  int predicted_cpus = 0;     // peak: where the predicted curve is highest
  bool cpus_within_doubling = false;  // peak
  double error = 0;
  double factor = 1;
  bool within = false;
  std::optional<bool> direction_ok;
  bool restated = false;
  std::string restates;       // the fitted or earlier figure whose simulations it reads
  bool prediction() const { return !e->fitted && !restated; }
  // A fitted figure its constant did not bring within tolerance: the fit
  // could not reach the reported value (a miss of the model, not a fit).
  bool fit_missed() const { return e->fitted && !within; }
};

struct ValidationSummary {
  std::size_t scenarios = 0;  // with figures
  std::size_t figures = 0, fitted = 0, fit_missed = 0, restated = 0, predictions = 0, within = 0, within_factor_1_5 = 0, peaks = 0,
              peaks_within_doubling = 0, directions_right = 0, directions_total = 0;
  bool failed = false;  // a prediction out of tolerance or in the wrong direction, or a fit missed
  nlohmann::json to_json() const;
};

class Validation {
 public:
  // Loaded scenarios; they must outlive the Validation.
  explicit Validation(std::vector<const models::Scenario*> scenarios);
  const std::vector<const models::Scenario*>& scenarios() const { return scenarios_; }
  // Two fitted figures that read one simulation (the same fingerprint):
  // two constants tuned to one configuration, against the one-fit rule.
  // "SCENARIO: figure 'A' and figure 'B' are both fitted to the simulation
  // of POINT"; empty when the rule holds.
  const std::vector<std::string>& fit_conflicts() const { return conflicts_; }
  // The distinct points the figures read, in first-use order.
  const std::vector<NeededPoint>& points() const { return points_; }
  // reps[i]: the replications of points()[i] (at least one each).
  std::vector<ScoredFigure> score(const std::vector<std::vector<models::PointResult>>& reps) const;
  // The point of figure f (score()'s order) that is its new point (a
  // peak's or curve's first point read when none is).
  std::size_t new_point_of(std::size_t f) const;
  // A scored figure as `vfssim validate --json` and Python's score() give it.
  nlohmann::json figure_json(const ScoredFigure& f) const;
  // Totals over the figures of one scenario (index), or of all (nullopt).
  static ValidationSummary summarize(const std::vector<ScoredFigure>& figures, std::optional<std::size_t> scenario);
  // Totals over the figures of the scenarios on one rung of the ladder
  // (models::kLevels: hardware, locks, workload).
  ValidationSummary summarize_level(const std::vector<ScoredFigure>& figures, const std::string& level) const;

 private:
  std::size_t point(std::size_t scenario, const models::Expectation::PointRef& ref);
  std::vector<std::size_t> reads(std::size_t scenario, const models::Expectation& e);
  std::vector<const models::Scenario*> scenarios_;
  std::vector<NeededPoint> points_;
  // Per figure (scenario order, then file order): the points it reads.
  std::vector<std::pair<std::size_t, const models::Expectation*>> figures_;
  std::vector<std::vector<std::size_t>> figure_points_;
  void index_fits();
  // (scenario, fingerprint) -> the first fitted figure reading it (index into figures_)
  std::map<std::pair<std::size_t, std::string>, std::size_t> fitted_by_;
  std::vector<std::string> conflicts_;
};

}  // namespace vfssim::report
