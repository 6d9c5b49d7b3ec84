// machine: inline, a preset by name, or a machine file by path.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "models/scenario/sections.h"

namespace vfssim::models {

namespace fs = std::filesystem;

namespace parse {

namespace {

// levels: from the outside in, each {name, count, transfer}.
void parse_levels(const Reader& r, const YAML::Node& n, TopologySpec& t) {
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
  long long cpus = 1;  // 64-bit and capped: a level's count is up to 2^20
  for (const auto& lv : t.levels) cpus = std::min<long long>(cpus * lv.count, Topology::kMaxCpus + 1);
  if (cpus > Topology::kMaxCpus)
    r.fail(levels, "the machine has more than " + std::to_string(Topology::kMaxCpus) + " hardware threads",
           "at most " + std::to_string(Topology::kMaxCpus) + " (the most vfssim supports: its CPU x CPU cost matrix)");
  for (std::size_t i = 0; i + 1 < t.levels.size(); ++i)
    if (!levels[i]["transfer"])
      r.fail(levels[i], "level '" + t.levels[i].name + "' has no transfer cost",
             "'transfer: TIME' on every level but the innermost");
}

// How the outermost elements (sockets, boards) are linked: a base cost and
// a cost per hop over `links` (full, ring, or a list of pairs).
void parse_interconnect(const Reader& r, const YAML::Node& n, TopologySpec& t) {
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
}

// A core's throughput with all its threads busy, relative to one thread.
double parse_smt_throughput(const Reader& r, const YAML::Node& smt, const TopologySpec& t) {
  const int threads_per_core = [&] {
    long long k = 1;  // 64-bit and capped: counts are up to 2^20 each
    for (std::size_t i = static_cast<std::size_t>(t.core_level) + 1; i < t.levels.size(); ++i)
      k = std::min<long long>(k * t.levels[i].count, Topology::kMaxCpus + 1);
    return static_cast<int>(k);
  }();
  const double v = parse_fraction(r, smt, "smt_throughput");
  if (!(v >= 1.0 && v <= threads_per_core))
    r.fail(smt, "smt_throughput " + smt.Scalar() + " is outside 1.." + std::to_string(threads_per_core),
           "a core's throughput with all " + std::to_string(threads_per_core) +
               " hardware threads busy relative to one thread, from 1 (no gain) to " +
               std::to_string(threads_per_core) + " (no sharing)");
  return v;

}

// How a contended line behaves (docs/scenario-format.md, "Coherence").
Coherence parse_coherence(const Reader& r, const YAML::Node& c) {
  TopologySpec t;  // the fields below are t.coherence's
  r.expect_map(c, "coherence");
  r.only_keys(c, "coherence", {"kind", "contended_rmw", "contended_rmw_remote", "reread", "shared_store", "retention"});
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
  if (const auto ret = c["retention"]) {  // a core's hold-off on a line it holds (cache_line.h)
    r.expect_map(ret, "retention");
    r.only_keys(ret, "retention", {"ops", "window"});
    t.coherence.retention_ops =
        static_cast<int>(r.integer(r.require(ret, "ops", "retention"), "retention ops", 1, 1000));
    t.coherence.retention_window = r.duration(r.require(ret, "window", "retention"), "retention window", false);
  }

  return t.coherence;
}

}  // namespace

TopologySpec parse_machine(const Reader& r, const YAML::Node& n, const std::string& name_hint) {
  TopologySpec t;
  r.expect_map(n, "machine");
  r.only_keys(n, "machine", {"machine", "description", "levels", "numa", "core", "interconnect", "local_hit",
                             "local_atomic", "pause", "invalidate_per_sharer", "smt_throughput", "matrix", "coherence",
                             "wake_latency", "context_switch"});
  t.name = n["machine"] ? r.name(n["machine"], "machine name") : name_hint;
  if (n["description"]) t.description = r.scalar(n["description"], "description");
  parse_levels(r, n, t);
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
  parse_interconnect(r, n, t);
  t.local_hit = r.duration(r.require(n, "local_hit", "machine"), "local_hit", false);
  t.local_atomic = r.duration(r.require(n, "local_atomic", "machine"), "local_atomic", false);
  if (n["pause"]) t.pause = r.duration(n["pause"], "pause", false);
  if (n["wake_latency"]) t.wake_latency = r.duration(n["wake_latency"], "wake_latency", true);
  if (n["context_switch"]) {
    t.context_switch = r.duration(n["context_switch"], "context_switch", true);
    if (!n["wake_latency"] || t.context_switch >= t.wake_latency)
      r.fail(n["context_switch"], "context_switch needs a longer wake_latency beside it",
             "'wake_latency: TIME' longer than context_switch (a task off its CPU comes back slower than one still on it)");
  }
  if (n["invalidate_per_sharer"]) t.invalidate_per_sharer = r.duration(n["invalidate_per_sharer"], "invalidate_per_sharer", false);
  if (const auto smt = n["smt_throughput"]) t.smt_throughput = parse_smt_throughput(r, smt, t);
  if (const auto c = n["coherence"]) t.coherence = parse_coherence(r, c);
  if (const auto m = n["matrix"]) {
    if (!m.IsSequence()) r.fail(m, "matrix is not a list of rows", "a list of rows of times");
    // Sizes first: YAML aliases can make a short file name a huge matrix.
    long long cpus = 1;
    for (const auto& lv : t.levels) cpus = std::min<long long>(cpus * lv.count, Topology::kMaxCpus + 1);
    if (static_cast<long long>(m.size()) != cpus)
      r.fail(m, "matrix has " + std::to_string(m.size()) + " rows for " + std::to_string(cpus) + " CPUs",
             "one row per CPU");
    for (const auto& row : m) {
      if (!row.IsSequence()) r.fail(row, "matrix row is not a list", "a list of times");
      if (static_cast<long long>(row.size()) != cpus)
        r.fail(row, "matrix row has " + std::to_string(row.size()) + " entries for " + std::to_string(cpus) + " CPUs",
               "one entry per CPU");
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
    all.push_back((fs::path(scenarios_dir()) / "machines").string());
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
namespace {

// A machine file read for a scenario: its ranges named under `parent`'s
// path of the reference (machine.levels.socket.transfer), sampled as the
// scenario is, and written back into `root` (finish_ranges).
TopologySpec read_machine_file(const Reader& parent, const std::string& path, const std::string& prefix,
                               YAML::Node& root) {
  const std::string text = read_file(path);
  Reader r(path);
  root = parse_yaml(text, path);
  if (!root || root.IsNull()) throw ScenarioError({path, 1, 1}, "the machine file is empty", "a machine mapping");
  r.find_ranges(root, prefix);
  r.set_sample(parent.sample());
  TopologySpec t = parse_machine(r, root, fs::path(path).stem().string());
  r.unique_keys_everywhere(root, "the machine file");
  r.finish_ranges();
  parent.adopt_ranges(r);
  return t;
}

}  // namespace

TopologySpec load_machine_ref(const Reader& r, const YAML::Node& n, const std::string& file,
                              const std::vector<std::string>& machine_dirs, const std::string& fallback_name) {
  if (n.IsMap()) return parse_machine(r, n, fallback_name);
  YAML::Node root;
  return read_machine_file(r, machine_ref_path(r, n, file, machine_dirs), r.path_of(n), root);
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
  YAML::Node root;
  read_machine_file(r, machine_ref_path(r, n, file, machine_dirs), r.path_of(n), root);
  YAML::Node m = YAML::Clone(root);
  m["machine"] = spec.name;
  return m;
}

}  // namespace parse

std::string find_machine_file(const std::string& name, const std::vector<std::string>& dirs) {
  std::vector<std::string> all = dirs;
  if (const char* env = std::getenv("VFSSIM_MACHINES")) all.push_back(env);
  all.push_back((fs::path(scenarios_dir()) / "machines").string());
  for (const auto& d : all) {
    if (d.empty()) continue;
    fs::path p = fs::path(d) / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

TopologySpec load_machine_file(const std::string& path) {
  parse::Reader none(path);
  YAML::Node root;
  return parse::read_machine_file(none, path, "machine", root);
}

}  // namespace vfssim::models
