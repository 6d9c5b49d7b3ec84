// Scenario and machine files: YAML (yaml-cpp) to validated values.
//
// Strict by design (ZSim's lesson): every mapping lists the keys it
// accepts, an unknown key is an error, every time needs a unit, and every
// name a step uses must be declared. Errors carry FILE:LINE:COL.
// This file reads the top level; each section has its own parser
// (sections.h), the steps come from the step-kind registry (steps.h), the
// shared value parsers from reader.h.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/kernel/free_lock.h"
#include "models/kernel/lock_kinds.h"
#include "models/scenario/sections.h"
#include "sim/rng.h"

namespace vfssim::models {

namespace fs = std::filesystem;

// A message quotes the input: a NUL would cut it short in what(), a lone
// byte of a multi-byte character would make it invalid UTF-8 (which Python
// cannot decode). Such bytes are written as \xNN; valid UTF-8 stays as is.
std::string printable(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (ok && len == 1 && (c < 0x20 && c != '\n' && c != '\t')) ok = false;
    if (ok && c == 0x7f) ok = false;
    if (!ok) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    out.append(text, i, len);
    i += len;
  }
  return out;
}

ScenarioError::ScenarioError(SourceMark mark, const std::string& problem, const std::string& expected)
    : std::runtime_error(printable(mark.file) + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) +
                         ": " + printable(problem) + (expected.empty() ? "" : "; expected " + printable(expected))),
      mark_(std::move(mark)),
      problem_(printable(problem)),
      expected_(printable(expected)) {}

const char* to_string(Scope s) {
  switch (s) {
    case Scope::kGlobal: return "global";
    case Scope::kNode: return "node";
    case Scope::kCpu: return "cpu";
    case Scope::kProcess: return "process";
    case Scope::kTask: return "task";
    case Scope::kObject: return "object";
  }
  return "?";
}

const Strategy& Scenario::strategy(const std::string& n) const {
  for (const auto& s : strategies)
    if (s.name == n) return s;
  std::string known;
  for (const auto& s : strategies) known += (known.empty() ? "" : ", ") + s.name;
  throw std::invalid_argument("scenario '" + name + "' has no strategy '" + n + "' (it has: " + known + ")");
}

const Variant& Scenario::variant(const std::string& n) const {
  for (const auto& v : variants)
    if (v.name == n) return v;
  std::string known;
  for (const auto& v : variants) known += (known.empty() ? "" : ", ") + v.name;
  throw std::invalid_argument("scenario '" + name + "' has no variant '" + n + "' (it has: " + known + ")");
}

std::vector<int> Scenario::place_tasks(const Topology& topo, const Workload& w, int n) {
  if (w.cpu_list.empty()) return topo.place(n, w.placement);
  if (n < 1 || n > static_cast<int>(w.cpu_list.size()))
    throw std::invalid_argument("cannot place " + std::to_string(n) + " tasks: the placement lists " +
                                std::to_string(w.cpu_list.size()) + " CPUs");
  return {w.cpu_list.begin(), w.cpu_list.begin() + n};
}

std::string to_string(const ObjectSet& o) {
  switch (o.pick) {
    case ObjectSet::Pick::kTask: return "task";
    case ObjectSet::Pick::kUniform: return "uniform";
    case ObjectSet::Pick::kRoundRobin: return "round_robin";
    case ObjectSet::Pick::kZipf: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "zipf(%g)", o.zipf_s);
      return buf;
    }
  }
  return "?";
}

std::vector<std::vector<std::string>> Workload::loops() const {
  if (roles.empty()) return {loop};
  std::vector<std::vector<std::string>> out;
  for (const auto& r : roles) out.push_back(r.loop);
  return out;
}

std::vector<SourceMark> Workload::loop_marks() const {
  if (roles.empty()) return {loop_mark};
  std::vector<SourceMark> out;
  for (const auto& r : roles) out.push_back(r.loop_mark);
  return out;
}

std::vector<int> assign_roles(const Workload& w, const Topology& topo, const std::vector<int>& cpus) {
  const int n = static_cast<int>(cpus.size());
  std::vector<int> role(cpus.size(), w.roles.empty() ? 0 : -1);
  if (w.roles.empty()) return role;
  std::vector<int> nodes;  // the NUMA nodes the CPUs span, in placement order
  for (int c : cpus)
    if (std::find(nodes.begin(), nodes.end(), topo.node_of(c)) == nodes.end()) nodes.push_back(topo.node_of(c));
  const auto at = [&](int cpus_count) { return " at " + std::to_string(cpus_count) + " CPU" + (cpus_count == 1 ? "" : "s"); };
  int taken = 0;
  const auto take = [&](std::size_t r, int want, int node) {
    for (std::size_t t = 0; t < cpus.size() && want > 0; ++t)
      if (role[t] < 0 && (node < 0 || topo.node_of(cpus[t]) == node)) {
        role[t] = static_cast<int>(r);
        --want;
        ++taken;
      }
    return want;  // what could not be placed
  };
  int rest = -1;
  for (std::size_t r = 0; r < w.roles.size(); ++r) {
    const Role& ro = w.roles[r];
    if (ro.rest()) {
      rest = static_cast<int>(r);
      continue;
    }
    const int want = ro.count ? ro.count
                     : ro.per_node ? ro.per_node * static_cast<int>(nodes.size())
                                   : std::max(1, static_cast<int>(std::floor(ro.fraction * n + 1e-9)));
    if (taken + want > n)
      throw ScenarioError(ro.mark, "role '" + ro.name + "' needs " + std::to_string(want) + (want == 1 ? " task" : " tasks") + at(n) + ", but " +
                                       std::to_string(n - taken) + " CPU" + (n - taken == 1 ? " is" : "s are") +
                                       " left after the roles before it",
                          "role counts that add up to at most the CPU count of every point of the sweep");
    if (ro.per_node) {
      for (int node : nodes)
        if (take(r, ro.per_node, node) > 0)
          throw ScenarioError(ro.mark, "role '" + ro.name + "' needs " + std::to_string(ro.per_node) +
                                           " tasks on NUMA node " + std::to_string(node) + at(n) +
                                           ", but the point has fewer free CPUs there",
                              "a smaller per_node, or a placement with more CPUs per node");
    } else {
      take(r, want, -1);
    }
  }
  if (rest >= 0) {
    if (taken == n)
      throw ScenarioError(w.roles[rest].mark, "role '" + w.roles[rest].name + "' takes the remaining CPUs, but none is left" + at(n),
                          "CPU counts above what the other roles take");
    take(static_cast<std::size_t>(rest), n - taken, -1);
  } else if (taken < n) {
    throw ScenarioError(w.roles.back().mark, "the roles take " + std::to_string(taken) + " of the " + std::to_string(n) +
                                                 " CPUs" + at(n) + " and no role takes the rest",
                        "one role without a count (it takes the remaining CPUs), or counts that add up to every CPU count");
  }
  return role;
}

bool Scenario::has_variant(const std::string& n) const {
  for (const auto& v : variants)
    if (v.name == n) return true;
  return false;
}

const char* to_string(ParamValue::Type t) {
  switch (t) {
    case ParamValue::Type::kBool: return "switch";
    case ParamValue::Type::kNumber: return "number";
    case ParamValue::Type::kTime: return "time";
  }
  return "?";
}

bool Scenario::has_strategy(const std::string& n) const {
  for (const auto& s : strategies)
    if (s.name == n) return true;
  return false;
}

const std::vector<std::string>& lock_kinds() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> out;
    for (const auto& row : lock_kind_table())
      if (std::string(row.name) != FreeLock::kKind) out.push_back(row.name);
    return out;
  }();
  return k;
}

namespace parse {

namespace {

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// Each fitted constant (`fit: FIGURE`) names a figure a sample can re-fit it
// to: a fitted value, ratio or change of the file with a reported value,
// and no other constant fitted to it (a one-point fit sets one constant).
void check_fits(const Scenario& sc) {
  std::map<std::string, std::string> fitted_by;
  for (const auto& c : sc.ranges) {
    if (c.fit.empty()) continue;
    const Expectation* f = nullptr;
    for (const auto& e : sc.expect)
      if (e.id == c.fit) f = &e;
    if (!f) throw ScenarioError(c.mark, "constant " + c.name + " is fitted to figure '" + c.fit + "', which expect: does not have",
                                "the id of a figure of this file");
    if (!f->fitted)
      throw ScenarioError(c.mark, "constant " + c.name + " is fitted to figure '" + c.fit + "', which is not marked fitted",
                          "fitted: true (or fitted_at) on the figure it is fitted to");
    if (f->kind != "value" && f->kind != "ratio" && f->kind != "change")
      throw ScenarioError(c.mark, "constant " + c.name + " is fitted to the " + f->kind + " figure '" + c.fit + "'",
                          "a fit to a value, ratio, change or curve point (one number to match)");
    if (f->bound != "about" || !std::isfinite(f->reported))
      throw ScenarioError(c.mark, "constant " + c.name + " is fitted to figure '" + c.fit + "', which gives only a bound",
                          "a fit to a figure with a reported value");
    if (!(f->reported > 0))
      throw ScenarioError(c.mark, "constant " + c.name + " is fitted to figure '" + c.fit + "', whose reported value is not positive",
                          "a fit to a positive figure (the search matches log(figure); a change of -100% or less has none)");
    if (const auto [it, fresh] = fitted_by.emplace(c.fit, c.name); !fresh)
      throw ScenarioError(c.mark, "constants " + it->second + " and " + c.name + " are both fitted to figure '" + c.fit + "'",
                          "one constant per fitted figure");
  }
}

Scenario load_from(const std::string& text, const std::string& file, const std::vector<std::string>& machine_dirs,
                   const std::vector<Setting>& settings, const RangeSample* sample) {
  Reader r(file);
  YAML::Node root = parse_yaml(text, file);
  expand_library(r, root, file);
  apply_settings(r, root, settings);
  r.find_ranges(root, "");
  r.set_sample(sample);
  if (!root || root.IsNull())
    throw ScenarioError({file, 1, 1}, "the scenario is empty", "a mapping with scenario, machine, workload, strategies");
  r.expect_map(root, "the scenario");
  r.only_keys(root, "the scenario",
              {"scenario", "description", "source", "level", "machine", "workload", "params", "variants", "strategies",
               "expect"});
  Scenario sc;
  sc.path = file;
  sc.text = text;
  sc.hash = hex64(sim::stable_hash(text));
  sc.name = r.name(r.require(root, "scenario", "the scenario"), "scenario name");
  if (root["description"]) sc.description = r.scalar(root["description"], "description");
  if (root["source"]) sc.source = r.scalar(root["source"], "source");
  if (const auto level = root["level"]) {
    sc.level = r.scalar(level, "level");
    if (std::find(std::begin(kLevels), std::end(kLevels), sc.level) == std::end(kLevels))
      r.fail(level, "unknown level '" + sc.level + "'",
             "hardware, locks or workload (the rung of the validation ladder the file's figures are on)");
  }

  const auto machine = r.require(root, "machine", "the scenario");
  sc.machine = load_machine_ref(r, machine, file, machine_dirs, sc.name + "-machine");
  sc.machine_name = sc.machine.name;

  sc.workload = parse_workload(r, r.require(root, "workload", "the scenario"), sc.machine);
  if (const auto params = root["params"]) {
    r.expect_map(params, "params");
    for (const auto& kv : params) sc.params[r.name(kv.first, "parameter name")] = parse_param(r, kv.second, kv.first.Scalar());
  }
  sc.variants = parse_variants(r, root, sc, machine_dirs);

  const auto strategies = r.require(root, "strategies", "the scenario");
  r.expect_map(strategies, "strategies");
  if (strategies.size() == 0) r.fail(strategies, "strategies is empty", "at least one strategy");
  if (strategies.size() > kMaxStrategies)
    r.fail(strategies, "the scenario has " + std::to_string(strategies.size()) + " strategies",
           "at most " + std::to_string(kMaxStrategies));
  for (const auto& kv : strategies) sc.strategies.push_back(parse_strategy(r, r.name(kv.first, "strategy name"), kv.second));
  resolve_extends(sc.strategies);
  for (const auto& s : sc.strategies)
    for (const auto& v : sc.variants) {
      const auto loops = v.workload.loops();
      const auto marks = v.workload.loop_marks();
      for (std::size_t i = 0; i < loops.size(); ++i)
        check_references(s, loops[i], marks[i], sc.params,
                         v.workload.roles.empty() ? "the workload loop" : "the loop of role '" + v.workload.roles[i].name + "'");
      check_seq_writers(s, v.workload);
      check_relax(s, v.machine);
      check_wake(s, v.machine);
      warn_numa_aware(s, v.machine, sc.warnings);
    }
  if (root["expect"]) sc.expect = parse_expect(r, root["expect"], sc);
  r.unique_keys_everywhere(root, "the scenario");
  r.finish_ranges();
  sc.ranges = r.ranges();
  std::sort(sc.ranges.begin(), sc.ranges.end(), [](const Range& a, const Range& b) { return a.name < b.name; });
  check_fits(sc);
  // A sample is read from its base's resolved text with drawn values, which
  // the text does not hold: sample_scenario gives it the base's.
  if (!sample) {
    sc.resolved_text = resolved_document(r, root, sc, file, machine_dirs);
    sc.resolved_hash = hex64(sim::stable_hash(sc.resolved_text));
  }
  return sc;
}

}  // namespace parse

// Only ScenarioError leaves the loader: an exception of yaml-cpp's own (an
// invalid node, a bad subscript) becomes one at its position.
static Scenario load_checked(const std::string& text, const std::string& file, const std::vector<std::string>& machine_dirs,
                             const std::vector<Setting>& settings, const RangeSample* sample = nullptr) {
  try {
    return parse::load_from(text, file, machine_dirs, settings, sample);
  } catch (const YAML::Exception& e) {
    throw ScenarioError({file, e.mark.line < 0 ? 0 : e.mark.line + 1, e.mark.line < 0 ? 0 : e.mark.column + 1},
                        "YAML error: " + e.msg, "valid YAML of the scenario format");
  }
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& machine_dirs,
                            const std::vector<Setting>& settings) {
  return load_checked(parse::read_file(path), path, machine_dirs, settings);
}

Scenario load_scenario_string(const std::string& text, const std::string& name,
                              const std::vector<std::string>& machine_dirs, const std::vector<Setting>& settings) {
  return load_checked(text, name, machine_dirs, settings);
}

Scenario sample_scenario(const Scenario& base, const RangeSample& sample) {
  Scenario sc = load_checked(base.resolved_text, base.path, {}, {}, &sample);
  // The scenario it is a sample of, as stored and matched by --resume.
  sc.text = base.text;
  sc.hash = base.hash;
  sc.resolved_text = base.resolved_text;
  sc.resolved_hash = base.resolved_hash;
  return sc;
}

}  // namespace vfssim::models
