#include "cli/compare.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <stdexcept>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "results/report.h"
#include "results/discrepancy.h"
#include "results/review.h"
#include "results/spread.h"
#include "cli/run_durable.h"
#include "cli/whatif.h"
#include "results/store.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"
#include "sim/parallel.h"

namespace vfssim::report {

namespace po = boost::program_options;
using nlohmann::json;

namespace {

constexpr std::size_t kTopProfile = 8;
constexpr std::size_t kTopLocks = 5;

// One metric's value in each replication of each side; `profile`: a
// perf-profile row (values in % of cycles).
struct Row {
  std::string metric;
  std::vector<double> base, neu;
  bool profile = false;
};

}  // namespace

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

// Sample standard deviation over the mean, in percent (LKP's %stddev); 0
// when not measured (one replication, or a zero mean).
double stddev_pct(const std::vector<double>& v) {
  const double m = mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  const double sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return report::stddev_pct(m, sd, static_cast<int>(v.size())).value_or(0.0);
}

namespace {

// Per replication: share of CPU time per profile chain (entries of one
// chain that touch different locks or lines are one perf chain).
std::vector<std::map<std::string, double>> chain_shares(const std::vector<models::PointResult>& reps) {
  std::vector<std::map<std::string, double>> out;
  for (const auto& r : reps) {
    std::map<std::string, double> m;
    for (const auto& e : r.profile)
      if (r.cpu_time.count() > 0)
        m[e.chain] += static_cast<double>(e.time.count()) / static_cast<double>(r.cpu_time.count()) * 100;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::map<std::string, double>> lock_waits_us(const std::vector<models::PointResult>& reps) {
  std::vector<std::map<std::string, double>> out;
  for (const auto& r : reps) {
    std::map<std::string, double> m;
    for (const auto& l : r.locks) m[l.name] += static_cast<double>(l.stats.wait_total.count()) * 1e-6;
    out.push_back(std::move(m));
  }
  return out;
}

// The keys with the largest mean in either side (non-zero), at most `top`,
// each as a row named prefix + transform(key) + suffix.
void add_top_rows(std::vector<Row>& rows, const std::vector<std::map<std::string, double>>& base,
                  const std::vector<std::map<std::string, double>>& neu, std::size_t top,
                  const std::function<std::string(const std::string&)>& name, bool profile = false) {
  std::map<std::string, double> rank;
  auto side_mean = [](const std::vector<std::map<std::string, double>>& reps, const std::string& key) {
    double s = 0;
    for (const auto& m : reps) {
      auto it = m.find(key);
      if (it != m.end()) s += it->second;
    }
    return reps.empty() ? 0.0 : s / static_cast<double>(reps.size());
  };
  for (const auto* side : {&base, &neu})
    for (const auto& m : *side)
      for (const auto& kv : m) rank[kv.first] = std::max(side_mean(base, kv.first), side_mean(neu, kv.first));
  std::vector<std::pair<std::string, double>> order(rank.begin(), rank.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < order.size() && i < top; ++i) {
    if (order[i].second <= 0) break;
    Row row{name(order[i].first), {}, {}, profile};
    for (const auto& m : base) row.base.push_back(m.count(order[i].first) ? m.at(order[i].first) : 0.0);
    for (const auto& m : neu) row.neu.push_back(m.count(order[i].first) ? m.at(order[i].first) : 0.0);
    rows.push_back(std::move(row));
  }
}

}  // namespace

nlohmann::json lkp_row_json(const Store::ComparisonRow& r) {
  using nlohmann::json;
  return json{{"metric", r.metric},
              {"base", r.base_mean},
              {"base_stddev_pct", r.base_stddev_pct},
              {"new", r.new_mean},
              {"new_stddev_pct", r.new_stddev_pct},
              {"change_pct", std::isnan(r.change_pct) ? json(nullptr) : json(r.change_pct)},
              {"change_pp", std::isnan(r.change_pp) ? json(nullptr) : json(r.change_pp)}};
}

void print_lkp_table(std::ostream& os, const std::string& base_label, const std::string& new_label,
                     const std::vector<Store::ComparisonRow>& rows) {
  // lkp-tests' compare layout: the two commits over 16 and 27 dashes, the
  // %stddev / %change header, then per metric: base, its spread, the
  // change, new, its spread, the full metric name.
  char line[2048];
  std::snprintf(line, sizeof line, "%-16.16s %-.27s\n", base_label.c_str(), new_label.c_str());
  os << line << "---------------- ---------------------------\n"
     << "         %stddev     %change         %stddev\n"
     << "             \\          |                \\\n";
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, std::abs(v) >= 1000 || v == std::floor(v) ? "%.0f" : "%.2f", v);
    return std::string(buf);
  };
  // " ±  3%" (six columns): measured (two or more replications) and not 0
  // at LKP's integer precision; blank otherwise.
  auto spread = [](double pct, int reps) {
    if (reps < 2 || std::lround(pct) == 0) return std::string(6, ' ');
    char buf[32];
    std::snprintf(buf, sizeof buf, " \u00b1%3ld%%", std::lround(pct));
    return std::string(buf);
  };
  for (const auto& r : rows) {
    char change[32];
    // Profile rows: the change in percentage points of cycles ("-7.2"), as
    // LKP's perf-profile rows; others relative ("+94.7%").
    if (!std::isnan(r.change_pp)) std::snprintf(change, sizeof change, "%+.1f", r.change_pp);
    else if (std::isnan(r.change_pct)) std::snprintf(change, sizeof change, "n/a");
    else std::snprintf(change, sizeof change, "%+.1f%%", r.change_pct);
    std::snprintf(line, sizeof line, "%11s%s%10s%12s%s  %s\n", number(r.base_mean).c_str(),
                  spread(r.base_stddev_pct, r.base_reps).c_str(), change, number(r.new_mean).c_str(),
                  spread(r.new_stddev_pct, r.new_reps).c_str(), r.metric.c_str());
    os << line;
  }
}

std::vector<Store::ComparisonRow> lkp_rows(const std::vector<models::PointResult>& base_reps,
                                           const std::vector<models::PointResult>& new_reps,
                                           const std::string& throughput_metric) {
  std::vector<Row> rows;
  Row thr{throughput_metric, {}, {}};
  for (const auto& r : base_reps) thr.base.push_back(r.ops_per_sec);
  for (const auto& r : new_reps) thr.neu.push_back(r.ops_per_sec);
  rows.push_back(std::move(thr));
  add_top_rows(rows, chain_shares(base_reps), chain_shares(new_reps), kTopProfile, [](const std::string& chain) {
    std::string n = "perf-profile.cpu-cycles.";
    for (std::size_t i = 0; i < chain.size();) {
      if (chain.compare(i, 4, " <- ") == 0) {
        n += '.';
        i += 4;
      } else {
        n += chain[i++];
      }
    }
    return n;
  }, true);
  add_top_rows(rows, lock_waits_us(base_reps), lock_waits_us(new_reps), kTopLocks,
               [](const std::string& lock) { return "lock_stat." + lock + ".waittime-total"; });
  // Each row summarised once: what is stored, printed and written as JSON.
  std::vector<Store::ComparisonRow> table;
  for (const auto& r : rows) {
    const double b = mean(r.base), n = mean(r.neu);
    Store::ComparisonRow row{"", "", "", 0, r.metric, b, stddev_pct(r.base), n, stddev_pct(r.neu),
                             b != 0 ? (n - b) / b * 100 : NAN};
    if (r.profile) row.change_pp = n - b;
    row.base_reps = static_cast<int>(r.base.size());
    row.new_reps = static_cast<int>(r.neu.size());
    table.push_back(std::move(row));
  }
  return table;
}

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts("vfssim compare FILE --base A --new B [options]");
  std::string base, neu, variant = "default";
  int cpus = 0, reps = 3;
  std::uint64_t seed = 1;
  unsigned jobs = 0;
  std::string db = "vfssim.db";
  BudgetOptions budget;
  opts.add_options()
    ("help,h", "this help")
    ("base", po::value(&base), "the strategy compared against (required)")
    ("new", po::value(&neu), "the strategy compared (required)")
    ("cpus", po::value(&cpus), "CPU count (default: the variant's largest)")
    ("reps", po::value(&reps)->default_value(3), "replications per side (different derived seeds)")
    ("variant", po::value(&variant)->default_value("default"), "workload variant")
    ("seed", po::value(&seed)->default_value(1), "run seed")
    ("jobs,j", po::value(&jobs)->default_value(0), "worker threads (default: all cores)")
    ("db", po::value(&db)->default_value("vfssim.db"),
     "results database (SQLite): both sides' replications as a run, and the table; '' to store nothing")
    ("json", "print one JSON document on stdout instead of the table");
  add_budget_options(opts, budget);
  WhatIfOptions what_if_opts;  // --set, --free, --private: both sides get them
  add_what_if_options(opts, what_if_opts);
  std::string file;
  po::variables_map vm;
  if (!report::parse_file_command(args, opts, "compare", file, vm)) return 0;
  if (base.empty() || neu.empty()) throw po::error("compare needs --base STRATEGY and --new STRATEGY");
  if (reps < 1) throw po::error("--reps must be at least 1");

  const models::Scenario sc = models::load_scenario_file(file, {}, settings_of(what_if_opts));
  for (const auto& w : sc.warnings) std::cerr << w << "\n";
  for (const auto* s : {&base, &neu})
    if (!sc.has_strategy(*s)) throw po::error("scenario '" + sc.name + "' has no strategy '" + *s + "'");
  const models::WhatIfs removals = what_ifs_of(what_if_opts, sc, {base, neu});
  if (!sc.has_variant(variant)) throw po::error("--variant: scenario '" + sc.name + "' has no variant '" + variant + "'");
  const models::Variant v = models::resolve_variant(sc, variant);
  const models::Topology topo(v.machine);
  if (!vm.count("cpus")) {
    cpus = v.workload.cpus.empty() ? topo.num_cpus() : *std::max_element(v.workload.cpus.begin(), v.workload.cpus.end());
  }
  if (cpus < 1 || cpus > topo.num_cpus())
    throw po::error("--cpus: " + std::to_string(cpus) + " is not between 1 and the " + std::to_string(topo.num_cpus()) +
                    " CPUs of machine " + v.machine_name);

  const models::PointLimits limits = point_limits(budget);
  // Open the store before running: a bad --db fails before the work.
  std::unique_ptr<Store> store;
  if (!db.empty()) store = std::make_unique<Store>(db);
  const auto wall_start = std::chrono::steady_clock::now();

  std::vector<models::PointSpec> specs;
  for (const auto* s : {&base, &neu})
    for (int r = 0; r < reps; ++r) {
      specs.push_back(models::PointSpec{*s, cpus, r, models::rep_seed(seed, r), variant});
      models::apply_what_ifs(sc, removals, specs.back());
    }
  std::vector<models::PointResult> results(specs.size());
  sim::parallel_for(specs.size(), jobs == 0 ? sim::default_jobs() : jobs,
                    [&](std::size_t i) { results[i] = models::run_point(sc, specs[i], limits); });
  if (report_budget_stops(results, "compare", std::cerr)) {
    std::cerr << "vfssim compare: no table, nothing stored\n";
    return 1;
  }
  const std::vector<models::PointResult> base_reps(results.begin(), results.begin() + reps);
  const std::vector<models::PointResult> new_reps(results.begin() + reps, results.end());
  const auto what_if = next_bottlenecks(sc, {&base_reps, &new_reps}, jobs, limits);

  std::vector<Store::ComparisonRow> table = lkp_rows(base_reps, new_reps, "vfssim.throughput");
  for (auto& r : table) {
    r.base = base;
    r.neu = neu;
    r.variant = variant;
    r.cpus = cpus;
  }

  // How sure: P(new > base) from the model's error of ratios between two
  // strategies (docs/uncertainty.md), the class of the new side's bound.
  json sure = nullptr;
  std::string sure_line;
  {
    const double ratio = table.front().base_mean > 0 ? table.front().new_mean / table.front().base_mean : NAN;
    const std::string bound = bound_class(new_reps);
    try {
      const DiscrepancyTable t = load_discrepancy_table(default_discrepancy_table());
      const Discrepancy d(t.records, t.k);
      const double p = d.prob_above_one("ratio", bound, ratio);
      sure = {{"cpus", cpus}, {"ratio", ratio}, {"probability", std::isfinite(p) ? json(p) : json(nullptr)},
              {"class", "ratio/" + bound}, {"records", d.count("ratio", bound)}, {"weight", d.weight("ratio", bound)},
              {"table", t.path}, {"corpus_commit", t.corpus_commit}};
      char buf[256];
      std::snprintf(buf, sizeof buf, "P(new > base) @ %d CPUs: %.2f (predicted ratio %.3g; the model's error of ratio/%s, %zu records)\n",
                    cpus, p, ratio, bound.c_str(), d.count("ratio", bound));
      sure_line = buf;
    } catch (const std::runtime_error& ex) {
      sure_line = std::string("P(new > base): n/a (") + ex.what() + ")\n";
    }
  }

  std::int64_t run_id = 0;
  if (store) {
    run_id = store->begin_run(sc, seed, reps, join_args(args));
    const auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
    try {
      for (const auto* side : {&base_reps, &new_reps}) {
        models::CurvePoint cp;
        cp.strategy = side->front().spec.strategy;
        cp.variant = variant;
        cp.cpus = cpus;
        cp.reps = *side;
        models::summarize(cp);
        store->add_point(run_id, cp);
      }
      store->add_comparison(run_id, table);
      store->finish_run(run_id, wall());
    } catch (const StoreError& e) {
      // A full disk after the points ran: the run row says so (if it can
      // still be written) and the command fails (exit 1), not as bad input.
      const std::string reason = std::string("cannot store the comparison: ") + e.what();
      try {
        store->set_status(run_id, "failed", wall(), reason);
      } catch (const StoreError&) {
      }
      throw std::runtime_error(reason + " (run " + std::to_string(run_id) + " of " + db + ")");
    }
  }

  if (vm.count("json")) {
    json jrows = json::array();
    for (const auto& r : table)
      jrows.push_back(lkp_row_json(r));
    json doc{{"scenario", sc.name},
                   {"base", base},
                   {"new", neu},
                   {"variant", variant},
                   {"cpus", cpus},
                   {"reps", reps},
                   {"seed", seed},
                   {"rows", jrows},
                   {"bottleneck", {{"base", bottleneck_json(what_if[0].removed)}, {"new", bottleneck_json(what_if[1].removed)}}},
                   {"next_bottleneck", {{"base", bottleneck_json(what_if[0].next)}, {"new", bottleneck_json(what_if[1].next)}}},
                   {"run_id", store ? json(run_id) : json(nullptr)},
                   {"p_new_faster", sure}};
    if (!what_if_opts.empty())
      doc["what_ifs"] = what_ifs_json(what_if_opts);
    std::cout << doc.dump(2) << "\n";
    return 0;
  }

  std::cout << "scenario " << sc.name << " on " << v.machine_name << " @ " << cpus << " CPUs"
            << (variant == "default" ? "" : ", variant " + variant) << ", " << reps << " replication"
            << (reps == 1 ? "" : "s") << ", seed " << seed << "\n"
            << "base: " << base << "    new: " << neu << "\n"
            << (what_if_opts.empty() ? "" : "what-ifs: " + describe_what_ifs(what_if_opts) + "\n") << "\n";
  print_lkp_table(std::cout, base, neu, table);
  std::cout << sure_line << "\n";
  const char* names[] = {"base", "new"};
  const std::string* strategies[] = {&base, &neu};
  for (int i = 0; i < 2; ++i) {
    const WhatIf& w = what_if[static_cast<std::size_t>(i)];
    std::cout << names[i] << " (" << *strategies[i] << "): bottleneck: " << describe(w.removed) << "\n";
    if (w.removed)
      std::cout << std::string(std::string(names[i]).size() + strategies[i]->size() + 4, ' ') << "with "
                << w.removed->name << (w.removed->kind == "lock" ? " made free" : " made private") << ": "
                << format_rate(w.ops_per_sec) << " ops/s, next bottleneck: " << describe(w.next) << "\n";
  }
  if (store) std::cout << "\nstored as run " << run_id << " in " << db << "\n";
  return 0;
}

}  // namespace vfssim::report
