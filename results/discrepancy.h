// The model's own error (issue 27, docs/uncertainty.md "The model's
// error"): the distribution of log(reported / predicted) over the public
// corpus's scored predictions, by class, and bands that combine it with
// the parameter band of --uncertainty.
//
// A figure's class is (kind class, bound class):
//   kind class:  "value" (a value or a curve point), "ratio" (a ratio or a
//                change, kept as new/base), "other" (a peak's height, a
//                spread's fastest task);
//   bound class: what bounds the figure's new point in the plain run
//                (find_bottleneck, results/review.h): "uncontended"
//                (nothing waits 5% of CPU time), "spinlock" (a spinning
//                lock: tas, ticket, mcs, qspinlock, cna, rwlock, brlock,
//                spinlock), "sleeping" (mutex, rwsem, semaphore, ...),
//                "line" (a shared cache line, no lock).
// Estimator: per class, the predictive distribution of a new case's figure
// (every case's offset, the median of its records, plus every record's
// residual from its own case's offset: between-case and within-case error
// convolved), its empirical quantiles shrunk toward the kind class's and
// that toward all records' (quantile averaging, weight m / (m + k) for m
// cases).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"
#include "results/validation.h"

namespace vfssim::report {

inline constexpr const char* kKindClasses[] = {"value", "ratio", "other"};
inline constexpr const char* kBoundClasses[] = {"uncontended", "spinlock", "sleeping", "line"};
// The shrinkage constant k of the weight m / (m + k): a class learned from
// k cases weighs as much as its parent.
inline constexpr double kDiscrepancyShrinkage = 2;
// The quantile grid a class's distribution is evaluated on when it is
// combined with parameter samples: levels (j + 0.5) / kDiscrepancyGrid.
inline constexpr int kDiscrepancyGrid = 200;

std::string kind_class(const models::Expectation& e);
// The bound class of a point over its replications (see above).
std::string bound_class(const std::vector<models::PointResult>& reps);

struct DiscrepancyRecord {
  std::string scenario, figure, kind_class, bound_class;
  double log_error = 0;  // log(reported / predicted)
};

// The record a scored figure gives, or nullopt when it teaches nothing: not
// a prediction (fitted, restated), no reported value or a bound
// (at_least/at_most: censored), or a non-positive value. A peak's height
// and a spread's fastest task are "other" records.
std::optional<DiscrepancyRecord> discrepancy_record(const ScoredFigure& f, const std::string& scenario,
                                                    const std::string& bound);

class Discrepancy {
 public:
  Discrepancy() = default;
  // Learned from `records` without those of scenario `exclude` ("": none):
  // leave-one-case-out passes the case's name.
  Discrepancy(const std::vector<DiscrepancyRecord>& records, double k = kDiscrepancyShrinkage,
              const std::string& exclude = "");
  // The p-quantile (0..1) of log(reported / predicted) in a class (shrunk);
  // 0 when no record was learned.
  double quantile(const std::string& kind, const std::string& bound, double p) const;
  // The class's weight m / (m + k) (m: its cases) against its kind class,
  // and the kind class's against all records.
  double weight(const std::string& kind, const std::string& bound) const;
  double kind_weight(const std::string& kind) const;
  std::size_t count(const std::string& kind, const std::string& bound) const;
  std::size_t size() const { return all_.records; }
  // The class's distribution on the grid (kDiscrepancyGrid levels).
  std::vector<double> grid(const std::string& kind, const std::string& bound) const;
  // P(true / predicted ratio > 1 / r): the probability that the truth is
  // above 1 when the model predicts r (compare's P(new > base)).
  double prob_above_one(const std::string& kind, const std::string& bound, double r) const;

 private:
  // A group of records (all, a kind class, a class): its predictive
  // distribution, sorted, and how many cases and records it was learned from.
  struct Group {
    std::vector<double> predictive;
    std::size_t cases = 0, records = 0;
  };
  static Group make_group(const std::map<std::string, std::vector<double>>& by_case);
  double k_ = kDiscrepancyShrinkage;
  Group all_;
  std::map<std::string, Group> by_kind_;
  std::map<std::pair<std::string, std::string>, Group> by_class_;
};

// The table kept in the repository (scenarios/validation/discrepancy.json,
// written by scripts/discrepancy.py).
struct DiscrepancyTable {
  std::string path, corpus_commit, corpus_sha256;
  double k = kDiscrepancyShrinkage;
  std::vector<DiscrepancyRecord> records;
};
DiscrepancyTable load_discrepancy_table(const std::string& path);
std::string default_discrepancy_table();  // scenarios_dir()/validation/discrepancy.json

// A band's quantiles: p10, p25, p50, p75, p90.
struct Band5 {
  double p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0;
  nlohmann::json to_json() const;
};
Band5 band_of(std::vector<double> values);
// The total: every parameter sample times every grid level of the model's
// error (independent: their convolution), its quantiles. `samples` > 0.
Band5 combine(const std::vector<double>& samples, const std::vector<double>& log_grid);

// --uncertainty's band of a curve point (docs/uncertainty.md): its
// parameter samples combined with the model's error of a value in the
// point's bound class. One object for every path that makes a band (vfssim
// run and the store, the Python sweep, a sweep on processes), so that a
// band stored, printed and returned is the same band.
class ModelError {
 public:
  // The table at `path`; a missing or unreadable table throws
  // std::runtime_error naming it.
  explicit ModelError(const std::string& path = default_discrepancy_table());
  struct Parts {
    Band5 parameters;  // the samples alone
    Band5 model;       // the plain prediction times the model's error
  };
  // Sets cp.band_p10/p50/p90 to the total and returns the parts; nullopt
  // (cp untouched) for a point without a full set of finite samples (not
  // sampled, or resumed from the store with the band it was stored with).
  std::optional<Parts> apply(models::CurvePoint& cp) const;
  std::size_t records() const { return records_; }

 private:
  Discrepancy d_;
  std::size_t records_ = 0;
};

// Coverage of the 50% (p25-p75) and 80% (p10-p90) bands over scored
// figures, and the median width p90 / p10 of the 80% bands.
struct Coverage {
  std::size_t scored = 0, inside50 = 0, inside80 = 0;
  std::vector<double> widths;
  void add(bool in50, bool in80, double width);
  nlohmann::json to_json() const;
};

// One figure to calibrate: its class, its predictions (the parameter
// samples of --uncertainty, or the plain prediction alone), its reported
// value and side, and the record it teaches (nullopt: none).
struct FigureInput {
  std::string scenario, kind, bound;
  double predicted = 0;     // the plain run's prediction
  std::vector<double> samples;
  bool parameters = false;  // samples are --uncertainty's (else the plain prediction)
  double reported = 0;      // NaN: nothing to place
  std::string side = "about";  // "about", "at_least", "at_most"
  bool scored = false;      // a prediction (coverage counts it)
  std::optional<DiscrepancyRecord> record;
};
struct FigureCalibration {
  Band5 total, model;
  std::optional<Band5> parameters;
  std::optional<bool> in50, in80;  // nullopt: no value to place
};
// Each figure's bands: the model's error from `table` when given, else
// leave-one-case-out (each figure's from the others' scenarios' records of
// `figures` only), combined with its samples.
std::vector<FigureCalibration> calibrate(const std::vector<FigureInput>& figures, const Discrepancy* table,
                                         double k = kDiscrepancyShrinkage);
// Coverage of the scored figures: overall, by kind class, by bound class
// and by class ("kind/bound"): {"overall": Coverage, "by_kind": {...},
// "by_bound": {...}, "by_class": {...}}.
nlohmann::json calibration_coverage(const std::vector<FigureInput>& figures,
                                    const std::vector<FigureCalibration>& bands);

}  // namespace vfssim::report
