// The scenario reader: one YAML document with positions, strict key
// checks and the value parsers every section shares (names, integers,
// booleans, times, time distributions, scopes, probabilities, numbers,
// parameters). Every error goes through Reader::fail with FILE:LINE:COL.
// Internal to models/scenario/: the public API is scenario.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "models/scenario/scenario.h"

namespace vfssim::models::parse {

// Reads one YAML document with positions; all checks go through here.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourceMark mark(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    // A node a Setting put in the document: its position is in the setting.
    for (auto o = origins_.rbegin(); o != origins_.rend(); ++o)
      if (within(o->node, n)) {
        if (m.line < 0) return {o->label, 1, o->column};
        return {o->label, m.line + 1, m.column + (m.line == 0 ? o->column : 1)};
      }
    if (m.line < 0) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
  }

  // `n` and what it holds came from `label` (a Setting), its text starting
  // at 1-based `column` of the label's line 1.
  void add_origin(const YAML::Node& n, std::string label, int column) {
    origins_.push_back({n, std::move(label), column});
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& problem, const std::string& expected) const {
    throw ScenarioError(mark(n), problem, expected);
  }

  void expect_map(const YAML::Node& n, const std::string& what) const {
    if (!n.IsMap()) fail(n, what + " is not a mapping", "a mapping of keys to values");
    unique_keys(n, what);
  }

  // YAML allows a key twice and keeps one silently; a scenario may not.
  void unique_keys(const YAML::Node& n, const std::string& what) const {
    std::set<std::string> seen;
    for (const auto& kv : n)
      if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
        fail(kv.first, "key '" + kv.first.Scalar() + "' appears twice in " + what, "each key once");
  }

  // Bounds the work of one load: YAML aliases can repeat a list of steps
  // exponentially often without making the file any longer.
  void count_step(const YAML::Node& n) const {
    if (++steps_ > kMaxSteps)
      fail(n, "the scenario has more than " + std::to_string(kMaxSteps) + " steps once YAML aliases are expanded",
           "fewer steps (use repeat: N for repetition)");
  }
  static constexpr std::size_t kMaxSteps = 100000;

  // Bounds the nesting of step lists (bodies inside bodies): a YAML alias
  // that contains itself nests forever, and deep nesting would overflow the
  // stack of the recursive parser and compiler.
  class Nesting {
   public:
    Nesting(const Reader& r, const YAML::Node& n) : r_(r) {
      if (++r_.depth_ > kMaxNesting)
        r_.fail(n, "steps nested more than " + std::to_string(kMaxNesting) +
                       " levels deep (a YAML alias that contains itself?)",
                "shallower steps (move inner steps into an op and call it)");
    }
    ~Nesting() { --r_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    const Reader& r_;
  };
  static constexpr int kMaxNesting = 64;

  // Fails on any key of `n` not in `allowed`.
  void only_keys(const YAML::Node& n, const std::string& what, std::initializer_list<const char*> allowed) const {
    only_keys(n, what, std::vector<const char*>(allowed));
  }
  void only_keys(const YAML::Node& n, const std::string& what, const std::vector<const char*>& allowed) const {
    unique_keys(n, what);
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(kv.first, "unknown key '" + k + "' in " + what, "one of: " + list);
      }
    }
  }

  YAML::Node require(const YAML::Node& parent, const char* key, const std::string& what) const {
    YAML::Node n = parent[key];
    if (!n) fail(parent, what + " has no '" + key + "'", "a '" + std::string(key) + "' key");
    return n;
  }

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, what + " is not a scalar", "a single value");
    return n.Scalar();
  }

  std::string name(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    if (s.empty()) fail(n, what + " is empty", "a name");
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') continue;
      // The whole character: a UTF-8 lead byte and its continuation bytes.
      std::size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) >> 6) == 0x2 && (static_cast<unsigned char>(c) & 0x80)) ++j;
      fail(n, what + " '" + s + "' has the character '" + s.substr(i, j - i) + "'",
           "a name of ASCII letters, digits, '_', '-' and '.'");
    }
    return s;
  }

  long long integer(const YAML::Node& n, const std::string& what, long long lo, long long hi) const {
    std::string s = scalar(n, what);
    long long v = 0;
    std::size_t used = 0;
    try {
      v = std::stoll(s, &used);
    } catch (...) {
      used = 0;
    }
    if (used != s.size() || s.empty()) fail(n, what + " '" + s + "' is not an integer", "an integer");
    if (v < lo || v > hi)
      fail(n, what + " " + s + " is out of range",
           "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& what) const {
    const std::string s = scalar(n, what);
    if (s == "true" || s == "yes") return true;
    if (s == "false" || s == "no") return false;
    fail(n, what + " '" + s + "' is not a boolean", "true or false");
  }

  Duration duration(const YAML::Node& n, const std::string& what, bool positive) const {
    Duration d = parse_duration(scalar(n, what), mark(n));
    if (positive && d <= Duration{0}) fail(n, what + " must be greater than zero", "a positive time such as 100ns");
    return d;
  }

  // "$name" names a workload parameter (checked against `params:` later).
  static bool is_param(const YAML::Node& n) { return n.IsScalar() && !n.Scalar().empty() && n.Scalar()[0] == '$'; }
  std::string param_name(const YAML::Node& n, const std::string& what) const {
    const std::string s = n.Scalar().substr(1);
    if (s.empty()) fail(n, what + " '$' names no parameter", "$NAME of a parameter declared under 'params:'");
    return s;
  }

  TimeDist time_dist(const YAML::Node& n, const std::string& what, bool positive) const {
    TimeDist t;
    if (is_param(n)) {
      t.param = param_name(n, what);
      return t;
    }
    if (n.IsScalar()) {
      t.a = duration(n, what, positive);
      return t;
    }
    expect_map(n, what);
    only_keys(n, what, {"exp", "uniform"});
    if (n.size() != 1) fail(n, what + " has " + std::to_string(n.size()) + " distributions", "exactly one of exp, uniform");
    if (n["exp"]) {
      t.kind = TimeDist::Kind::kExponential;
      if (is_param(n["exp"])) t.param = param_name(n["exp"], what + " mean");
      else t.a = duration(n["exp"], what + " mean", true);
    } else {
      const YAML::Node u = n["uniform"];
      if (!u.IsSequence() || u.size() != 2) fail(u, what + " uniform is not a pair", "[low, high] such as [100ns, 300ns]");
      t.kind = TimeDist::Kind::kUniform;
      t.a = duration(u[0], what + " low", false);
      t.b = duration(u[1], what + " high", true);
      if (t.b < t.a) fail(u, what + " uniform high is below low", "low <= high");
    }
    return t;
  }

  const std::string& file() const { return file_; }

 private:
  struct Origin {
    YAML::Node node;
    std::string label;
    int column = 1;
  };
  // Whether `n` is `root` or inside it (an alias that contains itself
  // stops at kMaxNesting levels).
  static bool within(const YAML::Node& root, const YAML::Node& n, int depth = 0) {
    if (!root.IsDefined() || !n.IsDefined() || depth > kMaxNesting) return false;
    if (root.is(n)) return true;
    if (root.IsMap()) {
      for (const auto& kv : root)
        if (within(kv.first, n, depth + 1) || within(kv.second, n, depth + 1)) return true;
    } else if (root.IsSequence()) {
      for (const auto& e : root)
        if (within(e, n, depth + 1)) return true;
    }
    return false;
  }

  std::string file_;
  std::vector<Origin> origins_;
  mutable std::size_t steps_ = 0;
  mutable int depth_ = 0;
};

Scope parse_scope(const Reader& r, const YAML::Node& n);
// A probability, or "$name" of a number parameter (returned in `param`).
double parse_probability(const Reader& r, const YAML::Node& n, const std::string& what, std::string& param);
// A number >= 0, or "$name" of a number parameter (checked when compiled).
NumberRef parse_number_ref(const Reader& r, const YAML::Node& n, const std::string& what);
// "25%" or 0.25.
double parse_fraction(const Reader& r, const YAML::Node& n, const std::string& what);
// A parameter's value: true/false, a number, or a time with a unit.
ParamValue parse_param(const Reader& r, const YAML::Node& n, const std::string& name);

std::string read_file(const std::string& path);
YAML::Node parse_yaml(const std::string& text, const std::string& file);

}  // namespace vfssim::models::parse
