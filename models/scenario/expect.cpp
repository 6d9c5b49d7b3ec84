// expect: the reported figures a scenario must predict (vfssim validate).
#include <array>
#include <limits>
#include <map>
#include <set>

#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace {

// "strategy@cpus" or "strategy/variant@cpus".
Expectation::PointRef parse_point_ref(const Reader& r, const YAML::Node& n, const Scenario& sc) {
  const std::string s = r.scalar(n, "point");
  const auto at = s.rfind('@');
  const std::string expected = "STRATEGY@CPUS or STRATEGY/VARIANT@CPUS, such as baseline@64";
  if (at == std::string::npos) r.fail(n, "point '" + s + "' has no '@CPUS'", expected);
  Expectation::PointRef p;
  std::string head = s.substr(0, at);
  const auto slash = head.find('/');
  if (slash != std::string::npos) {
    p.variant = head.substr(slash + 1);
    head = head.substr(0, slash);
  }
  p.strategy = head;
  try {
    std::size_t used = 0;
    p.cpus = std::stoi(s.substr(at + 1), &used);
    if (used != s.size() - at - 1) p.cpus = 0;
  } catch (...) {
    p.cpus = 0;
  }
  if (p.cpus < 1) r.fail(n, "point '" + s + "' has no CPU count after '@'", expected);
  if (!sc.has_strategy(p.strategy)) r.fail(n, "point '" + s + "' names strategy '" + p.strategy + "', which is not defined", "a strategy of this file");
  if (!sc.has_variant(p.variant)) r.fail(n, "point '" + s + "' names variant '" + p.variant + "', which is not defined", "a variant of this file");
  const Topology t(sc.variant(p.variant).machine);
  if (p.cpus > t.num_cpus())
    r.fail(n, "point '" + s + "' asks for more CPUs than the machine has (" + std::to_string(t.num_cpus()) + ")", "at most that many");
  return p;
}

// A CPU count of a curve: an integer key or list element.
int parse_cpus(const Reader& r, const YAML::Node& n, const std::string& what, const Topology& machine) {
  const auto c = r.integer(n, what, 1, Topology::kMaxCpus);
  if (c > machine.num_cpus())
    r.fail(n, what + " " + std::to_string(c) + " is more CPUs than the machine has (" +
                  std::to_string(machine.num_cpus()) + ")", "at most that many");
  return static_cast<int>(c);
}

// `{strategy: S, variant: V}` of a curve or peak: the curve's name.
Expectation::PointRef parse_curve_ref(const Reader& r, const YAML::Node& n, const Scenario& sc, const std::string& what,
                                      std::initializer_list<const char*> keys) {
  r.expect_map(n, what);
  r.only_keys(n, what, keys);
  Expectation::PointRef p;
  p.strategy = r.name(r.require(n, "strategy", what), "strategy");
  if (!sc.has_strategy(p.strategy))
    r.fail(n["strategy"], what + " names strategy '" + p.strategy + "', which is not defined", "a strategy of this file");
  if (n["variant"]) {
    p.variant = r.name(n["variant"], "variant");
    if (!sc.has_variant(p.variant))
      r.fail(n["variant"], what + " names variant '" + p.variant + "', which is not defined", "a variant of this file");
  }
  return p;
}

const char* const kMetrics = "ops_per_sec, us_per_op, speedup or share:CHAIN-PREFIX";

// A reported figure of `x`'s metric: a rate, speedup or time per op is above
// 0, and so is a ratio of two of them (a change above -100%); a share of the
// profile is from 0 to 1, and a ratio of two shares 0 or more.
double parse_reported(const Reader& r, const YAML::Node& n, const Expectation& x, const std::string& what) {
  const double v = parse_fraction(r, n, what);
  const bool share = x.metric.rfind("share:", 0) == 0;
  const bool ratio = x.kind == "ratio" || x.kind == "change";
  const double as_ratio = x.kind == "change" ? v + 1.0 : v;
  const std::string quoted = what + " '" + n.Scalar() + "' of figure '" + x.id + "' (" + x.metric + (ratio ? ", a ratio" : "") + ")";
  if (share && !ratio && !(v >= 0 && v <= 1))
    r.fail(n, quoted + " is not a share", "a share of the profile from 0 to 1 (or 0% to 100%)");
  if (share && ratio && !(as_ratio >= 0))
    r.fail(n, quoted + " makes a ratio of shares below 0", x.kind == "change" ? "a change of -100% or more" : "a ratio of 0 or more");
  if (!share && !(as_ratio > 0))
    r.fail(n, quoted + " is not positive",
           x.kind == "change" ? "a change above -100% (the new " + x.metric + " is above 0)"
                              : "a number above 0 (a rate, speedup or time per op is positive)");
  return v;
}


// value: {point: S@N}; reported: a number.
void parse_value_figure(const Reader& r, const YAML::Node& e, const YAML::Node& body, const YAML::Node& reported,
    const Scenario& sc, const std::string& what, Expectation& x, std::vector<Expectation>& out) {
  r.expect_map(body, what);
  r.only_keys(body, what, {"point"});
  x.new_point = parse_point_ref(r, r.require(body, "point", "value"), sc);
  x.reported = parse_reported(r, reported, x, "reported");
  (void)e;
  out.push_back(x);
}

// ratio or change: {new: S@N, base: S@N}; a change is kept as the ratio new/base.
void parse_ratio_figure(const Reader& r, const YAML::Node& e, const YAML::Node& body, const YAML::Node& reported,
    const Scenario& sc, const std::string& what, Expectation& x, std::vector<Expectation>& out) {
  r.expect_map(body, what);
  r.only_keys(body, what, {"new", "base"});
  x.new_point = parse_point_ref(r, r.require(body, "new", x.kind), sc);
  x.base_point = parse_point_ref(r, r.require(body, "base", x.kind), sc);
  x.reported = parse_reported(r, reported, x, "reported");
  if (x.kind == "change") x.reported += 1.0;  // kept as the ratio new/base
  (void)e;
  out.push_back(x);
}

// The statistics a spread may report (Expectation::stat), and what each takes.
struct SpreadStat {
  const char* name;
  bool pair;     // reported [FASTEST, SLOWEST] (min_max) rather than one number
  bool metric;   // takes metric: ops_per_sec | us_per_op (else it has none of its own)
  bool latency;  // a per-op latency in microseconds
};
constexpr SpreadStat kSpreadStats[] = {
    {"min_max", true, true, false},      {"median", false, true, false},     {"fairness", false, false, false},
    {"jain", false, false, false},       {"p50_latency", false, false, true}, {"p99_latency", false, false, true},
    {"p999_latency", false, false, true}, {"max_latency", false, false, true}};
const char* const kSpreadStatNames =
    "min_max (default), median, fairness, jain, p50_latency, p99_latency, p999_latency or max_latency";

// spread: {point: S@N}; stat: (above); reported: [FASTEST, SLOWEST] task
// for min_max, else one number.
void parse_spread_figure(const Reader& r, const YAML::Node& e, const YAML::Node& body, const YAML::Node& reported,
    const Scenario& sc, const std::string& what, Expectation& x, std::vector<Expectation>& out) {
  r.expect_map(body, what);
  r.only_keys(body, what, {"point", "role"});
  x.new_point = parse_point_ref(r, r.require(body, "point", "spread"), sc);
  if (const auto role = body["role"]) {
    x.role = r.name(role, "role");
    const Workload& w = sc.variant(x.new_point.variant).workload;
    std::string names;
    for (const auto& ro : w.roles) names += (names.empty() ? "" : ", ") + ro.name;
    if (std::none_of(w.roles.begin(), w.roles.end(), [&](const Role& ro) { return ro.name == x.role; }))
      r.fail(role, "the workload of point " + x.new_point.strategy + "/" + x.new_point.variant + " has no role '" + x.role + "'",
             names.empty() ? "a workload with roles (workload: roles:)" : "one of its roles: " + names);
  }
  const SpreadStat* stat = &kSpreadStats[0];
  if (e["stat"]) {
    x.stat = r.scalar(e["stat"], "stat");
    stat = nullptr;
    for (const auto& s : kSpreadStats)
      if (x.stat == s.name) stat = &s;
    if (!stat) r.fail(e["stat"], "unknown spread stat '" + x.stat + "'", kSpreadStatNames);
  }
  if (!stat->metric && e["metric"])
    r.fail(e["metric"], "a " + x.stat + " spread takes no metric (" +
                            (stat->latency ? "it is a per-op latency in microseconds" : "it is a ratio of per-task rates") + ")",
           "no metric: key, or stat: min_max or median");
  if (stat->latency && !x.role.empty())
    r.fail(e["stat"], "a per-op latency is of the whole point, not of role '" + x.role + "'",
           "a role's min_max, median, fairness or jain, or the latency without role:");
  if (stat->latency) x.metric = "us_per_op";  // how the figure's values read: microseconds
  if (stat->pair && e["bound"])
    r.fail(e["bound"], "a min_max spread takes no bound", "a bound on a spread of one number (stat: median, fairness, ...)");
  if (!stat->pair) {
    if (reported.IsSequence())
      r.fail(reported, "a " + x.stat + " spread reports one number, not a list",
             stat->latency ? "microseconds, such as 40" : "a number, such as 1.5");
    x.reported = parse_fraction(r, reported, "reported");
    if (x.reported <= 0) r.fail(reported, "a spread's value must be positive", "a positive number");
    if (x.stat == "fairness" && x.reported < 1)
      r.fail(reported, "fairness is the fastest task's rate over the slowest's: at least 1", "a number >= 1");
    if (x.stat == "jain" && x.reported > 1)
      r.fail(reported, "Jain's index is at most 1 (1: every task as fast)", "a number in (0, 1]");
    out.push_back(x);
    return;
  }
  if (!reported.IsSequence() || reported.size() != 2)
    r.fail(reported, "the reported spread is not a pair", "[FASTEST, SLOWEST], such as [30, 180] (us_per_op)");
  x.reported = parse_fraction(r, reported[0], "reported fastest");
  x.reported_high = parse_fraction(r, reported[1], "reported slowest");
  if (x.reported <= 0 || x.reported_high <= 0) r.fail(reported, "a spread's ends must be positive", "two positive numbers");
  const bool latency = x.metric == "us_per_op";
  if (latency ? x.reported > x.reported_high : x.reported < x.reported_high)
    r.fail(reported, std::string("the fastest task comes first: ") + (latency ? "a lower" : "a higher") + " " +
                         x.metric + " than the slowest",
           "[FASTEST, SLOWEST]");
  out.push_back(x);
}

// peak: {strategy, variant, cpus: [...]}; reported: {cpus, value}.
void parse_peak_figure(const Reader& r, const YAML::Node& e, const YAML::Node& body, const YAML::Node& reported,
    const Scenario& sc, const std::string& what, Expectation& x, std::vector<Expectation>& out) {
  x.new_point = parse_curve_ref(r, body, sc, what, {"strategy", "variant", "cpus"});
  const Topology machine(sc.variant(x.new_point.variant).machine);
  const YAML::Node cpus = r.require(body, "cpus", what);
  if (!cpus.IsSequence() || cpus.size() < 3)
    r.fail(cpus, "a peak searches a curve of at least 3 CPU counts", "a list such as [1, 2, 4, 8, 16]");
  for (const auto& c : cpus) {
    const int v = parse_cpus(r, c, "CPU count", machine);
    if (!x.peak_cpus.empty() && v <= x.peak_cpus.back())
      r.fail(c, "the CPU counts of a peak must increase", "increasing CPU counts");
    x.peak_cpus.push_back(v);
  }
  r.expect_map(reported, "the reported peak");
  r.only_keys(reported, "the reported peak", {"cpus", "value"});
  x.new_point.cpus = parse_cpus(r, r.require(reported, "cpus", "the reported peak"), "peak CPU count", machine);
  x.reported = reported["value"] ? parse_reported(r, reported["value"], x, "peak value")
                                 : std::numeric_limits<double>::quiet_NaN();
  (void)e;
  out.push_back(x);
}

// curve: {strategy, variant}; reported: {CPUS: VALUE}, one value figure per point (fitted_at: the fitted one).
void parse_curve_figure(const Reader& r, const YAML::Node& e, const YAML::Node& body, const YAML::Node& reported,
    const Scenario& sc, const std::string& what, Expectation& x, std::vector<Expectation>& out) {
  const Expectation::PointRef curve = parse_curve_ref(r, body, sc, what, {"strategy", "variant"});
  const Topology machine(sc.variant(curve.variant).machine);
  if (!reported.IsMap() || reported.size() == 0)
    r.fail(reported, "a curve's reported figures are not a mapping", "CPUS: VALUE pairs, such as {2: 1.1e6, 48: 3e4}");
  r.unique_keys(reported, "the reported curve");
  int fitted_at = 0;
  if (e["fitted_at"]) {
    fitted_at = parse_cpus(r, e["fitted_at"], "fitted_at", machine);
    if (!reported[e["fitted_at"].Scalar()])
      r.fail(e["fitted_at"], "fitted_at " + std::to_string(fitted_at) + " is not a point of the curve",
             "one of the curve's CPU counts");
  }
  int last = 0;
  for (const auto& kv : reported) {
    Expectation p = x;
    p.kind = "value";
    p.curve = x.id;
    p.new_point = curve;
    p.new_point.cpus = parse_cpus(r, kv.first, "CPU count", machine);
    if (p.new_point.cpus <= last) r.fail(kv.first, "the CPU counts of a curve must increase", "increasing CPU counts");
    last = p.new_point.cpus;
    p.id = x.id + "@" + std::to_string(p.new_point.cpus);
    p.reported = parse_reported(r, kv.second, p, "reported");
    p.fitted = p.new_point.cpus == fitted_at;
    p.mark = r.mark(kv.first);
    out.push_back(std::move(p));
  }
}

struct FigureKind {
  const char* name;
  // (reader, the entry, its kind's body, its reported value, the scenario, a name for
  // messages, the figure read so far, the figures it becomes)
  void (*parse)(const Reader&, const YAML::Node&, const YAML::Node&, const YAML::Node&, const Scenario&,
                const std::string&, Expectation&, std::vector<Expectation>&);
};

// Every figure kind an `expect:` entry may have, exactly one per entry.
const FigureKind kFigureKinds[] = {{"ratio", parse_ratio_figure},   {"change", parse_ratio_figure},
                                   {"value", parse_value_figure},   {"curve", parse_curve_figure},
                                   {"peak", parse_peak_figure},     {"spread", parse_spread_figure}};
}  // namespace

std::vector<Expectation> parse_expect(const Reader& r, const YAML::Node& n, const Scenario& sc) {
  if (!n.IsSequence()) r.fail(n, "expect is not a list", "a list of reported figures");
  std::vector<Expectation> out;
  std::set<std::string> ids;
  auto add = [&](Expectation x, const SourceMark& at) {
    if (!ids.insert(x.id).second) throw ScenarioError(at, "figure '" + x.id + "' appears twice", "a unique id per figure");
    out.push_back(std::move(x));
  };
  for (const auto& e : n) {
    r.expect_map(e, "an expected figure");
    r.only_keys(e, "an expected figure",
                {"figure", "ratio", "change", "value", "curve", "peak", "spread", "metric", "stat", "reported", "bound",
                 "tolerance", "fitted", "fitted_at", "source"});
    Expectation x;
    x.mark = r.mark(e);
    x.id = r.name(r.require(e, "figure", "an expected figure"), "figure id");
    int kinds = 0;
    const FigureKind* kind = nullptr;
    for (const auto& k : kFigureKinds)
      if (e[k.name]) {
        ++kinds;
        x.kind = k.name;
        kind = &k;
      }
    if (kinds != 1)
      r.fail(e, "figure '" + x.id + "' says " + std::to_string(kinds) + " of ratio/change/value/curve/peak/spread",
             "exactly one of them");
    const std::string what = x.kind + " of figure '" + x.id + "'";
    const YAML::Node body = e[x.kind];
    if (e["metric"]) {
      x.metric = r.scalar(e["metric"], "metric");
      if (x.metric != "ops_per_sec" && x.metric != "us_per_op" && x.metric != "speedup" &&
          x.metric.rfind("share:", 0) != 0)
        r.fail(e["metric"], "unknown metric '" + x.metric + "'", kMetrics);
      if (x.kind == "spread" && x.metric != "ops_per_sec" && x.metric != "us_per_op")
        r.fail(e["metric"], "a spread's metric is per task: '" + x.metric + "' is not", "ops_per_sec or us_per_op");
    }
    if (e["bound"]) {
      x.bound = r.scalar(e["bound"], "bound");
      if (x.bound != "about" && x.bound != "at_least" && x.bound != "at_most")
        r.fail(e["bound"], "unknown bound '" + x.bound + "'", "about, at_least or at_most");
      if (x.kind == "peak")  // a spread's own rules: parse_spread_figure
        r.fail(e["bound"], "a " + x.kind + " takes no bound", "a bound on a value, ratio, change, curve or spread");
    }
    x.tolerance = parse_fraction(r, r.require(e, "tolerance", "figure '" + x.id + "'"), "tolerance");
    if (x.tolerance <= 0) r.fail(e["tolerance"], "tolerance must be positive", "a tolerance such as 25%");
    if (e["fitted"]) {
      if (x.kind == "curve")
        r.fail(e["fitted"], "a curve marks its fitted point with fitted_at: CPUS", "fitted_at: CPUS");
      x.fitted = r.boolean(e["fitted"], "fitted");
    }
    if (e["stat"] && x.kind != "spread")
      r.fail(e["stat"], "stat is for spread figures", std::string("a spread's statistic: ") + kSpreadStatNames);
    if (e["fitted_at"] && x.kind != "curve")
      r.fail(e["fitted_at"], "fitted_at is for curves", "fitted: true on a " + x.kind);
    x.source = r.scalar(r.require(e, "source", "figure '" + x.id + "'"), "source");
    const YAML::Node reported = r.require(e, "reported", "figure '" + x.id + "'");
    std::vector<Expectation> figures;
    kind->parse(r, e, body, reported, sc, what, x, figures);
    for (auto& f : figures) {
      const SourceMark at = f.curve.empty() ? r.mark(e["figure"]) : f.mark;  // a curve's point: its CPU count
      add(std::move(f), at);
    }
  }
  // One fitted figure per curve (strategy and variant): a second constant
  // fitted to the same configuration would turn its figures into restatements.
  std::map<std::pair<std::string, std::string>, const Expectation*> fits;
  for (const auto& x : out) {
    if (!x.fitted) continue;
    const auto [it, fresh] = fits.try_emplace({x.new_point.strategy, x.new_point.variant}, &x);
    if (!fresh)
      throw ScenarioError(x.mark,
                          "figure '" + x.id + "' is a second fitted figure of " + x.new_point.strategy + "/" +
                              x.new_point.variant + " (figure '" + it->second->id + "' is fitted already)",
                          "at most one fitted figure per strategy and variant");
  }
  return out;
}
}  // namespace vfssim::models::parse
