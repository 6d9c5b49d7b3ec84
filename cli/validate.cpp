#include "cli/validate.h"

#include "cli/options.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "cli/progress.h"
#include "cli/run_durable.h"
#include "results/discrepancy.h"
#include "results/report.h"
#include "results/score.h"
#include "results/validation.h"
#include "results/store.h"
#include "models/experiment/experiment.h"
#include "models/experiment/refit.h"
#include "models/experiment/uncertainty.h"
#include "models/scenario/scenario.h"
#include "sim/parallel.h"
#include "sim/time.h"

namespace vfssim::report {

namespace po = boost::program_options;
using nlohmann::json;

namespace {

// Fewer loop iterations than this in a point's window: quantized figures.
constexpr std::uint64_t kFewIterations = 100;

// Every *.yaml of a directory and its subdirectories (sorted by path: the
// ladder's hardware/ rung sits inside scenarios/validation), or the file.
std::vector<std::string> scenario_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(p, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".yaml") found.push_back(entry.path().string());
      if (ec) throw po::error(p + ": cannot list the directory: " + ec.message());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
    } else {
      throw po::error(p + ": no such scenario file or directory");
    }
  }
  if (out.empty()) throw po::error("no scenario files (*.yaml) in " + (paths.size() == 1 ? paths.front() : "the paths given"));
  return out;
}

std::string format_figure_value(const models::Expectation& e, double v) {
  char buf[48];
  if (!std::isfinite(v)) return "n/a";
  if (e.kind == "change") std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * (v - 1));
  else if (e.kind == "ratio" || e.metric == "speedup") std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (e.metric.rfind("share:", 0) == 0) std::snprintf(buf, sizeof buf, "%.2f%%", 100 * v);
  else if (e.metric == "us_per_op") std::snprintf(buf, sizeof buf, "%.4g us", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A figure's reported or predicted value as the table prints it: a peak
// as HEIGHT@CPUS, a min_max spread as FASTEST..SLOWEST.
std::string format_cell(const models::Expectation& e, double v, double high, int cpus) {
  if (e.kind == "peak") return (std::isfinite(v) ? format_figure_value(e, v) : std::string("?")) + "@" + std::to_string(cpus);
  if (e.kind == "spread" && e.stat == "min_max") return format_figure_value(e, v) + ".." + format_figure_value(e, high);
  return (e.bound == "at_least" ? ">=" : e.bound == "at_most" ? "<=" : "") + format_figure_value(e, v);
}

// The 80% band of each figure's prediction over `n` samples of the
// scenarios' ranges (docs/uncertainty.md, Calibration): every point the
// figures read runs once per sample (replication 0's seed, as run
// --uncertainty does), each sample is scored as a whole validation, and a
// figure's band is the 10th-90th percentile of its `predicted`. A scenario
// without ranges runs its points once: its samples are all the plain run.
struct FigureBand {
  double p10 = 0, p50 = 0, p90 = 0;
};
// The samples' re-fits of fitted constants: how many, how many matched
// their figure within kRefitTolerance, and those that did not in some sample.
struct Refits {
  std::size_t fits = 0, converged = 0;
  std::set<std::string> unmatched;
};

std::vector<std::vector<double>> figure_samples(const Validation& validation, const std::vector<models::Scenario>& scenarios,
                                     int n, std::uint64_t seed, unsigned jobs, const models::PointLimits& limits,
                                     const std::vector<std::vector<models::PointResult>>& plain, std::size_t& refused,
                                     Refits& refits, bool show_progress) {
  // Each scenario's samples as run --uncertainty draws them (refit.h: a row
  // the loader refuses is replaced by a spare draw, counted in `refused`),
  // its fitted constants re-fitted, then its points run on it. One job
  // makes sample i of scenario s (its re-fits), one more after it runs its
  // points: a scenario's re-fits and the points of its samples made run
  // side by side, and no worker waits for the last re-fit of all.
  const auto& points = validation.points();
  const std::size_t per_sample = points.size();
  const std::size_t S = scenarios.size(), N = static_cast<std::size_t>(n);
  std::vector<std::vector<models::RangeSample>> drawn(S);  // each hypercube drawn once
  std::vector<std::vector<models::SampledScenario>> made(S);
  std::vector<std::pair<std::size_t, std::size_t>> job_of;  // (s, i) of job j: the makes, then the runs
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t s = 0; s < S; ++s)
      if (models::draws_ranges(scenarios[s])) job_of.emplace_back(s, i);  // else every sample is the plain run
  const std::size_t makes = job_of.size();
  std::vector<std::vector<std::size_t>> after(2 * makes);
  for (std::size_t j = 0; j < makes; ++j) {
    job_of.push_back(job_of[j]);
    after[makes + j].push_back(j);  // sample i of s is run after it is made
  }
  for (std::size_t s = 0; s < S; ++s)
    if (models::draws_ranges(scenarios[s])) {
      drawn[s] = models::draw_samples(scenarios[s], n, seed);
      made[s].resize(N);
    }

  std::vector<models::PointResult> results(per_sample * N);
  Progress bar(show_progress, job_of.size(), "sample step", std::cerr);
  sim::parallel_for_after(job_of.size(), jobs == 0 ? sim::default_jobs() : jobs, after, [&](std::size_t j) {
    const auto [s, i] = job_of[j];
    const std::string& name = scenarios[s].name;
    bar.start();
    if (j < makes) {
      made[s][i] = models::sampled_scenario(scenarios[s], n, seed, static_cast<int>(i), limits, true, &drawn[s]);
      int evaluations = 0;
      for (const auto& f : made[s][i].fits) evaluations += f.evaluations;
      bar.finish(name + ": sample " + std::to_string(i) + " made" +
                 (made[s][i].fits.empty() ? std::string()
                                          : ", " + count_of(made[s][i].fits.size(), "constant") + " re-fitted in " +
                                                count_of(static_cast<std::size_t>(evaluations), "simulation")));
      return;
    }
    // The sample's points: each distinct simulation once (restated
    // figures read one simulation under two names), those its re-fits or
    // the plain run already ran taken from them.
    const models::Scenario& sc = made[s][i].scenario;
    models::SamplePoints& ran = made[s][i].points;
    std::size_t simulated = 0;
    for (std::size_t k = 0; k < per_sample; ++k) {
      if (points[k].scenario != s) continue;
      const auto& ref = points[k].ref;
      const models::PointSpec spec{ref.strategy, ref.cpus, 0, models::rep_seed(seed, 0), ref.variant};
      const std::string fingerprint = models::point_fingerprint(sc, spec);
      auto it = ran.find(fingerprint);
      if (it == ran.end()) {
        const bool unchanged = fingerprint == points[k].fingerprint;
        if (!unchanged) ++simulated;
        it = ran.emplace(fingerprint, unchanged ? plain[k].front() : models::run_point(sc, spec, limits)).first;
      }
      results[i * per_sample + k] = it->second;
      results[i * per_sample + k].spec = spec;
    }
    ran.clear();
    bar.finish(name + ": sample " + std::to_string(i) + ", " + count_of(simulated, "point") + " run");
  });
  for (std::size_t s = 0; s < S; ++s)
    for (const auto& m : made[s]) {
      refused += static_cast<std::size_t>(m.refused);
      for (const auto& f : m.fits) {
        ++refits.fits;
        if (f.converged) ++refits.converged;
        else refits.unmatched.insert(scenarios[s].name + ": " + f.constant + " -> " + f.figure);
      }
    }
  for (std::size_t k = 0; k < per_sample; ++k)  // a scenario without ranges: its samples are the plain run
    if (made[points[k].scenario].empty())
      for (std::size_t i = 0; i < N; ++i) results[i * per_sample + k] = plain[k].front();
  std::vector<std::vector<double>> predicted;
  for (int sample = 0; sample < n; ++sample) {
    std::vector<std::vector<models::PointResult>> grouped(per_sample);
    for (std::size_t j = 0; j < per_sample; ++j) grouped[j].push_back(results[sample * per_sample + j]);
    const std::vector<ScoredFigure> scored = validation.score(grouped);
    predicted.resize(scored.size());
    for (std::size_t f = 0; f < scored.size(); ++f) predicted[f].push_back(scored[f].predicted);
  }
  return predicted;
}

// Whether the reported value lies in the band: inside [p10, p90]; for a
// bound (">40%") whether the band reaches the bound's side. A peak given
// only as a CPU count has no value to place.
std::optional<bool> reported_inside(const models::Expectation& e, const FigureBand& b) {
  if (!std::isfinite(e.reported)) return std::nullopt;
  if (e.bound == "at_least") return b.p90 >= e.reported;
  if (e.bound == "at_most") return b.p10 <= e.reported;
  return b.p10 <= e.reported && e.reported <= b.p90;
}

}  // namespace

namespace {

// validate --refit: each fitted constant re-fitted at the other constants'
// estimates (models/experiment/refit.h, the search --uncertainty runs per
// sample), one scenario per worker. A fit that cannot reach its figure in
// its range exits 1, as a fitted figure missed does.
int print_refits(const std::vector<models::Scenario>& scenarios, std::uint64_t seed, const models::PointLimits& limits,
                 unsigned jobs, bool as_json) {
  std::vector<std::vector<models::FitResult>> fits(scenarios.size());
  sim::parallel_for(scenarios.size(), jobs == 0 ? sim::default_jobs() : jobs, [&](std::size_t i) {
    models::RangeSample estimates;  // empty: every range at its estimate
    models::refit_sample(scenarios[i], estimates, seed, limits, &fits[i]);
  });
  bool missed = false;
  json out = json::array();
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    for (const auto& f : fits[i]) {
      const auto range = std::find_if(scenarios[i].ranges.begin(), scenarios[i].ranges.end(),
                                      [&](const models::Range& r) { return r.name == f.constant; });
      const bool time = range != scenarios[i].ranges.end() && range->time;
      const double estimate = range != scenarios[i].ranges.end() ? range->estimate : std::nan("");
      missed |= !f.converged;
      out.push_back({{"scenario", scenarios[i].name}, {"constant", f.constant}, {"figure", f.figure},
                     {"time", time}, {"estimate", estimate}, {"refit", f.value}, {"predicted", f.predicted},
                     {"reported", f.reported}, {"converged", f.converged}, {"evaluations", f.evaluations}});
    }
  if (as_json) {
    std::cout << json{{"refits", out}}.dump(2) << "\n";
    return missed ? 1 : 0;
  }
  auto text = [](const json& r, const char* key) {
    const double v = r[key].get<double>();
    if (r["time"].get<bool>()) return sim::format_duration(sim::picoseconds(std::llround(v)));
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return std::string(b);
  };
  std::printf("%-32s %-40s %10s %10s  %-36s %11s %11s\n", "scenario", "constant", "estimate", "refit", "figure",
              "reported", "predicted");
  for (const auto& r : out)
    std::printf("%-32s %-40s %10s %10s  %-36s %11.4g %11.4g%s\n", r["scenario"].get<std::string>().c_str(),
                r["constant"].get<std::string>().c_str(), text(r, "estimate").c_str(), text(r, "refit").c_str(),
                r["figure"].get<std::string>().c_str(), r["reported"].get<double>(), r["predicted"].get<double>(),
                r["converged"].get<bool>() ? "" : "  NOT REACHED in its range");
  std::printf("%zu fitted constant%s\n", out.size(), out.size() == 1 ? "" : "s");
  return missed ? 1 : 0;
}

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts("vfssim validate [PATH...] [options]");
  std::string db, progress_mode;
  std::uint64_t seed = 1;
  int reps = 1, uncertainty = 0;
  std::string calibration, discrepancy_path;
  unsigned jobs = 0;
  BudgetOptions budget;
  opts.add_options()
    ("help,h", "this help")
    ("uncertainty", po::value(&uncertainty)->default_value(0),
     "also draw N samples of the scenarios' ranges and report whether each reported figure lies in its 80% band "
     "(p10-p90) and the coverage over the predictions (docs/uncertainty.md)")
    ("calibration", po::value(&calibration),
     "the model's error in the bands (docs/uncertainty.md): 'table' (learned from the corpus: --discrepancy), "
     "'loo' (learned from these files' figures, each case without its own), 'none' (parameters only); "
     "default 'table' with --uncertainty, 'none' without")
    ("discrepancy", po::value(&discrepancy_path),
     "the discrepancy table --calibration table reads (default: scenarios/validation/discrepancy.json)")
    ("json", "print one JSON document on stdout instead of tables")
    ("refit", "score nothing: re-do each fitted constant's one-point fit (`fit: FIGURE`) with every other "
              "constant at its estimate, and print the value that matches its figure now, to write back when a "
              "preset or a mechanism has moved the fit")
    ("jobs,j", po::value(&jobs)->default_value(0), "worker threads (default: all cores)")
    ("reps", po::value(&reps)->default_value(1), "replications per point (different derived seeds), averaged")
    ("seed", po::value(&seed)->default_value(1), "run seed")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (SQLite); '' to store nothing");
  add_progress_options(opts, progress_mode);
  add_budget_options(opts, budget);
  po::options_description hidden;
  std::vector<std::string> paths;
  hidden.add_options()("path", po::value(&paths));
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  report::parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts << "\nPATH: scenario files or directories of *.yaml (default '" << models::scenarios_dir() << "/seed': the seed scenarios that come with vfssim)\n";
    return 0;
  }
  if (reps < 1) throw po::error("--reps must be at least 1");
  if (uncertainty < 0 || uncertainty == 1 || uncertainty > models::kMaxUncertaintySamples)
    throw po::error("--uncertainty must be 0 (no bands) or from 2 to " + std::to_string(models::kMaxUncertaintySamples));
  if (calibration.empty()) calibration = uncertainty > 0 ? "table" : "none";
  if (calibration != "none" && calibration != "table" && calibration != "loo")
    throw po::error("--calibration must be none, table or loo");
  if (!discrepancy_path.empty() && calibration != "table") throw po::error("--discrepancy needs --calibration table");
  std::optional<DiscrepancyTable> table;
  if (calibration == "table") {
    try {
      table = load_discrepancy_table(discrepancy_path.empty() ? default_discrepancy_table() : discrepancy_path);
    } catch (const std::runtime_error& ex) {
      throw po::error(ex.what());
    }
  }
  if (paths.empty()) paths.push_back((std::filesystem::path(models::scenarios_dir()) / "seed").string());
  const bool as_json = vm.count("json") > 0;
  const bool quiet = vm.count("quiet") > 0;
  const bool show_progress = progress_enabled(vm, progress_mode);

  // Load everything first: a bad file stops the run before anything runs.
  std::vector<models::Scenario> scenarios;
  for (const auto& f : scenario_files(paths)) {
    scenarios.push_back(models::load_scenario_file(f));
    for (const auto& w : scenarios.back().warnings) std::cerr << w << "\n";
  }
  if (vm.count("refit")) return print_refits(scenarios, seed, point_limits(budget), jobs, as_json);
  std::unique_ptr<Store> store;
  if (!db.empty()) store = std::make_unique<Store>(db);

  // The distinct points the figures need, all scenarios together.
  std::vector<const models::Scenario*> loaded;
  for (const auto& sc : scenarios) loaded.push_back(&sc);
  const Validation validation(loaded);
  const auto& points = validation.points();
  if (const auto conflicts = validation.fit_conflicts(); !conflicts.empty()) {
    std::string all;
    for (const auto& c : conflicts) all += "\n  " + c;
    throw po::error("one fitted figure per configuration: two constants tuned to one simulation make its other "
                    "figures restatements" + all);
  }

  const models::PointLimits limits = point_limits(budget);
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t total = points.size() * static_cast<std::size_t>(reps);
  std::vector<models::PointResult> results(total);
  {
    Progress bar(show_progress, total, reps > 1 ? "replication" : "point", std::cerr);
    sim::parallel_for(total, jobs == 0 ? sim::default_jobs() : jobs, [&](std::size_t i) {
      const NeededPoint& k = points[i / static_cast<std::size_t>(reps)];
      const int rep = static_cast<int>(i % static_cast<std::size_t>(reps));
      models::PointSpec spec{k.ref.strategy, k.ref.cpus, rep, models::rep_seed(seed, rep), k.ref.variant};
      bar.start();
      results[i] = models::run_point(scenarios[k.scenario], spec, limits);
      bar.finish(scenarios[k.scenario].name + ": " + k.ref.strategy + "/" + k.ref.variant + " @ " +
                 count_of(static_cast<std::size_t>(k.ref.cpus), "CPU"));
    });
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report_budget_stops(results, "validate", std::cerr)) {
    std::cerr << "vfssim validate: no figure scored, nothing stored\n";
    return 1;
  }
  std::vector<std::vector<models::PointResult>> grouped(points.size());
  for (std::size_t i = 0; i < total; ++i) grouped[i / static_cast<std::size_t>(reps)].push_back(std::move(results[i]));

  const std::vector<ScoredFigure> figures = validation.score(grouped);
  const ValidationSummary total_summary = Validation::summarize(figures, std::nullopt);
  const bool failed = total_summary.failed;
  json summary = total_summary.to_json();
  summary["wall_seconds"] = wall;
  // The score per rung of the ladder, for the rungs the files are on.
  std::vector<std::pair<std::string, ValidationSummary>> by_level;
  for (const char* level : models::kLevels) {
    ValidationSummary t = validation.summarize_level(figures, level);
    if (t.figures > 0) by_level.emplace_back(level, t);
  }
  summary["levels"] = json::object();
  for (const auto& [level, t] : by_level) {
    json one = t.to_json();
    one.erase("scenarios");
    one["scenarios"] = t.scenarios;
    summary["levels"][level] = std::move(one);
  }
  // Each figure's discrepancy class (the kind, and what bounds its new
  // point in the plain run) and the record of the model's error it gives.
  std::vector<FigureInput> inputs(figures.size());
  for (std::size_t f = 0; f < figures.size(); ++f) {
    const auto& e = *figures[f].e;
    FigureInput& in = inputs[f];
    in.scenario = scenarios[figures[f].scenario].name;
    in.kind = kind_class(e);
    in.bound = bound_class(grouped[validation.new_point_of(f)]);
    in.predicted = figures[f].predicted;
    in.reported = e.reported;
    in.side = e.bound;
    in.scored = figures[f].prediction();
    in.record = discrepancy_record(figures[f], in.scenario, in.bound);
  }
  // --uncertainty: each figure's band, and the share of predictions whose
  // reported value it holds (calibrated 80% bands hold about 80%); with a
  // calibration the band is the total (parameters and the model's error).
  std::vector<FigureBand> bands;
  std::vector<std::optional<bool>> inside, inside_parameters;
  std::vector<FigureCalibration> calibrated;
  std::size_t n_inside = 0, n_placed = 0, n_inside_parameters = 0, refused = 0;
  Refits refits;
  std::vector<std::vector<double>> samples;
  if (uncertainty > 0) {
    samples = figure_samples(validation, scenarios, uncertainty, seed, jobs, limits, grouped, refused, refits, show_progress);
    for (std::size_t f = 0; f < figures.size(); ++f) {
      inputs[f].samples = samples[f];
      inputs[f].parameters = true;
      const FigureBand b{models::quantile(samples[f], 0.1), models::quantile(samples[f], 0.5),
                         models::quantile(samples[f], 0.9)};
      inside_parameters.push_back(reported_inside(*figures[f].e, b));
      bands.push_back(b);
    }
  }
  if (calibration != "none") {
    std::optional<Discrepancy> learned;
    if (table) learned.emplace(table->records, table->k);
    calibrated = calibrate(inputs, learned ? &*learned : nullptr, table ? table->k : kDiscrepancyShrinkage);
    bands.clear();
    for (const auto& c : calibrated) bands.push_back({c.total.p10, c.total.p50, c.total.p90});
  }
  for (std::size_t f = 0; f < bands.size(); ++f) {
    inside.push_back(reported_inside(*figures[f].e, bands[f]));
    if (figures[f].prediction() && inside.back()) {
      ++n_placed, n_inside += *inside.back();
      if (uncertainty > 0) n_inside_parameters += *inside_parameters[f];
    }
  }
  if (uncertainty > 0) {
    summary["coverage"] = {{"samples", uncertainty},
                           {"refused_samples", refused},
                           {"inside", n_inside},
                           {"scored", n_placed},
                           {"fraction", n_placed ? static_cast<double>(n_inside) / static_cast<double>(n_placed) : 0.0},
                           {"inside_parameters", n_inside_parameters},
                           {"fraction_parameters",
                            n_placed ? static_cast<double>(n_inside_parameters) / static_cast<double>(n_placed) : 0.0},
                           {"refits", refits.fits},
                           {"refits_matched", refits.converged},
                           {"refits_unmatched", refits.unmatched}};
  }
  json calibration_json;
  if (calibration != "none") {
    calibration_json = calibration_coverage(inputs, calibrated);
    calibration_json["mode"] = calibration;
    calibration_json["samples"] = uncertainty;
    calibration_json["shrinkage_k"] = table ? table->k : kDiscrepancyShrinkage;
    std::size_t learned_from = 0;
    for (const auto& in : inputs) learned_from += in.record.has_value();
    calibration_json["table"] =
        table ? json{{"path", table->path}, {"corpus_commit", table->corpus_commit},
                     {"corpus_sha256", table->corpus_sha256}, {"records", table->records.size()}}
              : json(nullptr);
    calibration_json["records_here"] = learned_from;
    summary["calibration"] = calibration_json;
  }
  json per_scenario = json::array();
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (scenarios[s].expect.empty()) continue;
    json one{{"scenario", scenarios[s].name}, {"path", scenarios[s].path}, {"level", scenarios[s].level}};
    one.update(Validation::summarize(figures, s).to_json());
    one.erase("scenarios");
    per_scenario.push_back(std::move(one));
  }

  if (store) {
    std::vector<Store::ValidationFigureRow> rows;
    for (const auto& f : figures)
      rows.push_back(Store::ValidationFigureRow{scenarios[f.scenario].name, f.e->id, f.e->reported, f.predicted,
                                                f.e->fitted, f.within, f.direction_ok, f.error, f.e->tolerance,
                                                f.e->bound, f.e->kind, f.restated, f.restates, f.factor,
                                                f.e->kind == "spread" ? f.e->stat : std::string()});
    json stored = summary;
    stored["per_scenario"] = per_scenario;
    store->add_validation(wall, stored.dump(), rows);
  }

  // Points with few iterations in their window give quantized figures.
  std::string low_counts;
  std::size_t n_low = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::uint64_t fewest = grouped[i].front().ops;
    for (const auto& r : grouped[i]) fewest = std::min(fewest, r.ops);
    if (fewest >= kFewIterations) continue;
    ++n_low;
    const NeededPoint& k = points[i];
    low_counts += "  " + scenarios[k.scenario].name + ": " + k.ref.strategy + "/" + k.ref.variant + "@" +
                  std::to_string(k.ref.cpus) + " (" + std::to_string(fewest) + ")\n";
  }
  const std::string low_note =
      n_low == 0 ? ""
                 : "note: " + std::to_string(n_low) + " point" + (n_low == 1 ? "" : "s") + " completed fewer than " +
                       std::to_string(kFewIterations) +
                       " loop iterations in the measurement window: their figures are quantized "
                       "(lengthen workload.duration)\n" + low_counts;

  if (as_json) {
    if (!quiet) std::cerr << low_note;
    json figs = json::array();
    for (std::size_t f = 0; f < figures.size(); ++f) {
      json j = validation.figure_json(figures[f]);
      const auto& in = inputs[f];
      j["discrepancy"] = {{"kind_class", in.kind},
                          {"bound_class", in.bound},
                          {"log_error", in.record ? json(in.record->log_error) : json(nullptr)}};
      if (!bands.empty()) {
        j["band"] = {{"p10", bands[f].p10}, {"p50", bands[f].p50}, {"p90", bands[f].p90}};
        j["inside"] = inside[f] ? json(*inside[f]) : json(nullptr);
      }
      if (!calibrated.empty()) {
        const auto& c = calibrated[f];
        j["band"]["p25"] = c.total.p25;
        j["band"]["p75"] = c.total.p75;
        j["inside50"] = c.in50 ? json(*c.in50) : json(nullptr);
        j["band_model"] = c.model.to_json();
        j["band_parameters"] = c.parameters ? c.parameters->to_json() : json(nullptr);
      }
      figs.push_back(std::move(j));
    }
    std::cout << json{{"figures", figs}, {"summary", summary}, {"per_scenario", per_scenario}}.dump(2) << "\n";
    return failed ? 1 : 0;
  }

  char line[512];
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    const auto& sc = scenarios[s];
    if (sc.expect.empty()) {
      std::cout << "scenario " << sc.name << " (" << sc.path << "): no expected figures\n\n";
      continue;
    }
    std::size_t width = 6;
    for (const auto& e : sc.expect) width = std::max(width, e.id.size());
    std::cout << "scenario " << sc.name << " (" << sc.path << ", level " << sc.level << ")\n";
    std::snprintf(line, sizeof line, "  %-*s  %-6s %13s %13s %8s %7s %9s  %-8s  %-6s  %s\n", static_cast<int>(width),
                  "figure", "kind", "reported", "predicted", "error", "factor", "tolerance", "fitted", "within",
                  "direction");
    std::cout << line;
    for (const auto& f : figures) {
      if (f.scenario != s) continue;
      const auto& e = *f.e;
      char err[32], tol[32], fac[32];
      if (std::isfinite(f.error) && f.error >= 10) std::snprintf(err, sizeof err, ">999%%");
      else if (std::isfinite(f.error)) std::snprintf(err, sizeof err, "%.1f%%", 100 * f.error);
      else std::snprintf(err, sizeof err, "n/a");
      if (std::isfinite(f.factor) && f.factor < 100) std::snprintf(fac, sizeof fac, "%.2fx", f.factor);
      else std::snprintf(fac, sizeof fac, ">99x");
      std::snprintf(tol, sizeof tol, "%g%%", 100 * e.tolerance);
      const char* dir = !f.direction_ok ? "-" : (*f.direction_ok ? "right" : "WRONG");
      const char* in = f.within ? "yes" : (f.prediction() ? "NO" : "no");
      const std::string fitted = f.fit_missed() ? "MISSED" : e.fitted ? "yes" : f.restated ? "restated" : "no";
      std::snprintf(line, sizeof line, "  %-*s  %-6s %13s %13s %8s %7s %9s  %-8s  %-6s  %s\n", static_cast<int>(width),
                    e.id.c_str(), e.kind.c_str(),
                    format_cell(e, e.reported, e.reported_high, e.new_point.cpus).c_str(),
                    format_cell(e, f.predicted, f.predicted_high, f.predicted_cpus).c_str(), err, fac, tol,
                    fitted.c_str(), in, dir);
      std::cout << line;
      if (f.restated) std::cout << "    (restates " << f.restates << ": the same simulation, not scored)\n";
      if (f.fit_missed())
        std::cout << "    (fit missed: its constant could not bring it within tolerance; a miss of the model)\n";
      if (!bands.empty()) {
        const std::size_t i = static_cast<std::size_t>(&f - figures.data());
        const auto& b = bands[i];
        std::cout << "    80% band " << format_cell(e, b.p10, b.p10, f.predicted_cpus) << " .. "
                  << format_cell(e, b.p90, b.p90, f.predicted_cpus);
        if (!calibrated.empty()) {
          const auto& c = calibrated[i];
          if (c.parameters)
            std::cout << " (parameters " << format_cell(e, c.parameters->p10, c.parameters->p10, f.predicted_cpus)
                      << " .. " << format_cell(e, c.parameters->p90, c.parameters->p90, f.predicted_cpus) << ",";
          else
            std::cout << " (";
          std::cout << " model " << format_cell(e, c.model.p10, c.model.p10, f.predicted_cpus) << " .. "
                    << format_cell(e, c.model.p90, c.model.p90, f.predicted_cpus) << "; " << inputs[i].kind << "/"
                    << inputs[i].bound << ")";
        }
        std::cout << ": reported " << (!inside[i] ? "not placed (no value)" : *inside[i] ? "inside" : "OUTSIDE") << "\n";
      }
    }
    const ValidationSummary t = Validation::summarize(figures, s);
    std::snprintf(line, sizeof line,
                  "  %zu predictions (%zu fitted, %zu restated): %zu within tolerance, %zu within a factor 1.5",
                  t.predictions, t.fitted, t.restated, t.within, t.within_factor_1_5);
    std::cout << line;
    if (t.fit_missed) std::cout << ", fits missed " << t.fit_missed << "/" << t.fitted;
    if (t.peaks) std::cout << ", peaks within a doubling " << t.peaks_within_doubling << "/" << t.peaks;
    if (t.directions_total) std::cout << ", directions right " << t.directions_right << "/" << t.directions_total;
    std::cout << "\n\n";
  }
  const ValidationSummary& t = total_summary;
  std::snprintf(line, sizeof line,
                "summary: %zu scenario%s with figures, %zu figures, %zu predictions (%zu fitted, %zu restated), "
                "%zu within tolerance (%.0f%%), %zu within a factor 1.5, peaks within a doubling %zu/%zu, "
                "directions right %zu/%zu; %zu points x %d rep%s in %.1f s\n",
                t.scenarios, t.scenarios == 1 ? "" : "s", t.figures, t.predictions, t.fitted, t.restated, t.within,
                t.predictions > 0 ? 100.0 * static_cast<double>(t.within) / static_cast<double>(t.predictions) : 0.0,
                t.within_factor_1_5, t.peaks_within_doubling, t.peaks, t.directions_right, t.directions_total,
                points.size(), reps, reps == 1 ? "" : "s", wall);
  std::cout << line;
  if (t.fit_missed) std::printf("fits missed: %zu of %zu fitted figures are not within tolerance\n", t.fit_missed, t.fitted);
  for (const auto& [level, lt] : by_level)
    std::printf("  level %-8s %zu scenario%s, %zu predictions: %zu within tolerance (%.0f%%), %zu within a factor 1.5, "
                "directions right %zu/%zu, fits missed %zu/%zu\n",
                level.c_str(), lt.scenarios, lt.scenarios == 1 ? "" : "s", lt.predictions, lt.within,
                lt.predictions > 0 ? 100.0 * static_cast<double>(lt.within) / static_cast<double>(lt.predictions) : 0.0,
                lt.within_factor_1_5, lt.directions_right, lt.directions_total, lt.fit_missed, lt.fitted);
  if (uncertainty > 0)
    std::printf("coverage of the 80%% bands (%d samples, %zu refused draws replaced%s): %zu of %zu predictions hold the "
                "reported value (%.0f%%)\n",
                uncertainty, refused, calibration == "none" ? "" : ", with the model's error", n_inside, n_placed,
                n_placed ? 100.0 * static_cast<double>(n_inside) / static_cast<double>(n_placed) : 0.0);
  if (uncertainty > 0 && calibration != "none")
    std::printf("  parameter bands alone: %zu of %zu (%.0f%%)\n", n_inside_parameters, n_placed,
                n_placed ? 100.0 * static_cast<double>(n_inside_parameters) / static_cast<double>(n_placed) : 0.0);
  if (calibration != "none") {
    const std::string how = calibration == "loo" ? "leave-one-case-out (each case's error learned without its figures)"
                                                 : "the table " + table->path + " (" +
                                                       std::to_string(table->records.size()) + " records, corpus " +
                                                       table->corpus_commit.substr(0, 7) + ")";
    std::printf("calibration: model's error from %s, %s\n", how.c_str(),
                uncertainty > 0 ? "combined with the parameter samples" : "around the plain predictions (no --uncertainty)");
    auto line_of = [](const std::string& name, const json& c) {
      if (c["scored"].get<std::size_t>() == 0) return;
      std::printf("  %-22s %4zu scored: 50%% bands hold %3zu (%3.0f%%), 80%% bands hold %3zu (%3.0f%%), median 80%% width x%.2f\n",
                  name.c_str(), c["scored"].get<std::size_t>(), c["inside50"].get<std::size_t>(),
                  100 * c["coverage50"].get<double>(), c["inside80"].get<std::size_t>(),
                  100 * c["coverage80"].get<double>(), c["median_width80"].is_null() ? NAN : c["median_width80"].get<double>());
    };
    line_of("all", calibration_json["overall"]);
    for (const char* group : {"by_kind", "by_bound", "by_class"})
      for (const auto& [name, c] : calibration_json[group].items()) line_of(name, c);
  }
  if (uncertainty > 0 && refits.fits > 0) {
    std::printf("fitted constants re-fitted per sample: %zu of %zu matched their figure within %.0f%%\n", refits.converged,
                refits.fits, 100 * models::kRefitTolerance);
    for (const auto& u : refits.unmatched) std::printf("  not matched in some sample (kept the closest bound): %s\n", u.c_str());
  }
  std::cout << low_note;
  return failed ? 1 : 0;
}

}  // namespace vfssim::report
