// The code-path and benchmark libraries: version files resolved along
// their `inherits:` chains, benchmarks and their tests, machine families,
// and the patch language both the versions and the scenarios use.
#include "models/scenario/library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace fs = std::filesystem;

namespace {

std::string at_text(const SourceMark& m) {
  return m.file + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

bool is_section(const std::string& k) {
  return std::find_if(std::begin(kLibrarySections), std::end(kLibrarySections), [&](const char* s) { return k == s; }) !=
         std::end(kLibrarySections);
}

std::string section_list() {
  std::string out;
  for (const char* s : kLibrarySections) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

// A commit as the kernel's history names it: 12 or more hex digits.
bool is_commit(const std::string& s) {
  if (s.size() < 12 || s.size() > 40) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

std::vector<std::string> library_dirs(const std::string& scenario_file) {
  const fs::path here = fs::path(scenario_file).parent_path();
  return {(here / "..").string(), here.string()};
}

std::string Library::find(const std::string& sub, const std::string& name) const {
  std::vector<std::string> all = dirs_;
  all.push_back(scenarios_dir());
  for (const auto& d : all) {
    if (d.empty() && &d != &all.back()) continue;
    const fs::path p = fs::path(d.empty() ? "." : d) / sub / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  return {};
}

YAML::Node Library::load(const std::string& path) {
  if (auto it = files_.find(path); it != files_.end()) return it->second;
  YAML::Node root = parse_yaml(read_file(path), path);
  if (!root.IsMap()) throw ScenarioError({path, 1, 1}, "the library file is not a mapping", "a mapping (docs/library.md)");
  r_.add_file(root, path);
  files_[path] = root;
  return root;
}

std::vector<std::string> Library::families(const YAML::Node& at) {
  if (!families_) {
    const std::string path = find("kernel", "families");
    if (path.empty()) r_.fail(at, "the code-path library has no kernel/families.yaml", "the library beside the scenario or in " + scenarios_dir());
    families_ = load(path);
    r_.expect_map(families_, "families.yaml");
    r_.only_keys(families_, "families.yaml", {"versions", "families"});
  }
  std::vector<std::string> out;
  const YAML::Node f = r_.require(families_, "families", "families.yaml");
  r_.expect_map(f, "families of families.yaml");
  for (const auto& kv : f) out.push_back(kv.first.Scalar());
  return out;
}

std::string Library::family_of(const std::string& machine, const YAML::Node& at) {
  families(at);
  for (const auto& kv : families_["families"]) {
    r_.expect_map(kv.second, "family '" + kv.first.Scalar() + "'");
    r_.only_keys(kv.second, "family '" + kv.first.Scalar() + "'", {"description", "machines"});
    const YAML::Node ms = r_.require(kv.second, "machines", "family '" + kv.first.Scalar() + "'");
    if (!ms.IsSequence()) r_.fail(ms, "machines of family '" + kv.first.Scalar() + "' is not a list", "a list of preset names");
    for (const auto& m : ms)
      if (r_.name(m, "machine preset") == machine) return kv.first.Scalar();
  }
  return {};
}

std::vector<std::string> Library::version_names(const YAML::Node& at) {
  families(at);
  std::vector<std::string> out;
  if (const YAML::Node v = families_["versions"]) {
    if (!v.IsSequence()) r_.fail(v, "versions of families.yaml is not a list", "the library's versions, oldest first");
    for (const auto& n : v) out.push_back(r_.name(n, "version"));
  }
  return out;
}

std::vector<std::string> Library::benchmark_names() {
  std::vector<std::string> out;
  std::vector<std::string> all = dirs_;
  all.push_back(scenarios_dir());
  for (const auto& d : all) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(d) / "benchmarks", ec))
      if (e.path().extension() == ".yaml" && std::find(out.begin(), out.end(), e.path().stem().string()) == out.end())
        out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One change (or a base version's body): entries added or replaced,
// removed, and ops patched, each recorded in `record.touched`.
void Library::apply_change(LibraryVersion& v, const YAML::Node& change, const std::string& file, const std::string& version,
                           LibraryChange& record) {
  const std::string what = record.commit.empty() ? "kernel " + version : "the change " + record.commit + " of kernel " + version;
  for (const auto& kv : change) {
    const std::string key = kv.first.Scalar();
    if (!is_section(key)) continue;
    r_.expect_map(kv.second, key + " of " + what);
    for (const auto& e : kv.second) {
      const std::string name = r_.name(e.first, std::string(key) + " name");
      v.sections[key][name] = LibraryEntry{e.first, e.second, version, file};
      record.touched.insert(key + "." + name);
    }
  }
  if (const YAML::Node rm = change["remove"]) {
    r_.expect_map(rm, "remove of " + what);
    for (const auto& kv : rm) {
      const std::string sec = kv.first.Scalar();
      if (!is_section(sec)) r_.fail(kv.first, "remove names '" + sec + "'", "one of: " + section_list());
      if (!kv.second.IsSequence()) r_.fail(kv.second, "remove." + sec + " of " + what + " is not a list", "a list of names");
      for (const auto& n : kv.second) {
        const std::string name = r_.name(n, sec + " name");
        if (!v.sections[sec].erase(name))
          r_.fail(n, what + " removes " + sec + " '" + name + "', which kernel " + v.inherits + " does not have",
                  "a name the version before has");
        record.touched.insert(sec + "." + name);
      }
    }
  }
  if (const YAML::Node patch = change["patch"]) {
    r_.expect_map(patch, "patch of " + what);
    for (const auto& kv : patch) {
      const std::string op = r_.name(kv.first, "patched op");
      auto it = v.sections["ops"].find(op);
      if (it == v.sections["ops"].end())
        r_.fail(kv.first, what + " patches op '" + op + "', which kernel " + v.inherits + " does not have", "an op of the version before");
      LibraryEntry& e = it->second;
      e.value = patch_op(r_, e.value, kv.second, op, "kernel " + e.version + " (" + at_text(r_.mark(e.key)) + ")");
      e.version = version;
      e.file = file;
      record.touched.insert("ops." + op);
    }
  }
  for (const char* k : {"hz", "dentry_lock"})
    if (change[k]) {
      (std::string(k) == "hz" ? v.kernel : v.dentry_lock) = NodeRef(change[k]);
      record.touched.insert(k);
    }
}

const LibraryVersion& Library::version(const std::string& name, const YAML::Node& at) {
  if (auto it = versions_.find(name); it != versions_.end()) return it->second;
  const std::string path = find("kernel", name);
  if (path.empty()) {
    std::string list;
    for (const auto& n : version_names(at)) list += (list.empty() ? "" : ", ") + n;
    r_.fail(at, "the code-path library has no kernel version '" + name + "'",
            "a version of scenarios/kernel/ (" + (list.empty() ? std::string("none found") : list) + ")");
  }
  if (!resolving_.insert(name).second)
    throw ScenarioError(r_.mark(at), "kernel " + name + " inherits from itself through a cycle", "an acyclic inherits chain");
  const YAML::Node root = load(path);
  const std::vector<const char*> base_keys = {"version", "description", "source", "inherits", "changes", "hz",
                                              "dentry_lock", "values", "classes", "objects", "locks", "lines",
                                              "seqcounts", "pools", "ops"};
  r_.only_keys(root, "kernel " + name, base_keys);
  const std::string declared = r_.name(r_.require(root, "version", "kernel file " + path), "version");
  if (declared != name) r_.fail(root["version"], "the file of kernel " + name + " says it is '" + declared + "'", "version: " + name);
  LibraryVersion v;
  if (const YAML::Node inh = root["inherits"]) {
    v = version(r_.name(inh, "inherits"), inh);
    v.inherits = inh.Scalar();
    for (const char* k : {"values", "classes", "objects", "locks", "lines", "seqcounts", "pools", "ops", "hz", "dentry_lock"})
      if (root[k])
        r_.fail(root[k], "kernel " + name + " inherits from " + v.inherits + " and has '" + k + "' of its own",
                std::string("its differences as changes: [{commit, title, ") + k + ": ...}]");
    const YAML::Node changes = r_.require(root, "changes", "kernel " + name + " (it inherits: its differences)");
    // An empty list says the version differs in nothing the library models.
    if (!changes.IsSequence()) r_.fail(changes, "changes of kernel " + name + " is not a list", "a list of {commit, title, ...}");
    for (const auto& c : changes) {
      r_.expect_map(c, "a change of kernel " + name);
      std::vector<const char*> keys = {"commit", "coverage", "title", "summary", "remove", "patch", "hz", "dentry_lock"};
      for (const char* s : kLibrarySections) keys.push_back(s);
      r_.only_keys(c, "a change of kernel " + name, keys);
      LibraryChange rec;
      rec.version = name;
      rec.file = path;
      rec.mark = r_.mark(c);
      rec.node = c;
      if (c["coverage"]) {
        // Not a kernel difference: code the kernel had before, which the
        // library models from this version on. It adds names only.
        if (c["commit"]) r_.fail(c["coverage"], "a change of kernel " + name + " has both 'commit' and 'coverage'", "one of them");
        for (const char* k : {"remove", "patch", "hz", "dentry_lock"})
          if (c[k]) r_.fail(c[k], "a coverage entry of kernel " + name + " has '" + k + "'", "new entries only (a difference needs its commit)");
        for (const auto& kv : c)
          if (is_section(kv.first.Scalar()) && kv.second.IsMap())
            for (const auto& e : kv.second)
              if (v.sections[kv.first.Scalar()].count(e.first.Scalar()))
                r_.fail(e.first, "the coverage entry of kernel " + name + " redefines " + kv.first.Scalar() + " '" +
                                     e.first.Scalar() + "', which kernel " + v.inherits + " has",
                        "new names only (a difference needs its commit)");
        rec.commit = "coverage";
        rec.summary = r_.scalar(c["coverage"], "coverage");
      } else {
        rec.commit = r_.scalar(r_.require(c, "commit", "a change of kernel " + name + " (the kernel commit it cites, or coverage: WHY)"), "commit");
        if (!is_commit(rec.commit))
          r_.fail(c["commit"], "commit '" + rec.commit + "' of kernel " + name + " is not a commit id",
                  "12 to 40 hex digits of the kernel commit (git log --oneline)");
      }
      rec.title = r_.scalar(r_.require(c, "title", "the change " + rec.commit), "title");
      if (c["summary"]) rec.summary += (rec.summary.empty() ? "" : " ") + r_.scalar(c["summary"], "summary");
      apply_change(v, c, path, name, rec);
      v.changes.push_back(rec);
    }
  } else {
    if (root["changes"]) r_.fail(root["changes"], "kernel " + name + " has changes but inherits from no version", "inherits: VERSION");
    LibraryChange rec;
    rec.version = name;
    apply_change(v, root, path, name, rec);
  }
  v.name = name;
  v.file = path;
  v.root = root;
  if (root["description"]) v.description = r_.scalar(root["description"], "description");
  if (root["source"]) v.source = r_.scalar(root["source"], "source");
  resolving_.erase(name);
  return versions_[name] = std::move(v);
}

// A version and a few later changes: a kernel with commits backported, as
// a scenario's patch strategy states it (`use: {kernel: v4.13, backport:
// [901ed070df3c]}`). Each change applies to the version as it is, so an
// edit that finds no step names the library file and line of the change.
const LibraryVersion& Library::backported(const std::string& name, const YAML::Node& commits, const YAML::Node& at) {
  const LibraryVersion& base = version(name, at);
  if (!commits.IsSequence() || commits.size() == 0)
    r_.fail(commits, "backport of kernel " + name + " is not a list of commits", "backport: [COMMIT, ...] (12 to 40 hex digits)");
  std::string key = name;
  for (const auto& n : commits) key += "+" + r_.name(n, "commit");
  if (auto it = versions_.find(key); it != versions_.end()) return it->second;
  const auto same = [](const std::string& a, const std::string& b) {
    const std::size_t k = std::min(a.size(), b.size());
    return k >= 12 && a.compare(0, k, b, 0, k) == 0;
  };
  LibraryVersion v = base;
  v.inherits = name;
  for (const auto& n : commits) {
    const std::string id = r_.name(n, "commit");
    if (!is_commit(id)) r_.fail(n, "backport '" + id + "' is not a commit id", "12 to 40 hex digits of a change's commit (vfssim library diff lists them)");
    for (const auto& c : v.changes)
      if (same(c.commit, id))
        r_.fail(n, "kernel " + v.name + " has the change " + c.commit + " already (kernel " + c.version + ", " + at_text(c.mark) + ")",
                "a commit of a later version");
    const LibraryChange* found = nullptr;
    for (const auto& vn : version_names(n)) {
      for (const auto& c : version(vn, n).changes)
        if (c.version == vn && same(c.commit, id)) found = &c;
      if (found) break;
    }
    if (!found)
      r_.fail(n, "no version of the code-path library has a change citing commit " + id,
              "the commit of a change of scenarios/kernel/ (vfssim library diff FROM TO lists them)");
    LibraryChange rec = *found;
    rec.touched.clear();
    apply_change(v, found->node, found->file, found->version, rec);
    v.changes.push_back(rec);
  }
  v.name = key;
  return versions_[key] = std::move(v);
}

BenchmarkTest Library::benchmark(const std::string& spec, const YAML::Node& at) {
  const auto slash = spec.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == spec.size())
    r_.fail(at, "benchmark '" + spec + "' names no test", "NAME/TEST or NAME/TEST_MODE, such as will-it-scale/open1_threads");
  BenchmarkTest b;
  b.benchmark = spec.substr(0, slash);
  std::string test = spec.substr(slash + 1);
  b.file = find("benchmarks", b.benchmark);
  if (b.file.empty()) {
    std::string list;
    for (const auto& n : benchmark_names()) list += (list.empty() ? "" : ", ") + n;
    r_.fail(at, "the benchmark library has no benchmark '" + b.benchmark + "'",
            "a benchmark of scenarios/benchmarks/ (" + (list.empty() ? std::string("none found") : list) + ")");
  }
  b.root = load(b.file);
  const std::string what = "benchmark " + b.benchmark;
  r_.only_keys(b.root, what, {"benchmark", "description", "source", "modes", "workload", "params", "objects", "pools", "ops", "tests"});
  const YAML::Node tests = r_.require(b.root, "tests", what);
  r_.expect_map(tests, "tests of " + what);
  const YAML::Node modes = b.root["modes"];
  if (modes) r_.expect_map(modes, "modes of " + what);
  if (!tests[test] && modes)
    for (const auto& m : modes) {
      const std::string suffix = "_" + m.first.Scalar();
      if (test.size() > suffix.size() && test.compare(test.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          tests[test.substr(0, test.size() - suffix.size())]) {
        b.mode = m.first.Scalar();
        test = test.substr(0, test.size() - suffix.size());
        break;
      }
    }
  if (!tests[test]) {
    std::string list;
    for (const auto& t : tests) list += (list.empty() ? "" : ", ") + t.first.Scalar();
    r_.fail(at, what + " has no test '" + test + "'", "one of: " + list + (modes ? " (with a mode suffix such as _" + modes.begin()->first.Scalar() + ")" : ""));
  }
  b.test = test;
  b.node = tests[test];
  if (modes) {
    if (b.mode.empty()) {
      std::string list;
      for (const auto& m : modes) list += (list.empty() ? "" : ", ") + test + "_" + m.first.Scalar();
      r_.fail(at, what + " runs its tests in modes, and '" + spec + "' names none", "one of: " + list);
    }
    b.mode_node = modes[b.mode];
  }
  return b;
}

// --- The patch language ---

namespace {

// Where a step list is in a step: the keys whose values are lists of steps.
bool is_step_list(const YAML::Node& n) {
  if (!n.IsDefined() || !n.IsSequence() || n.size() == 0) return false;
  for (const auto& e : n)
    if (!e.IsMap()) return false;
  return true;
}

struct Match {
  std::vector<std::pair<YAML::Node, std::size_t>> lists;  // the step lists from the op down, with the index taken in each
  std::vector<std::string> keys;                          // the key of the step list inside the step above it ("": the op's)
  std::vector<std::string> subkeys;                       // a list inside a mapping value (call_rcu: {steps}): its key
};

bool step_matches(const YAML::Node& step, const YAML::Node& pattern) {
  for (const auto& kv : pattern) {
    const YAML::Node v = step[kv.first.Scalar()];
    if (!v || !v.IsScalar() || !kv.second.IsScalar() || v.Scalar() != kv.second.Scalar()) return false;
  }
  return true;
}

void find_matches(const YAML::Node& list, const YAML::Node& pattern, Match path, std::vector<Match>& out, int depth) {
  if (depth > Reader::kMaxNesting) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node step = list[i];
    Match here = path;
    here.lists.push_back({list, i});
    if (step_matches(step, pattern)) out.push_back(here);
    for (const auto& kv : step) {
      if (is_step_list(kv.second)) {
        Match inner = here;
        inner.keys.push_back(kv.first.Scalar());
        inner.subkeys.push_back("");
        find_matches(kv.second, pattern, inner, out, depth + 1);
      } else if (kv.second.IsMap() && kv.second["steps"] && is_step_list(kv.second["steps"])) {
        Match inner = here;
        inner.keys.push_back(kv.first.Scalar());
        inner.subkeys.push_back("steps");
        find_matches(kv.second["steps"], pattern, inner, out, depth + 1);
      }
    }
  }
}

std::string describe(const YAML::Node& pattern) {
  std::string out;
  for (const auto& kv : pattern) out += (out.empty() ? "" : ", ") + kv.first.Scalar() + ": " + (kv.second.IsScalar() ? kv.second.Scalar() : "...");
  return "{" + out + "}";
}

// A copy of `map` with `key` set to `value` (keys and other values shared).
YAML::Node map_with(Reader& r, const YAML::Node& map, const std::string& key, const YAML::Node& value) {
  YAML::Node m = r.new_node(YAML::NodeType::Map);
  bool set = false;
  for (const auto& kv : map) {
    if (kv.first.Scalar() == key) {
      m.force_insert(kv.first, value);
      set = true;
    } else {
      m.force_insert(kv.first, kv.second);
    }
  }
  if (!set) m[key] = value;
  r.add_made(m, r.mark(map));
  return m;
}

}  // namespace

YAML::Node patch_op(Reader& r, const YAML::Node& op_value, const YAML::Node& edits, const std::string& op,
                    const std::string& op_at) {
  if (!op_value.IsMap()) return patch_steps(r, op_value, edits, op, op_at);
  const YAML::Node patched = patch_steps(r, r.require(op_value, "steps", "op '" + op + "'"), edits, op, op_at);
  YAML::Node m = r.new_node(YAML::NodeType::Map);  // {steps, fn, description}: the other keys kept
  for (const auto& f : op_value) m.force_insert(f.first, f.first.Scalar() == "steps" ? patched : f.second);
  r.add_made(m, r.mark(op_value));
  return m;
}

YAML::Node patch_steps(Reader& r, const YAML::Node& steps, const YAML::Node& edits, const std::string& op,
                       const std::string& op_at) {
  if (!edits.IsSequence() || edits.size() == 0)
    r.fail(edits, "the patch of op '" + op + "' is not a non-empty list of edits",
           "a list of {replace: MATCH, with: [steps]}, {remove: MATCH}, {before|after: MATCH, insert: [steps]}, "
           "{at: MATCH, set: {KEY: VALUE}}, {append: [steps]}, {prepend: [steps]}");
  if (!steps.IsSequence()) r.fail(edits, "op '" + op + "' of " + op_at + " is not a list of steps", "an op of steps");
  NodeRef current = steps;
  for (const auto& edit : edits) {
    const std::string what = "an edit of the patch of op '" + op + "'";
    r.expect_map(edit, what);
    r.only_keys(edit, what, {"replace", "with", "remove", "before", "after", "insert", "at", "set", "append", "prepend"});
    const char* kinds[] = {"replace", "remove", "before", "after", "at", "append", "prepend"};
    std::string kind;
    for (const char* k : kinds)
      if (edit[k]) {
        if (!kind.empty()) r.fail(edit, what + " has both '" + kind + "' and '" + k + "'", "one edit per list item");
        kind = k;
      }
    if (kind.empty())
      r.fail(edit, what + " says what to do nowhere", "one of replace, remove, before, after, at, append, prepend");
    const auto need = [&](const char* k, const char* expected) {
      const YAML::Node n = r.require(edit, k, what + " (" + kind + ")");
      if (std::string(k) != "set" && !n.IsSequence()) r.fail(n, "'" + std::string(k) + "' of " + what + " is not a list of steps", expected);
      return n;
    };
    const auto refuse = [&](const char* k) {
      if (edit[k]) r.fail(edit[k], "'" + std::string(k) + "' does not go with '" + kind + "'", "the keys of a " + kind + " edit");
    };
    if (kind == "append" || kind == "prepend") {
      for (const char* k : {"with", "insert", "set"}) refuse(k);
      const YAML::Node add = edit[kind];
      if (!add.IsSequence()) r.fail(add, "'" + kind + "' of " + what + " is not a list of steps", "[steps]");
      YAML::Node out = r.new_node(YAML::NodeType::Sequence);
      if (kind == "prepend")
        for (const auto& s : add) out.push_back(s);
      for (const auto& s : current) out.push_back(s);
      if (kind == "append")
        for (const auto& s : add) out.push_back(s);
      r.add_made(out, r.mark(current));
      current = out;
      continue;
    }
    const YAML::Node pattern = edit[kind];
    r.expect_map(pattern, "the match of " + what);
    if (pattern.size() == 0) r.fail(pattern, "the match of " + what + " is empty", "keys a step has, such as {fn: alloc_fd}");
    std::vector<Match> found;
    if (pattern["index"]) {
      if (pattern.size() != 1) r.fail(pattern, "the match of " + what + " has 'index' and other keys", "{index: N} alone");
      const long long i = r.integer(pattern["index"], "index", 0, static_cast<long long>(current.size()) - 1);
      Match m;
      m.lists.push_back({current, static_cast<std::size_t>(i)});
      found.push_back(m);
    } else {
      find_matches(current, pattern, Match{}, found, 0);
    }
    if (found.empty()) {
      std::string have;
      for (const auto& s : current) {
        std::string one;
        for (const char* k : {"fn", "call", "lock", "lockref", "atomic", "read", "write", "compute", "walk"})
          if (s.IsMap() && s[k] && s[k].IsScalar()) {
            one = std::string(k) + ": " + s[k].Scalar();
            break;
          }
        if (!one.empty()) have += (have.empty() ? "" : "; ") + one;
      }
      r.fail(pattern, "the patch of op '" + op + "' matches no step with " + describe(pattern) + " in op '" + op + "' of " + op_at,
             "keys of one of its steps (" + have + ")");
    }
    if (found.size() > 1) {
      std::string where;
      for (const auto& m : found) {
        const YAML::Node s = m.lists.back().first[m.lists.back().second];
        where += (where.empty() ? "" : ", ") + at_text(r.mark(s));
      }
      r.fail(pattern, "the patch of op '" + op + "' matches " + std::to_string(found.size()) + " steps with " + describe(pattern) +
                          " in op '" + op + "' of " + op_at + " (at " + where + ")",
             "a match of exactly one step: add a key (fn, lock, call, ...) or {index: N}");
    }
    const Match& m = found.front();
    // The innermost list, edited.
    const auto [list, index] = m.lists.back();
    YAML::Node edited = r.new_node(YAML::NodeType::Sequence);
    const YAML::Node target = list[index];
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i != index) {
        edited.push_back(list[i]);
        continue;
      }
      if (kind == "replace") {
        for (const char* k : {"insert", "set"}) refuse(k);
        for (const auto& s : need("with", "[steps] in place of the step (an empty list removes it)")) edited.push_back(s);
      } else if (kind == "remove") {
        for (const char* k : {"with", "insert", "set"}) refuse(k);
      } else if (kind == "before" || kind == "after") {
        for (const char* k : {"with", "set"}) refuse(k);
        const YAML::Node ins = need("insert", "[steps] to insert");
        if (kind == "after") edited.push_back(target);
        for (const auto& s : ins) edited.push_back(s);
        if (kind == "before") edited.push_back(target);
      } else {  // at + set
        for (const char* k : {"with", "insert"}) refuse(k);
        const YAML::Node set = need("set", "");
        r.expect_map(set, "set of " + what);
        NodeRef step = target;
        for (const auto& kv : set) {
          if (kv.second.IsNull()) {
            YAML::Node m2 = r.new_node(YAML::NodeType::Map);
            for (const auto& f : step)
              if (f.first.Scalar() != kv.first.Scalar()) m2.force_insert(f.first, f.second);
            r.add_made(m2, r.mark(target));
            step = m2;
          } else {
            step = map_with(r, step, kv.first.Scalar(), kv.second);
          }
        }
        edited.push_back(step);
      }
    }
    r.add_made(edited, r.mark(list));
    // Back up to the op: each step that held the edited list, copied with it.
    NodeRef inner = edited;
    for (std::size_t level = m.lists.size() - 1; level-- > 0;) {
      const auto [outer, at] = m.lists[level];
      const YAML::Node holder = outer[at];
      const std::string& key = m.keys[level];
      const YAML::Node value = m.subkeys[level].empty() ? inner : map_with(r, holder[key], m.subkeys[level], inner);
      const YAML::Node copy = map_with(r, holder, key, value);
      YAML::Node up = r.new_node(YAML::NodeType::Sequence);
      for (std::size_t i = 0; i < outer.size(); ++i) up.push_back(i == at ? copy : outer[i]);
      r.add_made(up, r.mark(outer));
      inner = up;
    }
    current = inner;
  }
  return current;
}

}  // namespace vfssim::models::parse
