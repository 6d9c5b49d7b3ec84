#include "results/discrepancy.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "models/experiment/uncertainty.h"
#include "results/review.h"

namespace vfssim::report {

using nlohmann::json;

std::string kind_class(const models::Expectation& e) {
  if (e.kind == "value") return "value";
  if (e.kind == "ratio" || e.kind == "change") return "ratio";
  return "other";
}

std::string bound_class(const std::vector<models::PointResult>& reps) {
  const auto b = find_bottleneck(reps);
  if (!b) return "uncontended";
  if (b->kind == "line") return "line";
  static const std::set<std::string> sleeping{"mutex", "rwsem", "semaphore", "percpu_rwsem", "rt_mutex", "ww_mutex"};
  for (const auto& r : reps)
    for (const auto& l : r.locks)
      if (l.name == b->name) return sleeping.count(l.kind) ? "sleeping" : "spinlock";
  return "spinlock";
}

std::optional<DiscrepancyRecord> discrepancy_record(const ScoredFigure& f, const std::string& scenario,
                                                    const std::string& bound) {
  const models::Expectation& e = *f.e;
  if (!f.prediction() || e.bound == "at_least" || e.bound == "at_most") return std::nullopt;
  if (!std::isfinite(e.reported) || !std::isfinite(f.predicted) || e.reported <= 0 || f.predicted <= 0)
    return std::nullopt;
  return DiscrepancyRecord{scenario, e.id, kind_class(e), bound, std::log(e.reported / f.predicted)};
}

namespace {

// The p-quantile of sorted `v` as a prediction interval reads it: order
// statistic (n + 1) p (Weibull's plotting position, Hyndman-Fan type 6),
// interpolated, clamped to the extremes. [X_(j), X_(k)] holds a new draw of
// the same distribution with probability (k - j) / (n + 1), so a band of
// n records is not narrower than the records show.
double predictive_quantile(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const double n = static_cast<double>(v.size());
  const double h = std::clamp((n + 1) * p - 1, 0.0, n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double weight_of(std::size_t n, double k) {
  return n == 0 ? 0.0 : static_cast<double>(n) / (static_cast<double>(n) + k);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

// A new case's figure errs by its case's offset plus its own residual
// (figures of one case share their errors: one machine, one code path).
// So the predictive distribution of a group is every case's offset (the
// median of its records) plus every residual (a record less its case's
// offset), all pairs equally likely: the convolution of the between-case
// and the within-case distributions. A group of one case is its records.
Discrepancy::Group Discrepancy::make_group(const std::map<std::string, std::vector<double>>& by_case) {
  Group g;
  g.cases = by_case.size();
  std::vector<double> offsets, residuals;
  for (const auto& [_, v] : by_case) {
    const double o = median_of(v);
    offsets.push_back(o);
    for (double e : v) residuals.push_back(e - o);
    g.records += v.size();
  }
  g.predictive.reserve(offsets.size() * residuals.size());
  for (double o : offsets)
    for (double r : residuals) g.predictive.push_back(o + r);
  std::sort(g.predictive.begin(), g.predictive.end());
  return g;
}

Discrepancy::Discrepancy(const std::vector<DiscrepancyRecord>& records, double k, const std::string& exclude)
    : k_(k) {
  std::map<std::string, std::vector<double>> all;
  std::map<std::string, std::map<std::string, std::vector<double>>> by_kind;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> by_class;
  for (const auto& r : records) {
    if (!exclude.empty() && r.scenario == exclude) continue;
    all[r.scenario].push_back(r.log_error);
    by_kind[r.kind_class][r.scenario].push_back(r.log_error);
    by_class[{r.kind_class, r.bound_class}][r.scenario].push_back(r.log_error);
  }
  all_ = make_group(all);
  for (const auto& [kind, cases] : by_kind) by_kind_[kind] = make_group(cases);
  for (const auto& [cls, cases] : by_class) by_class_[cls] = make_group(cases);
}

std::size_t Discrepancy::count(const std::string& kind, const std::string& bound) const {
  const auto it = by_class_.find({kind, bound});
  return it == by_class_.end() ? 0 : it->second.records;
}

double Discrepancy::weight(const std::string& kind, const std::string& bound) const {
  const auto it = by_class_.find({kind, bound});
  return weight_of(it == by_class_.end() ? 0 : it->second.cases, k_);
}

double Discrepancy::kind_weight(const std::string& kind) const {
  const auto it = by_kind_.find(kind);
  return weight_of(it == by_kind_.end() ? 0 : it->second.cases, k_);
}

double Discrepancy::quantile(const std::string& kind, const std::string& bound, double p) const {
  const double pooled = predictive_quantile(all_.predictive, p);
  const auto ki = by_kind_.find(kind);
  const double wk = kind_weight(kind);
  const double in_kind = wk > 0 ? wk * predictive_quantile(ki->second.predictive, p) + (1 - wk) * pooled : pooled;
  const auto ci = by_class_.find({kind, bound});
  const double wc = weight(kind, bound);
  return wc > 0 ? wc * predictive_quantile(ci->second.predictive, p) + (1 - wc) * in_kind : in_kind;
}

std::vector<double> Discrepancy::grid(const std::string& kind, const std::string& bound) const {
  std::vector<double> g(kDiscrepancyGrid);
  for (int j = 0; j < kDiscrepancyGrid; ++j)
    g[static_cast<std::size_t>(j)] = quantile(kind, bound, (j + 0.5) / kDiscrepancyGrid);
  return g;
}

double Discrepancy::prob_above_one(const std::string& kind, const std::string& bound, double r) const {
  if (!(r > 0) || !std::isfinite(r)) return std::nan("");
  const double need = -std::log(r);  // truth = r * exp(d) > 1 <=> d > -log r
  double above = 0;
  for (double d : grid(kind, bound)) above += d > need ? 1.0 : d == need ? 0.5 : 0.0;
  return above / kDiscrepancyGrid;
}

std::string default_discrepancy_table() {
  return (std::filesystem::path(models::scenarios_dir()) / "validation" / "discrepancy.json").string();
}

DiscrepancyTable load_discrepancy_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the discrepancy table (scripts/discrepancy.py writes it)");
  json j;
  try {
    in >> j;
  } catch (const std::exception& ex) {
    throw std::runtime_error(path + ": not a discrepancy table: " + ex.what());
  }
  DiscrepancyTable t;
  t.path = path;
  try {
    t.corpus_commit = j.value("corpus_commit", "");
    t.corpus_sha256 = j.value("corpus_sha256", "");
    t.k = j.value("shrinkage_k", kDiscrepancyShrinkage);
    for (const auto& r : j.at("records"))
      t.records.push_back({r.at("scenario").get<std::string>(), r.at("figure").get<std::string>(),
                           r.at("kind_class").get<std::string>(), r.at("bound_class").get<std::string>(),
                           r.at("log_error").get<double>()});
  } catch (const json::exception& ex) {
    throw std::runtime_error(path + ": not a discrepancy table: " + ex.what());
  }
  if (!(t.k >= 0)) throw std::runtime_error(path + ": shrinkage_k must be at least 0");
  return t;
}

json Band5::to_json() const {
  return json{{"p10", p10}, {"p25", p25}, {"p50", p50}, {"p75", p75}, {"p90", p90}};
}

Band5 band_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {models::quantile(v, 0.10), models::quantile(v, 0.25), models::quantile(v, 0.50), models::quantile(v, 0.75),
          models::quantile(v, 0.90)};
}

Band5 combine(const std::vector<double>& samples, const std::vector<double>& log_grid) {
  std::vector<double> total;
  total.reserve(samples.size() * log_grid.size());
  for (double s : samples)
    for (double d : log_grid) total.push_back(s * std::exp(d));
  return band_of(std::move(total));
}

ModelError::ModelError(const std::string& path) {
  const DiscrepancyTable t = load_discrepancy_table(path);
  d_ = Discrepancy(t.records, t.k);
  records_ = t.records.size();
}

std::optional<ModelError::Parts> ModelError::apply(models::CurvePoint& cp) const {
  if (cp.sample_rates.empty() ||
      std::any_of(cp.sample_rates.begin(), cp.sample_rates.end(), [](double v) { return !std::isfinite(v); }))
    return std::nullopt;
  const auto g = d_.grid("value", bound_class(cp.reps));
  const Band5 total = combine(cp.sample_rates, g);
  cp.band_p10 = total.p10;
  cp.band_p50 = total.p50;
  cp.band_p90 = total.p90;
  return Parts{band_of(cp.sample_rates), combine({cp.ops_per_sec}, g)};
}

void Coverage::add(bool in50, bool in80, double width) {
  ++scored;
  inside50 += in50;
  inside80 += in80;
  if (std::isfinite(width)) widths.push_back(width);
}

json Coverage::to_json() const {
  auto frac = [&](std::size_t k) { return scored ? json(static_cast<double>(k) / static_cast<double>(scored)) : json(nullptr); };
  return json{{"scored", scored},
              {"inside50", inside50},
              {"inside80", inside80},
              {"coverage50", frac(inside50)},
              {"coverage80", frac(inside80)},
              {"median_width80", widths.empty() ? json(nullptr) : json(models::quantile(widths, 0.5))}};
}

namespace {

std::optional<bool> placed(const FigureInput& f, double lo, double hi) {
  if (!std::isfinite(f.reported)) return std::nullopt;
  if (f.side == "at_least") return hi >= f.reported;
  if (f.side == "at_most") return lo <= f.reported;
  return lo <= f.reported && f.reported <= hi;
}

}  // namespace

std::vector<FigureCalibration> calibrate(const std::vector<FigureInput>& figures, const Discrepancy* table, double k) {
  std::vector<DiscrepancyRecord> records;
  if (!table)
    for (const auto& f : figures)
      if (f.record) records.push_back(*f.record);
  std::map<std::string, Discrepancy> loo;  // per scenario: learned without its records
  std::vector<FigureCalibration> out;
  for (const auto& f : figures) {
    const Discrepancy* d = table;
    if (!d) {
      auto it = loo.find(f.scenario);
      if (it == loo.end()) it = loo.emplace(f.scenario, Discrepancy(records, k, f.scenario)).first;
      d = &it->second;
    }
    const std::vector<double> g = d->grid(f.kind, f.bound);
    FigureCalibration c;
    c.model = combine({f.predicted}, g);
    if (f.parameters) c.parameters = band_of(f.samples);
    c.total = combine(f.parameters ? f.samples : std::vector<double>{f.predicted}, g);
    c.in50 = placed(f, c.total.p25, c.total.p75);
    c.in80 = placed(f, c.total.p10, c.total.p90);
    out.push_back(c);
  }
  return out;
}

json calibration_coverage(const std::vector<FigureInput>& figures, const std::vector<FigureCalibration>& bands) {
  Coverage overall;
  std::map<std::string, Coverage> by_kind, by_bound, by_class;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const auto& f = figures[i];
    const auto& b = bands[i];
    if (!f.scored || !b.in80) continue;
    const double width = b.total.p10 > 0 ? b.total.p90 / b.total.p10 : std::nan("");
    for (Coverage* c : {&overall, &by_kind[f.kind], &by_bound[f.bound], &by_class[f.kind + "/" + f.bound]})
      c->add(*b.in50, *b.in80, width);
  }
  auto all = [](const std::map<std::string, Coverage>& m) {
    json j = json::object();
    for (const auto& [name, c] : m) j[name] = c.to_json();
    return j;
  };
  return json{{"overall", overall.to_json()}, {"by_kind", all(by_kind)}, {"by_bound", all(by_bound)},
              {"by_class", all(by_class)}};
}

}  // namespace vfssim::report
