// A scenario's use of the libraries, expanded into the plain scenario it
// stands for (docs/scenario-format.md, "The code-path library"):
//
//   use: kernel/V          the version's declarations, objects and ops become
//                          each strategy's (a strategy's own `use:` wins), as if
//                          written there;
//   benchmark: B/TEST_MODE the test's workload, parameters, objects and loop ops;
//   objects:               instances of the version's object classes (a file,
//                          a directory), each declaring its dentry, locks, lines;
//   patch:                 edits of named ops (library.h's patch language);
//   call: OP + with:       the op with its `$NAME` placeholders bound (a path,
//                          an object), specialized into an op of its own;
//   $VALUE                 a library value of the machine's family (a cost with
//                          its range, a lock kind), one named constant wherever
//                          it is used.
//
// The expansion edits the document before anything else reads it: what the
// loader checks, what `show --resolved` prints and what a run stores is the
// expanded text, which loads without the library (a stored run stays
// reproducible when the library changes). Nodes keep their files: an error
// in a library op is placed in its version file (Reader::add_file).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "models/scenario/library.h"
#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace {

std::string at_text(const SourceMark& m) {
  return m.file + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

bool has(const YAML::Node& map, const std::string& key) {
  if (!map.IsDefined() || !map.IsMap()) return false;
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return true;
  return false;
}

// In an op's uses: it calls an op that a binding names (`call: $create_op`),
// whose own placeholders are not known until then.
constexpr const char* kAnyBinding = "*";

// `use:` of the scenario or a strategy.
struct Use {
  NodeRef node;  // where it is written
  std::string version, family;
  NodeRef values;    // its own values of library names
  NodeRef backport;  // commits of later versions applied on top
};

// An op as a strategy has it before it is specialized, and where it came from.
struct OpSource {
  NodeRef key, value;
  std::string where;  // "kernel v6.6 (FILE:L:C)", "strategy 'x' (FILE:L:C)"
};

// A strategy's library context: its version (or none) and what its ops are.
struct Context {
  const LibraryVersion* version = nullptr;
  std::string family;
  std::map<std::string, NodeRef> values;  // name -> the family's value node
  std::map<std::string, OpSource> ops;       // effective, unspecialized
  std::map<std::string, NodeRef> objects; // name -> instance node (effective)
  std::map<std::string, NodeRef> object_keys;
};

class Expander {
 public:
  Expander(Reader& r, YAML::Node& root, const std::string& file) : r_(r), root_(root), lib_(r, library_dirs(file)) {}

  void run();

 private:
  Use parse_use(const YAML::Node& n);
  void merge_workload(const BenchmarkTest& b, const YAML::Node& at);
  void merge_params(const YAML::Node& from);
  void expand_strategy(const std::string& name, std::set<std::string>& done);
  void instantiate(const Context& c, const std::string& name, const YAML::Node& inst, const YAML::Node& inst_key,
                   YAML::Node& strategy);
  std::map<std::string, NodeRef> values_of(const LibraryVersion& v, const Use& u);
  std::vector<std::string> loop_ops() const;
  YAML::Node specialize(Context& c, const std::string& strategy, const std::string& op, const std::map<std::string, NodeRef>& b,
                        const YAML::Node& call_site, std::map<std::string, NodeRef>& out);
  YAML::Node subst(Context& c, const std::string& strategy, const YAML::Node& n, const std::map<std::string, NodeRef>& b,
                   std::map<std::string, NodeRef>& out, int depth);
  std::set<std::string> uses(Context& c, const std::string& strategy, const std::string& op, std::set<std::string>& visiting);
  void uses_in(Context& c, const std::string& strategy, const YAML::Node& n, std::set<std::string>& out,
               std::set<std::string>& visiting, int depth);
  bool is_binding(const Context& c, const std::string& name) const {
    return !c.values.count(name) && !params_.count(name);
  }
  YAML::Node steps_of(const YAML::Node& op) const { return op.IsMap() ? op["steps"] : op; }
  // `defaults: {NAME: VALUE}` of an op in the mapping form: its bindings when a caller gives none.
  std::map<std::string, NodeRef> defaults_of(const YAML::Node& op) const {
    std::map<std::string, NodeRef> out;
    if (op.IsMap() && op["defaults"]) {
      r_.expect_map(op["defaults"], "defaults of an op");
      for (const auto& kv : op["defaults"]) out[r_.name(kv.first, "binding name")] = kv.second;
    }
    return out;
  }

  Reader& r_;
  YAML::Node& root_;
  Library lib_;
  Use top_use_;
  std::vector<BenchmarkTest> tests_;  // the scenario's and its variants' tests
  NodeRef benchmark_at_;               // the scenario's benchmark: key (an error of a benchmark without a kernel goes there)
  std::set<std::string> params_;      // declared parameter names (after the benchmark's are merged)
  std::map<std::string, Context> contexts_;
  std::map<std::string, std::map<std::string, std::set<std::string>>> uses_memo_;
  // Specializations per strategy: op -> (canonical bindings -> name).
  std::map<std::string, std::map<std::string, std::vector<std::pair<std::string, std::string>>>> specs_;
};

Use Expander::parse_use(const YAML::Node& n) {
  Use u;
  u.node = n;
  const std::string expected = "kernel/VERSION (such as kernel/v6.6) or {kernel: VERSION, family: NAME, values: {NAME: VALUE}, backport: [COMMIT]}";
  if (n.IsScalar()) {
    const std::string s = n.Scalar();
    if (s.rfind("kernel/", 0) != 0 || s.size() == 7) r_.fail(n, "use: '" + s + "' names no kernel version", expected);
    u.version = s.substr(7);
    return u;
  }
  r_.expect_map(n, "use");
  r_.only_keys(n, "use", {"kernel", "family", "values", "backport"});
  if (n["backport"]) u.backport = n["backport"];
  u.version = r_.name(r_.require(n, "kernel", "use"), "kernel version");
  if (n["family"]) u.family = r_.name(n["family"], "family");
  if (n["values"]) {
    r_.expect_map(n["values"], "values of use");
    u.values = n["values"];
  }
  return u;
}

std::map<std::string, NodeRef> Expander::values_of(const LibraryVersion& v, const Use& u) {
  std::map<std::string, NodeRef> out;
  const auto fams = lib_.families(u.node);
  auto it = v.sections.find("values");
  if (it != v.sections.end())
    for (const auto& [name, e] : it->second) {
      NodeRef val = e.value;
      std::string why;
      std::string range = "kernel." + e.version + "." + name;
      if (val.IsMap() && !val["estimate"]) {  // per family
        for (const auto& kv : val) {
          const std::string k = kv.first.Scalar();
          if (k != "why" && std::find(fams.begin(), fams.end(), k) == fams.end())
            r_.fail(kv.first, "value '" + name + "' of kernel " + e.version + " names family '" + k + "'",
                    "a family of kernel/families.yaml, or why");
        }
        if (val["why"]) why = r_.scalar(val["why"], "why");
        for (const auto& f : fams)  // the library is complete: every family, whichever this machine's is
          if (!val[f])
            r_.fail(e.key, "value '" + name + "' of kernel " + e.version + " gives nothing for family '" + f + "'",
                    "a value for every family of kernel/families.yaml");
        val = val[u.family];
        range = "kernel." + e.version + "." + u.family + "." + name;
      }
      if (val.IsMap() && val["fit"])
        r_.fail(val["fit"], "value '" + name + "' of kernel " + e.version + " is fitted",
                "estimates in the library; a fitted constant goes in the scenario (use: {values: {" + name + ": $PARAM}})");
      r_.name_range(val, range, why);
      out[name] = val;
    }
  if (u.values)
    for (const auto& kv : u.values) {
      const std::string name = r_.name(kv.first, "value name");
      if (!out.count(name))
        r_.fail(kv.first, "use: sets value '" + name + "', which kernel " + v.name + " does not have", "a value of the version");
      out[name] = kv.second;
    }
  return out;
}

void Expander::merge_params(const YAML::Node& from) {
  if (!from) return;
  r_.expect_map(from, "params of the benchmark");
  YAML::Node params = has(root_, "params") ? root_["params"] : YAML::Node(YAML::NodeType::Map);
  for (const auto& kv : from)
    if (!has(params, kv.first.Scalar())) params.force_insert(kv.first, kv.second);
  root_["params"] = params;
}

// The benchmark's workload (its defaults, the mode, the test's) under the
// scenario's own keys.
void Expander::merge_workload(const BenchmarkTest& b, const YAML::Node&) {
  YAML::Node w = r_.new_node(YAML::NodeType::Map);
  const YAML::Node own = has(root_, "workload") ? root_["workload"] : absent();
  if (own) r_.expect_map(own, "workload");
  std::map<std::string, NodeRef> keys, values;
  const auto take = [&](const YAML::Node& from) {
    if (!from) return;
    r_.expect_map(from, "workload of benchmark " + b.benchmark);
    for (const auto& kv : from) {
      const std::string k = kv.first.Scalar();
      if (k == "loop") keys.erase("roles"), values.erase("roles");
      if (k == "roles") keys.erase("loop"), values.erase("loop");
      keys[k] = kv.first;
      values[k] = kv.second;
    }
  };
  take(b.root["workload"]);
  take(b.mode_node);
  take(b.node["workload"]);
  YAML::Node loop = r_.new_node(YAML::NodeType::Map);
  for (const char* k : {"loop", "roles"})
    if (b.node[k]) loop.force_insert(YAML::Node(k), b.node[k]);
  take(loop);
  take(own);
  for (const char* k : {"tasks", "placement", "loop", "roles", "warmup", "duration", "cpus"})
    if (keys.count(k)) w.force_insert(keys[k], values[k]);
  for (const auto& [k, key] : keys)
    if (!has(w, k)) w.force_insert(key, values[k]);
  if (own) r_.add_made(w, r_.mark(own));
  root_["workload"] = w;
}

std::vector<std::string> Expander::loop_ops() const {
  std::vector<std::string> out;
  const auto add = [&](const YAML::Node& w) {
    if (!w.IsDefined() || !w.IsMap()) return;
    if (w["loop"] && w["loop"].IsSequence())
      for (const auto& o : w["loop"])
        if (o.IsScalar()) out.push_back(o.Scalar());
    if (w["roles"] && w["roles"].IsMap())
      for (const auto& kv : w["roles"])
        if (kv.second.IsMap() && kv.second["loop"] && kv.second["loop"].IsSequence())
          for (const auto& o : kv.second["loop"])
            if (o.IsScalar()) out.push_back(o.Scalar());
  };
  add(root_["workload"]);
  if (has(root_, "variants") && root_["variants"].IsMap())
    for (const auto& kv : root_["variants"]) add(kv.second);
  return out;
}

// An object of a class: its dentry and its members' declarations, each of
// the instance's scope, written into the strategy unless it declares them.
void Expander::instantiate(const Context& c, const std::string& name, const YAML::Node& inst, const YAML::Node& inst_key,
                           YAML::Node& strategy) {
  const std::string what = "object '" + name + "'";
  r_.expect_map(inst, what);
  r_.only_keys(inst, what, {"class", "scope", "objects", "pick"});
  const YAML::Node cls_name = r_.require(inst, "class", what);
  const std::string cn = r_.name(cls_name, "class");
  static const std::map<std::string, LibraryEntry> kNone;
  const std::map<std::string, LibraryEntry>* found = &kNone;
  if (c.version)
    if (auto f = c.version->sections.find("classes"); f != c.version->sections.end()) found = &f->second;
  const auto& classes = *found;
  auto cit = classes.find(cn);
  if (cit == classes.end()) {
    std::string list;
    for (const auto& [k, e] : classes) list += (list.empty() ? "" : ", ") + k;
    r_.fail(cls_name, what + " is of class '" + cn + "', which " +
                          (c.version ? "kernel " + c.version->name + " does not have" : std::string("no kernel version (use:) gives")),
            "a class of the version (" + (list.empty() ? std::string("none") : list) + ")");
  }
  const YAML::Node cls = cit->second.value;
  const std::string cw = "class '" + cn + "' of kernel " + cit->second.version;
  r_.expect_map(cls, cw);
  r_.only_keys(cls, cw, {"description", "dentry", "locks", "lines", "seqcounts"});
  r_.require(inst, "scope", what);
  const auto scoped = [&](const YAML::Node& member, const YAML::Node& at) {
    YAML::Node d = r_.new_node(YAML::NodeType::Map);
    if (member && member.IsMap()) {
      for (const auto& kv : member) {
        const std::string k = kv.first.Scalar();
        if (k == "on" && kv.second.IsScalar() && !kv.second.Scalar().empty() && kv.second.Scalar()[0] == '.') {
          YAML::Node on(name + kv.second.Scalar());
          r_.add_made(on, r_.mark(kv.second));
          d.force_insert(kv.first, on);
        } else if (kv.second.IsScalar() && kv.second.Scalar().size() > 1 && kv.second.Scalar()[0] == '$' &&
                   c.values.count(kv.second.Scalar().substr(1))) {
          d.force_insert(kv.first, c.values.at(kv.second.Scalar().substr(1)));
        } else {
          d.force_insert(kv.first, kv.second);
        }
      }
    } else if (member && !member.IsNull()) {
      r_.fail(member, "a member of " + cw + " is not a mapping", "a declaration such as {kind: $spinlock} (its scope is the object's)");
    }
    if (!has(d, "scope") && !has(d, "on"))
      for (const char* k : {"scope", "objects", "pick"})
        if (inst[k]) d.force_insert(YAML::Node(k), inst[k]);
    r_.add_made(d, r_.mark(at));
    return d;
  };
  const auto put = [&](const char* section, const std::string& decl, const YAML::Node& value) {
    if (!has(strategy, section)) strategy[section] = YAML::Node(YAML::NodeType::Map);
    YAML::Node sec = strategy[section];
    if (has(sec, decl)) return;  // the strategy's own
    YAML::Node key(decl);
    r_.add_made(key, r_.mark(inst_key));
    sec.force_insert(key, value);
  };
  if (cls["dentry"] && r_.boolean(cls["dentry"], "dentry of " + cw)) put("dentries", name, scoped(YAML::Node(), inst));
  for (const char* section : {"locks", "lines", "seqcounts"})
    if (const YAML::Node members = cls[section]) {
      r_.expect_map(members, std::string(section) + " of " + cw);
      for (const auto& kv : members) put(section, name + "." + r_.name(kv.first, "member name"), scoped(kv.second, kv.second));
    }
}

// The `$NAME` placeholders an op's steps (and the ops it calls without
// binding them) leave to its caller.
void Expander::uses_in(Context& c, const std::string& strategy, const YAML::Node& n, std::set<std::string>& out,
                       std::set<std::string>& visiting, int depth) {
  if (depth > 4 * Reader::kMaxNesting || !n.IsDefined()) return;
  if (n.IsScalar()) {
    const std::string s = n.Scalar();
    if (s.size() > 1 && s[0] == '$') {
      const std::string name = s.substr(1, s.find('.') == std::string::npos ? std::string::npos : s.find('.') - 1);
      if (is_binding(c, name)) out.insert(name);
    }
    return;
  }
  if (n.IsSequence()) {
    for (const auto& e : n) uses_in(c, strategy, e, out, visiting, depth + 1);
    return;
  }
  if (n.IsMap()) {
    if (n["call"] && n["call"].IsScalar()) {
      const std::string target = n["call"].Scalar();
      if (target.size() > 1 && target[0] == '$') {  // an op its caller names: it may use any binding on the way
        out.insert(target.substr(1));
        out.insert(kAnyBinding);
      }
      std::set<std::string> callee = uses(c, strategy, target, visiting);
      if (const YAML::Node w = n["with"]; w && w.IsMap())
        for (const auto& kv : w) {
          callee.erase(kv.first.Scalar());
          uses_in(c, strategy, kv.second, out, visiting, depth + 1);
        }
      out.insert(callee.begin(), callee.end());
    }
    for (const auto& kv : n)
      if (kv.first.Scalar() != "with" && kv.first.Scalar() != "call") uses_in(c, strategy, kv.second, out, visiting, depth + 1);
  }
}

std::set<std::string> Expander::uses(Context& c, const std::string& strategy, const std::string& op,
                                     std::set<std::string>& visiting) {
  auto it = c.ops.find(op);
  if (it == c.ops.end()) return {};
  auto& memo = uses_memo_[strategy];
  if (auto m = memo.find(op); m != memo.end()) return m->second;
  if (!visiting.insert(op).second) return {};  // a cycle: the loader's check names it
  std::set<std::string> out;
  uses_in(c, strategy, steps_of(it->second.value), out, visiting, 0);
  for (const auto& [d, v] : defaults_of(it->second.value)) out.erase(d);  // the op binds them itself unless its caller does
  visiting.erase(op);
  memo[op] = out;
  return out;
}

YAML::Node Expander::subst(Context& c, const std::string& strategy, const YAML::Node& n, const std::map<std::string, NodeRef>& b,
                           std::map<std::string, NodeRef>& out, int depth) {
  if (depth > 4 * Reader::kMaxNesting || !n.IsDefined()) return n;
  if (n.IsScalar()) {
    const std::string s = n.Scalar();
    if (s.size() < 2 || s[0] != '$') return n;
    const auto dot = s.find('.');
    const std::string name = s.substr(1, dot == std::string::npos ? std::string::npos : dot - 1);
    if (auto it = b.find(name); it != b.end()) {
      if (dot == std::string::npos) return it->second;
      if (!it->second.IsScalar())
        r_.fail(n, "'" + s + "' takes a member of binding '" + name + "', which is bound to a list", "a binding to one object");
      YAML::Node made(it->second.Scalar() + s.substr(dot));
      r_.add_made(made, r_.mark(n));
      return made;
    }
    if (dot == std::string::npos)
      if (auto v = c.values.find(name); v != c.values.end() && !params_.count(name)) return v->second;
    if (is_binding(c, name))
      r_.fail(n, "'" + s + "' is bound by no call on the way from the loop of strategy '" + strategy + "'",
              "a call that binds it (call: OP, with: {" + name + ": ...}), a library value or a parameter");
    return n;
  }
  if (n.IsSequence()) {
    YAML::Node seq = r_.new_node(YAML::NodeType::Sequence);
    bool changed = false;
    for (const auto& e : n) {
      const YAML::Node x = subst(c, strategy, e, b, out, depth + 1);
      changed = changed || !x.is(e);
      seq.push_back(x);
    }
    if (!changed) return n;
    r_.add_made(seq, r_.mark(n));
    return seq;
  }
  if (!n.IsMap()) return n;
  if (n["call"] && n["call"].IsScalar() && n["call"].Scalar().size() > 1 && n["call"].Scalar()[0] == '$') {
    // call: $NAME, an op its caller names (a file system's ->open)
    auto it = b.find(n["call"].Scalar().substr(1));
    if (it == b.end() || !it->second.IsScalar())
      r_.fail(n["call"], "the step calls '" + n["call"].Scalar() + "', which no call on the way binds to an op",
              "with: {" + n["call"].Scalar().substr(1) + ": OP} in a caller");
    YAML::Node m = r_.new_node(YAML::NodeType::Map);
    for (const auto& kv : n) m.force_insert(kv.first, kv.first.Scalar() == "call" ? it->second : kv.second);
    r_.add_made(m, r_.mark(n));
    return subst(c, strategy, m, b, out, depth + 1);
  }
  if (n["call"] && n["call"].IsScalar() && n["with"] && !c.ops.count(n["call"].Scalar()) && !c.version && benchmark_at_)
    r_.fail(benchmark_at_, "the benchmark's ops call op '" + n["call"].Scalar() + "' (" + at_text(r_.mark(n)) + "), and strategy '" +
                               strategy + "' uses no kernel version that has it",
            "use: kernel/VERSION (the library's syscalls) at the top level or in the strategy");
  if (n["call"] && n["call"].IsScalar() && n["with"] && !c.ops.count(n["call"].Scalar()))
    r_.fail(n, "the step calls op '" + n["call"].Scalar() + "' with bindings, and strategy '" + strategy + "' has no such op",
            "an op of the strategy or its kernel version");
  if (n["call"] && n["call"].IsScalar() && c.ops.count(n["call"].Scalar())) {
    std::map<std::string, NodeRef> inner = b;
    if (const YAML::Node w = n["with"]) {
      r_.expect_map(w, "with of the call of op '" + n["call"].Scalar() + "'");
      for (const auto& kv : w) {
        const std::string k = r_.name(kv.first, "binding name");
        if (!is_binding(c, k))
          r_.fail(kv.first, "the call binds '" + k + "', which is a " + (c.values.count(k) ? "library value" : "parameter"),
                  "a name the called op uses as $NAME (a path, an object)");
        inner[k] = subst(c, strategy, kv.second, b, out, depth + 1);
      }
    }
    const std::string name = specialize(c, strategy, n["call"].Scalar(), inner, n, out).Scalar();
    YAML::Node m = r_.new_node(YAML::NodeType::Map);
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      if (k == "with") continue;
      if (k == "call") {
        YAML::Node callee(name);
        r_.add_made(callee, r_.mark(kv.second));
        m.force_insert(kv.first, callee);
      } else {
        m.force_insert(kv.first, subst(c, strategy, kv.second, b, out, depth + 1));
      }
    }
    r_.add_made(m, r_.mark(n));
    return m;
  }
  YAML::Node m = r_.new_node(YAML::NodeType::Map);
  bool changed = false;
  for (const auto& kv : n) {
    const YAML::Node x = subst(c, strategy, kv.second, b, out, depth + 1);
    changed = changed || !x.is(kv.second);
    m.force_insert(kv.first, x);
  }
  if (!changed) return n;
  r_.add_made(m, r_.mark(n));
  return m;
}

std::string canonical(const std::map<std::string, NodeRef>& b) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << YAML::BeginMap;
  for (const auto& [k, v] : b) e << YAML::Key << k << YAML::Value << v;
  e << YAML::EndMap;
  return e.c_str();
}

// The op `op` with bindings `b` (restricted to the placeholders it uses):
// its name in the expanded strategy, the op written into `out` once.
YAML::Node Expander::specialize(Context& c, const std::string& strategy, const std::string& op,
                                const std::map<std::string, NodeRef>& b, const YAML::Node& call_site,
                                std::map<std::string, NodeRef>& out) {
  auto it = c.ops.find(op);
  if (it == c.ops.end()) return YAML::Node(op);  // the loader reports an op nobody defines
  std::set<std::string> visiting;
  const std::set<std::string> used = uses(c, strategy, op, visiting);
  std::map<std::string, NodeRef> mine;
  if (used.count(kAnyBinding)) mine = b;  // an op it calls is its caller's choice: every binding passes down
  for (const auto& u : used) {
    if (u == kAnyBinding) continue;
    auto bit = b.find(u);
    if (bit == b.end()) {
      const SourceMark m = call_site ? r_.mark(call_site) : r_.mark(it->second.key);
      throw ScenarioError(m, "op '" + op + "' of " + it->second.where + " uses $" + u + ", which " +
                                 (call_site ? "the call here does not bind" : "a loop op cannot be given"),
                          "call: " + op + " with: {" + u + ": ...} (a path, an object)");
    }
    mine[u] = bit->second;
  }
  for (const auto& [d, v] : defaults_of(it->second.value)) {
    auto bit = b.find(d);
    mine[d] = bit != b.end() ? bit->second : v;
  }
  const std::string key = canonical(mine);
  auto& list = specs_[strategy][op];
  for (const auto& [k, name] : list)
    if (k == key) return YAML::Node(name);
  std::string name = list.empty() ? op : op + "." + std::to_string(list.size() + 1);
  while (out.count(name) || (name != op && c.ops.count(name))) name += "_";
  list.push_back({key, name});
  out[name] = absent();  // reserved: a recursive call finds it (the loader reports the cycle)
  const YAML::Node value = it->second.value;
  NodeRef done;
  if (value.IsMap()) {
    YAML::Node m = r_.new_node(YAML::NodeType::Map);
    for (const auto& kv : value) {
      const std::string k = kv.first.Scalar();
      if (k == "defaults") continue;  // bound now
      m.force_insert(kv.first, k == "steps" ? subst(c, strategy, kv.second, mine, out, 0) : kv.second);
    }
    if (name != op && !has(m, "fn")) m["fn"] = op;  // the profile still shows the kernel function
    r_.add_made(m, r_.mark(value));
    done = m;
  } else {
    const YAML::Node steps = subst(c, strategy, value, mine, out, 0);
    if (name != op) {
      YAML::Node m = r_.new_node(YAML::NodeType::Map);
      m["fn"] = op;
      m["steps"] = steps;
      r_.add_made(m, r_.mark(value));
      done = m;
    } else {
      done = steps;
    }
  }
  out[name] = done;
  return YAML::Node(name);
}

void Expander::expand_strategy(const std::string& name, std::set<std::string>& done) {
  if (done.count(name)) return;
  YAML::Node strategies = root_["strategies"];
  YAML::Node s = strategies[name];
  if (!s.IsMap()) return;  // the loader reports it
  done.insert(name);       // (a cycle of extends stops here; the loader names it)
  std::string parent;
  if (has(s, "extends") && s["extends"].IsScalar() && has(strategies, s["extends"].Scalar())) {
    parent = s["extends"].Scalar();
    expand_strategy(parent, done);
  }
  Context c;
  const Context* pc = contexts_.count(parent) ? &contexts_.at(parent) : nullptr;
  if (pc) c = *pc;
  Use use;
  if (has(s, "use")) use = parse_use(s["use"]);
  else if (parent.empty()) use = top_use_;
  if (!use.version.empty()) {
    c.version = use.backport ? &lib_.backported(use.version, use.backport, use.backport) : &lib_.version(use.version, use.node);
    if (use.family.empty()) use.family = top_use_.family;
    c.family = use.family;
    c.values = values_of(*c.version, use);
    // The scenario's own values (a fitted constant of its machine) hold for
    // every strategy, whichever version it uses, unless it sets its own.
    if (top_use_.values && !use.node.is(top_use_.node))
      for (const auto& kv : top_use_.values) {
        const std::string n = kv.first.Scalar();
        if (c.values.count(n) && !(use.values && use.values[n])) c.values[n] = kv.second;
      }
  }
  const bool fresh = !use.version.empty();  // the version's declarations go into this strategy
  const auto own = [&](const char* section) { return has(s, section) ? s[section] : absent(); };
  // Declarations (a version's, a benchmark's) under the strategy's own,
  // which win, and under those put before them; their $VALUEs substituted.
  const auto declare = [&](const char* section, const std::vector<std::pair<NodeRef, NodeRef>>& entries) {
    if (entries.empty()) return;
    if (!has(s, section)) s[section] = YAML::Node(YAML::NodeType::Map);
    YAML::Node sec = s[section];
    r_.expect_map(sec, std::string(section) + " of strategy '" + name + "'");
    for (const auto& [key, value] : entries)
      if (!has(sec, key.Scalar())) {
        std::map<std::string, NodeRef> none;
        sec.force_insert(key, subst(c, name, value, {}, none, 0));
      }
  };
  if (fresh) {
    for (const char* section : {"locks", "lines", "seqcounts", "pools"}) {
      std::vector<std::pair<NodeRef, NodeRef>> entries;
      if (c.version->sections.count(section))
        for (const auto& [n, e] : c.version->sections.at(section)) entries.emplace_back(e.key, e.value);
      declare(section, entries);
    }
    if (!has(s, "kernel") && c.version->kernel) {
      YAML::Node k = r_.new_node(YAML::NodeType::Map);
      k["hz"] = c.version->kernel;
      s["kernel"] = k;
    }
    if (!has(s, "dentry_lock") && c.version->dentry_lock) {
      std::map<std::string, NodeRef> none;
      s["dentry_lock"] = subst(c, name, c.version->dentry_lock, {}, none, 0);
    }
    for (const auto& [n, e] : c.version->sections.count("objects") ? c.version->sections.at("objects") : std::map<std::string, LibraryEntry>{}) {
      c.objects[n] = e.value;
      c.object_keys[n] = e.key;
    }
    for (const auto& [n, e] : c.version->sections.count("ops") ? c.version->sections.at("ops") : std::map<std::string, LibraryEntry>{})
      c.ops[n] = OpSource{e.key, e.value, "kernel " + e.version + " (" + at_text(r_.mark(e.key)) + ")"};
  }
  // The benchmark's objects and ops, for a strategy that starts the chain.
  if (parent.empty())
    for (const auto& t : tests_) {
      for (const YAML::Node& from : {t.root, t.node}) {
        if (const YAML::Node objs = from["objects"]) {
          r_.expect_map(objs, "objects of benchmark " + t.benchmark);
          for (const auto& kv : objs) c.objects[kv.first.Scalar()] = kv.second, c.object_keys[kv.first.Scalar()] = kv.first;
        }
        // A pool the benchmark's ops allocate from (vm-scalability's
        // free_pages: the library's reclaim path leaves it to the caller).
        if (const YAML::Node pools = from["pools"]) {
          r_.expect_map(pools, "pools of benchmark " + t.benchmark);
          std::vector<std::pair<NodeRef, NodeRef>> entries;
          for (const auto& kv : pools) {
            r_.name(kv.first, "pool name");
            entries.emplace_back(kv.first, kv.second);
          }
          declare("pools", entries);
        }
        if (const YAML::Node ops = from["ops"]) {
          r_.expect_map(ops, "ops of benchmark " + t.benchmark);
          for (const auto& kv : ops)
            c.ops[r_.name(kv.first, "op name")] = OpSource{kv.first, kv.second, "benchmark " + t.benchmark + " (" + at_text(r_.mark(kv.first)) + ")"};
        }
      }
    }
  if (const YAML::Node objs = own("objects")) {
    r_.expect_map(objs, "objects of strategy '" + name + "'");
    for (const auto& kv : objs) c.objects[r_.name(kv.first, "object name")] = kv.second, c.object_keys[kv.first.Scalar()] = kv.first;
  }
  if (fresh || own("objects"))
    for (const auto& [n, inst] : c.objects) instantiate(c, n, inst, c.object_keys[n], s);
  if (const YAML::Node ops = own("ops")) {
    r_.expect_map(ops, "ops of strategy '" + name + "'");
    for (const auto& kv : ops)
      c.ops[r_.name(kv.first, "op name")] = OpSource{kv.first, kv.second, "strategy '" + name + "' (" + at_text(r_.mark(kv.first)) + ")"};
  }
  if (const YAML::Node patch = own("patch")) {
    r_.expect_map(patch, "patch of strategy '" + name + "'");
    for (const auto& kv : patch) {
      const std::string op = r_.name(kv.first, "patched op");
      auto it = c.ops.find(op);
      if (it == c.ops.end())
        r_.fail(kv.first, "strategy '" + name + "' patches op '" + op + "', which " +
                              (c.version ? "kernel " + c.version->name + " (" + c.version->file + ")" : "the strategy") +
                              (parent.empty() ? "" : " or strategy '" + parent + "'") + " does not have",
                  "an op of the version or the strategy");
      OpSource& src = it->second;
      src.value = patch_op(r_, src.value, kv.second, op, src.where);
      src.where = "strategy '" + name + "' (patched " + src.where + ")";
    }
  }
  // The ops the loops reach, specialized; the strategy's own ops too.
  std::map<std::string, NodeRef> out;
  for (const auto& l : loop_ops()) specialize(c, name, l, {}, absent(), out);
  if (const YAML::Node ops = own("ops"))
    for (const auto& kv : ops) {  // an op that takes bindings is specialized where it is called
      std::set<std::string> visiting;
      if (uses(c, name, kv.first.Scalar(), visiting).empty()) specialize(c, name, kv.first.Scalar(), {}, absent(), out);
    }
  YAML::Node ops = r_.new_node(YAML::NodeType::Map);
  for (const auto& [n, v] : out) {
    if (!v) continue;
    auto src = c.ops.find(n);
    NodeRef key = YAML::Node(n);
    if (src != c.ops.end()) key = src->second.key;
    ops.force_insert(key, v);
  }
  if (has(s, "ops")) r_.add_made(ops, r_.mark(s["ops"]));
  for (const char* k : {"use", "patch", "objects", "ops"}) s.remove(k);
  s.force_insert(YAML::Node("ops"), ops);
  s.SetStyle(YAML::EmitterStyle::Block);  // `base: {}` grew: the resolved text writes it out
  for (const char* k : {"locks", "lines", "seqcounts", "dentries"})
    if (has(s, k)) s[k].SetStyle(YAML::EmitterStyle::Block);
  contexts_[name] = c;
}

void Expander::run() {
  const bool top = has(root_, "use") || has(root_, "benchmark");
  bool any = top;
  if (has(root_, "strategies") && root_["strategies"].IsMap())
    for (const auto& kv : root_["strategies"])
      if (kv.second.IsMap())
        for (const char* k : {"use", "patch", "objects"}) any = any || has(kv.second, k);
  if (!any) return;
  if (has(root_, "use")) top_use_ = parse_use(root_["use"]);
  // The machine's family: one set of library values per family.
  bool uses_library = !top_use_.version.empty();
  if (has(root_, "strategies") && root_["strategies"].IsMap())
    for (const auto& kv : root_["strategies"])
      if (kv.second.IsMap() && has(kv.second, "use")) {
        uses_library = true;
        const Use u = parse_use(kv.second["use"]);
        if (top_use_.family.empty()) top_use_.family = u.family;
      }
  if (uses_library && top_use_.family.empty()) {
    const YAML::Node m = root_["machine"];
    const auto fams = lib_.families(m ? m : root_);
    std::string list;
    for (const auto& f : fams) list += (list.empty() ? "" : ", ") + f;
    if (!m || !m.IsScalar() || m.Scalar().find('/') != std::string::npos || m.Scalar().find(".yaml") != std::string::npos)
      r_.fail(m ? m : root_, "the machine is not a preset, so the library cannot tell its family",
              "use: {kernel: VERSION, family: NAME} with a family of kernel/families.yaml (" + list + ")");
    top_use_.family = lib_.family_of(m.Scalar(), m);
    if (top_use_.family.empty())
      r_.fail(m, "machine preset '" + m.Scalar() + "' is in no family of the code-path library (kernel/families.yaml)",
              "use: {kernel: VERSION, family: NAME} (" + list + "), or the preset added to its family");
    if (has(root_, "variants") && root_["variants"].IsMap())
      for (const auto& kv : root_["variants"])
        if (kv.second.IsMap() && has(kv.second, "machine") && kv.second["machine"].IsScalar()) {
          const std::string f = lib_.family_of(kv.second["machine"].Scalar(), kv.second["machine"]);
          if (f != top_use_.family)
            r_.fail(kv.second["machine"], "variant '" + kv.first.Scalar() + "' runs on machine '" + kv.second["machine"].Scalar() +
                                              "' of family '" + (f.empty() ? std::string("none") : f) + "', the scenario on family '" +
                                              top_use_.family + "'",
                    "variants on machines of the scenario's family (the library's values are one set per family)");
        }
  }
  // The benchmark: workload, parameters, the variants' own tests.
  if (has(root_, "benchmark")) {
    const YAML::Node b = root_["benchmark"];
    benchmark_at_ = b;
    tests_.push_back(lib_.benchmark(r_.scalar(b, "benchmark"), b));
    merge_workload(tests_.back(), b);
    merge_params(tests_.back().root["params"]);
    merge_params(tests_.back().node["params"]);
  }
  if (has(root_, "variants") && root_["variants"].IsMap())
    for (auto kv : root_["variants"]) {
      if (!kv.second.IsMap() || !has(kv.second, "benchmark")) continue;
      const YAML::Node b = kv.second["benchmark"];
      if (!benchmark_at_) benchmark_at_ = b;
      BenchmarkTest t = lib_.benchmark(r_.scalar(b, "benchmark"), b);
      YAML::Node v = kv.second;
      for (const char* k : {"tasks", "placement"}) {  // the mode's, else the test's, else the benchmark's
        if (has(v, k)) continue;
        for (const YAML::Node& from : {YAML::Node(t.mode_node), YAML::Node(t.node["workload"]), YAML::Node(t.root["workload"])})
          if (from && from.IsMap() && from[k]) {
            v.force_insert(YAML::Node(k), from[k]);
            break;
          }
      }
      if (!has(v, "loop") && !has(v, "roles")) {
        if (t.node["loop"]) v.force_insert(YAML::Node("loop"), t.node["loop"]);
        else if (t.node["roles"]) v.force_insert(YAML::Node("roles"), t.node["roles"]);
      }
      merge_params(t.node["params"]);
      v.remove("benchmark");
      tests_.push_back(t);
    }
  if (has(root_, "params") && root_["params"].IsMap())
    for (const auto& kv : root_["params"])
      if (kv.first.IsScalar()) params_.insert(kv.first.Scalar());
  std::set<std::string> done;
  if (has(root_, "strategies") && root_["strategies"].IsMap()) {
    std::vector<std::string> names;
    for (const auto& kv : root_["strategies"]) names.push_back(kv.first.Scalar());
    for (const auto& n : names) expand_strategy(n, done);
  }
  root_.remove("use");
  root_.remove("benchmark");
}

}  // namespace

void expand_library(Reader& r, YAML::Node& root, const std::string& file) {
  if (!root.IsDefined() || !root.IsMap()) return;
  Expander(r, root, file).run();
}

}  // namespace vfssim::models::parse
