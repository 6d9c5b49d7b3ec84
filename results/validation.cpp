#include "results/validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "models/experiment/figure.h"
#include "results/score.h"

namespace vfssim::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A per-task metric from a rate: iterations per second, or microseconds
// per iteration (infinite for a task that finished none).
double per_task(double ops_per_sec, const std::string& metric) {
  if (metric != "us_per_op") return ops_per_sec;
  return ops_per_sec > 0 ? 1e6 / ops_per_sec : std::numeric_limits<double>::infinity();
}

// A spread figure's statistic of the point's tasks (Expectation::stat),
// each averaged over the replications: min_max gives the fastest and the
// slowest task's metric, the others one number (second NaN). NaN when a
// replication did not measure it (no per-task figures, or no iteration).
std::pair<double, double> task_spread(const std::vector<models::PointResult>& reps, const models::Expectation& e) {
  double first = 0, second = 0;
  for (const auto& r : reps) {
    const models::TaskStats* tp = &r.tasks;
    if (!e.role.empty()) {  // the loader checked the role exists
      tp = nullptr;
      for (const auto& ro : r.roles)
        if (ro.name == e.role) tp = &ro.tasks_stats;
      if (!tp) return {kNaN, kNaN};
    }
    const models::TaskStats& t = *tp;
    const auto us = [](const std::optional<sim::Duration>& d) { return d ? static_cast<double>(d->count()) * 1e-6 : kNaN; };
    double v = kNaN;
    if (e.stat == "min_max") {
      if (std::isnan(t.ops_per_sec_max)) return {kNaN, kNaN};
      first += per_task(t.ops_per_sec_max, e.metric);
      second += per_task(t.ops_per_sec_min, e.metric);
      continue;
    }
    if (e.stat == "median") v = std::isnan(t.ops_per_sec_median) ? kNaN : per_task(t.ops_per_sec_median, e.metric);
    else if (e.stat == "fairness") v = std::isnan(t.ops_per_sec_max) ? kNaN : t.fairness;  // NaN: a task starved
    else if (e.stat == "jain") v = t.jain;
    else if (e.stat == "p50_latency") v = us(t.latency_p50);
    else if (e.stat == "p99_latency") v = us(t.latency_p99);
    else if (e.stat == "p999_latency") v = us(t.latency_p999);
    else if (e.stat == "max_latency") v = us(t.latency_max);
    first += v;
  }
  const auto n = static_cast<double>(reps.size());
  return {first / n, e.stat == "min_max" ? second / n : kNaN};
}

}  // namespace

nlohmann::json ValidationSummary::to_json() const {
  using nlohmann::json;
  return json{{"scenarios", scenarios},
              {"figures", figures},
              {"fitted", fitted},
              {"fit_missed", fit_missed},
              {"restated", restated},
              {"predictions", predictions},
              {"predictions_within_tolerance", within},
              {"fraction_within", predictions > 0 ? json(static_cast<double>(within) / static_cast<double>(predictions))
                                                  : json(nullptr)},
              {"within_factor_1_5", within_factor_1_5},
              {"peaks", peaks},
              {"peaks_within_doubling", peaks_within_doubling},
              {"directions_right", directions_right},
              {"directions_total", directions_total}};
}

Validation::Validation(std::vector<const models::Scenario*> scenarios) : scenarios_(std::move(scenarios)) {
  for (std::size_t s = 0; s < scenarios_.size(); ++s)
    for (const auto& e : scenarios_[s]->expect) {
      figures_.emplace_back(s, &e);
      figure_points_.push_back(reads(s, e));
    }
  index_fits();
}

std::size_t Validation::point(std::size_t scenario, const models::Expectation::PointRef& ref) {
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const auto& p = points_[i];
    if (p.scenario == scenario && p.ref.strategy == ref.strategy && p.ref.variant == ref.variant &&
        p.ref.cpus == ref.cpus)
      return i;
  }
  models::PointSpec spec{ref.strategy, ref.cpus, 0, 1, ref.variant};
  points_.push_back(NeededPoint{scenario, ref, models::point_fingerprint(*scenarios_[scenario], spec)});
  return points_.size() - 1;
}

// The points a figure reads (models::figure_reads), as indices into points_.
std::vector<std::size_t> Validation::reads(std::size_t s, const models::Expectation& e) {
  std::vector<std::size_t> out;
  for (const auto& ref : models::figure_reads(e)) out.push_back(point(s, ref));
  return out;
}

// Every (scenario, fingerprint) a fitted figure reads, and the fitted
// figures that read one another's simulations.
void Validation::index_fits() {
  for (std::size_t f = 0; f < figures_.size(); ++f) {
    if (!figures_[f].second->fitted) continue;
    std::set<std::size_t> other;
    for (std::size_t i : figure_points_[f]) {
      const auto [it, fresh] = fitted_by_.try_emplace({figures_[f].first, points_[i].fingerprint}, f);
      if (!fresh && it->second != f && other.insert(it->second).second) {
        const auto& p = points_[i];
        conflicts_.push_back(scenarios_[p.scenario]->name + ": figures '" + figures_[it->second].second->id +
                             "' and '" + figures_[f].second->id + "' are both fitted to the simulation of " +
                             p.ref.strategy + "/" + p.ref.variant + "@" + std::to_string(p.ref.cpus));
      }
    }
  }
}

std::size_t Validation::new_point_of(std::size_t f) const {
  const models::Expectation& e = *figures_[f].second;
  for (std::size_t i : figure_points_[f]) {
    const auto& r = points_[i].ref;
    if (r.strategy == e.new_point.strategy && r.cpus == e.new_point.cpus && r.variant == e.new_point.variant) return i;
  }
  return figure_points_[f].front();
}

std::vector<ScoredFigure> Validation::score(const std::vector<std::vector<models::PointResult>>& reps) const {

  // (scenario, kind, metric, fingerprints) of every prediction scored so far:
  // within a scenario, as fitted_by_ (another file's prediction is another claim).
  std::map<std::tuple<std::size_t, std::string, std::string, std::vector<std::string>>, std::string> scored;

  std::vector<ScoredFigure> out;
  for (std::size_t f = 0; f < figures_.size(); ++f) {
    const auto& [s, ep] = figures_[f];
    const models::Expectation& e = *ep;
    const auto& pts = figure_points_[f];
    const std::size_t per = e.metric == "speedup" ? 2 : 1;  // reads per curve point
    ScoredFigure x;
    x.scenario = s;
    x.e = ep;
    std::vector<const std::vector<models::PointResult>*> read;
    for (std::size_t i : pts) read.push_back(&reps[i]);
    if (e.kind == "value" || e.kind == "ratio" || e.kind == "change") {
      x.predicted = models::figure_value(e, read);
    } else if (e.kind == "spread") {
      std::tie(x.predicted, x.predicted_high) = task_spread(reps[pts[0]], e);
    } else {  // peak: the highest point; ties go to the fewest CPUs
      x.predicted = -std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < pts.size(); k += per) {
        const double v = models::read_metric(e, read, k);
        if (v > x.predicted) {
          x.predicted = v;
          x.predicted_cpus = points_[pts[k]].ref.cpus;
        }
      }
    }

    if (e.kind == "peak") {
      const int rc = e.new_point.cpus;
      x.cpus_within_doubling = x.predicted_cpus > 0 && 2 * x.predicted_cpus >= rc && x.predicted_cpus <= 2 * rc;
      const bool height = std::isfinite(e.reported);
      const FigureScore h = height ? score_figure("value", e.reported, e.tolerance, "about", x.predicted) : FigureScore{};
      x.error = height ? h.error : 0;
      x.factor = height ? h.factor : 1;
      x.within = x.cpus_within_doubling && (!height || h.within);
    } else if (e.kind == "spread" && e.stat == "min_max") {
      const FigureScore lo = score_figure("value", e.reported, e.tolerance, "about", x.predicted);
      const FigureScore hi = score_figure("value", e.reported_high, e.tolerance, "about", x.predicted_high);
      x.error = std::max(lo.error, hi.error);
      x.factor = std::max(lo.factor, hi.factor);
      x.within = lo.within && hi.within;
    } else {  // a spread of one number (median, fairness, a latency) is scored as a value
      const FigureScore sc =
          score_figure(e.kind == "spread" ? "value" : e.kind, e.reported, e.tolerance, e.bound, x.predicted);
      x.error = sc.error;
      x.factor = sc.factor;
      x.within = sc.within;
      x.direction_ok = sc.direction_ok;
    }

    if (!e.fitted) {
      std::vector<std::string> prints;
      for (std::size_t i : pts) prints.push_back(points_[i].fingerprint);
      const bool all_fitted = std::all_of(prints.begin(), prints.end(),
                                          [&](const std::string& fp) { return fitted_by_.count({s, fp}) > 0; });
      if (all_fitted) {
        x.restated = true;
        x.restates = figures_[fitted_by_.at({s, prints.front()})].second->id;
      } else {
        // Two spreads of one point report different statistics (or roles): both are predictions.
        const std::string what = e.kind == "spread" ? e.metric + "/" + e.stat + "/" + e.role : e.metric;
        const auto [it, fresh] = scored.try_emplace({s, e.kind, what, prints}, e.id);
        if (!fresh) {
          x.restated = true;
          x.restates = it->second;
        }
      }
    }
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::json Validation::figure_json(const ScoredFigure& f) const {
  using nlohmann::json;
  auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  auto point = [](const models::Expectation::PointRef& p) {
    return p.strategy + (p.variant == "default" ? "" : "/" + p.variant) + "@" + std::to_string(p.cpus);
  };
  const models::Expectation& e = *f.e;
  json j{{"scenario", scenarios_[f.scenario]->name},
         {"figure", e.id},
         {"reported", finite(e.reported)},
         {"predicted", finite(f.predicted)},
         {"fitted", e.fitted},
         {"fit_missed", f.fit_missed()},
         {"restated", f.restated},
         {"restates", f.restated ? json(f.restates) : json(nullptr)},
         {"within_tolerance", f.within},
         {"direction_ok", f.direction_ok ? json(*f.direction_ok) : json(nullptr)},
         {"error", finite(f.error)},
         {"factor", finite(f.factor)},
         {"tolerance", e.tolerance},
         {"bound", e.bound},
         {"kind", e.kind},
         {"metric", e.metric},
         {"new", point(e.new_point)},
         {"base", e.kind == "ratio" || e.kind == "change" ? json(point(e.base_point)) : json(nullptr)},
         {"curve", e.curve.empty() ? json(nullptr) : json(e.curve)},
         {"source", e.source}};
  if (e.kind == "peak") {
    j["reported_cpus"] = e.new_point.cpus;
    j["predicted_cpus"] = f.predicted_cpus;
    j["cpus_within_doubling"] = f.cpus_within_doubling;
  }
  if (e.kind == "spread") {
    j["stat"] = e.stat;
    j["role"] = e.role.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.role);
    // min_max's slowest end (null for the statistics of one number)
    j["reported_slowest"] = e.stat == "min_max" ? finite(e.reported_high) : json(nullptr);
    j["predicted_slowest"] = finite(f.predicted_high);
  }
  return j;
}

namespace {

template <class Keep>
ValidationSummary summarize_if(const std::vector<ScoredFigure>& figures, Keep keep) {
  ValidationSummary t;
  std::set<std::size_t> with;
  for (const auto& f : figures) {
    if (!keep(f)) continue;
    with.insert(f.scenario);
    ++t.figures;
    if (f.e->fitted) {
      ++t.fitted;
      if (f.fit_missed()) {
        ++t.fit_missed;
        t.failed = true;
      }
      continue;
    }
    if (f.restated) {
      ++t.restated;
      continue;
    }
    ++t.predictions;
    if (f.within) ++t.within;
    else t.failed = true;
    if (f.factor <= 1.5) ++t.within_factor_1_5;
    if (f.e->kind == "peak") {
      ++t.peaks;
      if (f.cpus_within_doubling) ++t.peaks_within_doubling;
    }
    if (f.direction_ok) {
      ++t.directions_total;
      if (*f.direction_ok) ++t.directions_right;
      else t.failed = true;
    }
  }
  t.scenarios = with.size();
  return t;
}

}  // namespace

ValidationSummary Validation::summarize(const std::vector<ScoredFigure>& figures, std::optional<std::size_t> scenario) {
  return summarize_if(figures, [&](const ScoredFigure& f) { return !scenario || f.scenario == *scenario; });
}

ValidationSummary Validation::summarize_level(const std::vector<ScoredFigure>& figures, const std::string& level) const {
  return summarize_if(figures, [&](const ScoredFigure& f) { return scenarios_[f.scenario]->level == level; });
}

}  // namespace vfssim::report
