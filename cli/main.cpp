// vfssim: the command-line front end.
//
//   vfssim run FILE [--cpus 1,2,4] [--seed N] [--reps N] [--jobs N] [--db PATH] [--json [--json-profile-top N]]
//                   [--plot FILE.svg|FILE.png [--plot-y auto|linear|log]] [--progress auto|always|never]
//                   [--next-bottleneck] [--max-events N] [--max-wall S] [--resume]
//                   [--set KEY=VALUE]... [--free LOCK]... [--private LINE]...
//   vfssim validate [PATH...] [--json] [--jobs N] [--reps N] [--db PATH]
//   vfssim compare FILE --base A --new B [--cpus N] [--reps N] [--variant V] [--json]
//   vfssim bench [--json] [--sim-seconds S] [--cpus LIST] [--locks LIST] [--pairs N]
//   vfssim history [--db PATH] [--json] [--kind run|compare|validate] [--scenario NAME]
//   vfssim show RUN [--db PATH] [--json] [--resolved]
//   vfssim diff RUN_A RUN_B [--db PATH] [--json]
//   vfssim export RUN --csv [--table points|lock_stat|profile|...] [--db PATH]
//   vfssim schema [--json]
//   vfssim machines [NAME...] [--json]
//   vfssim new TEMPLATE NAME [--out FILE]
//   vfssim new BENCHMARK TEST_MODE [--kernel VERSION] [--machine PRESET] [--out FILE]
//   vfssim library [VERSION [OP]] [--json] | library diff FROM TO [OP] [--json] | library resolve FILE
//   vfssim probe --out DIR [--cpus LIST] [--seconds S] [--quiet]
//   vfssim --help | --version
//
// Exit status: 0 success, 1 a run failed (or deadlocked), 2 bad input
// (scenario or flags), 128 + signal when SIGINT/SIGTERM interrupted a run.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <sstream>

#include "cli/bench.h"
#include "cli/catalog.h"
#include "cli/compare.h"
#include "results/discrepancy.h"
#include "results/fits.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "results/plot.h"
#include "results/report.h"
#include "results/review.h"
#include "results/schema.h"
#include "cli/run_durable.h"
#include "cli/stored.h"
#include "results/store.h"
#include "cli/validate.h"
#include "cli/whatif.h"
#include "models/experiment/experiment.h"
#include "models/experiment/uncertainty.h"
#include "models/scenario/scenario.h"
#include "probe/probe.h"

namespace po = boost::program_options;
using namespace vfssim;

namespace {

constexpr int kExitBadInput = 2;

const char* kUsage =
    "usage: vfssim COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  run FILE      simulate every strategy of a scenario over a CPU sweep;\n"
    "                print the curves, store the run in the results database\n"
    "  validate      score the reported figures (expect:) of scenarios against predictions\n"
    "  compare FILE  two strategies side by side (LKP table), with their bottlenecks\n"
    "  bench         the lock microbenchmark: simulated acquisitions per second\n"
    "  history       list the runs, compares and validations stored in the results database\n"
    "  show RUN      a stored run: its curves, or (--resolved) the scenario it ran\n"
    "  diff A B      two stored runs side by side (LKP table)\n"
    "  export RUN    a stored run's points, lock_stat or profile as CSV\n"
    "  schema        the result fields: JSON and Python keys, SQLite columns, types, units\n"
    "  machines      the machine presets: CPUs, sockets, NUMA nodes, SMT, each latency's source\n"
    "  library       the kernel code-path library: versions, ops, values, a version diff with its commits\n"
    "  new T NAME    write a commented starter scenario (lock-microbench, open-close, design-review),\n"
    "                or a benchmark's test on a kernel version (new will-it-scale open1_threads --kernel v6.6)\n"
    "  probe         measure this machine (transfer matrix, contended line, real spinlocks);\n"
    "                write a machine preset and a lock scenario to check the model against\n"
    "\n"
    "vfssim COMMAND --help shows the options of a command.\n";

std::vector<int> parse_cpu_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 1)
      throw po::error("--cpus: '" + item + "' is not a positive CPU count (expected a list such as 1,2,4,8)");
    out.push_back(v);
  }
  if (out.empty()) throw po::error("--cpus is empty (expected a list such as 1,2,4,8)");
  return out;
}

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("vfssim run FILE [options]");
  std::string cpus, db = "vfssim.db", strategies, variants, plot, plot_y = "auto", progress_mode;
  std::uint64_t seed = 1;
  int reps = 1, depth = 1, uncertainty = 0;
  unsigned jobs = 0;
  opts.add_options()
    ("help,h", "this help")
    ("cpus", po::value(&cpus), "CPU counts to run, comma-separated (default: the scenario's list)")
    ("uncertainty", po::value(&uncertainty)->default_value(0),
     "draw N samples of the scenario's ranges (Latin hypercube, --seed) and give every point a band: "
     "the 10th, 50th, 90th percentiles of its rate (docs/uncertainty.md)")
    ("uncertainty-report", "with --uncertainty: rank the ranges by their Spearman correlation with each point's rate")
    ("strategy", po::value(&strategies), "strategies to run, comma-separated (default: all)")
    ("variant", po::value(&variants), "workload variants to run, comma-separated, or 'all' (default: default)")
    ("seed", po::value(&seed)->default_value(1), "run seed: same seed, same results")
    ("reps", po::value(&reps)->default_value(1), "replications per point (different derived seeds)")
    ("jobs,j", po::value(&jobs)->default_value(0), "worker threads (default: all cores)")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (SQLite); '' to store nothing")
    ("json", "print one JSON document on stdout instead of tables")
    ("json-profile-top", po::value<std::size_t>(), "with --json: only the N largest profile entries of each point (default: all)")
    ("plot", po::value(&plot), "write the curves to FILE.svg or FILE.png (one panel per variant)")
    ("plot-y", po::value(&plot_y)->default_value(plot_y),
     "y axis of --plot: auto (log when the values span more than 10x), linear, log")
    ("next-bottleneck", "run each point again without its bottleneck to find the next one (doubles the cost)")
    ("bottleneck-depth", po::value(&depth)->default_value(1),
     "with --next-bottleneck: remove the bottleneck, re-run and name the next, this many times");
  report::add_progress_options(opts, progress_mode);
  report::DurableOptions durable;  // --max-events, --max-wall, --resume (cli/run_durable.h)
  report::add_durable_options(opts, durable);
  report::WhatIfOptions what_ifs;  // --set, --free, --private (cli/whatif.h)
  report::add_what_if_options(opts, what_ifs);
  std::string file;
  po::variables_map vm;
  if (!report::parse_file_command(args, opts, "run", file, vm)) return 0;
  if (reps < 1) throw po::error("--reps must be at least 1");
  if (uncertainty < 0 || uncertainty > models::kMaxUncertaintySamples)
    throw po::error("--uncertainty must be from 0 to " + std::to_string(models::kMaxUncertaintySamples));
  if (vm.count("uncertainty-report") && uncertainty == 0) throw po::error("--uncertainty-report needs --uncertainty N");
  if (depth < 1 || depth > 16) throw po::error("--bottleneck-depth must be from 1 to 16");
  if (!vm["bottleneck-depth"].defaulted() && !vm.count("next-bottleneck"))
    throw po::error("--bottleneck-depth needs --next-bottleneck");
  if (vm.count("json-profile-top") && !vm.count("json")) throw po::error("--json-profile-top needs --json");
  if (!vm["plot-y"].defaulted() && plot.empty()) throw po::error("--plot-y needs --plot");
  report::PlotOptions plot_options;
  try {
    plot_options.y = report::parse_y_scale(plot_y);
    if (!plot.empty()) report::check_plot_path(plot);  // before anything runs or is stored
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }

  const models::Scenario sc = models::load_scenario_file(file, {}, report::settings_of(what_ifs));
  for (const auto& w : sc.warnings) std::cerr << w << "\n";
  models::SweepSpec spec;
  if (!cpus.empty()) spec.cpus = parse_cpu_list(cpus);
  if (!strategies.empty()) {
    std::stringstream ss(strategies);
    std::string s;
    while (std::getline(ss, s, ',')) {
      if (!sc.has_strategy(s)) throw po::error("--strategy: scenario '" + sc.name + "' has no strategy '" + s + "'");
      spec.strategies.push_back(s);
    }
  }
  if (variants == "all") {
    for (const auto& v : sc.variants) spec.variants.push_back(v.name);
  } else if (!variants.empty()) {
    std::stringstream ss(variants);
    std::string v;
    while (std::getline(ss, v, ',')) {
      if (!sc.has_variant(v)) throw po::error("--variant: scenario '" + sc.name + "' has no variant '" + v + "'");
      spec.variants.push_back(v);
    }
  }
  const models::Topology topo(sc.machine);
  for (const auto& vn : spec.variants.empty() ? std::vector<std::string>{"default"} : spec.variants) {
    const models::Topology vt(sc.variant(vn).machine);
    for (int c : spec.cpus)
      if (c > vt.num_cpus())
        throw po::error("--cpus: " + std::to_string(c) + " is more than machine " + sc.variant(vn).machine_name +
                        " has (" + std::to_string(vt.num_cpus()) + ")");
  }
  spec.seed = seed;
  spec.reps = reps;
  spec.jobs = jobs;
  spec.uncertainty = uncertainty;
  if (uncertainty > 0 && !models::draws_ranges(sc))
    throw po::error("--uncertainty: scenario '" + sc.name + "' has no ranges to sample (docs/scenario-format.md, \"Ranges\"" +
                    (sc.ranges.empty() ? ")" : "; its fitted constants are re-fitted to their figures, not drawn)"));
  {
    std::vector<std::string> run_strategies = spec.strategies;
    if (run_strategies.empty())
      for (const auto& s : sc.strategies) run_strategies.push_back(s.name);
    spec.what_ifs = report::what_ifs_of(what_ifs, sc, run_strategies);
  }

  // Each curve point is committed as it finishes; SIGINT/SIGTERM stop the
  // sweep with what is done stored; budgets stop runaway points.
  durable.db = db;
  durable.quiet = vm.count("quiet") > 0;
  durable.progress = report::progress_enabled(vm, progress_mode);
  durable.resume = vm.count("resume") > 0;
  durable.args = args;
  // --uncertainty: the band is the total, the parameter samples combined
  // with the model's error of a value in the point's bound class (the
  // corpus's table, docs/uncertainty.md), set before the point is stored;
  // the parts are kept for JSON. A point resumed from the store keeps the
  // band it was stored with.
  std::optional<report::ModelError> model_error;
  std::string model_error_note;
  if (uncertainty > 0) {
    try {
      model_error.emplace();
      durable.model_error = &*model_error;
      model_error_note = ", with the model's error (" + std::to_string(model_error->records()) + " corpus records)";
    } catch (const std::runtime_error& ex) {
      std::cerr << "vfssim run: the bands are the parameters' alone: " << ex.what() << "\n";
    }
  }
  report::SweepOutcome outcome = report::run_durable_sweep(sc, spec, durable);
  if (!outcome.complete()) return report::finish_incomplete(outcome, std::cerr);
  auto& curve = outcome.curve;
  auto& store = outcome.store;
  const std::int64_t run_id = outcome.run_id;
  const double wall = outcome.wall;
  const auto fits = report::fit_curves(curve);
  if (store && !outcome.was_done) {  // a --resume of a finished run stores nothing again
    store->add_fits(run_id, report::fit_rows(fits));
    store->finish_run(run_id, wall);
  }
  // After the run is stored: a what-if run past its budget fails the command, not the run.
  std::vector<report::WhatIf> what_if;  // per curve point, with --next-bottleneck
  if (vm.count("next-bottleneck")) {
    std::vector<const std::vector<models::PointResult>*> groups;
    for (const auto& cp : curve) groups.push_back(&cp.reps);
    what_if = report::next_bottlenecks(sc, groups, jobs, report::point_limits(durable.budget), depth);
  }
  std::vector<std::optional<report::ModelError::Parts>> band_parts(curve.size());
  if (model_error)
    for (std::size_t i = 0; i < curve.size(); ++i) band_parts[i] = model_error->apply(curve[i]);
  if (!plot.empty()) report::write_plot(plot, sc, curve, plot_options);

  report::RunInfo info{seed, reps, std::nullopt};
  if (vm.count("json-profile-top")) {
    info.profile_top = vm["json-profile-top"].as<std::size_t>();
  }
  if (vm.count("json")) {
    auto doc = report::run_json(sc, info, curve);
    doc["fits"] = report::fits_json(fits);
    if (!what_ifs.empty())
      doc["what_ifs"] = report::what_ifs_json(what_ifs);
    if (uncertainty > 0) doc["uncertainty"] = report::uncertainty_json(sc, uncertainty);
    for (std::size_t i = 0; i < curve.size(); ++i)
      if (band_parts[i]) {
        doc["points"][i]["band_parameters"] = band_parts[i]->parameters.to_json();
        doc["points"][i]["band_model"] = band_parts[i]->model.to_json();
      }
    if (vm.count("uncertainty-report"))
      for (std::size_t i = 0; i < curve.size(); ++i) doc["points"][i]["sensitivity"] = report::sensitivity_json(curve[i]);
    for (std::size_t i = 0; i < what_if.size(); ++i) {
      doc["points"][i]["next_bottleneck"] = report::bottleneck_json(what_if[i].next);
      doc["points"][i]["bottleneck_chain"] = report::bottleneck_chain_json(what_if[i]);
    }
    std::cout << doc.dump(2) << "\n";
    return report::report_deadlocks(outcome, std::cerr);
  }
  std::cout << "scenario " << sc.name << " on " << sc.machine_name << " (" << topo.num_cpus() << " CPUs), seed "
            << seed << ", " << reps << " replication" << (reps > 1 ? "s" : "") << "\n";
  if (!sc.description.empty()) std::cout << sc.description << "\n";
  if (!what_ifs.empty()) std::cout << "what-ifs: " << report::describe_what_ifs(what_ifs) << "\n";
  if (uncertainty > 0)
    std::cout << "uncertainty: " << uncertainty << " samples of " << sc.ranges.size() << " range"
              << (sc.ranges.size() == 1 ? "" : "s") << " (Latin hypercube); p10-p90: the rate's 80% band"
              << model_error_note << "\n";
  report::print_curve_table(std::cout, curve);
  if (vm.count("uncertainty-report")) report::print_sensitivity(std::cout, curve, 3);
  report::print_fits(std::cout, fits);
  report::print_chart(std::cout, curve);
  // Where the time goes at each strategy's largest CPU count.
  for (std::size_t i = 0; i < curve.size(); ++i) {
    if (i + 1 < curve.size() && curve[i + 1].strategy == curve[i].strategy && curve[i + 1].variant == curve[i].variant)
      continue;
    const auto& p = curve[i].reps.front();
    const std::string name =
        curve[i].variant == "default" ? curve[i].strategy : curve[i].strategy + "/" + curve[i].variant;
    std::cout << "\n" << name << " @ " << curve[i].cpus << " CPUs: lock_stat\n";
    report::print_lock_stat(std::cout, p);
    std::cout << name << " @ " << curve[i].cpus << " CPUs: profile (share of CPU time)\n";
    report::print_profile(std::cout, p);
    report::print_bottleneck(std::cout, curve[i].reps, what_if.empty() ? nullptr : &what_if[i]);
  }
  if (store) std::cout << "\nstored as run " << run_id << " in " << db << " (" << wall << " s)\n";
  return report::report_deadlocks(outcome, std::cerr);
}

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description opts("vfssim bench [options]");
  double seconds = 0.5;
  std::string cpus = "1,8,128,1024", locks;
  int pairs = 5, hand_cpus = 128;
  opts.add_options()
    ("help,h", "this help")
    ("json", "print one JSON document on stdout")
    ("cpus", po::value(&cpus)->default_value(cpus), "CPU counts")
    ("locks", po::value(&locks), "lock kinds, comma-separated (default: every kind)")
    ("sim-seconds", po::value(&seconds)->default_value(0.5), "simulated seconds per point")
    ("pairs", po::value(&pairs)->default_value(pairs),
     "alternating runs of the hand-written MCS loop and the engine's mcs point (0: none)")
    ("handwritten-cpus", po::value(&hand_cpus)->default_value(hand_cpus), "CPU count of that comparison");
  po::variables_map vm;
  const po::parsed_options parsed = po::command_line_parser(args).options(opts).run();
  po::store(parsed, vm);
  po::notify(vm);
  report::refuse_negative_unsigned(parsed, vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (!(seconds > 0 && seconds <= 3600)) throw po::error("--sim-seconds must be a number of seconds above 0, at most 3600");
  if (pairs < 0) throw po::error("--pairs must be 0 or more");
  if (hand_cpus < 1) throw po::error("--handwritten-cpus must be a positive CPU count");
  std::vector<std::string> kinds;
  if (locks.empty()) {
    kinds = report::kBenchLocks;
  } else {
    std::stringstream ss(locks);
    std::string k;
    while (std::getline(ss, k, ',')) {
      if (std::find(report::kBenchLocks.begin(), report::kBenchLocks.end(), k) == report::kBenchLocks.end())
        throw po::error("--locks: '" + k + "' is not a lock kind");
      kinds.push_back(k);
    }
  }
  const auto dur = sim::Duration{static_cast<std::int64_t>(seconds * 1e12)};
  const std::vector<int> cpu_list = parse_cpu_list(cpus);
  nlohmann::json results = nlohmann::json::array();
  const bool json = vm.count("json") > 0;
  if (!json)
    std::printf("%-9s %6s %16s %14s %12s %16s\n", "lock", "cpus", "acq/wall-s", "events/s", "events/acq", "sim acq/s");
  for (const std::string& lock : kinds) {
    for (int c : cpu_list) {
      const auto b = report::run_bench(lock, c, dur);
      results.push_back({{"lock", b.lock},
                         {"cpus", b.cpus},
                         {"acquisitions_per_wall_sec", b.acquisitions_per_wall_sec()},
                         {"events_per_sec", b.events_per_sec()},
                         {"events_per_acquisition", b.events_per_acquisition()},
                         {"sim_acquisitions_per_sec", b.sim_acquisitions_per_sec()},
                         {"acquisitions", b.acquisitions},
                         {"wall_seconds", b.wall_seconds},
                         {"setup_seconds", b.setup_seconds},
                         {"cpu_seconds", b.cpu_seconds}});
      if (!json)
        std::printf("%-9s %6d %16.0f %14.0f %12.3f %16.0f\n", lock.c_str(), c, b.acquisitions_per_wall_sec(),
                    b.events_per_sec(), b.events_per_acquisition(), b.sim_acquisitions_per_sec());
    }
  }
  nlohmann::json doc{{"results", results}};
  if (pairs > 0) {
    const auto h = report::compare_handwritten(hand_cpus, dur, pairs);
    doc["handwritten"] = {{"lock", "mcs"},
                          {"cpus", h.cpus},
                          {"pairs", h.pairs},
                          {"acquisitions", h.acquisitions},
                          {"events", h.events},
                          {"sim_acquisitions_per_sec", h.sim_acquisitions_per_sec},
                          {"acquisitions_per_wall_sec", h.acquisitions_per_wall_sec},
                          {"events_per_sec", h.events_per_sec},
                          {"engine_acquisitions", h.engine_acquisitions},
                          {"engine_sim_acquisitions_per_sec", h.engine_sim_acquisitions_per_sec},
                          {"engine_acquisitions_per_wall_sec", h.engine_acquisitions_per_wall_sec},
                          {"engine_events_per_sec", h.engine_events_per_sec},
                          {"pair_ratios", h.pair_ratios},
                          {"cpu_ratio_to_handwritten", h.cpu_ratio}};
    doc["ratio_to_handwritten"] = h.ratio;
    if (!json) {
      std::printf("\nmcs @%d, hand-written loop (bench/handwritten_mcs.cpp) vs engine, %d alternating pairs:\n",
                  h.cpus, h.pairs);
      std::printf("  simulated acquisitions/s: hand-written %.0f, engine %.0f (%llu vs %llu acquisitions)\n",
                  h.sim_acquisitions_per_sec, h.engine_sim_acquisitions_per_sec,
                  static_cast<unsigned long long>(h.acquisitions), static_cast<unsigned long long>(h.engine_acquisitions));
      std::printf("  acquisitions per wall second (median): hand-written %.0f, engine %.0f\n",
                  h.acquisitions_per_wall_sec, h.engine_acquisitions_per_wall_sec);
      std::printf("  ratio engine / hand-written: %.3f wall (median of pairs), %.3f thread CPU time\n", h.ratio,
                  h.cpu_ratio);
    }
  }
  if (json) std::cout << doc.dump(2) << "\n";
  return 0;
}

int cmd_schema(const std::vector<std::string>& args) {
  po::options_description opts("vfssim schema [options]");
  opts.add_options()("help,h", "this help")("json", "print the schema as one JSON document");
  po::variables_map vm;
  const po::parsed_options parsed = po::command_line_parser(args).options(opts).run();
  po::store(parsed, vm);
  po::notify(vm);
  report::refuse_negative_unsigned(parsed, vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const auto doc = report::schema::describe();
  if (vm.count("json")) {
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  for (const auto& [key, t] : doc.items()) {
    std::cout << key << " (SQLite table " << t["table"].get<std::string>() << ": one row per "
              << t["rows"].get<std::string>() << ")\n";
    for (const auto& f : t["fields"]) {
      const std::string unit = f["unit"].get<std::string>();
      std::printf("  %-20s %-8s %-32s %s\n", f["key"].get<std::string>().c_str(), f["type"].get<std::string>().c_str(),
                  unit.c_str(), f["description"].get<std::string>().c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitBadInput : 0;
  }
  if (args[0] == "--version") {
    std::cout << "vfssim " << VFSSIM_VERSION << "\n";
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "run") return cmd_run(args);
    if (cmd == "bench") return cmd_bench(args);
    if (cmd == "probe") return probe::cmd_probe(args);
    if (cmd == "history") return report::cmd_history(args);
    if (cmd == "show") return report::cmd_show(args);
    if (cmd == "diff") return report::cmd_diff(args);
    if (cmd == "export") return report::cmd_export(args);
    if (cmd == "schema") return cmd_schema(args);
    if (cmd == "machines") return report::cmd_machines(args);
    if (cmd == "new") return report::cmd_new(args);
    if (cmd == "library") return report::cmd_library(args);
    if (cmd == "validate") return report::cmd_validate(args);
    if (cmd == "compare") return report::cmd_compare(args);
    std::cerr << "vfssim: unknown command '" << cmd << "'\n" << kUsage;
    return kExitBadInput;
  } catch (const models::ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "vfssim " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const report::StoreError& e) {
    std::cerr << "vfssim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "vfssim: " << e.what() << "\n";
    return 1;
  }
}
