#include "cli/stored.h"

#include "cli/options.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "cli/compare.h"
#include "models/scenario/scenario.h"
#include "results/fits.h"
#include "results/report.h"
#include "results/schema.h"
#include "results/store.h"

namespace vfssim::report {

namespace po = boost::program_options;
using nlohmann::json;

namespace {

// Parses `opts` plus the positional arguments `names` (all required);
// prints `opts` and returns false on --help.
bool parse(const std::vector<std::string>& args, po::options_description& opts, const std::string& command,
           const std::vector<std::string>& names, std::vector<std::string>& values, po::variables_map& vm) {
  po::options_description hidden;
  hidden.add_options()("positional", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("positional", -1);
  report::parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  if (vm.count("positional")) values = vm["positional"].as<std::vector<std::string>>();
  if (values.size() != names.size()) {
    std::string want;
    for (const auto& n : names) want += " " + n;
    throw po::error(command + " takes" + want + " (got " + std::to_string(values.size()) + " arguments)");
  }
  return true;
}

// The database of a reading command: it must exist (nothing is created).
std::unique_ptr<Store> open_existing(const std::string& db) {
  if (!Store::exists(db))
    throw StoreError(db + ": no results database here (vfssim run, compare and validate create it; --db PATH names another)");
  return std::make_unique<Store>(db);
}

std::int64_t run_id_of(const std::string& s) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 1)
    throw po::error("'" + s + "' is not a run id (a positive number: vfssim history lists them)");
  return v;
}

Store::StoredRun stored_run(Store& store, const std::string& db, std::int64_t id) {
  auto r = store.stored_run(id);
  if (!r) throw StoreError(db + ": no run " + std::to_string(id) + " (vfssim history --db " + db + " lists the runs)");
  return *r;
}

std::string series(const std::string& strategy, const std::string& variant) {
  return variant == "default" ? strategy : strategy + "/" + variant;
}

json run_meta(const Store::StoredRun& r) {
  return json{{"id", r.id},
              {"kind", r.kind},
              {"created_at", r.created_at},
              {"tool_version", r.tool_version},
              {"scenario", r.scenario},
              {"scenario_path", r.scenario_path},
              {"scenario_hash", r.scenario_hash},
              {"resolved_hash", r.resolved_hash.empty() ? json(nullptr) : json(r.resolved_hash)},
              {"machine", r.machine},
              {"seed", r.seed},
              {"replications", r.replications},
              {"args", r.args},
              {"status", r.status},
              {"reason", r.reason.empty() ? json(nullptr) : json(r.reason)},
              {"wall_seconds", r.wall_seconds ? json(*r.wall_seconds) : json(nullptr)}};
}

// The scenario a run ran, loaded again: its resolved text (schema 7), or
// the text as written for older runs (presets looked up beside its path).
models::Scenario stored_scenario(const Store::StoredRun& r) {
  try {
    if (r.resolved_scenario) return models::load_scenario_string(*r.resolved_scenario, "run " + std::to_string(r.id));
    const std::string dir = std::filesystem::path(r.scenario_path).parent_path().string();
    return models::load_scenario_string(r.scenario_text, r.scenario_path, {dir + "/../machines", dir + "/machines"});
  } catch (const models::ScenarioError& e) {
    throw StoreError("run " + std::to_string(r.id) + ": its stored scenario does not load with this vfssim: " + e.what());
  }
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_value(const schema::Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "";
  if (const auto* s = std::get_if<std::string>(&v)) return csv_field(*s);
  return schema::to_json(v).dump();  // numbers in their shortest exact form; true/false
}

}  // namespace

int cmd_history(const std::vector<std::string>& args) {
  po::options_description opts("vfssim history [options]");
  std::string db, kind, scenario;
  opts.add_options()
    ("help,h", "this help")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (never created)")
    ("json", "print one JSON document: {\"runs\": [...]}")
    ("kind", po::value(&kind), "only runs, compares or validations: run | compare | validate")
    ("scenario", po::value(&scenario), "only this scenario's runs and compares");
  std::vector<std::string> none;
  po::variables_map vm;
  if (!parse(args, opts, "history", {}, none, vm)) return 0;
  if (!kind.empty() && kind != "run" && kind != "compare" && kind != "validate")
    throw po::error("--kind: '" + kind + "' is not run, compare or validate");
  const bool as_json = vm.count("json") > 0;
  std::vector<Store::HistoryRow> rows;
  if (Store::exists(db)) {
    Store store(db);
    for (auto& h : store.history())
      if ((kind.empty() || h.kind == kind) && (scenario.empty() || h.scenario == scenario)) rows.push_back(std::move(h));
  } else if (!as_json) {
    std::cout << "no results database at " << db << " (nothing stored yet)\n";
    return 0;
  }
  if (as_json) {
    json out = json::array();
    for (const auto& h : rows) {
      json j{{"kind", h.kind},
             {"id", h.id},
             {"created_at", h.created_at},
             {"tool_version", h.tool_version},
             {"status", h.status},
             {"reason", h.reason.empty() ? json(nullptr) : json(h.reason)},
             {"wall_seconds", h.wall_seconds ? json(*h.wall_seconds) : json(nullptr)}};
      if (h.kind == "validate") {
        j["figures"] = h.count;
      } else {
        j["scenario"] = h.scenario;
        j["machine"] = h.machine;
        j["seed"] = h.seed ? json(*h.seed) : json(nullptr);
        j["replications"] = h.replications ? json(*h.replications) : json(nullptr);
        j["points"] = h.count;
      }
      out.push_back(std::move(j));
    }
    std::cout << json{{"db", db}, {"runs", out}}.dump(2) << "\n";
    return 0;
  }
  std::printf("%-8s %5s  %-20s  %-32s %-18s %8s %7s %-11s %9s  %s\n", "kind", "id", "created", "scenario", "machine",
              "seed", "points", "status", "wall s", "reason");
  for (const auto& h : rows) {
    const std::string seed = h.seed ? std::to_string(*h.seed) : "-";
    char wall[32] = "-";
    if (h.wall_seconds) std::snprintf(wall, sizeof wall, "%.2f", *h.wall_seconds);
    // The reason's first line: a store error carries the resume command after it.
    const std::string reason = h.reason.substr(0, h.reason.find('\n'));
    std::printf("%-8s %5lld  %-20s  %-32s %-18s %8s %7d %-11s %9s  %s\n", h.kind.c_str(), static_cast<long long>(h.id),
                h.created_at.c_str(), h.kind == "validate" ? "(figures)" : h.scenario.c_str(), h.machine.c_str(),
                seed.c_str(), h.count, h.status.c_str(), wall, reason.empty() ? "-" : reason.c_str());
  }
  return 0;
}

int cmd_show(const std::vector<std::string>& args) {
  po::options_description opts("vfssim show RUN [options]");
  std::string db;
  opts.add_options()
    ("help,h", "this help")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (never created)")
    ("json", "print the run as `vfssim run --json` does, with its stored row under \"run\"")
    ("resolved", "print the scenario the run ran, resolved (YAML: presets inlined, extends applied, every parameter)");
  std::vector<std::string> pos;
  po::variables_map vm;
  if (!parse(args, opts, "show", {"RUN"}, pos, vm)) return 0;
  if (vm.count("json") && vm.count("resolved")) throw po::error("show takes --json or --resolved, not both");
  const std::int64_t id = run_id_of(pos[0]);
  auto store = open_existing(db);
  const Store::StoredRun run = stored_run(*store, db, id);
  if (vm.count("resolved")) {
    if (!run.resolved_scenario)
      throw StoreError(db + ": run " + std::to_string(id) +
                       " was stored before the resolved scenario was (results schema 7); its text as written is "
                       "in runs.scenario_text");
    std::cout << *run.resolved_scenario;
    return 0;
  }
  const auto curve = store->load_curve(id);
  if (vm.count("json")) {
    const models::Scenario sc = stored_scenario(run);
    json doc = run_json(sc, RunInfo{run.seed, run.replications, std::nullopt}, curve);
    doc["scenario_hash"] = run.scenario_hash;  // the text as written, as `run --json` gives it
    doc["fits"] = fits_json(fit_curves(curve));
    doc["run"] = run_meta(run);
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  std::cout << run.kind << " " << run.id << " of " << db << ": scenario " << run.scenario << " (" << run.scenario_path
            << ") on " << run.machine << ", seed " << run.seed << ", " << run.replications << " replication"
            << (run.replications == 1 ? "" : "s") << "\n"
            << "stored " << run.created_at << " by vfssim " << run.tool_version << ", status "
            << (run.status.empty() ? "-" : run.status) << (run.reason.empty() ? "" : " (" + run.reason + ")") << ", "
            << curve.size() << " curve points\n"
            << "arguments: " << run.args << "\n";
  print_curve_table(std::cout, curve);
  print_fits(std::cout, fit_curves(curve));
  return 0;
}

int cmd_diff(const std::vector<std::string>& args) {
  po::options_description opts("vfssim diff RUN_A RUN_B [options]");
  std::string db;
  opts.add_options()
    ("help,h", "this help")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (never created)")
    ("json", "print one JSON document: {\"base\", \"new\", \"rows\": [{metric, base, base_stddev_pct, new, ...}]}");
  std::vector<std::string> pos;
  po::variables_map vm;
  if (!parse(args, opts, "diff", {"RUN_A", "RUN_B"}, pos, vm)) return 0;
  const std::int64_t a = run_id_of(pos[0]), b = run_id_of(pos[1]);
  auto store = open_existing(db);
  const Store::StoredRun ra = stored_run(*store, db, a), rb = stored_run(*store, db, b);
  const auto ca = store->load_curve(a), cb = store->load_curve(b);
  // The points both runs have, in A's order; one series needs no prefix.
  using Key = std::tuple<std::string, std::string, int>;
  std::map<Key, const models::CurvePoint*> in_b;
  for (const auto& cp : cb) in_b[{cp.strategy, cp.variant, cp.cpus}] = &cp;
  std::vector<std::pair<const models::CurvePoint*, const models::CurvePoint*>> common;
  std::set<std::string> names;
  std::map<std::string, int> largest;  // per series: its largest CPU count in both
  for (const auto& cp : ca) {
    auto it = in_b.find({cp.strategy, cp.variant, cp.cpus});
    if (it == in_b.end()) continue;
    common.emplace_back(&cp, it->second);
    const std::string s = series(cp.strategy, cp.variant);
    names.insert(s);
    largest[s] = std::max(largest[s], cp.cpus);
  }
  if (common.empty())
    throw StoreError(db + ": runs " + std::to_string(a) + " and " + std::to_string(b) +
                     " have no curve point in common (the same strategy, variant and CPU count)");
  std::vector<Store::ComparisonRow> rows;
  for (const auto& [pa, pb] : common) {
    const std::string s = series(pa->strategy, pa->variant);
    const std::string prefix = names.size() > 1 ? s + "." : "";
    const std::string at = std::string("@").append(std::to_string(pa->cpus));
    auto point_rows = lkp_rows(pa->reps, pb->reps, "vfssim.ops_per_sec");
    // Throughput at every CPU count; the profile and lock_stat rows at the largest.
    if (pa->cpus != largest[s]) point_rows.resize(1);
    for (auto& r : point_rows) {
      r.metric = prefix + r.metric + at;
      r.base = pa->strategy;
      r.neu = pb->strategy;
      r.variant = pa->variant;
      r.cpus = pa->cpus;
      rows.push_back(std::move(r));
    }
  }
  if (vm.count("json")) {
    json jrows = json::array();
    for (const auto& r : rows)
      jrows.push_back(lkp_row_json(r));
    std::cout << json{{"base", run_meta(ra)}, {"new", run_meta(rb)}, {"rows", jrows}}.dump(2) << "\n";
    return 0;
  }
  std::cout << "base: run " << a << " (" << ra.scenario << ", seed " << ra.seed << ", " << ra.created_at << ")\n"
            << "new:  run " << b << " (" << rb.scenario << ", seed " << rb.seed << ", " << rb.created_at << ")\n\n";
  print_lkp_table(std::cout, "run " + std::to_string(a), "run " + std::to_string(b), rows);
  return 0;
}

int cmd_export(const std::vector<std::string>& args) {
  po::options_description opts("vfssim export RUN --csv [options]");
  std::string db, table = "points";
  opts.add_options()
    ("help,h", "this help")
    ("db", po::value(&db)->default_value("vfssim.db"), "results database (never created)")
    ("csv", "write CSV on stdout (the only format)")
    ("table", po::value(&table)->default_value("points"),
     "points | lock_stat | lock_stat_rw | contention_points | profile | lines | seqcounts | pools | rcu | roles | tasks | curve "
     "(columns: vfssim schema)");
  std::vector<std::string> pos;
  po::variables_map vm;
  if (!parse(args, opts, "export", {"RUN"}, pos, vm)) return 0;
  if (!vm.count("csv")) throw po::error("export needs --csv (the only format)");
  const std::string key = table == "points" ? "point" : table;
  const auto described = schema::describe();
  if (!described.contains(key))
    throw po::error("--table: '" + table +
                    "' is not points, lock_stat, lock_stat_rw, contention_points, profile, lines, seqcounts, pools, rcu, roles, tasks or curve");
  const std::int64_t id = run_id_of(pos[0]);
  auto store = open_existing(db);
  (void)stored_run(*store, db, id);
  const auto curve = store->load_curve(id);

  // Header and rows from the schema: the keys and values of the JSON document.
  auto header = [&](const auto& fields, bool rep) {
    std::string h = rep ? "strategy,variant,cpus,rep" : "strategy,variant,cpus";
    for (const auto& f : fields) (h += ',') += csv_field(schema::key_of(f));
    std::cout << h << "\n";
  };
  auto line = [&](const auto& fields, const auto& rec, const models::CurvePoint& cp, const models::PointResult* rep,
                  const schema::Context& c) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "," + std::string here.
    std::string l = csv_field(cp.strategy);
    ((l += ',') += csv_field(cp.variant)) += ',';
    l += std::to_string(cp.cpus);
    if (rep) (l += ',') += std::to_string(rep->spec.rep);
    for (const auto& f : fields) (l += ',') += csv_value(schema::shown(f, rec, c));
    std::cout << l << "\n";
  };
  if (key == "curve") {
    header(schema::curve().fields, false);
    for (const auto& cp : curve) line(schema::curve().fields, cp, cp, nullptr, {});
    return 0;
  }
  auto write = [&](const auto& t) {
    header(t.fields, true);
    for (const auto& cp : curve)
      for (const auto& r : cp.reps)
        for (const auto* rec : schema::rows_of(t, r)) line(t.fields, *rec, cp, &r, schema::context_of(r));
  };
  if (key == "point") {
    write(schema::points());
    return 0;
  }
  schema::for_each_stats_table([&](const auto& t) {
    if (key == t.key) write(t);
  });
  return 0;
}

}  // namespace vfssim::report
