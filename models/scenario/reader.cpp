#include "models/scenario/reader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace vfssim::models {

Duration parse_duration(const std::string& text, const SourceMark& mark) {
  static const std::pair<const char*, std::int64_t> units[] = {
      {"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"µs", 1000000}, {"ms", 1000000000}, {"s", 1000000000000}};
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number = text.substr(0, i);
  const std::string unit = text.substr(i);
  const std::string expected = "a time with a unit, such as 120ns, 2.5us, 4ms (units: ps, ns, us, ms, s)";
  if (!text.empty() && text[0] == '-') throw ScenarioError(mark, "time '" + text + "' is negative", "a time of zero or more, such as 100ns");
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1 || number == ".")
    throw ScenarioError(mark, "'" + text + "' is not a time", expected);
  std::int64_t scale = 0;
  for (const auto& [u, f] : units)
    if (unit == u) scale = f;
  if (unit.empty()) throw ScenarioError(mark, "time '" + text + "' has no unit", expected);
  if (scale == 0) throw ScenarioError(mark, "time '" + text + "' has an unknown unit '" + unit + "'", expected);
  // Exact decimal arithmetic: integer part and fraction in picoseconds.
  const auto dot = number.find('.');
  const std::string ip = number.substr(0, dot);
  std::string fp = dot == std::string::npos ? "" : number.substr(dot + 1);
  const std::size_t first_digit = ip.find_first_not_of('0');  // 0001ns is 1ns
  const std::string ip_digits = first_digit == std::string::npos ? "" : ip.substr(first_digit);
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  // A day of simulated time at most: an exponential draw (up to ~37 times
  // its mean) then still fits the int64 picosecond clock.
  const std::string too_large = "at most 86400s (a day) of simulated time";
  if (ip_digits.size() > 15) throw ScenarioError(mark, "time '" + text + "' is too large", too_large);
  if (fp.size() > 12) throw ScenarioError(mark, "time '" + text + "' is finer than a picosecond", "a whole number of picoseconds");
  __int128 v = (ip_digits.empty() ? 0 : std::stoll(ip_digits)) * static_cast<__int128>(scale);
  __int128 denom = 1;
  __int128 frac = 0;
  for (char c : fp) {
    if (denom > static_cast<__int128>(1e18)) break;
    frac = frac * 10 + (c - '0');
    denom *= 10;
  }
  __int128 fpart = frac * scale;
  if (fpart % denom != 0) throw ScenarioError(mark, "time '" + text + "' is finer than a picosecond", "a whole number of picoseconds");
  v += fpart / denom;
  if (v > static_cast<__int128>(86400) * 1000000000000LL) throw ScenarioError(mark, "time '" + text + "' is too large", too_large);
  return Duration{static_cast<std::int64_t>(v)};
}

namespace parse {

Scope parse_scope(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "scope");
  if (s == "global") return Scope::kGlobal;
  if (s == "node") return Scope::kNode;
  if (s == "cpu") return Scope::kCpu;
  if (s == "process") return Scope::kProcess;
  if (s == "task") return Scope::kTask;
  if (s == "object") return Scope::kObject;
  r.fail(n, "unknown scope '" + s + "'", "one of: global, node, cpu, process, task, object");
}


namespace {

// `s` as a number when all of it is one (std::stod reads a prefix).
std::optional<double> whole_number(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (s.empty() || used != s.size()) return std::nullopt;
  return v;
}

}  // namespace

double parse_probability(const Reader& r, const YAML::Node& n, const std::string& what, std::string& param) {
  if (r.site(n))
    return r.ranged<double>(n, what, [&](const YAML::Node& x) { return parse_probability(r, x, what, param); });
  if (Reader::is_param(n)) {
    param = r.param_name(n, what);
    return 0;
  }
  const std::string p = r.scalar(n, what);
  const std::optional<double> v = whole_number(p);
  if (!v || !(*v >= 0.0 && *v <= 1.0))
    r.fail(n, what + " '" + p + "' is not a number from 0 to 1", "a probability such as 0.25");
  return *v;
}

NumberRef parse_number_ref(const Reader& r, const YAML::Node& n, const std::string& what) {
  if (r.site(n)) return r.ranged<NumberRef>(n, what, [&](const YAML::Node& x) { return parse_number_ref(r, x, what); });
  NumberRef v;
  if (Reader::is_param(n)) {
    v.param = r.param_name(n, what);
    return v;
  }
  const std::string t = r.scalar(n, what);
  const std::optional<double> x = whole_number(t);
  if (!x || !std::isfinite(*x) || *x < 0)
    r.fail(n, what + " '" + t + "' is not a number >= 0", "a number such as 1024, or $NAME of a number parameter");
  v.value = *x;
  return v;
}

double parse_fraction(const Reader& r, const YAML::Node& n, const std::string& what) {
  if (r.site(n)) return r.ranged<double>(n, what, [&](const YAML::Node& x) { return parse_fraction(r, x, what); });
  std::string s = r.scalar(n, what);
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    s.pop_back();
    scale = 0.01;
  }
  const std::optional<double> v = whole_number(s);
  if (!v || !std::isfinite(*v))
    r.fail(n, what + " '" + n.Scalar() + "' is not a number", "a number or a percentage such as 25%");
  return *v * scale;
}

ObjectSet parse_objects(const Reader& r, const YAML::Node& decl, Scope scope, const std::string& what) {
  ObjectSet o;
  if (scope != Scope::kObject) {
    // Whole quoted keys: GCC 12 warns (-Wrestrict, falsely) on "'" + std::string(k).
    for (const auto& [k, quoted] : {std::pair{"objects", "'objects'"}, std::pair{"pick", "'pick'"}})
      if (const auto v = decl[k])
        r.fail(v, std::string(quoted) + " on " + what + ", whose scope is not object",
               std::string("'scope: object' with 'objects' and 'pick', or no ") + quoted);
    return o;
  }
  const auto n = r.require(decl, "objects", what + " (scope: object)");
  if (r.site(n))  // a count shapes the program: no value between two counts is one (as Reader::integer)
    r.fail(n, "objects of " + what + " has a range, and is a count", "a whole number of objects, or $PARAM (counts are not sampled)");
  o.objects = parse_number_ref(r, n, "objects of " + what);
  if (o.objects.param.empty() && (o.objects.value < 1 || o.objects.value > kMaxObjects || o.objects.value != std::floor(o.objects.value)))
    r.fail(n, "objects of " + what + " '" + n.Scalar() + "' is not a whole number from 1 to " + std::to_string(kMaxObjects),
           "the number of objects in the set, or $PARAM");
  const auto p = r.require(decl, "pick", what + " (scope: object)");
  const std::string pick = r.scalar(p, "pick");
  if (pick == "task") o.pick = ObjectSet::Pick::kTask;
  else if (pick == "uniform") o.pick = ObjectSet::Pick::kUniform;
  else if (pick == "round_robin") o.pick = ObjectSet::Pick::kRoundRobin;
  else if (pick.rfind("zipf(", 0) == 0 && pick.size() > 6 && pick.back() == ')') {
    o.pick = ObjectSet::Pick::kZipf;
    const std::optional<double> sv = whole_number(pick.substr(5, pick.size() - 6));
    if (!sv || !std::isfinite(*sv) || *sv <= 0 || *sv > 100)
      r.fail(p, "pick '" + pick + "' of " + what + " has no exponent above 0", "zipf(S) with 0 < S <= 100, such as zipf(1.1)");
    o.zipf_s = *sv;
  } else {
    r.fail(p, "unknown pick '" + pick + "' of " + what, "one of: task, uniform, zipf(S), round_robin");
  }
  return o;
}

ParamValue parse_param(const Reader& r, const YAML::Node& n, const std::string& name) {
  if (r.site(n))
    return r.ranged<ParamValue>(n, "parameter '" + name + "'", [&](const YAML::Node& x) { return parse_param(r, x, name); });
  ParamValue v;
  const std::string s = r.scalar(n, "parameter '" + name + "'");
  if (s == "true" || s == "false") {
    v.type = ParamValue::Type::kBool;
    v.flag = s == "true";
    return v;
  }
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) {
    if (!std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '.')  // a word, not a time
      r.fail(n, "parameter '" + name + "' is '" + s + "'", "true/false, a number, or a time with a unit");
    v.type = ParamValue::Type::kTime;
    v.time = r.duration(n, "parameter '" + name + "'", false);
    return v;
  }
  const std::optional<double> x = whole_number(s);
  if (!x) r.fail(n, "parameter '" + name + "' is '" + s + "'", "true/false, a number, or a time with a unit");
  v.number = *x;
  v.type = ParamValue::Type::kNumber;
  return v;
}

// --- Ranges ---

namespace {

// Whether a mapping or list is visited for the first time: a YAML alias is
// the same node at another path, visited once (an alias chain can
// otherwise make exponentially many paths).
bool first_visit(NodeIndex& seen, const YAML::Node& n) {
  if (!n.IsMap() && !n.IsSequence()) return true;
  return seen.insert(n, 0);
}

// A sequence element named by its `name:` (a machine level), else by its index.
std::string element_name(const YAML::Node& e, std::size_t i) {
  if (e.IsMap() && e["name"] && e["name"].IsScalar()) return e["name"].Scalar();
  return std::to_string(i);
}

bool is_shorthand(const std::string& s) {
  return s.find("\u00b1") != std::string::npos || s.find("+-") != std::string::npos;
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool find_path(const YAML::Node& at, const YAML::Node& n, const std::string& path, NodeIndex& seen, std::string& out) {
  if (at.is(n)) {
    out = path;
    return true;
  }
  if (!first_visit(seen, at)) return false;
  if (at.IsMap()) {
    for (const auto& kv : at)
      if (kv.first.IsScalar() && find_path(kv.second, n, join(path, kv.first.Scalar()), seen, out)) return true;
  } else if (at.IsSequence()) {
    for (std::size_t i = 0; i < at.size(); ++i)
      if (find_path(at[i], n, join(path, element_name(at[i], i)), seen, out)) return true;
  }
  return false;
}

}  // namespace

void Reader::unique_keys_everywhere(const YAML::Node& root, const std::string& what) const {
  NodeIndex seen;
  const auto walk = [&](const auto& self, const YAML::Node& n, const std::string& path, int depth) -> void {
    if (!n.IsDefined() || depth > 4 * kMaxNesting || !first_visit(seen, n)) return;
    if (n.IsMap()) {
      unique_keys(n, path.empty() ? what : path);
      for (const auto& kv : n)
        if (kv.first.IsScalar()) self(self, kv.second, join(path, kv.first.Scalar()), depth + 1);
    } else if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) self(self, n[i], join(path, element_name(n[i], i)), depth + 1);
    }
  };
  walk(walk, root, "", 0);
}

void Reader::find_ranges(const YAML::Node& root, const std::string& prefix) {
  root_ = root;
  NodeIndex seen;
  collect(root, prefix, 0, seen);
}

// A range once, whatever number of aliases name it: an alias is the same constant.
void Reader::add_site(const YAML::Node& n, const std::string& path) {
  if (site_index_.insert(n, static_cast<long>(sites_.size()))) sites_.push_back(Site{n, path, false, "", ""});
}

void Reader::collect(const YAML::Node& n, const std::string& path, int depth, NodeIndex& seen) {
  if (!n.IsDefined() || depth > 4 * kMaxNesting || !first_visit(seen, n)) return;
  if (n.IsMap()) {
    if (n["estimate"]) {
      add_site(n, path);
      return;
    }
    for (const auto& kv : n)
      if (kv.first.IsScalar()) collect(kv.second, join(path, kv.first.Scalar()), depth + 1, seen);
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) collect(n[i], join(path, element_name(n[i], i)), depth + 1, seen);
  } else if (n.IsScalar() && is_shorthand(n.Scalar())) {
    add_site(n, path);
  }
}

std::string Reader::path_of(const YAML::Node& n) const {
  NodeIndex seen;
  std::string out;
  find_path(root_, n, "", seen, out);
  return out;
}

void Reader::add_file(const YAML::Node& root, const std::string& path) {
  const long label = static_cast<long>(file_origins_.size());
  file_origins_.push_back({YAML::Node(), path, 0, {}});
  NodeIndex seen;
  const auto walk = [&](const auto& self, const YAML::Node& n, int depth) -> void {
    if (!n.IsDefined() || depth > 4 * kMaxNesting || !origin_index_.insert(n, label)) return;
    if (n.IsMap()) {
      for (const auto& kv : n) {
        origin_index_.insert(kv.first, label);
        self(self, kv.second, depth + 1);
      }
    } else if (n.IsSequence()) {
      for (const auto& e : n) self(self, e, depth + 1);
    }
  };
  walk(walk, root, 0);
}

Reader::RangeParts Reader::range_parts(const Site& s, const std::string& what) const {
  RangeParts p;
  p.name = s.path;
  if (const long i = range_names_.find(s.node); i >= 0) {  // a library value: its own name, wherever it is used
    p.name = range_name_list_[static_cast<std::size_t>(i)].first;
    p.why = range_name_list_[static_cast<std::size_t>(i)].second;
  }
  if (s.path == "expect" || s.path.rfind("expect.", 0) == 0)
    fail(s.node, what + " in expect: has a range", "a reported figure as the source gives it (ranges go on the model's constants)");
  if (s.node.IsMap()) {
    only_keys(s.node, "the range of " + what, {"estimate", "range", "why", "name", "fit"});
    p.estimate = s.node["estimate"];
    const YAML::Node range = require(s.node, "range", "the range of " + what);
    if (!range.IsSequence() || range.size() != 2)
      fail(range, "the range of " + what + " is not a pair", "[LOW, HIGH] such as [60ns, 170ns]");
    p.lo = range[0];
    p.hi = range[1];
    if (s.node["why"]) p.why = scalar(s.node["why"], "why");
    if (s.node["name"]) p.name = name(s.node["name"], "range name");
    if (s.node["fit"]) {
      const std::string& at = s.path;  // machine..., or variants.V.machine...
      // Machine constants are measurements: they may be fitted on the
      // ladder's hardware rung only (a microbenchmark of the machine),
      // never to a lock or workload figure.
      const bool machine_constant =
          at == "machine" || at.rfind("machine.", 0) == 0 || at.find(".machine.") != std::string::npos;
      const YAML::Node level = root_.IsMap() ? root_["level"] : YAML::Node();
      const std::string rung = level && level.IsScalar() ? level.Scalar() : "workload";
      if (machine_constant && rung != "hardware")
        fail(s.node["fit"], "a machine constant is fitted (fit: " + s.node["fit"].Scalar() + ") in a file of level '" +
                                rung + "'",
             "machine constants fitted only on the hardware rung (level: hardware, a microbenchmark of the machine, "
             "scenarios/validation/hardware/); fit a code-path constant here");
      p.fit = scalar(s.node["fit"], "fitted figure id");  // a curve point is CURVE@CPUS
    }
  } else {
    const std::string text = s.node.Scalar();
    std::size_t at = text.find("\u00b1"), len = std::string("\u00b1").size();
    if (at == std::string::npos) at = text.find("+-"), len = 2;
    const std::string e = trim(text.substr(0, at)), d = trim(text.substr(at + len));
    if (e.empty() || d.empty())
      fail(s.node, what + " '" + text + "' is not an estimate and its spread", "ESTIMATE ± SPREAD such as 90ns ± 30ns");
    p.estimate = YAML::Node(e);
    p.delta = YAML::Node(d);
    p.shorthand = true;
  }
  for (const YAML::Node& x : {p.estimate, p.lo, p.hi, p.delta})
    if (is_param(x)) fail(s.node, "the range of " + what + " names a parameter", "numbers in a range");
  return p;
}

void Reader::record(const Site& s, Range r) const {
  s.name = r.name;
  if (const auto it = range_at_.find(r.name); it != range_at_.end()) {
    const Range& have = ranges_[it->second];
    if (have.time != r.time || have.estimate != r.estimate || have.lo != r.lo || have.hi != r.hi || have.fit != r.fit)
      throw ScenarioError(r.mark, "two ranges are named '" + r.name + "' and differ",
                          "the same estimate and range wherever a name repeats (one constant)");
    return;
  }
  range_at_.emplace(r.name, ranges_.size());
  ranges_.push_back(std::move(r));
}

void Reader::adopt_ranges(const Reader& other) const {
  for (const auto& r : other.ranges_) record(Site{}, r);
}

void Reader::finish_ranges() {
  for (auto& s : sites_) {
    if (!s.used) {
      if (s.node.IsMap()) fail(s.node, "a range on a field that is not a time or a number", "a range only on a time or a number");
      continue;
    }
    YAML::Node node = s.node;
    if (!s.sampled.empty()) {
      node = YAML::Node(s.sampled);
      continue;
    }
    const Range* r = &ranges_[range_at_.at(s.name)];
    if (s.node.IsMap()) {
      if (!s.node["name"]) node["name"] = s.name;
      continue;
    }
    // The shorthand as the mapping form: its bounds in picoseconds or as numbers.
    auto text = [&](double v) {
      char buf[40];
      if (r->time) return std::to_string(std::llround(v)) + "ps";
      std::snprintf(buf, sizeof buf, "%.17g", v);
      return std::string(buf);
    };
    YAML::Node m(YAML::NodeType::Map);
    m["estimate"] = text(r->estimate);
    YAML::Node range(YAML::NodeType::Sequence);
    range.push_back(text(r->lo));
    range.push_back(text(r->hi));
    range.SetStyle(YAML::EmitterStyle::Flow);
    m["range"] = range;
    m["name"] = s.name;
    if (!r->why.empty()) m["why"] = r->why;
    node = m;
  }
}

// A scenario or machine file: a regular file (a FIFO would block, a device
// never end) of at most kMaxFileBytes.
std::string read_file(const std::string& path) {
  constexpr std::uintmax_t kMaxFileBytes = 4 << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw ScenarioError({path, 0, 0}, "cannot open the file", "a readable file");
  if (!std::filesystem::is_regular_file(status))
    throw ScenarioError({path, 0, 0}, "not a regular file (a directory, FIFO or device)", "a scenario file");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes)
    throw ScenarioError({path, 0, 0}, "the file has " + std::to_string(size) + " bytes",
                        "at most " + std::to_string(kMaxFileBytes) + " bytes (4 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError({path, 0, 0}, "cannot open the file", "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// Parser events, of which only where the document starts is kept.
struct DocumentStart : YAML::EventHandler {
  YAML::Mark mark;
  void OnDocumentStart(const YAML::Mark& m) override { mark = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    YAML::Node root = YAML::Load(text);
    // One document: a second one (after '---') would be ignored silently.
    // Asked of the parser for two documents at most: yaml-cpp 0.7's LoadAll
    // never returns on some inputs (found by fuzz_run).
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStart first, second;
    if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second))
      throw ScenarioError({file, second.mark.line + 1, second.mark.column + 1}, "the file holds a second YAML document",
                          "one document (no second '---')");
    return root;
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's message is only "bad file"
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1},
                        "YAML nesting deeper than " + std::to_string(e.depth() - 1) + " levels",
                        "a shallower file (flatten the steps into ops and calls)");
  } catch (const YAML::ParserException& e) {
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg, "valid YAML");
  }
}

}  // namespace parse
}  // namespace vfssim::models
