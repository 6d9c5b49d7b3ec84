// Scenario and machine files: YAML (yaml-cpp) to validated values.
//
// Strict by design (ZSim's lesson): every mapping lists the keys it
// accepts, an unknown key is an error, every time needs a unit, and every
// name a step uses must be declared. Errors carry FILE:LINE:COL.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>

#include "models/scenario/scenario.h"
#include "models/kernel/free_lock.h"
#include "models/kernel/lock_kinds.h"
#include "sim/rng.h"

#ifndef VFSSIM_MACHINES_DIR
#define VFSSIM_MACHINES_DIR ""
#endif

namespace vfssim::models {

namespace fs = std::filesystem;

ScenarioError::ScenarioError(SourceMark mark, const std::string& problem, const std::string& expected)
    : std::runtime_error(mark.file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) +
                         ": " + problem + (expected.empty() ? "" : "; expected " + expected)),
      mark_(std::move(mark)),
      problem_(problem),
      expected_(expected) {}

const char* to_string(Scope s) {
  switch (s) {
    case Scope::kGlobal: return "global";
    case Scope::kNode: return "node";
    case Scope::kCpu: return "cpu";
    case Scope::kProcess: return "process";
    case Scope::kTask: return "task";
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

namespace {

// Reads one YAML document with positions; all checks go through here.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourceMark mark(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.line < 0) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
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

  // Fails on any key of `n` not in `allowed`.
  void only_keys(const YAML::Node& n, const std::string& what, std::initializer_list<const char*> allowed) const {
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
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
        fail(n, what + " '" + s + "' has the character '" + std::string(1, c) + "'",
             "a name of letters, digits, '_', '-' and '.'");
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
  std::string file_;
  mutable std::size_t steps_ = 0;
};

Scope parse_scope(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "scope");
  if (s == "global") return Scope::kGlobal;
  if (s == "node") return Scope::kNode;
  if (s == "cpu") return Scope::kCpu;
  if (s == "process") return Scope::kProcess;
  if (s == "task") return Scope::kTask;
  r.fail(n, "unknown scope '" + s + "'", "one of: global, node, cpu, process, task");
}


std::vector<Step> parse_steps(const Reader& r, const YAML::Node& n, const std::string& where);

// A probability, or "$name" of a number parameter (returned in `param`).
double parse_probability(const Reader& r, const YAML::Node& n, const std::string& what, std::string& param) {
  if (Reader::is_param(n)) {
    param = r.param_name(n, what);
    return 0;
  }
  const std::string p = r.scalar(n, what);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(p, &used);
  } catch (...) {
    used = 0;
  }
  if (used != p.size() || !(v >= 0.0 && v <= 1.0))
    r.fail(n, what + " '" + p + "' is not a number from 0 to 1", "a probability such as 0.25");
  return v;
}

Step parse_step(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap())
    r.fail(n, "a step of " + where + " is not a mapping",
           "a step such as '- compute: 100ns' or '- lock: name' with 'hold:'");
  r.count_step(n);
  static const char* kinds[] = {"compute", "lock",     "atomic",   "read",     "call",      "repeat",
                                "branch",  "sleep",    "percpu_add", "lockref", "seq_read", "seq_write",
                                "rcu_read", "synchronize_rcu", "call_rcu", "sum", "walk", "dec_and_lock", "alloc"};
  const char* kind = nullptr;
  for (const char* k : kinds) {
    if (n[k]) {
      if (kind) r.fail(n, "a step of " + where + " has both '" + kind + "' and '" + k + "'", "one step kind per list item");
      kind = k;
    }
  }
  if (!kind)
    r.fail(n, "a step of " + where + " names no step kind",
           "one of: compute, lock, atomic, read, call, repeat, branch, sleep, percpu_add, lockref, seq_read, "
           "seq_write, rcu_read, synchronize_rcu, call_rcu, sum, walk, dec_and_lock, alloc");
  Step s;
  s.mark = r.mark(n);
  const std::string k = kind;
  const std::string what = k + " step of " + where;
  if (n["fn"]) s.fn = r.name(n["fn"], "fn of the " + what);
  if (const auto cond = n["if"]) {
    std::string c = r.scalar(cond, "condition of the " + what);
    if (!c.empty() && c[0] == '!') {
      s.when_negated = true;
      c = c.substr(1);
    }
    if (c.empty()) r.fail(cond, "the condition of the " + what + " is empty", "a switch parameter, or !switch");
    s.when = c;
  }
  auto body = [&](const char* key, bool required) {
    if (!n[key]) {
      if (required) r.fail(n, "the " + what + " has no '" + key + "'", "'" + std::string(key) + ": [steps]'");
      return std::vector<Step>{};
    }
    return parse_steps(r, n[key], "the " + std::string(key) + " of the " + what);
  };
  if (k == "compute") {
    r.only_keys(n, "a " + what, {"compute", "fn", "if"});
    s.kind = StepKind::kCompute;
    s.time = r.time_dist(n["compute"], "compute time of the " + what, false);
  } else if (k == "sleep") {
    r.only_keys(n, "a " + what, {"sleep", "fn", "if"});
    s.kind = StepKind::kSleep;
    s.time = r.time_dist(n["sleep"], "sleep time of the " + what, true);
  } else if (k == "lock") {
    r.only_keys(n, "a " + what, {"lock", "hold", "body", "mode", "fn", "if"});
    s.kind = StepKind::kLock;
    s.target = r.name(n["lock"], "lock name of the " + what);
    if (n["mode"]) {
      const std::string m = r.scalar(n["mode"], "mode");
      if (m == "write" || m == "exclusive") s.mode = LockMode::kExclusive;
      else if (m == "read" || m == "shared") s.mode = LockMode::kShared;
      else r.fail(n["mode"], "unknown lock mode '" + m + "'", "read or write");
    }
    if (n["hold"] && n["body"]) r.fail(n, "the " + what + " has both 'hold' and 'body'", "either a hold time or a body of steps");
    if (n["hold"]) {
      s.time = r.time_dist(n["hold"], "hold time of the " + what, false);
    } else if (n["body"]) {
      s.has_body = true;
      s.body = body("body", true);
    } else {
      r.fail(n, "the " + what + " says neither how long the lock is held nor what runs under it",
             "'hold: TIME' or 'body: [steps]'");
    }
  } else if (k == "lockref") {
    r.only_keys(n, "a " + what, {"lockref", "hold", "fn", "if"});
    s.kind = StepKind::kLockref;
    s.target = r.name(n["lockref"], "lock name of the " + what);
    s.time = r.time_dist(r.require(n, "hold", "the " + what), "slow-path hold time of the " + what, false);
  } else if (k == "atomic" || k == "read" || k == "sum") {
    r.only_keys(n, "a " + what, {kind, "fn", "if"});
    s.kind = k == "atomic" ? StepKind::kAtomic : k == "read" ? StepKind::kRead : StepKind::kSumPerCpu;
    s.target = r.name(n[kind], "line name of the " + what);
  } else if (k == "percpu_add") {
    r.only_keys(n, "a " + what, {"percpu_add", "batch", "counter_lock", "fn", "if"});
    s.kind = StepKind::kPercpuAdd;
    s.target = r.name(n["percpu_add"], "line name of the " + what);
    s.count = static_cast<int>(r.integer(r.require(n, "batch", "the " + what), "batch", 1, 1 << 30));
    s.lock = r.name(r.require(n, "counter_lock", "the " + what), "counter lock of the " + what);
  } else if (k == "call") {
    r.only_keys(n, "a " + what, {"call", "if"});
    s.kind = StepKind::kCall;
    s.target = r.name(n["call"], "op name of the " + what);
  } else if (k == "repeat") {
    r.only_keys(n, "a " + what, {"repeat", "body", "if"});
    s.kind = StepKind::kRepeat;
    if (Reader::is_param(n["repeat"])) s.count_param = r.param_name(n["repeat"], "repeat count");
    else s.count = static_cast<int>(r.integer(n["repeat"], "repeat count", 1, 100000));
    s.has_body = true;
    s.body = body("body", true);
  } else if (k == "branch") {
    r.only_keys(n, "a " + what, {"branch", "then", "else", "if"});
    s.kind = StepKind::kBranch;
    s.probability = parse_probability(r, n["branch"], "branch probability", s.probability_param);
    s.has_body = true;
    s.body = body("then", true);
    s.else_body = body("else", false);
  } else if (k == "seq_read") {
    r.only_keys(n, "a " + what, {"seq_read", "body", "retries", "fallback", "fn", "if"});
    s.kind = StepKind::kSeqRead;
    s.target = r.name(n["seq_read"], "seqcount name of the " + what);
    s.has_body = true;
    s.body = body("body", true);
    s.count = -1;
    if (n["retries"] || n["fallback"]) {
      if (!n["retries"] || !n["fallback"])
        r.fail(n, "the " + what + " gives only one of 'retries' and 'fallback'",
               "both (read_seqbegin_or_lock: retry N times, then take the lock) or neither");
      s.count = static_cast<int>(r.integer(n["retries"], "retries", 0, 1000000));
      s.lock = r.name(n["fallback"], "fallback lock of the " + what);
    }
  } else if (k == "seq_write") {
    r.only_keys(n, "a " + what, {"seq_write", "body", "fn", "if"});
    s.kind = StepKind::kSeqWrite;
    s.target = r.name(n["seq_write"], "seqcount name of the " + what);
    s.has_body = true;
    s.body = body("body", true);
  } else if (k == "rcu_read") {
    r.only_keys(n, "a " + what, {"rcu_read", "fn", "if"});
    s.kind = StepKind::kRcuRead;
    s.has_body = true;
    s.body = parse_steps(r, n["rcu_read"], "the read section of the " + what);
  } else if (k == "dec_and_lock") {
    // atomic_dec_and_lock(count, lock): the decrement is an atomic; only the
    // 1 -> 0 transition (probability `last`) takes the lock.
    r.only_keys(n, "a " + what, {"dec_and_lock", "spinlock", "last", "hold", "fn", "if"});
    s.kind = StepKind::kDecAndLock;
    s.target = r.name(n["dec_and_lock"], "line name of the " + what);
    s.lock = r.name(r.require(n, "spinlock", "the " + what), "spinlock of the " + what);
    s.probability = parse_probability(r, r.require(n, "last", "the " + what), "last", s.probability_param);
    s.time = r.time_dist(r.require(n, "hold", "the " + what), "hold time of the " + what, false);
  } else if (k == "alloc") {
    // __alloc_pages: `pages` from the pool; below its low watermark the
    // task runs `reclaim` (direct reclaim), which gives back `reclaimed`.
    r.only_keys(n, "a " + what, {"alloc", "pages", "reclaim", "reclaimed", "fn", "if"});
    s.kind = StepKind::kAlloc;
    s.target = r.name(n["alloc"], "pool name of the " + what);
    s.count = static_cast<int>(r.integer(r.require(n, "pages", "the " + what), "pages", 1, 1 << 20));
    s.has_body = true;
    s.body = body("reclaim", true);
    const auto freed = r.require(n, "reclaimed", "the " + what + " (pages its direct reclaim gives back)");
    s.reclaimed = static_cast<int>(r.integer(freed, "reclaimed", 1, 1 << 20));
    if (s.reclaimed < s.count)
      r.fail(freed, "direct reclaim gives back " + std::to_string(s.reclaimed) + " pages but the allocation takes " +
                        std::to_string(s.count), "reclaimed >= pages (the reclaiming task frees at least what it needs)");
  } else if (k == "walk") {
    r.only_keys(n, "a " + what, {"walk", "mode", "component", "refcount", "refuse_rcu", "refuse_if", "on_refuse",
                                 "keep_last", "locked_put", "fn", "if"});
    s.kind = StepKind::kWalk;
    const YAML::Node path = n["walk"];
    if (!path.IsSequence() || path.size() == 0)
      r.fail(path, "the path of the " + what + " is not a non-empty list", "a list of dentry names, such as [root, tmp, file]");
    for (const auto& c : path) s.walk.path.push_back(r.name(c, "dentry of the " + what));
    const std::string mode = r.scalar(r.require(n, "mode", "the " + what), "walk mode");
    if (mode == "rcu") s.walk.rcu = true;
    else if (mode == "ref") s.walk.rcu = false;
    else r.fail(n["mode"], "unknown walk mode '" + mode + "'", "rcu or ref");
    s.walk.component = r.time_dist(r.require(n, "component", "the " + what), "per-component time of the " + what, false);
    if (const auto rc = n["refcount"]) {
      const std::string v = r.scalar(rc, "refcount");
      if (v == "lockref") s.walk.lockref = true;
      else if (v != "atomic") r.fail(rc, "unknown refcount '" + v + "'", "atomic (d_count under d_lock) or lockref (3.12+)");
    }
    if (n["keep_last"]) s.walk.keep_last = r.boolean(n["keep_last"], "keep_last");
    if (n["locked_put"]) s.walk.locked_put = r.boolean(n["locked_put"], "locked_put");
    if (const auto refuse = n["refuse_rcu"]) {
      if (!refuse.IsSequence()) r.fail(refuse, "refuse_rcu is not a list", "a list of dentry names of the path");
      for (const auto& c : refuse) {
        const std::string d = r.name(c, "refused dentry");
        if (std::find(s.walk.path.begin(), s.walk.path.end(), d) == s.walk.path.end())
          r.fail(c, "refuse_rcu names '" + d + "', which is not on the walk's path", "a dentry of the path");
        s.walk.refuse.push_back(d);
      }
    }
    if (n["refuse_if"]) s.walk.refuse_if = r.name(n["refuse_if"], "refuse_if");
    if (const auto on = n["on_refuse"]) {
      const std::string v = r.scalar(on, "on_refuse");
      if (v == "restart") s.walk.restart = true;
      else if (v != "unlazy") r.fail(on, "unknown on_refuse '" + v + "'", "unlazy (drop to ref-walk in place) or restart");
    }
  } else if (k == "synchronize_rcu") {
    r.only_keys(n, "a " + what, {"synchronize_rcu", "fn", "if"});
    s.kind = StepKind::kSynchronizeRcu;
    const std::string v = r.scalar(n["synchronize_rcu"], "synchronize_rcu");
    if (v != "normal") r.fail(n["synchronize_rcu"], "unknown grace-period kind '" + v + "'", "normal");
  } else {
    r.only_keys(n, "a " + what, {"call_rcu", "fn", "if"});
    s.kind = StepKind::kCallRcu;
    s.time = r.time_dist(n["call_rcu"], "callback cost of the " + what, false);
  }
  return s;
}

std::vector<Step> parse_steps(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsSequence()) r.fail(n, where + " is not a list of steps", "a list such as [ {compute: 100ns} ]");
  std::vector<Step> out;
  for (const auto& item : n) out.push_back(parse_step(r, item, where));
  return out;
}

// A mapping of NAME: {scope: S, ...} declarations (lines, seqcounts, pools);
// `extra` reads the keys beyond scope that `allowed` lets through.
template <class Decl, class Extra>
void parse_scoped(const Reader& r, const YAML::Node& n, const std::string& kind, const std::string& strategy,
                  std::map<std::string, Decl>& out, std::initializer_list<const char*> allowed, Extra extra) {
  r.expect_map(n, kind + "s of strategy '" + strategy + "'");
  for (const auto& kv : n) {
    Decl d;
    d.name = r.name(kv.first, kind + " name");
    d.mark = r.mark(kv.first);
    const std::string what = kind + " '" + d.name + "'";
    r.expect_map(kv.second, what);
    r.only_keys(kv.second, what, allowed);
    if constexpr (std::is_same_v<Decl, LineDecl>) {
      if (const auto on = kv.second["on"]) {  // a line on a lock's word has the lock's scope
        d.on = r.name(on, "lock of " + what);
        if (kv.second["scope"])
          r.fail(kv.second["scope"], what + " is on lock '" + d.on + "': its scope is the lock's",
                 "either scope: or on: LOCK, not both");
        out[d.name] = d;
        continue;
      }
    }
    d.scope = parse_scope(r, r.require(kv.second, "scope", what));
    extra(d, kv.second, what);
    out[d.name] = d;
  }
}
template <class Decl>
void parse_scoped(const Reader& r, const YAML::Node& n, const std::string& kind, const std::string& strategy,
                  std::map<std::string, Decl>& out) {
  parse_scoped(r, n, kind, strategy, out, {"scope"}, [](Decl&, const YAML::Node&, const std::string&) {});
}

// A number >= 0, or "$name" of a number parameter (checked when compiled).
NumberRef parse_number_ref(const Reader& r, const YAML::Node& n, const std::string& what) {
  NumberRef v;
  if (Reader::is_param(n)) {
    v.param = r.param_name(n, what);
    return v;
  }
  const std::string t = r.scalar(n, what);
  std::size_t used = 0;
  try {
    v.value = std::stod(t, &used);
  } catch (...) {
    used = 0;
  }
  if (used != t.size() || t.empty() || !std::isfinite(v.value) || v.value < 0)
    r.fail(n, what + " '" + t + "' is not a number >= 0", "a number such as 1024, or $NAME of a number parameter");
  return v;
}

// pools: NAME: {scope: S, low: PAGES, high: PAGES, refill: PAGES_PER_S}
void parse_pools(const Reader& r, const YAML::Node& n, const std::string& strategy, std::map<std::string, PoolDecl>& out) {
  parse_scoped(r, n, "pool", strategy, out, {"scope", "low", "high", "refill"},
               [&](PoolDecl& d, const YAML::Node& m, const std::string& what) {
                 d.low = parse_number_ref(r, r.require(m, "low", what + " (low watermark, pages)"), "low watermark of " + what);
                 d.high = parse_number_ref(r, r.require(m, "high", what + " (high watermark, pages)"),
                                           "high watermark of " + what);
                 d.refill = parse_number_ref(r, r.require(m, "refill", what + " (kswapd's pages per second)"),
                                             "refill rate of " + what);
                 if (d.low.param.empty() && d.high.param.empty() && d.high.value < d.low.value)
                   r.fail(m["high"], "the high watermark of " + what + " is below its low watermark", "low <= high");
               });
}

Strategy parse_strategy(const Reader& r, const std::string& name, const YAML::Node& n) {
  Strategy s;
  s.name = name;
  s.mark = r.mark(n);
  r.expect_map(n, "strategy '" + name + "'");
  r.only_keys(n, "strategy '" + name + "'",
              {"description", "extends", "kernel", "locks", "lines", "seqcounts", "pools", "dentries", "dentry_lock", "ops"});
  if (const auto dentries = n["dentries"]) {
    r.expect_map(dentries, "dentries of strategy '" + name + "'");
    const auto kind = r.require(n, "dentry_lock", "strategy '" + name + "' (it declares dentries)");
    const std::string k = r.scalar(kind, "dentry_lock");
    const LockKind* row = find_lock_kind(k);
    if (!row || !row->spinlock) r.fail(kind, "dentry_lock '" + k + "' is not a spinlock kind", lock_kind_names(true));
    for (const auto& kv : dentries) {
      const std::string d = r.name(kv.first, "dentry name");
      const std::string what = "dentry '" + d + "'";
      r.expect_map(kv.second, what);
      r.only_keys(kv.second, what, {"scope"});
      const Scope scope = parse_scope(r, r.require(kv.second, "scope", what));
      s.dentries[d] = scope;
      LockDecl l;
      l.name = d + ".d_lock";
      l.kind = k;
      l.scope = scope;
      l.mark = r.mark(kv.first);
      s.locks[l.name] = l;
      s.lines[d + ".d_count"] = LineDecl{d + ".d_count", scope, "", r.mark(kv.first)};
      s.seqcounts[d + ".d_seq"] = SeqDecl{d + ".d_seq", scope, r.mark(kv.first)};
    }
  } else if (n["dentry_lock"]) {
    r.fail(n["dentry_lock"], "dentry_lock without dentries", "a 'dentries:' mapping");
  }
  if (const auto kernel = n["kernel"]) {
    r.expect_map(kernel, "kernel of strategy '" + name + "'");
    r.only_keys(kernel, "kernel of strategy '" + name + "'", {"hz"});
    s.hz = static_cast<int>(r.integer(r.require(kernel, "hz", "kernel"), "hz", 10, 100000));
  }
  if (const auto seqs = n["seqcounts"]) parse_scoped(r, seqs, "seqcount", name, s.seqcounts);
  if (n["description"]) s.description = r.scalar(n["description"], "description");
  if (n["extends"]) s.extends = r.name(n["extends"], "extends");
  if (const auto locks = n["locks"]) {
    r.expect_map(locks, "locks of strategy '" + name + "'");
    for (const auto& kv : locks) {
      LockDecl d;
      d.name = r.name(kv.first, "lock name");
      d.mark = r.mark(kv.first);
      const std::string what = "lock '" + d.name + "'";
      r.expect_map(kv.second, what);
      r.only_keys(kv.second, what, {"kind", "scope", "spin", "wake", "fair", "threshold"});
      const auto kind = r.require(kv.second, "kind", what);
      d.kind = r.scalar(kind, "kind");
      const LockKind* row = find_lock_kind(d.kind);
      if (!row || d.kind == FreeLock::kKind) r.fail(kind, "unknown lock kind '" + d.kind + "'", "one of: " + lock_kind_names());
      d.scope = parse_scope(r, r.require(kv.second, "scope", what));
      const bool sleeper_kind = row->sleeps;
      if (const auto spin = kv.second["spin"]) {
        if (!sleeper_kind) r.fail(spin, "'spin' does not apply to a " + d.kind + " lock", "'spin' only on mutex and rwsem locks");
        d.spin = r.boolean(spin, "spin");
      } else {
        d.spin = !sleeper_kind || row->default_spin;  // rwsem readers sleep; mutex owners are spun on
      }
      if (const auto wake = kv.second["wake"]) {
        if (!sleeper_kind) r.fail(wake, "'wake' does not apply to a " + d.kind + " lock", "'wake' only on mutex and rwsem locks");
        d.wake_latency = r.duration(wake, "wake latency", true);
      } else if (sleeper_kind && !d.spin) {
        r.fail(kv.second, what + " has sleeping waiters but no wake-up latency",
               "'wake: TIME' (scheduler wake-up, e.g. 5us)");
      }
      if (const auto fair = kv.second["fair"]) {
        if (!row->fairness) r.fail(fair, "'fair' does not apply to a " + d.kind + " lock", "'fair' only on rwlock");
        d.reader_preference = !r.boolean(fair, "fair");
      }
      if (const auto th = kv.second["threshold"]) {
        if (!row->numa_threshold)
          r.fail(th, "'threshold' does not apply to a " + d.kind + " lock", "'threshold' only on cna");
        d.threshold = r.duration(th, "threshold", true);
      }
      s.locks[d.name] = d;
    }
  }
  if (const auto lines = n["lines"])
    parse_scoped(r, lines, "line", name, s.lines, {"scope", "on"}, [](LineDecl&, const YAML::Node&, const std::string&) {});
  if (const auto pools = n["pools"]) parse_pools(r, pools, name, s.pools);
  if (const auto ops = n["ops"]) {
    r.expect_map(ops, "ops of strategy '" + name + "'");
    for (const auto& kv : ops) {
      OpDef op;
      op.name = r.name(kv.first, "op name");
      op.mark = r.mark(kv.first);
      op.steps = parse_steps(r, kv.second, "op '" + op.name + "'");
      s.ops[op.name] = std::move(op);
    }
  }
  return s;
}

// Applies `extends`: a child starts from its parent's locks, lines and ops
// and replaces entries of the same name.
void resolve_extends(const Reader& r, std::vector<Strategy>& strategies, const YAML::Node& root) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < strategies.size(); ++i) index[strategies[i].name] = i;
  std::vector<int> state(strategies.size(), 0);  // 0 new, 1 resolving, 2 done
  std::function<void(std::size_t)> resolve = [&](std::size_t i) {
    Strategy& s = strategies[i];
    if (state[i] == 2) return;
    if (state[i] == 1)
      throw ScenarioError(s.mark, "strategy '" + s.name + "' extends itself through a cycle", "an acyclic 'extends' chain");
    state[i] = 1;
    if (!s.extends.empty()) {
      auto it = index.find(s.extends);
      if (it == index.end())
        throw ScenarioError(s.mark, "strategy '" + s.name + "' extends '" + s.extends + "', which is not defined",
                            "the name of another strategy of this file");
      resolve(it->second);
      const Strategy& p = strategies[it->second];
      for (const auto& [k, v] : p.locks) s.locks.emplace(k, v);
      for (const auto& [k, v] : p.lines) s.lines.emplace(k, v);
      for (const auto& [k, v] : p.seqcounts) s.seqcounts.emplace(k, v);
      for (const auto& [k, v] : p.pools) s.pools.emplace(k, v);
      for (const auto& [k, v] : p.dentries) s.dentries.emplace(k, v);
      if (s.hz == 0) s.hz = p.hz;
      for (const auto& [k, v] : p.ops) s.ops.emplace(k, v);
    }
    state[i] = 2;
  };
  for (std::size_t i = 0; i < strategies.size(); ++i) resolve(i);
  (void)r;
  (void)root;
}

// Every name a step uses must exist, a lock step must name a lock, and op
// calls must not recurse.
void check_references(const Strategy& s, const std::vector<std::string>& loop, const SourceMark& loop_mark,
                      const Params& params) {
  auto need_param = [&](const std::string& name, ParamValue::Type type, const SourceMark& mark) {
    auto it = params.find(name);
    if (it == params.end())
      throw ScenarioError(mark, "parameter '" + name + "' is not declared", "a parameter declared under 'params:'");
    if (it->second.type != type)
      throw ScenarioError(mark, "parameter '" + name + "' is a " + to_string(it->second.type) + " used as a " +
                                    to_string(type), std::string("a ") + to_string(type) + " parameter");
  };
  // `spin_only`: a lockref's count shares the word of a spinlock.
  auto need_lock = [&](const std::string& name, const SourceMark& mark, bool spin_only) {
    auto it = s.locks.find(name);
    if (it == s.locks.end())
      throw ScenarioError(mark, "strategy '" + s.name + "' uses lock '" + name + "', which it does not declare",
                          "a lock declared under 'locks:'");
    const std::string& kind = it->second.kind;
    if (spin_only && !find_lock_kind(kind)->spinlock)
      throw ScenarioError(mark, "lockref on lock '" + name + "' of kind " + kind,
                          "a spinlock (" + lock_kind_names(true) + "): a lockref shares the spinlock's word");
  };
  for (const auto& [name, line] : s.lines)
    if (!line.on.empty()) {
      auto it = s.locks.find(line.on);
      if (it == s.locks.end())
        throw ScenarioError(line.mark, "line '" + name + "' is on lock '" + line.on + "', which strategy '" + s.name +
                                           "' does not declare", "a lock declared under 'locks:'");
      const std::string& kind = it->second.kind;
      if (!find_lock_kind(kind)->spinlock)
        throw ScenarioError(line.mark, "line '" + name + "' is on lock '" + line.on + "' of kind " + kind,
                            "a spinlock (" + lock_kind_names(true) + "): data shares a spinlock's word line");
    }
  std::function<void(const std::vector<Step>&)> walk = [&](const std::vector<Step>& steps) {
    for (const auto& st : steps) {
      if (!st.when.empty()) need_param(st.when, ParamValue::Type::kBool, st.mark);
      if (!st.time.param.empty()) need_param(st.time.param, ParamValue::Type::kTime, st.mark);
      if (!st.probability_param.empty()) need_param(st.probability_param, ParamValue::Type::kNumber, st.mark);
      if (!st.count_param.empty()) need_param(st.count_param, ParamValue::Type::kNumber, st.mark);
      switch (st.kind) {
        case StepKind::kLock:
          if (!s.locks.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' uses lock '" + st.target + "', which it does not declare",
                                "a lock declared under 'locks:'");
          if (st.mode == LockMode::kShared && !find_lock_kind(s.locks.at(st.target).kind)->read_write)
            throw ScenarioError(st.mark, "mode: read on lock '" + st.target + "' of kind " + s.locks.at(st.target).kind +
                                             ", which has no read mode",
                                "mode: read only on a reader/writer kind (rwsem, rwlock, brlock)");
          break;
        case StepKind::kAtomic:
        case StepKind::kRead:
        case StepKind::kSumPerCpu:
        case StepKind::kPercpuAdd:
          if (!s.lines.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' uses line '" + st.target + "', which it does not declare",
                                "a line declared under 'lines:'");
          if (st.kind == StepKind::kSumPerCpu && s.lines.at(st.target).scope != Scope::kCpu)
            throw ScenarioError(st.mark, "sum over line '" + st.target + "', which is not per-CPU",
                                "a line with 'scope: cpu'");
          if (st.kind == StepKind::kPercpuAdd && s.lines.at(st.target).scope == Scope::kCpu)
            throw ScenarioError(st.mark, "percpu_add names the per-CPU line '" + st.target + "'",
                                "the shared counter's line (its per-CPU parts are implicit)");
          if (st.kind == StepKind::kPercpuAdd) need_lock(st.lock, st.mark, false);
          break;
        case StepKind::kLockref:
          need_lock(st.target, st.mark, true);
          break;
        case StepKind::kDecAndLock:
          if (!s.lines.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' uses line '" + st.target + "', which it does not declare",
                                "a line declared under 'lines:'");
          need_lock(st.lock, st.mark, true);
          break;
        case StepKind::kSeqRead:
        case StepKind::kSeqWrite:
          if (!s.seqcounts.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' uses seqcount '" + st.target +
                                             "', which it does not declare", "a seqcount declared under 'seqcounts:'");
          if (!st.lock.empty()) need_lock(st.lock, st.mark, false);
          break;
        case StepKind::kWalk:
          for (const auto& d : st.walk.path)
            if (!s.dentries.count(d))
              throw ScenarioError(st.mark, "the walk goes through dentry '" + d + "', which strategy '" + s.name +
                                               "' does not declare", "a dentry declared under 'dentries:'");
          if (!st.walk.refuse_if.empty()) need_param(st.walk.refuse_if, ParamValue::Type::kBool, st.mark);
          if (!st.walk.component.param.empty()) need_param(st.walk.component.param, ParamValue::Type::kTime, st.mark);
          break;
        case StepKind::kSynchronizeRcu:
        case StepKind::kCallRcu:
          if (s.hz == 0)
            throw ScenarioError(st.mark, "strategy '" + s.name + "' waits for RCU grace periods but gives no tick rate",
                                "'kernel: {hz: N}' in the strategy (or the one it extends)");
          break;
        case StepKind::kAlloc:
          if (!s.pools.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' allocates from pool '" + st.target +
                                             "', which it does not declare", "a pool declared under 'pools:'");
          break;
        case StepKind::kCall:
          if (!s.ops.count(st.target))
            throw ScenarioError(st.mark, "strategy '" + s.name + "' calls op '" + st.target + "', which it does not define",
                                "an op defined under 'ops:'");
          break;
        default: break;
      }
      if (st.has_body) walk(st.body);
      walk(st.else_body);
    }
  };
  for (const auto& [name, op] : s.ops) walk(op.steps);
  for (const auto& [name, pool] : s.pools)
    for (const NumberRef* v : {&pool.low, &pool.high, &pool.refill})
      if (!v->param.empty()) need_param(v->param, ParamValue::Type::kNumber, pool.mark);
  for (const auto& l : loop)
    if (!s.ops.count(l))
      throw ScenarioError(loop_mark, "the workload loop runs op '" + l + "', which strategy '" + s.name + "' does not define",
                          "an op defined under 'ops:' of every strategy");
  // Cycle check: depth-first over calls.
  std::map<std::string, int> state;
  std::function<void(const std::string&, const SourceMark&)> visit = [&](const std::string& op, const SourceMark& at) {
    int& st = state[op];
    if (st == 2) return;
    if (st == 1)
      throw ScenarioError(at, "op '" + op + "' of strategy '" + s.name + "' calls itself through a cycle",
                          "op calls that never lead back to the caller");
    st = 1;
    std::function<void(const std::vector<Step>&)> calls = [&](const std::vector<Step>& steps) {
      for (const auto& stp : steps) {
        if (stp.kind == StepKind::kCall) visit(stp.target, stp.mark);
        if (stp.has_body) calls(stp.body);
        calls(stp.else_body);
      }
    };
    calls(s.ops.at(op).steps);
    state[op] = 2;
  };
  for (const auto& [name, op] : s.ops) visit(name, op.mark);
}

double parse_fraction(const Reader& r, const YAML::Node& n, const std::string& what);

TopologySpec parse_machine(const Reader& r, const YAML::Node& n, const std::string& name_hint) {
  TopologySpec t;
  r.expect_map(n, "machine");
  r.only_keys(n, "machine", {"machine", "description", "levels", "numa", "core", "interconnect", "local_hit",
                             "local_atomic", "invalidate_per_sharer", "smt_throughput", "matrix", "coherence"});
  t.name = n["machine"] ? r.name(n["machine"], "machine name") : name_hint;
  if (n["description"]) t.description = r.scalar(n["description"], "description");
  const auto levels = r.require(n, "levels", "machine");
  if (!levels.IsSequence() || levels.size() == 0)
    r.fail(levels, "machine levels is not a non-empty list", "a list of {name, count, transfer} from the outside in");
  for (const auto& l : levels) {
    r.expect_map(l, "machine level");
    r.only_keys(l, "machine level", {"name", "count", "transfer"});
    TopologyLevel lv;
    lv.name = r.name(r.require(l, "name", "machine level"), "level name");
    lv.count = static_cast<int>(r.integer(r.require(l, "count", "machine level"), "level count", 1, 1 << 20));
    if (l["transfer"]) lv.transfer = r.duration(l["transfer"], "transfer", false);
    t.levels.push_back(lv);
  }
  for (std::size_t i = 0; i + 1 < t.levels.size(); ++i)
    if (!levels[i]["transfer"])
      r.fail(levels[i], "level '" + t.levels[i].name + "' has no transfer cost",
             "'transfer: TIME' on every level but the innermost");
  auto level_index = [&](const char* key) {
    if (!n[key]) return key == std::string("core") ? static_cast<int>(t.levels.size()) - 1 : 0;
    const std::string s = r.scalar(n[key], key);
    for (std::size_t i = 0; i < t.levels.size(); ++i)
      if (t.levels[i].name == s) return static_cast<int>(i);
    r.fail(n[key], std::string(key) + " names level '" + s + "', which the machine does not have", "a level name");
  };
  t.numa_level = level_index("numa");
  t.core_level = level_index("core");
  if (t.numa_level > t.core_level)  // spread placement fills nodes with whole cores
    r.fail(n["numa"], "numa level '" + t.levels[t.numa_level].name + "' lies inside the core level '" +
                          t.levels[t.core_level].name + "': a NUMA node would split a core",
           "a numa level at or above the core level");
  if (const auto ic = n["interconnect"]) {
    r.expect_map(ic, "interconnect");
    r.only_keys(ic, "interconnect", {"base", "hop", "links"});
    t.cross_base = r.duration(r.require(ic, "base", "interconnect"), "interconnect base", false);
    t.hop = r.duration(r.require(ic, "hop", "interconnect"), "interconnect hop", false);
    if (const auto links = ic["links"]) {
      const int outer = t.levels[0].count;
      if (links.IsScalar()) {
        const std::string s = links.Scalar();
        if (s == "ring") {
          for (int a = 0; a < outer && outer > 1; ++a) t.links.push_back({a, (a + 1) % outer});
        } else if (s != "full") {
          r.fail(links, "unknown interconnect '" + s + "'", "full, ring, or a list of [a, b] pairs");
        }
      } else if (links.IsSequence()) {
        for (const auto& p : links) {
          if (!p.IsSequence() || p.size() != 2) r.fail(p, "interconnect link is not a pair", "[a, b]");
          t.links.push_back({static_cast<int>(r.integer(p[0], "link end", 0, outer - 1)),
                             static_cast<int>(r.integer(p[1], "link end", 0, outer - 1))});
        }
      } else {
        r.fail(links, "interconnect links is neither a name nor a list", "full, ring, or a list of [a, b] pairs");
      }
    }
  } else if (t.levels[0].count > 1) {
    r.fail(n, "machine has " + std::to_string(t.levels[0].count) + " '" + t.levels[0].name +
                  "' elements but no interconnect", "'interconnect: {base: TIME, hop: TIME}'");
  }
  t.local_hit = r.duration(r.require(n, "local_hit", "machine"), "local_hit", false);
  t.local_atomic = r.duration(r.require(n, "local_atomic", "machine"), "local_atomic", false);
  if (n["invalidate_per_sharer"]) t.invalidate_per_sharer = r.duration(n["invalidate_per_sharer"], "invalidate_per_sharer", false);
  if (const auto smt = n["smt_throughput"]) {
    const int threads_per_core = [&] {
      int k = 1;
      for (std::size_t i = static_cast<std::size_t>(t.core_level) + 1; i < t.levels.size(); ++i) k *= t.levels[i].count;
      return k;
    }();
    const double v = parse_fraction(r, smt, "smt_throughput");
    if (!(v >= 1.0 && v <= threads_per_core))
      r.fail(smt, "smt_throughput " + smt.Scalar() + " is outside 1.." + std::to_string(threads_per_core),
             "a core's throughput with all " + std::to_string(threads_per_core) +
                 " hardware threads busy relative to one thread, from 1 (no gain) to " +
                 std::to_string(threads_per_core) + " (no sharing)");
    t.smt_throughput = v;
  }
  if (const auto c = n["coherence"]) {
    r.expect_map(c, "coherence");
    r.only_keys(c, "coherence", {"kind", "contended_rmw", "contended_rmw_remote", "reread", "shared_store"});
    const YAML::Node kind = r.require(c, "kind", "coherence");
    const std::string k = r.scalar(kind, "coherence kind");
    if (k == "directory") t.coherence.kind = CoherenceKind::kDirectory;
    else if (k == "broadcast") t.coherence.kind = CoherenceKind::kBroadcast;
    else if (k == "pairwise") t.coherence.kind = CoherenceKind::kPairwise;
    else r.fail(kind, "unknown coherence kind '" + k + "'", "directory, broadcast or pairwise");
    if (c["contended_rmw"]) t.coherence.contended_rmw = r.duration(c["contended_rmw"], "contended_rmw", false);
    if (c["contended_rmw_remote"])
      t.coherence.contended_rmw_remote = r.duration(c["contended_rmw_remote"], "contended_rmw_remote", true);
    if (c["reread"]) {
      if (t.coherence.kind != CoherenceKind::kDirectory)
        r.fail(c["reread"], "reread is a directory machine's", "reread only with kind: directory");
      t.coherence.reread = r.duration(c["reread"], "reread", false);
    } else if (t.coherence.kind == CoherenceKind::kDirectory) {
      r.fail(c, "a directory machine has no reread", "'reread: TIME': the home's time per re-read of a line its socket holds");
    }
    if (c["shared_store"]) {
      if (t.coherence.kind != CoherenceKind::kBroadcast)
        r.fail(c["shared_store"], "shared_store is a broadcast machine's",
               "shared_store only with kind: broadcast (a directory's store to a shared line costs its distance)");
      t.coherence.shared_store = r.duration(c["shared_store"], "shared_store", false);
    }
  }
  if (const auto m = n["matrix"]) {
    if (!m.IsSequence()) r.fail(m, "matrix is not a list of rows", "a list of rows of times");
    for (const auto& row : m) {
      if (!row.IsSequence()) r.fail(row, "matrix row is not a list", "a list of times");
      for (const auto& v : row) t.measured_matrix.push_back(r.duration(v, "matrix entry", false));
    }
  }
  try {
    Topology check(t);
    (void)check;
  } catch (const std::invalid_argument& e) {
    r.fail(n, std::string("machine is inconsistent: ") + e.what(), "a consistent topology");
  }
  return t;
}

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

// "25%" or 0.25.
double parse_fraction(const Reader& r, const YAML::Node& n, const std::string& what) {
  std::string s = r.scalar(n, what);
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    s.pop_back();
    scale = 0.01;
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty() || !std::isfinite(v))
    r.fail(n, what + " '" + n.Scalar() + "' is not a number", "a number or a percentage such as 25%");
  return v * scale;
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

// Every figure kind an `expect:` entry may have, exactly one per entry.
constexpr std::array<const char*, 6> kFigureKinds{"ratio", "change", "value", "curve", "peak", "spread"};

std::vector<Expectation> parse_expect(const Reader& r, const YAML::Node& n, const Scenario& sc) {
  if (!n.IsSequence()) r.fail(n, "expect is not a list", "a list of reported figures");
  std::vector<Expectation> out;
  std::set<std::string> ids;
  auto add = [&](Expectation x, const YAML::Node& at) {
    if (!ids.insert(x.id).second) r.fail(at, "figure '" + x.id + "' appears twice", "a unique id per figure");
    out.push_back(std::move(x));
  };
  for (const auto& e : n) {
    r.expect_map(e, "an expected figure");
    r.only_keys(e, "an expected figure",
                {"figure", "ratio", "change", "value", "curve", "peak", "spread", "metric", "reported", "bound",
                 "tolerance", "fitted", "fitted_at", "source"});
    Expectation x;
    x.mark = r.mark(e);
    x.id = r.name(r.require(e, "figure", "an expected figure"), "figure id");
    int kinds = 0;
    for (const char* k : kFigureKinds)
      if (e[k]) {
        ++kinds;
        x.kind = k;
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
      if (x.kind == "peak" || x.kind == "spread")
        r.fail(e["bound"], "a " + x.kind + " takes no bound", "a bound on a value, ratio, change or curve only");
    }
    x.tolerance = parse_fraction(r, r.require(e, "tolerance", "figure '" + x.id + "'"), "tolerance");
    if (x.tolerance <= 0) r.fail(e["tolerance"], "tolerance must be positive", "a tolerance such as 25%");
    if (e["fitted"]) {
      if (x.kind == "curve")
        r.fail(e["fitted"], "a curve marks its fitted point with fitted_at: CPUS", "fitted_at: CPUS");
      x.fitted = r.boolean(e["fitted"], "fitted");
    }
    if (e["fitted_at"] && x.kind != "curve")
      r.fail(e["fitted_at"], "fitted_at is for curves", "fitted: true on a " + x.kind);
    x.source = r.scalar(r.require(e, "source", "figure '" + x.id + "'"), "source");
    const YAML::Node reported = r.require(e, "reported", "figure '" + x.id + "'");

    if (x.kind == "value") {
      r.expect_map(body, what);
      r.only_keys(body, what, {"point"});
      x.new_point = parse_point_ref(r, r.require(body, "point", "value"), sc);
      x.reported = parse_fraction(r, reported, "reported");
    } else if (x.kind == "ratio" || x.kind == "change") {
      r.expect_map(body, what);
      r.only_keys(body, what, {"new", "base"});
      x.new_point = parse_point_ref(r, r.require(body, "new", x.kind), sc);
      x.base_point = parse_point_ref(r, r.require(body, "base", x.kind), sc);
      x.reported = parse_fraction(r, reported, "reported");
      if (x.kind == "change") x.reported += 1.0;  // kept as the ratio new/base
    } else if (x.kind == "spread") {
      r.expect_map(body, what);
      r.only_keys(body, what, {"point"});
      x.new_point = parse_point_ref(r, r.require(body, "point", "spread"), sc);
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
    } else if (x.kind == "peak") {
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
      x.reported = reported["value"] ? parse_fraction(r, reported["value"], "peak value")
                                     : std::numeric_limits<double>::quiet_NaN();
    } else {  // curve: one value figure per point
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
        p.reported = parse_fraction(r, kv.second, "reported");
        p.fitted = p.new_point.cpus == fitted_at;
        p.mark = r.mark(kv.first);
        add(std::move(p), kv.first);
      }
      continue;
    }
    add(std::move(x), e["figure"]);
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

ParamValue parse_param(const Reader& r, const YAML::Node& n, const std::string& name) {
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
  std::size_t used = 0;
  try {
    v.number = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty())
    r.fail(n, "parameter '" + name + "' is '" + s + "'", "true/false, a number, or a time with a unit");
  v.type = ParamValue::Type::kNumber;
  return v;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError({path, 0, 0}, "cannot open the file", "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    YAML::Node root = YAML::Load(text);
    return root;
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's message is only "bad file"
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1},
                        "YAML nesting deeper than " + std::to_string(e.depth() - 1) + " levels",
                        "a shallower file (flatten the steps into ops and calls)");
  } catch (const YAML::ParserException& e) {
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg, "valid YAML");
  }
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// `machine: NAME` (a preset, looked up in `machine_dirs`, beside the file in
// ../machines and machines/, $VFSSIM_MACHINES, the source tree) or
// `machine: PATH.yaml` (a machine file, relative to the scenario's folder;
// `vfssim probe --out DIR` writes DIR/machine.yaml).
std::string machine_ref_path(const Reader& r, const YAML::Node& n, const std::string& file,
                             const std::vector<std::string>& machine_dirs) {
  const std::string ref = r.scalar(n, "machine");
  const fs::path here = fs::path(file).parent_path();
  if (ref.find('/') != std::string::npos || (ref.size() > 5 && ref.substr(ref.size() - 5) == ".yaml")) {
    const fs::path path = fs::path(ref).is_absolute() ? fs::path(ref) : here / ref;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      r.fail(n, "machine file '" + ref + "' does not exist (looked for " + path.string() + ")",
             "a machine file's path relative to the scenario, or a preset name");
    return path.string();
  }
  const std::string name = r.name(n, "machine");
  std::vector<std::string> dirs = machine_dirs;
  dirs.push_back((here / ".." / "machines").string());
  dirs.push_back((here / "machines").string());
  const std::string path = find_machine_file(name, dirs);
  if (path.empty()) {
    std::set<std::string> known;  // every preset any of the places holds
    std::vector<std::string> all = dirs;
    if (const char* env = std::getenv("VFSSIM_MACHINES")) all.push_back(env);
    all.push_back(VFSSIM_MACHINES_DIR);
    for (const auto& d : all) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(d, ec))
        if (e.path().extension() == ".yaml") known.insert(e.path().stem().string());
    }
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    r.fail(n, "unknown machine preset '" + name + "'",
           "a preset (" + (list.empty() ? std::string("none found") : list) +
               "), a machine file's path such as ./machine.yaml, or an inline machine mapping");
  }
  return path;
}

// `machine:` of the scenario or of a variant: a reference, or an inline
// mapping (named `fallback_name` unless it has a `machine:` name).
TopologySpec load_machine_ref(const Reader& r, const YAML::Node& n, const std::string& file,
                              const std::vector<std::string>& machine_dirs, const std::string& fallback_name) {
  if (n.IsMap()) return parse_machine(r, n, fallback_name);
  return load_machine_file(machine_ref_path(r, n, file, machine_dirs));
}

// The machine a `machine:` node names, as an inline mapping that carries
// its name (loading it gives the same TopologySpec).
YAML::Node inline_machine(const Reader& r, const YAML::Node& n, const std::string& file,
                          const std::vector<std::string>& machine_dirs, const TopologySpec& spec) {
  if (n.IsMap()) {
    YAML::Node m = YAML::Clone(n);
    m["machine"] = spec.name;
    return m;
  }
  const std::string path = machine_ref_path(r, n, file, machine_dirs);
  YAML::Node m = YAML::Clone(parse_yaml(read_file(path), path));
  m["machine"] = spec.name;
  return m;
}

const char* const kStrategyMaps[] = {"locks", "lines", "seqcounts", "pools", "dentries", "ops"};

// A strategy's node with `extends` applied as resolve_extends applies it to
// the parsed strategies: the parent's entries of each map, replaced by the
// child's of the same name; the child's other keys (kernel, dentry_lock)
// over the parent's; the parent's description dropped.
YAML::Node resolved_strategy_node(const YAML::Node& strategies, const std::string& name) {
  const YAML::Node child = strategies[name];
  if (!child["extends"]) return YAML::Clone(child);
  const YAML::Node parent = resolved_strategy_node(strategies, child["extends"].Scalar());
  YAML::Node out = YAML::Clone(parent);
  out.remove("description");
  for (const auto& kv : child) {
    const std::string key = kv.first.Scalar();
    if (key == "extends") continue;
    const bool is_map = std::find_if(std::begin(kStrategyMaps), std::end(kStrategyMaps),
                                     [&](const char* m) { return key == m; }) != std::end(kStrategyMaps);
    if (is_map && kv.second.IsMap() && out[key] && out[key].IsMap()) {
      YAML::Node merged = out[key];
      for (const auto& e : kv.second) merged[e.first.Scalar()] = YAML::Clone(e.second);
    } else {
      out[key] = YAML::Clone(kv.second);
    }
  }
  // The parent's dentries keep the parent's d_lock kind when the child
  // declares dentries of its own with another kind.
  if (child["dentry_lock"] && parent["dentry_lock"] && parent["dentries"] &&
      child["dentry_lock"].Scalar() != parent["dentry_lock"].Scalar()) {
    for (const auto& d : parent["dentries"]) {
      const std::string dn = d.first.Scalar();
      if (child["dentries"] && child["dentries"][dn]) continue;
      if (out["locks"] && out["locks"][dn + ".d_lock"]) continue;
      YAML::Node lock;
      lock["kind"] = parent["dentry_lock"].Scalar();
      lock["scope"] = d.second["scope"].Scalar();
      out["locks"][dn + ".d_lock"] = lock;
    }
  }
  return out;
}

YAML::Node flow_list(const std::vector<int>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (int x : v) n.push_back(x);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

// The scenario with everything resolved that the loader resolves: machine
// presets and files inlined (named as before), `extends` applied, each
// variant's complete parameters and CPU list, the default CPU list. It
// loads back to the same Scenario (and the same results); comments are gone.
std::string resolved_document(const Reader& r, const YAML::Node& root, const Scenario& sc, const std::string& file,
                              const std::vector<std::string>& machine_dirs) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "machine") {
      out[key] = inline_machine(r, kv.second, file, machine_dirs, sc.machine);
    } else if (key == "workload") {
      YAML::Node w = YAML::Clone(kv.second);
      if (!w["cpus"]) w["cpus"] = flow_list(sc.workload.cpus);
      out[key] = w;
    } else if (key == "variants") {
      YAML::Node vs(YAML::NodeType::Map);
      for (const auto& v : kv.second) {
        const Variant& var = sc.variant(v.first.Scalar());
        YAML::Node n = YAML::Clone(v.second);
        if (root["params"]) {
          YAML::Node params = YAML::Clone(root["params"]);
          if (v.second["params"])
            for (const auto& pv : v.second["params"]) params[pv.first.Scalar()] = YAML::Clone(pv.second);
          n["params"] = params;
        }
        if (v.second["machine"]) {
          n["machine"] = inline_machine(r, v.second["machine"], file, machine_dirs, var.machine);
          n["cpus"] = flow_list(var.workload.cpus);
        }
        vs[v.first.Scalar()] = n;
      }
      out[key] = vs;
    } else if (key == "strategies") {
      YAML::Node ss(YAML::NodeType::Map);
      for (const auto& st : kv.second) ss[st.first.Scalar()] = resolved_strategy_node(kv.second, st.first.Scalar());
      out[key] = ss;
    } else {
      out[key] = YAML::Clone(kv.second);
    }
  }
  YAML::Emitter e;
  e.SetIndent(2);
  e << out;
  return std::string(e.c_str()) + "\n";
}

Scenario load_from(const std::string& text, const std::string& file, const std::vector<std::string>& machine_dirs) {
  Reader r(file);
  YAML::Node root = parse_yaml(text, file);
  if (!root || root.IsNull())
    throw ScenarioError({file, 1, 1}, "the scenario is empty", "a mapping with scenario, machine, workload, strategies");
  r.expect_map(root, "the scenario");
  r.only_keys(root, "the scenario",
              {"scenario", "description", "source", "machine", "workload", "params", "variants", "strategies", "expect"});
  Scenario sc;
  sc.path = file;
  sc.text = text;
  sc.hash = hex64(sim::stable_hash(text));
  sc.name = r.name(r.require(root, "scenario", "the scenario"), "scenario name");
  if (root["description"]) sc.description = r.scalar(root["description"], "description");
  if (root["source"]) sc.source = r.scalar(root["source"], "source");

  const auto machine = r.require(root, "machine", "the scenario");
  sc.machine = load_machine_ref(r, machine, file, machine_dirs, sc.name + "-machine");
  sc.machine_name = sc.machine.name;

  const auto wl = r.require(root, "workload", "the scenario");
  r.expect_map(wl, "workload");
  r.only_keys(wl, "workload", {"tasks", "placement", "loop", "warmup", "duration", "cpus"});
  Workload& w = sc.workload;
  if (wl["tasks"]) {
    const std::string t = r.scalar(wl["tasks"], "tasks");
    if (t == "process") w.tasks = TaskKind::kProcess;
    else if (t == "thread") w.tasks = TaskKind::kThread;
    else r.fail(wl["tasks"], "unknown task kind '" + t + "'", "process or thread");
  } else {
    r.fail(wl, "workload has no 'tasks'", "'tasks: process' or 'tasks: thread'");
  }
  if (wl["placement"] && wl["placement"].IsSequence()) {
    // An explicit CPU list: task i runs on the i-th CPU.
    const Topology t(sc.machine);
    for (const auto& c : wl["placement"]) {
      const int cpu = static_cast<int>(r.integer(c, "placement CPU", 0, t.num_cpus() - 1));
      if (std::find(w.cpu_list.begin(), w.cpu_list.end(), cpu) != w.cpu_list.end())
        r.fail(c, "placement lists CPU " + std::to_string(cpu) + " twice", "each CPU once");
      w.cpu_list.push_back(cpu);
    }
    if (w.cpu_list.empty()) r.fail(wl["placement"], "placement is an empty list", "CPU numbers, or compact/spread/smt-last");
  } else if (wl["placement"]) {
    const std::string p = r.scalar(wl["placement"], "placement");
    if (p == "compact") w.placement = Placement::kCompact;
    else if (p == "spread") w.placement = Placement::kSpread;
    else if (p == "smt-last") w.placement = Placement::kSmtLast;
    else r.fail(wl["placement"], "unknown placement '" + p + "'", "compact, spread, smt-last or a list of CPUs");
  }
  const auto loop = r.require(wl, "loop", "workload");
  w.loop_mark = r.mark(loop);
  if (!loop.IsSequence() || loop.size() == 0) r.fail(loop, "workload loop is not a non-empty list", "a list of op names");
  for (const auto& op : loop) w.loop.push_back(r.name(op, "loop op"));
  w.warmup = r.duration(r.require(wl, "warmup", "workload"), "warmup", false);
  w.duration = r.duration(r.require(wl, "duration", "workload"), "duration", true);
  const Topology topo(sc.machine);
  if (const auto cpus = wl["cpus"]) {
    if (!cpus.IsSequence() || cpus.size() == 0) r.fail(cpus, "cpus is not a non-empty list", "a list such as [1, 2, 4]");
    for (const auto& c : cpus) w.cpus.push_back(static_cast<int>(r.integer(c, "cpu count", 1, topo.num_cpus())));
  } else {
    for (int c = 1; c < topo.num_cpus(); c *= 2) w.cpus.push_back(c);
    w.cpus.push_back(topo.num_cpus());
  }

  if (const auto params = root["params"]) {
    r.expect_map(params, "params");
    for (const auto& kv : params) sc.params[r.name(kv.first, "parameter name")] = parse_param(r, kv.second, kv.first.Scalar());
  }
  const fs::path here = fs::path(file).parent_path();
  Variant def;
  def.name = "default";
  def.params = sc.params;
  def.machine_name = sc.machine_name;
  def.machine = sc.machine;
  def.workload = w;
  def.mark = r.mark(root);
  sc.variants.push_back(def);
  if (const auto variants = root["variants"]) {
    r.expect_map(variants, "variants");
    for (const auto& kv : variants) {
      Variant v = def;
      v.name = r.name(kv.first, "variant name");
      v.mark = r.mark(kv.first);
      if (v.name == "default") r.fail(kv.first, "a variant is named 'default'", "another name: 'default' is the scenario as written");
      const std::string what = "variant '" + v.name + "'";
      r.expect_map(kv.second, what);
      r.only_keys(kv.second, what, {"description", "params", "machine", "tasks", "loop", "cpus"});
      if (kv.second["description"]) v.description = r.scalar(kv.second["description"], "description");
      if (const auto ps = kv.second["params"]) {
        r.expect_map(ps, "params of " + what);
        for (const auto& pv : ps) {
          const std::string pn = r.name(pv.first, "parameter name");
          auto it = sc.params.find(pn);
          if (it == sc.params.end())
            r.fail(pv.first, what + " sets parameter '" + pn + "', which 'params:' does not declare",
                   "a parameter declared under 'params:' with its default");
          const ParamValue val = parse_param(r, pv.second, pn);
          if (val.type != it->second.type)
            r.fail(pv.second, what + " gives parameter '" + pn + "' a " + to_string(val.type),
                   std::string("a ") + to_string(it->second.type) + ", as its default");
          v.params[pn] = val;
        }
      }
      if (const auto m = kv.second["machine"]) {
        v.machine = load_machine_ref(r, m, file, machine_dirs, sc.name + "-" + v.name + "-machine");
        v.machine_name = v.machine.name;
        if (!kv.second["cpus"]) {
          const Topology vt(v.machine);
          v.workload.cpus.clear();
          for (int c : w.cpus)
            if (c <= vt.num_cpus()) v.workload.cpus.push_back(c);
          if (v.workload.cpus.empty()) v.workload.cpus.push_back(vt.num_cpus());
        }
      }
      if (const auto t = kv.second["tasks"]) {
        const std::string ts = r.scalar(t, "tasks");
        if (ts == "process") v.workload.tasks = TaskKind::kProcess;
        else if (ts == "thread") v.workload.tasks = TaskKind::kThread;
        else r.fail(t, "unknown task kind '" + ts + "'", "process or thread");
      }
      if (const auto loop = kv.second["loop"]) {
        v.workload.loop.clear();
        v.workload.loop_mark = r.mark(loop);
        if (!loop.IsSequence() || loop.size() == 0) r.fail(loop, "variant loop is not a non-empty list", "a list of op names");
        for (const auto& op : loop) v.workload.loop.push_back(r.name(op, "loop op"));
      }
      if (const auto cpus = kv.second["cpus"]) {
        const Topology vt(v.machine);
        if (!cpus.IsSequence() || cpus.size() == 0) r.fail(cpus, "cpus is not a non-empty list", "a list such as [1, 2, 4]");
        v.workload.cpus.clear();
        for (const auto& c : cpus) v.workload.cpus.push_back(static_cast<int>(r.integer(c, "cpu count", 1, vt.num_cpus())));
      }
      sc.variants.push_back(v);
    }
  }

  const auto strategies = r.require(root, "strategies", "the scenario");
  r.expect_map(strategies, "strategies");
  if (strategies.size() == 0) r.fail(strategies, "strategies is empty", "at least one strategy");
  for (const auto& kv : strategies) sc.strategies.push_back(parse_strategy(r, r.name(kv.first, "strategy name"), kv.second));
  resolve_extends(r, sc.strategies, root);
  for (const auto& s : sc.strategies)
    for (const auto& v : sc.variants) check_references(s, v.workload.loop, v.workload.loop_mark, sc.params);
  if (root["expect"]) sc.expect = parse_expect(r, root["expect"], sc);
  sc.resolved_text = resolved_document(r, root, sc, file, machine_dirs);
  sc.resolved_hash = hex64(sim::stable_hash(sc.resolved_text));
  return sc;
}

}  // namespace

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
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  // A day of simulated time at most: an exponential draw (up to ~37 times
  // its mean) then still fits the int64 picosecond clock.
  const std::string too_large = "at most 86400s (a day) of simulated time";
  if (ip.size() > 15) throw ScenarioError(mark, "time '" + text + "' is too large", too_large);
  if (fp.size() > 12) throw ScenarioError(mark, "time '" + text + "' is finer than a picosecond", "a whole number of picoseconds");
  __int128 v = (ip.empty() ? 0 : std::stoll(ip)) * static_cast<__int128>(scale);
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

std::string find_machine_file(const std::string& name, const std::vector<std::string>& dirs) {
  std::vector<std::string> all = dirs;
  if (const char* env = std::getenv("VFSSIM_MACHINES")) all.push_back(env);
  all.push_back(VFSSIM_MACHINES_DIR);
  for (const auto& d : all) {
    if (d.empty()) continue;
    fs::path p = fs::path(d) / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

TopologySpec load_machine_file(const std::string& path) {
  const std::string text = read_file(path);
  Reader r(path);
  YAML::Node root = parse_yaml(text, path);
  if (!root || root.IsNull()) throw ScenarioError({path, 1, 1}, "the machine file is empty", "a machine mapping");
  return parse_machine(r, root, fs::path(path).stem().string());
}

// Only ScenarioError leaves the loader: an exception of yaml-cpp's own (an
// invalid node, a bad subscript) becomes one at its position.
static Scenario load_checked(const std::string& text, const std::string& file, const std::vector<std::string>& machine_dirs) {
  try {
    return load_from(text, file, machine_dirs);
  } catch (const YAML::Exception& e) {
    throw ScenarioError({file, e.mark.line < 0 ? 0 : e.mark.line + 1, e.mark.line < 0 ? 0 : e.mark.column + 1},
                        "YAML error: " + e.msg, "valid YAML of the scenario format");
  }
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& machine_dirs) {
  return load_checked(read_file(path), path, machine_dirs);
}

Scenario load_scenario_string(const std::string& text, const std::string& name,
                              const std::vector<std::string>& machine_dirs) {
  return load_checked(text, name, machine_dirs);
}

}  // namespace vfssim::models
