// The scenario reader: one YAML document with positions, strict key
// checks and the value parsers every section shares (names, integers,
// booleans, times, time distributions, scopes, probabilities, numbers,
// parameters). Every error goes through Reader::fail with FILE:LINE:COL.
// Internal to models/scenario/: the public API is scenario.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/scenario/scenario.h"

namespace vfssim::models::parse {

// Nodes by identity (YAML::Node::is), looked up by their offset in the text
// first: a YAML alias is the same node at another path, and a node a
// setting made has an offset in the setting's text, which a node of the
// file may share (an offset alone would take one for the other).
class NodeIndex {
 public:
  // The number stored for `n`, or -1.
  long find(const YAML::Node& n) const {
    const auto it = at_.find(n.Mark().pos);
    if (it != at_.end())
      for (const auto& [node, i] : it->second)
        if (node.is(n)) return i;
    return -1;
  }
  // Stores `i` for `n`; false, storing nothing, if `n` is there already.
  bool insert(const YAML::Node& n, long i) {
    if (find(n) >= 0) return false;
    at_[n.Mark().pos].emplace_back(n, i);
    return true;
  }

 private:
  std::unordered_map<int, std::vector<std::pair<YAML::Node, long>>> at_;
};

// Reads one YAML document with positions; all checks go through here.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourceMark mark(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    // A node of a library file (a kernel version, a benchmark), or one the
    // expansion made in place of such a node: its position there.
    if (const long i = origin_index_.find(n); i >= 0) {
      const Origin& o = file_origins_[static_cast<std::size_t>(i)];
      if (o.fixed.line > 0 || m.line < 0) return o.fixed.line > 0 ? o.fixed : SourceMark{o.label, 0, 0};
      return {o.label, m.line + 1, m.column + 1};
    }
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
    origins_.push_back({n, std::move(label), column, {}});
  }
  // Every node of `root`, a document read from the file `path` (a library
  // version, a benchmark), is placed in that file by mark().
  void add_file(const YAML::Node& root, const std::string& path);
  // A new empty mapping or sequence for the loader to fill (a patched op, a
  // specialized step). yaml-cpp keeps the nodes of a document in one pool
  // (detail::memory), and putting a node under a node of another pool copies
  // the child's whole pool into the parent's (memory_holder::merge). A bare
  // YAML::Node(Map) has a pool of its own, so its first child from the
  // library's document copied the document: once per made node, quadratic in
  // the library (3-6 s to load a seed). A node from here joins made_pool_
  // first, the cheap way round (the pool takes its one node); a document's
  // pool then moves into made_pool_ once, at its first node put under a made
  // one, and every later merge finds the pools equal.
  YAML::Node new_node(YAML::NodeType::value type) {
    YAML::Node n(type);
    made_pool_.push_back(n);
    return n;
  }
  // `made` stands for a node at `at` (a patched list, a specialized step):
  // mark() places it there.
  void add_made(const YAML::Node& made, const SourceMark& at) {
    if (origin_index_.find(made) >= 0) return;
    origin_index_.insert(made, static_cast<long>(file_origins_.size()));
    file_origins_.push_back({YAML::Node(), at.file, 0, at});
  }
  // The range at `n` (a library value) is the constant `name`, whatever
  // path of the document reaches it first; `why` is its reason.
  void name_range(const YAML::Node& n, std::string name, std::string why) {
    if (range_names_.find(n) >= 0) return;
    range_names_.insert(n, static_cast<long>(range_name_list_.size()));
    range_name_list_.push_back({std::move(name), std::move(why)});
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

  // The same for every mapping of the document `root` (named `what`, its
  // mappings by their path), once each section has checked its own with
  // its own name: a mapping no section checks may not repeat a key either.
  void unique_keys_everywhere(const YAML::Node& root, const std::string& what) const;

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
    if (n.IsMap() && n["estimate"])
      fail(n, what + " has a range, and is not a time or a number", "a range only on a time or a number");
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
    if (site(n))  // counts shape the program and the machine: no value between two of them is one
      fail(n, what + " has a range, and is an integer", "a range only on a time or a real number (counts are not sampled)");
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
    if (site(n)) return ranged<Duration>(n, what, [&](const YAML::Node& x) { return duration(x, what, positive); });
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
    if (n.IsScalar() || site(n)) {
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

  // Ranges: `{estimate: E, range: [LO, HI], why: TEXT, name: NAME}` or the
  // string `E ± D` (`E +- D`: [E - D, E + D]) where a time or a number is
  // read. find_ranges notes where the document `root` has one (named by
  // its path, which starts with `prefix`); the value parsers read them
  // through ranged(), which checks the range with the field's own parser
  // and returns the estimate, or the sample's value.
  void find_ranges(const YAML::Node& root, const std::string& prefix);
  void set_sample(const RangeSample* s) { sample_ = s; }
  const RangeSample* sample() const { return sample_; }
  const std::vector<Range>& ranges() const { return ranges_; }
  void adopt_ranges(const Reader& other) const;  // a machine file's, read by its own Reader
  // The path of `n` in the document given to find_ranges ("" if not in it).
  std::string path_of(const YAML::Node& n) const;
  // After the document is read: fails on a range no value parser read, and
  // writes each range that was read back into the document, as its sampled
  // value or as the mapping form with its name (so the resolved text names
  // it, wherever `extends` or a variant copies it).
  void finish_ranges();

  bool site(const YAML::Node& n) const { return find_site(n) != nullptr; }

  // The value of the range at `n` (a site), read with `parse` (the field's
  // parser of one value: its checks apply to the estimate and both bounds).
  template <class T, class Parse>
  T ranged(const YAML::Node& n, const std::string& what, Parse parse) const {
    const Site& s = *find_site(n);
    s.used = true;
    RangeParts parts = range_parts(s, what);
    T est, lo, hi;
    try {
      est = parse(parts.estimate);
      if constexpr (std::is_same_v<T, ParamValue>)
        if (est.type == ParamValue::Type::kBool) fail(n, what + " is a switch and has a range", "a range on a time or a number");
      if (parts.shorthand) {
        if (parts.delta.Scalar()[0] == '-')
          fail(n, "the spread of " + what + " '" + s.node.Scalar() + "' is negative", "ESTIMATE ± SPREAD with a spread of zero or more");
        const T d = parse(parts.delta);
        if (!same_kind(est, d)) fail(n, "the range of " + what + " mixes units: " + parts.estimate.Scalar() + " ± " + parts.delta.Scalar(),
                                     "the estimate and its ± in the same kind of unit");
        if (!std::isfinite(range_value(est) - range_value(d)) || !std::isfinite(range_value(est) + range_value(d)))
          fail(n, "the range of " + what + " '" + s.node.Scalar() + "' reaches past the largest number",
               "ESTIMATE ± SPREAD within about ±1.8e308");
        lo = with_value(est, range_value(est) - range_value(d));
        hi = with_value(est, range_value(est) + range_value(d));
        if (range_value(lo) < 0 && is_time(est))
          fail(n, "the range of " + what + " " + s.node.Scalar() + " has a negative lower bound", "a time of zero or more");
        lo = parse(YAML::Node(format(est, range_value(lo))));
        hi = parse(YAML::Node(format(est, range_value(hi))));
      } else {
        if (is_time(est) && !parts.lo.Scalar().empty() && parts.lo.Scalar()[0] == '-')
          fail(parts.lo, "the range of " + what + " has a negative lower bound '" + parts.lo.Scalar() + "'", "a time of zero or more");
        lo = parse(parts.lo);
        hi = parse(parts.hi);
      }
    } catch (const ScenarioError& e) {  // a part the shorthand made has no position: the range's
      if (e.mark().line != 0) throw;
      throw ScenarioError(mark(n), e.problem(), e.expected());
    }
    if (!same_kind(est, lo) || !same_kind(est, hi))
      fail(n, "the range of " + what + " and estimate are in different kinds of unit", "a range in the estimate's unit");
    const double e = range_value(est), l = range_value(lo), h = range_value(hi);
    if (l > h) fail(n, "the range of " + what + " has its lower bound above its upper bound", "[LOW, HIGH] with LOW <= HIGH");
    if (e < l || e > h) fail(n, "the range of " + what + " does not contain its estimate", "a range [LOW, HIGH] with LOW <= estimate <= HIGH");
    if (!parts.fit.empty() && !(l > 0))
      fail(n, "the search range of " + what + " (fitted to figure '" + parts.fit + "') reaches zero",
           "a search range [LOW, HIGH] with LOW > 0 (the search is on a log scale)");
    record(s, {parts.name, is_time(est), e, l, h, parts.why, mark(n), parts.fit});
    const auto spanned = [&](T v) {  // what the value feeds checks both ends (item 14 of issue 29)
      if constexpr (requires { v.span; }) v.span = Span{true, l, h};
      return v;
    };
    if (sample_) {
      auto it = sample_->find(parts.name);
      if (it != sample_->end()) {
        s.sampled = format(est, it->second);
        return spanned(parse(YAML::Node(s.sampled)));
      }
    }
    return spanned(est);
  }

 private:
  struct Site {
    YAML::Node node;
    std::string path;
    mutable bool used = false;
    mutable std::string sampled;  // the value written back, when sampled
    mutable std::string name;
  };
  struct RangeParts {
    YAML::Node estimate, lo, hi, delta;  // delta: the shorthand's (a default Node is a defined null)
    bool shorthand = false;
    std::string name, why, fit;
  };
  const Site* find_site(const YAML::Node& n) const {
    const long i = site_index_.find(n);
    return i < 0 ? nullptr : &sites_[static_cast<std::size_t>(i)];
  }
  RangeParts range_parts(const Site& s, const std::string& what) const;
  void record(const Site& s, Range r) const;
  void collect(const YAML::Node& n, const std::string& path, int depth, NodeIndex& seen);
  void add_site(const YAML::Node& n, const std::string& path);

  // A value of a field as a number (picoseconds for a time) and back.
  static double range_value(Duration d) { return static_cast<double>(d.count()); }
  static double range_value(double d) { return d; }
  double range_value(const ParamValue& v) const {
    return v.type == ParamValue::Type::kTime ? static_cast<double>(v.time.count()) : v.number;
  }
  double range_value(const NumberRef& v) const { return v.value; }
  static bool is_time(Duration) { return true; }
  static bool is_time(double) { return false; }
  static bool is_time(const NumberRef&) { return false; }
  static bool is_time(const ParamValue& v) { return v.type == ParamValue::Type::kTime; }
  template <class T>
  static bool same_kind(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, ParamValue>) return a.type == b.type;
    else return is_time(a) == is_time(b);
  }
  static Duration with_value(Duration, double x) { return Duration{std::llround(x)}; }
  static double with_value(double, double x) { return x; }
  static NumberRef with_value(NumberRef v, double x) { v.value = x; return v; }
  static ParamValue with_value(ParamValue v, double x) {
    if (v.type == ParamValue::Type::kTime) v.time = Duration{std::llround(x)};
    else v.number = x;
    return v;
  }
  // The text of a value the field's parser reads back exactly.
  template <class T>
  static std::string format(const T& proto, double x) {
    if (is_time(proto)) return std::to_string(std::llround(x)) + "ps";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }

  std::vector<Site> sites_;
  NodeIndex site_index_;  // sites_ by node: a value parser asks of every value it reads
  YAML::Node root_;
  const RangeSample* sample_ = nullptr;
  mutable std::vector<Range> ranges_;
  mutable std::unordered_map<std::string, std::size_t> range_at_;  // ranges_ by name: a load reads each range once

  struct Origin {
    YAML::Node node;
    std::string label;
    int column = 1;
    SourceMark fixed;  // add_made: the position itself
  };
  YAML::Node made_pool_{YAML::NodeType::Sequence};  // new_node
  std::vector<Origin> file_origins_;  // add_file, add_made
  NodeIndex origin_index_;            // node -> file_origins_
  NodeIndex range_names_;             // node -> range_name_list_
  std::vector<std::pair<std::string, std::string>> range_name_list_;  // name_range: {name, why}
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
// `objects:` and `pick:` of a declaration `decl` of scope `scope` (only with scope: object).
constexpr int kMaxObjects = 1000000;
ObjectSet parse_objects(const Reader& r, const YAML::Node& decl, Scope scope, const std::string& what);
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
