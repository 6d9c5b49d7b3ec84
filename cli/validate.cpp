#include "cli/validate.h"

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
#include <tuple>

#include "cli/run_durable.h"
#include "cli/score.h"
#include "cli/store.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"
#include "sim/parallel.h"

namespace vfssim::report {

namespace po = boost::program_options;
using nlohmann::json;

namespace {

// Fewer loop iterations than this in a point's window: quantized figures.
constexpr std::uint64_t kFewIterations = 100;

struct PointKey {
  std::size_t scenario;
  std::string strategy, variant;
  int cpus;
  bool operator<(const PointKey& o) const {
    return std::tie(scenario, strategy, variant, cpus) < std::tie(o.scenario, o.strategy, o.variant, o.cpus);
  }
};

struct Figure {
  std::size_t scenario = 0;
  const models::Expectation* e = nullptr;
  double predicted = 0;
  double error = 0;
  bool within = false;
  std::optional<bool> direction_ok;
};

// Every *.yaml of a directory (sorted), or the file itself.
std::vector<std::string> scenario_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec))
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

// A point's metric, averaged over its replications.
double metric(const std::vector<models::PointResult>& reps, const std::string& name, int cpus) {
  double ops = 0;
  for (const auto& r : reps) ops += r.ops_per_sec;
  ops /= static_cast<double>(reps.size());
  if (name == "ops_per_sec") return ops;
  if (name == "us_per_op") return ops > 0 ? 1e6 * cpus / ops : std::numeric_limits<double>::infinity();
  const std::string prefix = name.substr(std::string("share:").size());
  double share = 0;
  for (const auto& r : reps) {
    if (r.cpu_time.count() <= 0) continue;
    std::int64_t t = 0;
    for (const auto& e : r.profile)
      if (e.chain.rfind(prefix, 0) == 0) t += e.time.count();
    share += static_cast<double>(t) / static_cast<double>(r.cpu_time.count());
  }
  return share / static_cast<double>(reps.size());
}

std::string format_figure_value(const models::Expectation& e, double v) {
  char buf[48];
  if (!std::isfinite(v)) return "n/a";
  if (e.kind == "change") std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * (v - 1));
  else if (e.kind == "ratio") std::snprintf(buf, sizeof buf, "%.3f", v);
  else if (e.metric.rfind("share:", 0) == 0) std::snprintf(buf, sizeof buf, "%.2f%%", 100 * v);
  else if (e.metric == "us_per_op") std::snprintf(buf, sizeof buf, "%.4g us", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts("vfssim validate [PATH...] [options]");
  std::string db;
  std::uint64_t seed = 1;
  int reps = 1;
  unsigned jobs = 0;
  BudgetOptions budget;
  opts.add_options()
    ("help,h", "this help")
    ("json", "print one JSON document on stdout instead of tables")
    ("jobs,j", po::value(&jobs)->default_value(0), "worker threads (default: all cores)")
    ("reps", po::value(&reps)->default_value(1), "replications per point (different derived seeds), averaged")
    ("seed", po::value(&seed)->default_value(1), "run seed")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (SQLite); '' to store nothing")
    ("quiet,q", "no progress on stderr");
  add_budget_options(opts, budget);
  po::options_description hidden;
  std::vector<std::string> paths;
  hidden.add_options()("path", po::value(&paths));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\nPATH: scenario files or directories of *.yaml (default scenarios/seed)\n";
    return 0;
  }
  if (reps < 1) throw po::error("--reps must be at least 1");
  if (paths.empty()) paths.push_back("scenarios/seed");
  const bool as_json = vm.count("json") > 0;
  const bool quiet = vm.count("quiet") > 0;

  // Load everything first: a bad file stops the run before anything runs.
  std::vector<models::Scenario> scenarios;
  for (const auto& f : scenario_files(paths)) scenarios.push_back(models::load_scenario_file(f));
  std::unique_ptr<Store> store;
  if (!db.empty()) store = std::make_unique<Store>(db);

  // The distinct points the figures need, all scenarios together.
  std::map<PointKey, std::size_t> point_index;
  std::vector<PointKey> points;
  std::vector<Figure> figures;
  auto need = [&](std::size_t s, const models::Expectation::PointRef& p) {
    const PointKey k{s, p.strategy, p.variant, p.cpus};
    if (point_index.try_emplace(k, points.size()).second) points.push_back(k);
  };
  std::size_t with_figures = 0;
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (!scenarios[s].expect.empty()) ++with_figures;
    for (const auto& e : scenarios[s].expect) {
      need(s, e.new_point);
      if (e.kind != "value") need(s, e.base_point);
      Figure f;
      f.scenario = s;
      f.e = &e;
      figures.push_back(f);
    }
  }

  const models::PointLimits limits = point_limits(budget);
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t total = points.size() * static_cast<std::size_t>(reps);
  std::vector<models::PointResult> results(total);
  std::mutex progress_mutex;
  std::size_t done = 0;
  sim::parallel_for(total, jobs == 0 ? sim::default_jobs() : jobs, [&](std::size_t i) {
    const PointKey& k = points[i / static_cast<std::size_t>(reps)];
    const int rep = static_cast<int>(i % static_cast<std::size_t>(reps));
    models::PointSpec spec{k.strategy, k.cpus, rep, models::rep_seed(seed, rep), k.variant};
    results[i] = models::run_point(scenarios[k.scenario], spec, limits);
    if (!quiet) {
      std::lock_guard<std::mutex> lk(progress_mutex);
      std::cerr << "\r[" << ++done << "/" << total << "] " << scenarios[k.scenario].name << ": " << k.strategy << "/"
                << k.variant << " @ " << k.cpus << " CPUs   " << std::flush;
    }
  });
  if (!quiet && total > 0) std::cerr << "\r" << std::string(72, ' ') << "\r";
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report_budget_stops(results, "validate", std::cerr)) {
    std::cerr << "vfssim validate: no figure scored, nothing stored\n";
    return 1;
  }

  auto value_at = [&](std::size_t s, const models::Expectation::PointRef& p, const std::string& m) {
    const std::size_t i = point_index.at(PointKey{s, p.strategy, p.variant, p.cpus});
    const auto first = results.begin() + static_cast<std::ptrdiff_t>(i * static_cast<std::size_t>(reps));
    const std::vector<models::PointResult> group(first, first + reps);
    return metric(group, m, p.cpus);
  };

  int predictions = 0, within = 0, dir_right = 0, dir_total = 0;
  bool failed = false;
  for (auto& f : figures) {
    const models::Expectation& e = *f.e;
    if (e.kind == "value") {
      f.predicted = value_at(f.scenario, e.new_point, e.metric);
    } else {
      const double base = value_at(f.scenario, e.base_point, e.metric);
      const double now = value_at(f.scenario, e.new_point, e.metric);
      f.predicted = base != 0 ? now / base : std::numeric_limits<double>::quiet_NaN();
    }
    const FigureScore score = score_figure(e.kind, e.reported, e.tolerance, e.bound, f.predicted);
    f.error = score.error;
    f.within = score.within;
    f.direction_ok = score.direction_ok;
    if (e.fitted) continue;
    ++predictions;
    if (f.within) ++within;
    else failed = true;
    if (f.direction_ok) {
      ++dir_total;
      if (*f.direction_ok) ++dir_right;
      else failed = true;
    }
  }
  const json fraction = predictions > 0 ? json(static_cast<double>(within) / predictions) : json(nullptr);
  const json summary{{"scenarios", with_figures},
                     {"figures", figures.size()},
                     {"predictions", predictions},
                     {"predictions_within_tolerance", within},
                     {"fraction_within", fraction},
                     {"directions_right", dir_right},
                     {"directions_total", dir_total},
                     {"wall_seconds", wall}};

  if (store) {
    std::vector<Store::ValidationFigureRow> rows;
    for (const auto& f : figures)
      rows.push_back(Store::ValidationFigureRow{scenarios[f.scenario].name, f.e->id, f.e->reported, f.predicted,
                                                f.e->fitted, f.within, f.direction_ok, f.error, f.e->tolerance,
                                                f.e->bound});
    store->add_validation(wall, summary.dump(), rows);
  }

  // Points with few iterations in their window give quantized figures.
  std::string low_counts;
  std::size_t n_low = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::uint64_t fewest = results[i * static_cast<std::size_t>(reps)].ops;
    for (int r = 1; r < reps; ++r) fewest = std::min(fewest, results[i * static_cast<std::size_t>(reps) + r].ops);
    if (fewest >= kFewIterations) continue;
    ++n_low;
    const PointKey& k = points[i];
    low_counts += "  " + scenarios[k.scenario].name + ": " + k.strategy + "/" + k.variant + "@" +
                  std::to_string(k.cpus) + " (" + std::to_string(fewest) + ")\n";
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
    for (const auto& f : figures) {
      const models::Expectation& e = *f.e;
      figs.push_back(json{{"scenario", scenarios[f.scenario].name},
                          {"figure", e.id},
                          {"reported", e.reported},
                          {"predicted", std::isfinite(f.predicted) ? json(f.predicted) : json(nullptr)},
                          {"fitted", e.fitted},
                          {"within_tolerance", f.within},
                          {"direction_ok", f.direction_ok ? json(*f.direction_ok) : json(nullptr)},
                          {"error", std::isfinite(f.error) ? json(f.error) : json(nullptr)},
                          {"tolerance", e.tolerance},
                          {"bound", e.bound},
                          {"kind", e.kind},
                          {"source", e.source}});
    }
    std::cout << json{{"figures", figs}, {"summary", summary}}.dump(2) << "\n";
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
    std::cout << "scenario " << sc.name << " (" << sc.path << ")\n";
    std::snprintf(line, sizeof line, "  %-*s  %-6s %11s %11s %8s %9s  %-6s  %-6s  %s\n", static_cast<int>(width),
                  "figure", "kind", "reported", "predicted", "error", "tolerance", "fitted", "within", "direction");
    std::cout << line;
    for (const auto& f : figures) {
      if (f.scenario != s) continue;
      const auto& e = *f.e;
      char err[32], tol[32];
      if (std::isfinite(f.error) && f.error >= 10) std::snprintf(err, sizeof err, ">999%%");
      else if (std::isfinite(f.error)) std::snprintf(err, sizeof err, "%.1f%%", 100 * f.error);
      else std::snprintf(err, sizeof err, "n/a");
      std::snprintf(tol, sizeof tol, "%g%%", 100 * e.tolerance);
      const char* dir = !f.direction_ok ? "-" : (*f.direction_ok ? "right" : "WRONG");
      const char* in = f.within ? "yes" : (e.fitted ? "no" : "NO");
      std::snprintf(line, sizeof line, "  %-*s  %-6s %11s %11s %8s %9s  %-6s  %-6s  %s\n", static_cast<int>(width),
                    e.id.c_str(), e.kind.c_str(),
                    ((e.bound == "at_least" ? ">=" : e.bound == "at_most" ? "<=" : "") +
                     format_figure_value(e, e.reported)).c_str(),
                    format_figure_value(e, f.predicted).c_str(), err, tol, yes_no(e.fitted), in, dir);
      std::cout << line;
    }
    std::cout << "\n";
  }
  std::snprintf(line, sizeof line,
                "summary: %zu scenario%s with figures, %zu figures, %d predictions (%zu fitted), "
                "%d within tolerance (%.0f%%), directions right %d/%d; %zu points x %d rep%s in %.1f s\n",
                with_figures, with_figures == 1 ? "" : "s", figures.size(), predictions,
                figures.size() - static_cast<std::size_t>(predictions), within,
                predictions > 0 ? 100.0 * within / predictions : 0.0, dir_right, dir_total, points.size(), reps,
                reps == 1 ? "" : "s", wall);
  std::cout << line << low_note;
  return failed ? 1 : 0;
}

}  // namespace vfssim::report
