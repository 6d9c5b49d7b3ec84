#include "models/scenario/library_api.h"

#include <algorithm>
#include <functional>
#include <set>

#include "models/scenario/library.h"

namespace vfssim::models {

namespace {

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetIndent(2);
  e << n;
  return e.c_str();
}

// Every scalar of a tree, each once (what an op names: locks, lines, $values).
void scalars(const YAML::Node& n, std::vector<std::string>& out, int depth = 0) {
  if (depth > 256 || !n.IsDefined()) return;
  if (n.IsScalar()) {
    if (std::find(out.begin(), out.end(), n.Scalar()) == out.end()) out.push_back(n.Scalar());
  } else if (n.IsSequence()) {
    for (const auto& e : n) scalars(e, out, depth + 1);
  } else if (n.IsMap()) {
    for (const auto& kv : n) scalars(kv.second, out, depth + 1);
  }
}

void calls(const YAML::Node& n, std::vector<std::string>& out, int depth = 0) {
  if (depth > 256 || !n.IsDefined()) return;
  if (n.IsSequence()) {
    for (const auto& e : n) calls(e, out, depth + 1);
  } else if (n.IsMap()) {
    if (n["call"] && n["call"].IsScalar() && std::find(out.begin(), out.end(), n["call"].Scalar()) == out.end())
      out.push_back(n["call"].Scalar());
    for (const auto& kv : n) calls(kv.second, out, depth + 1);
  }
}

std::string value_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  if (v.IsMap() && v["estimate"] && v["range"] && v["range"].IsSequence() && v["range"].size() == 2)
    return v["estimate"].Scalar() + " [" + v["range"][0].Scalar() + ", " + v["range"][1].Scalar() + "]";
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << v;
  return e.c_str();
}

}  // namespace

struct LibraryCatalog::Impl {
  explicit Impl(std::vector<std::string> dirs) : reader("library"), lib(reader, std::move(dirs)) {}
  parse::Reader reader;
  parse::Library lib;
  YAML::Node here = parse::absent();

  const parse::LibraryVersion& v(const std::string& name) { return lib.version(name, here); }

  LibraryOpInfo op(const parse::LibraryVersion& ver, const std::string& name) {
    const auto& ops = ver.sections.count("ops") ? ver.sections.at("ops") : std::map<std::string, parse::LibraryEntry>{};
    auto it = ops.find(name);
    if (it == ops.end()) {
      std::string list;
      for (const auto& [k, e] : ops) list += (list.empty() ? "" : ", ") + k;
      throw ScenarioError({ver.file, 0, 0}, "kernel " + ver.name + " has no op '" + name + "'", "one of: " + list);
    }
    const parse::LibraryEntry& e = it->second;
    LibraryOpInfo o;
    o.name = name;
    o.version = e.version;
    o.mark = reader.mark(e.key);
    YAML::Node steps = e.value;
    if (e.value.IsMap()) {
      if (e.value["description"]) o.description = e.value["description"].Scalar();
      steps.reset(e.value["steps"]);
    }
    o.text = emit(steps);
    calls(steps, o.calls);
    std::vector<std::string> all;
    scalars(steps, all);
    const auto& values = ver.sections.count("values") ? ver.sections.at("values") : std::map<std::string, parse::LibraryEntry>{};
    for (const auto& s : all) {
      if (s.size() < 2 || s[0] != '$') continue;
      const std::string n = s.substr(1, s.find('.') == std::string::npos ? std::string::npos : s.find('.') - 1);
      auto& into = values.count(n) && s.find('.') == std::string::npos ? o.values : o.bindings;
      if (std::find(into.begin(), into.end(), n) == into.end()) into.push_back(n);
    }
    return o;
  }
};

LibraryCatalog::LibraryCatalog(std::vector<std::string> dirs) : impl_(std::make_unique<Impl>(std::move(dirs))) {}
LibraryCatalog::~LibraryCatalog() = default;

std::vector<std::string> LibraryCatalog::versions() { return impl_->lib.version_names(impl_->here); }

std::map<std::string, std::vector<std::string>> LibraryCatalog::families() {
  std::map<std::string, std::vector<std::string>> out;
  impl_->lib.families(impl_->here);
  const YAML::Node f = impl_->lib.families_node();
  for (const auto& kv : f["families"]) {
    auto& ms = out[kv.first.Scalar()];
    if (kv.second.IsMap() && kv.second["machines"] && kv.second["machines"].IsSequence())
      for (const auto& m : kv.second["machines"]) ms.push_back(m.Scalar());
  }
  return out;
}

LibraryVersionInfo LibraryCatalog::version(const std::string& name) {
  const parse::LibraryVersion& v = impl_->v(name);
  LibraryVersionInfo out;
  out.name = v.name;
  out.inherits = v.inherits;
  out.description = v.description;
  out.source = v.source;
  out.file = v.file;
  for (const auto& c : v.changes)
    if (c.version == v.name)
      out.changes.push_back({c.version, c.commit, c.title, c.summary, c.mark, {c.touched.begin(), c.touched.end()}});
  const auto section = [&](const char* s) {
    return v.sections.count(s) ? v.sections.at(s) : std::map<std::string, parse::LibraryEntry>{};
  };
  for (const auto& [n, e] : section("ops")) out.ops.push_back(impl_->op(v, n));
  for (const auto& [n, e] : section("values")) {
    LibraryValueInfo x;
    x.name = n;
    x.version = e.version;
    x.mark = impl_->reader.mark(e.key);
    if (e.value.IsMap() && !e.value["estimate"]) {
      for (const auto& kv : e.value) {
        if (kv.first.Scalar() == "why") x.why = kv.second.Scalar();
        else x.by_family[kv.first.Scalar()] = value_text(kv.second);
      }
    } else {
      x.by_family["*"] = value_text(e.value);
      if (e.value.IsMap() && e.value["why"]) x.why = e.value["why"].Scalar();
    }
    out.values.push_back(x);
  }
  for (const auto& [n, e] : section("classes")) out.classes.push_back(n);
  for (const auto& [n, e] : section("objects")) out.objects.push_back(n);
  for (const auto& [n, e] : section("locks")) out.locks.push_back(n);
  for (const auto& [n, e] : section("lines")) out.lines.push_back(n);
  for (const auto& [n, e] : section("seqcounts")) out.seqcounts.push_back(n);
  return out;
}

std::vector<LibraryOpInfo> LibraryCatalog::op_closure(const std::string& version, const std::string& op) {
  const parse::LibraryVersion& v = impl_->v(version);
  std::vector<LibraryOpInfo> out;
  std::set<std::string> seen;
  const std::function<void(const std::string&)> visit = [&](const std::string& name) {
    if (!seen.insert(name).second) return;
    if (!v.sections.count("ops") || !v.sections.at("ops").count(name)) return;  // a benchmark's or scenario's op
    out.push_back(impl_->op(v, name));
    const std::vector<std::string> callees = out.back().calls;
    for (const auto& c : callees) visit(c);
  };
  if (!v.sections.count("ops") || !v.sections.at("ops").count(op)) (void)impl_->op(v, op);  // throws with the list
  visit(op);
  return out;
}

std::vector<LibraryChangeInfo> LibraryCatalog::diff(const std::string& from, const std::string& to, const std::string& op) {
  const parse::LibraryVersion& b = impl_->v(from);
  const parse::LibraryVersion& a = impl_->v(to);
  // `from` must be on `to`'s inherits chain: its changes are a prefix of `to`'s.
  bool ancestor = from == to;
  for (std::string x = a.inherits; !ancestor && !x.empty(); x = impl_->v(x).inherits) ancestor = x == from;
  if (!ancestor)
    throw ScenarioError({a.file, 0, 0}, "kernel " + to + " does not inherit from " + from,
                        "an older version of the same chain first (vfssim library lists them)");
  // What the op reaches, in either version: its ops, their names and values.
  std::set<std::string> names;
  if (!op.empty()) {
    bool found = false;
    for (const parse::LibraryVersion* v : {&b, &a}) {
      if (!v->sections.count("ops") || !v->sections.at("ops").count(op)) continue;
      found = true;
      for (const auto& o : op_closure(v->name, op)) {
        names.insert("ops." + o.name);
        for (const auto& x : o.values) names.insert("values." + x);
        const YAML::Node node = v->sections.at("ops").at(o.name).value;
        std::vector<std::string> all;
        scalars(node, all);
        for (const auto& s : all) {
          for (const char* sec : {"locks.", "lines.", "seqcounts.", "pools.", "objects."}) names.insert(sec + s);
          if (const auto dot = s.rfind('.'); dot != std::string::npos) names.insert("member." + s.substr(dot + 1));
          if (s.rfind("$", 0) == 0) names.insert("binding");
        }
        if (node.IsDefined() && emit(node).find("walk:") != std::string::npos) names.insert("dentry_lock");
      }
    }
    if (!found) (void)impl_->op(a, op);  // throws, with the list
  }
  const auto touches = [&](const parse::LibraryChange& c) {
    if (op.empty()) return true;
    for (const auto& t : c.touched) {
      if (names.count(t)) return true;
      if (t.rfind("classes.", 0) == 0) {  // a class whose member the op names
        const auto& classes = a.sections.count("classes") ? a.sections.at("classes") : std::map<std::string, parse::LibraryEntry>{};
        auto it = classes.find(t.substr(8));
        if (it == classes.end()) return true;
        for (const char* sec : {"locks", "lines", "seqcounts"})
          if (it->second.value[sec] && it->second.value[sec].IsMap())
            for (const auto& kv : it->second.value[sec])
              if (names.count("member." + kv.first.Scalar())) return true;
        if (it->second.value["dentry"] && names.count("dentry_lock")) return true;
      }
    }
    return false;
  };
  std::vector<LibraryChangeInfo> out;
  for (std::size_t i = b.changes.size(); i < a.changes.size(); ++i) {
    const parse::LibraryChange& c = a.changes[i];
    if (touches(c)) out.push_back({c.version, c.commit, c.title, c.summary, c.mark, {c.touched.begin(), c.touched.end()}});
  }
  return out;
}

std::vector<BenchmarkInfo> LibraryCatalog::benchmarks() {
  std::vector<BenchmarkInfo> out;
  for (const auto& name : impl_->lib.benchmark_names()) {
    BenchmarkInfo b;
    b.name = name;
    b.file = impl_->lib.find("benchmarks", name);
    const YAML::Node root = parse::parse_yaml(parse::read_file(b.file), b.file);
    if (!root.IsMap()) throw ScenarioError({b.file, 1, 1}, "the benchmark file is not a mapping", "a mapping (docs/library.md)");
    if (root["description"]) b.description = root["description"].Scalar();
    if (root["source"]) b.source = root["source"].Scalar();
    if (root["modes"] && root["modes"].IsMap())
      for (const auto& m : root["modes"]) b.modes.push_back(m.first.Scalar());
    if (root["tests"] && root["tests"].IsMap())
      for (const auto& t : root["tests"]) {
        BenchmarkTestInfo ti;
        ti.name = t.first.Scalar();
        if (t.second["description"]) ti.description = t.second["description"].Scalar();
        if (t.second["source"]) ti.source = t.second["source"].Scalar();
        if (t.second["loop"] && t.second["loop"].IsSequence())
          for (const auto& l : t.second["loop"]) ti.loop.push_back(l.Scalar());
        b.tests.push_back(ti);
      }
    out.push_back(b);
  }
  return out;
}

std::string LibraryCatalog::new_scenario(const std::string& spec, const std::string& version, const std::string& machine,
                                         const std::string& name) {
  const parse::BenchmarkTest t = impl_->lib.benchmark(spec, impl_->here);
  (void)impl_->v(version);
  const std::string description = t.node["description"] ? t.node["description"].Scalar() : spec;
  const std::string source = t.node["source"] ? t.node["source"].Scalar() : "";
  std::string text;
  text += "# " + name + ": " + spec + " on Linux " + version + ", " + machine + " (written by `vfssim new " + t.benchmark +
          " ...`).\n#\n";
  text += "# " + description + (source.empty() ? "" : " (" + t.benchmark + " " + source + ")") + ".\n";
  text += "# The benchmark's workload and loop, and every code path of kernel " + version + ",\n";
  text += "# come from the libraries (scenarios/benchmarks/, scenarios/kernel/):\n";
  text += "#   vfssim library " + version + "                  # the version's ops, locks, values\n";
  text += "#   vfssim library resolve " + name + ".yaml         # this scenario as the loader expands it\n";
  text += "#   vfssim run " + name + ".yaml\n";
  text += "# A patch is a strategy that extends this one and edits named ops\n";
  text += "# (docs/scenario-format.md, \"The code-path library\"), for example:\n";
  text += "#   patched:\n#     extends: " + version + "\n#     patch:\n#       OP:\n";
  text += "#         - replace: {fn: FUNCTION}\n#           with: [{compute: 50ns}]\n";
  text += "scenario: " + name + "\n";
  text += "description: " + spec + " on Linux " + version + "\n";
  text += "machine: " + machine + "          # a preset: `vfssim machines` lists them\n";
  text += "benchmark: " + spec + "\n";
  text += "use: kernel/" + version + "\n";
  text += "strategies:\n";
  text += "  " + version + ":\n";
  text += "    description: Linux " + version + " as the library has it\n";
  // A loop op that neither the test nor its benchmark defines is the
  // scenario's choice (refscale's `section`: one primitive's read side):
  // the first of the test's ops stands in, the others named beside it.
  std::vector<std::string> offered;
  if (const YAML::Node ops = t.node["ops"]; ops && ops.IsMap())
    for (const auto& kv : ops) offered.push_back(kv.first.Scalar());
  const auto defines = [&](const std::string& op) {
    const YAML::Node& root = t.root;  // const: a lookup must not add the key
    return std::find(offered.begin(), offered.end(), op) != offered.end() || (root["ops"] && root["ops"][op]);
  };
  std::string chosen;
  if (const YAML::Node loop = t.node["loop"]; loop && loop.IsSequence() && !offered.empty())
    for (const auto& l : loop)
      if (l.IsScalar() && !defines(l.Scalar())) {
        std::string others;
        for (std::size_t i = 1; i < offered.size(); ++i) others += (others.empty() ? "" : ", ") + offered[i];
        chosen += "      # the loop runs " + l.Scalar() + ", which the scenario chooses: " + offered[0] +
                  (others.empty() ? "" : " here; or " + others + " (a strategy each to compare them)") + "\n";
        chosen += "      " + l.Scalar() + ": [{call: " + offered[0] + "}]\n";
      }
  if (!chosen.empty()) text += "    ops:\n" + chosen;
  return text;
}

}  // namespace vfssim::models
