#include "cli/catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/options.h"
#include "models/hardware/topology.h"
#include "models/scenario/library_api.h"
#include "models/scenario/scenario.h"

namespace vfssim::report {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t#");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The source a preset gives for the value on `line` (0-based): the comment
// after it on that line, else the comment block right above it. The
// presets cite every latency there (or mark it an estimate); the loader
// never reads comments, so this is the one place that does.
std::string source_comment(const std::vector<std::string>& lines, int line) {
  if (line < 0 || line >= static_cast<int>(lines.size())) return "";
  const std::string& l = lines[static_cast<std::size_t>(line)];
  if (const auto hash = l.find(" #"); hash != std::string::npos) return trim(l.substr(hash + 2));
  std::vector<std::string> block;
  for (int i = line - 1; i >= 0; --i) {
    const std::string t = lines[static_cast<std::size_t>(i)];
    const auto first = t.find_first_not_of(" \t");
    if (first == std::string::npos || t[first] != '#') break;
    block.push_back(trim(t));
  }
  std::string out;
  for (auto it = block.rbegin(); it != block.rend(); ++it) out += (out.empty() ? "" : " ") + *it;
  return out;
}

struct Latency {
  std::string name, value, source;
  // The range of an estimate written {estimate, range: [lo, hi], why}
  // (docs/scenario-format.md, Ranges); empty for a plain value.
  std::string low, high, why;
  // "estimate" when the preset says so (or gives a range), "cited" when it
  // names a source, "none" when it says nothing.
  std::string basis() const {
    std::string lower = source;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (!low.empty()) return "estimate";
    if (source.empty()) return "none";
    return lower.find("estimate") != std::string::npos ? "estimate" : "cited";
  }
};

struct Preset {
  std::string name, path, description;
  int cpus = 0, sockets = 0, nodes = 0, cores = 0, smt = 1;
  std::vector<Latency> latencies;
};

Preset read_preset(const fs::path& path) {
  Preset p;
  p.path = path.string();
  const models::TopologySpec spec = models::load_machine_file(p.path);  // checked as a scenario's machine is
  const models::Topology topo(spec);
  p.name = spec.name;
  p.description = spec.description;
  p.cpus = topo.num_cpus();
  p.cores = topo.num_cores();
  p.nodes = topo.num_nodes();
  p.smt = p.cores > 0 ? p.cpus / p.cores : 1;
  // Sockets: the level the preset calls so (or package, chip); else the outermost.
  int socket_level = 0;
  for (std::size_t i = 0; i < spec.levels.size(); ++i)
    if (spec.levels[i].name == "socket" || spec.levels[i].name == "package" || spec.levels[i].name == "chip") {
      socket_level = static_cast<int>(i);
      break;
    }
  p.sockets = topo.num_elements(socket_level);

  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const YAML::Node root = YAML::LoadFile(p.path);
  auto add = [&](const std::string& name, const YAML::Node& n) {
    // A scalar, `E ± D` among them (a string the loader reads), is shown as written.
    if (n && n.IsScalar()) p.latencies.push_back({name, n.Scalar(), source_comment(lines, n.Mark().line), "", "", ""});
    if (n && n.IsMap() && n["estimate"]) {  // the loader has checked its form
      Latency l{name, n["estimate"].Scalar(), source_comment(lines, n.Mark().line), "", "", ""};
      if (const YAML::Node r = n["range"]; r && r.IsSequence() && r.size() == 2) l.low = r[0].Scalar(), l.high = r[1].Scalar();
      if (n["why"]) l.why = n["why"].Scalar();
      p.latencies.push_back(l);
    }
  };
  if (root["levels"])
    for (const auto& l : root["levels"])
      if (l["transfer"]) add(l["name"].Scalar() + ".transfer", l["transfer"]);
  if (const YAML::Node ic = root["interconnect"]; ic && ic.IsMap())
    for (const char* k : {"base", "hop"}) add(std::string("interconnect.") + k, ic[k]);
  for (const char* k : {"local_hit", "local_atomic", "invalidate_per_sharer", "smt_throughput", "wake_latency", "context_switch"})
    add(k, root[k]);
  if (const YAML::Node c = root["coherence"]; c && c.IsMap())
    for (const auto& kv : c)
      if (kv.first.Scalar() != "kind") add("coherence." + kv.first.Scalar(), kv.second);
  return p;
}

std::vector<Preset> presets(const std::vector<std::string>& names) {
  const fs::path dir = fs::path(models::scenarios_dir()) / "machines";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  if (ec) throw po::error(dir.string() + ": cannot list the machine presets: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<Preset> out;
  for (const auto& n : names) {
    if (std::none_of(files.begin(), files.end(), [&](const fs::path& f) { return f.stem() == n; })) {
      std::string list;
      for (const auto& f : files) list += (list.empty() ? "" : ", ") + f.stem().string();
      throw po::error("no machine preset '" + n + "' (presets: " + list + ")");
    }
  }
  for (const auto& f : files)
    if (names.empty() || std::find(names.begin(), names.end(), f.stem().string()) != names.end())
      out.push_back(read_preset(f));
  return out;
}

}  // namespace

int cmd_machines(const std::vector<std::string>& args) {
  po::options_description opts("vfssim machines [NAME...] [options]");
  opts.add_options()("help,h", "this help")("json", "print one JSON document");
  po::options_description hidden;
  std::vector<std::string> names;
  hidden.add_options()("name", po::value(&names));
  po::positional_options_description pos;
  pos.add("name", -1);
  po::variables_map vm;
  parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts << "\nNAME: presets to show (default: all, from " << models::scenarios_dir() << "/machines)\n";
    return 0;
  }
  const std::vector<Preset> list = presets(names);
  if (vm.count("json")) {
    json doc = json::array();
    for (const auto& p : list) {
      json lat = json::array();
      for (const auto& l : p.latencies)
      {
        json e = {{"name", l.name}, {"value", l.value}, {"basis", l.basis()}, {"source", l.source}};
        if (!l.low.empty()) e["range"] = {l.low, l.high};
        if (!l.why.empty()) e["why"] = l.why;
        lat.push_back(e);
      }
      doc.push_back({{"machine", p.name},
                     {"description", p.description},
                     {"path", p.path},
                     {"cpus", p.cpus},
                     {"sockets", p.sockets},
                     {"numa_nodes", p.nodes},
                     {"cores", p.cores},
                     {"smt", p.smt},
                     {"latencies", lat}});
    }
    std::cout << json{{"machines", doc}}.dump(2) << "\n";
    return 0;
  }
  std::printf("%-20s %5s %7s %5s %5s %3s  %s\n", "machine", "cpus", "sockets", "nodes", "cores", "smt",
              "latencies cited/estimated");
  for (const auto& p : list) {
    int cited = 0, estimated = 0;
    for (const auto& l : p.latencies) cited += l.basis() == "cited", estimated += l.basis() == "estimate";
    std::printf("%-20s %5d %7d %5d %5d %3d  %d/%d\n", p.name.c_str(), p.cpus, p.sockets, p.nodes, p.cores, p.smt, cited,
                estimated);
  }
  for (const auto& p : list) {
    std::cout << "\n" << p.name << ": " << p.description << "\n";
    for (const auto& l : p.latencies)
      std::printf("  %-32s %-9s %-8s %-18s %s\n", l.name.c_str(), l.value.c_str(), l.basis().c_str(),
                  l.low.empty() ? "" : ("[" + l.low + ", " + l.high + "]").c_str(),
                  (l.why.empty() ? l.source : l.why + "; " + l.source).c_str());
  }
  return 0;
}

namespace {

std::string at(const models::SourceMark& m) { return m.file + ":" + std::to_string(m.line); }

json change_json(const models::LibraryChangeInfo& c) {
  return {{"version", c.version}, {"commit", c.commit}, {"title", c.title}, {"summary", c.summary},
          {"file", c.mark.file},  {"line", c.mark.line}, {"touches", c.touched}};
}

json op_json(const models::LibraryOpInfo& o) {
  return {{"op", o.name},         {"version", o.version}, {"description", o.description}, {"file", o.mark.file},
          {"line", o.mark.line},  {"calls", o.calls},     {"values", o.values},           {"bindings", o.bindings},
          {"steps", o.text}};
}

void print_changes(const std::vector<models::LibraryChangeInfo>& list) {
  for (const auto& c : list) {
    std::printf("  %-8s %-13s %s\n", c.version.c_str(), c.commit.substr(0, 12).c_str(), c.title.c_str());
    if (!c.summary.empty()) std::printf("  %-8s %-13s %s\n", "", "", c.summary.c_str());
    std::string t;
    for (const auto& x : c.touched) t += (t.empty() ? "" : ", ") + x;
    std::printf("  %-8s %-13s changes: %s  (%s)\n", "", "", t.c_str(), at(c.mark).c_str());
  }
}

}  // namespace

int cmd_library(const std::vector<std::string>& args) {
  po::options_description opts(
      "vfssim library [VERSION [OP]] | library diff FROM TO [OP] | library resolve FILE [options]");
  std::vector<std::string> dirs;
  opts.add_options()("help,h", "this help")("json", "print one JSON document")(
      "dir", po::value(&dirs), "DIR (repeatable): a directory holding kernel/ and benchmarks/, looked up first");
  po::options_description hidden;
  std::vector<std::string> words;
  hidden.add_options()("word", po::value(&words));
  po::positional_options_description pos;
  pos.add("word", -1);
  po::variables_map vm;
  parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\n  vfssim library                  the versions, the newest version's ops, the benchmarks"
                 "\n  vfssim library VERSION          a version: its changes (each a kernel commit), ops, values"
                 "\n  vfssim library VERSION OP       an op and the ops it calls, as the library writes them, and"
                 "\n                                  the values (costs, lock kinds) they use, per machine family"
                 "\n  vfssim library diff FROM TO OP  the changes from FROM to TO that touch OP, with their commits"
                 "\n  vfssim library resolve FILE     a scenario as the loader expands it (what a run stores)\n"
                 "\nThe library: " << models::scenarios_dir() << "/kernel and /benchmarks (docs/library.md).\n";
    return 0;
  }
  const bool as_json = vm.count("json") > 0;
  if (!words.empty() && words[0] == "resolve") {
    if (words.size() != 2) throw po::error("library resolve needs one FILE");
    const models::Scenario sc = models::load_scenario_file(words[1]);
    std::cout << (as_json ? json{{"scenario", sc.name}, {"resolved", sc.resolved_text}}.dump(2) + "\n" : sc.resolved_text);
    return 0;
  }
  models::LibraryCatalog lib(dirs);
  if (!words.empty() && words[0] == "diff") {
    if (words.size() < 3 || words.size() > 4) throw po::error("library diff needs FROM TO [OP]");
    const std::string op = words.size() == 4 ? words[3] : "";
    const auto changes = lib.diff(words[1], words[2], op);
    if (as_json) {
      json list = json::array();
      for (const auto& c : changes) list.push_back(change_json(c));
      std::cout << json{{"from", words[1]}, {"to", words[2]}, {"op", op}, {"changes", list}}.dump(2) << "\n";
      return 0;
    }
    std::printf("%s -> %s%s: %zu change%s\n", words[1].c_str(), words[2].c_str(), op.empty() ? "" : (", op " + op).c_str(),
                changes.size(), changes.size() == 1 ? "" : "s");
    print_changes(changes);
    return 0;
  }
  if (words.size() > 2) throw po::error("library takes at most VERSION and OP (or diff, resolve)");
  if (words.size() == 2) {
    const auto ops = lib.op_closure(words[0], words[1]);
    const auto version = lib.version(words[0]);
    if (as_json) {
      json list = json::array();
      for (const auto& o : ops) list.push_back(op_json(o));
      json values = json::array();
      for (const auto& v : version.values)
        for (const auto& o : ops)
          if (std::find(o.values.begin(), o.values.end(), v.name) != o.values.end()) {
            values.push_back({{"value", v.name}, {"version", v.version}, {"by_family", v.by_family}, {"why", v.why},
                              {"file", v.mark.file}, {"line", v.mark.line}});
            break;
          }
      std::cout << json{{"version", words[0]}, {"op", words[1]}, {"ops", list}, {"values", values}}.dump(2) << "\n";
      return 0;
    }
    for (const auto& o : ops) {
      std::printf("%s  (kernel %s, %s)%s%s\n", o.name.c_str(), o.version.c_str(), at(o.mark).c_str(),
                  o.description.empty() ? "" : ": ", o.description.c_str());
      if (!o.bindings.empty()) {
        std::string b;
        for (const auto& x : o.bindings) b += (b.empty() ? "$" : ", $") + x;
        std::printf("  bound by its caller: %s\n", b.c_str());
      }
      std::istringstream text(o.text);
      for (std::string l; std::getline(text, l);) std::printf("    %s\n", l.c_str());
    }
    std::printf("\nvalues (per machine family; kernel/families.yaml)\n");
    for (const auto& v : version.values) {
      bool used = false;
      for (const auto& o : ops) used = used || std::find(o.values.begin(), o.values.end(), v.name) != o.values.end();
      if (!used) continue;
      std::string fam;
      for (const auto& [f, x] : v.by_family) fam += (fam.empty() ? "" : "; ") + (f == "*" ? x : f + ": " + x);
      std::printf("  %-22s %-48s %s  (%s, kernel %s)\n", v.name.c_str(), fam.c_str(), v.why.c_str(), at(v.mark).c_str(),
                  v.version.c_str());
    }
    return 0;
  }
  if (words.size() == 1) {
    const auto v = lib.version(words[0]);
    if (as_json) {
      json changes = json::array(), ops = json::array(), values = json::array();
      for (const auto& c : v.changes) changes.push_back(change_json(c));
      for (const auto& o : v.ops) ops.push_back(op_json(o));
      for (const auto& x : v.values)
        values.push_back({{"value", x.name}, {"version", x.version}, {"by_family", x.by_family}, {"why", x.why}});
      std::cout << json{{"version", v.name},     {"inherits", v.inherits}, {"description", v.description},
                        {"source", v.source},    {"file", v.file},         {"changes", changes},
                        {"ops", ops},            {"values", values},       {"classes", v.classes},
                        {"objects", v.objects},  {"locks", v.locks},       {"lines", v.lines},
                        {"seqcounts", v.seqcounts}}
                       .dump(2)
                << "\n";
      return 0;
    }
    std::printf("kernel %s%s%s: %s\n  %s\n", v.name.c_str(), v.inherits.empty() ? "" : " (inherits ",
                v.inherits.empty() ? "" : (v.inherits + ")").c_str(), v.description.c_str(), v.file.c_str());
    if (!v.source.empty()) std::printf("  source: %s\n", v.source.c_str());
    if (!v.changes.empty()) {
      std::printf("\nchanges from %s (%zu)\n", v.inherits.c_str(), v.changes.size());
      print_changes(v.changes);
    }
    std::printf("\nops (%zu)\n", v.ops.size());
    for (const auto& o : v.ops)
      std::printf("  %-26s %-8s %s\n", o.name.c_str(), o.version.c_str(), o.description.c_str());
    std::printf("\nvalues (%zu)\n", v.values.size());
    for (const auto& x : v.values) {
      std::string fam;
      for (const auto& [f, val] : x.by_family) fam += (fam.empty() ? "" : "; ") + (f == "*" ? val : f + ": " + val);
      std::printf("  %-22s %-8s %s\n", x.name.c_str(), x.version.c_str(), fam.c_str());
    }
    const auto list = [](const char* what, const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      std::printf("%s (%zu): %s\n", what, v.size(), s.c_str());
    };
    std::printf("\n");
    list("classes", v.classes);
    list("objects", v.objects);
    list("locks", v.locks);
    list("lines", v.lines);
    list("seqcounts", v.seqcounts);
    return 0;
  }
  // No words: every version, the newest version's ops, the benchmarks.
  const auto names = lib.versions();
  std::vector<models::LibraryVersionInfo> versions;
  for (const auto& n : names) versions.push_back(lib.version(n));
  const auto benches = lib.benchmarks();
  if (as_json) {
    json vs = json::array(), bs = json::array();
    for (const auto& v : versions) {
      json ops = json::array();
      for (const auto& o : v.ops) ops.push_back(o.name);
      vs.push_back({{"version", v.name}, {"inherits", v.inherits}, {"description", v.description}, {"file", v.file},
                    {"changes", v.changes.size()}, {"ops", ops}});
    }
    for (const auto& b : benches) {
      json tests = json::array();
      for (const auto& t : b.tests) tests.push_back({{"test", t.name}, {"description", t.description}, {"source", t.source}});
      bs.push_back({{"benchmark", b.name}, {"description", b.description}, {"source", b.source}, {"modes", b.modes},
                    {"tests", tests}});
    }
    std::cout << json{{"versions", vs}, {"families", lib.families()}, {"benchmarks", bs}}.dump(2) << "\n";
    return 0;
  }
  std::printf("%-10s %-10s %7s %5s  %s\n", "version", "inherits", "changes", "ops", "description");
  for (const auto& v : versions)
    std::printf("%-10s %-10s %7zu %5zu  %s\n", v.name.c_str(), v.inherits.c_str(), v.changes.size(), v.ops.size(),
                v.description.c_str());
  std::printf("\nfamilies (one set of values each):");
  for (const auto& [f, ms] : lib.families()) {
    std::string m;
    for (const auto& x : ms) m += (m.empty() ? "" : ", ") + x;
    std::printf("\n  %-8s %s", f.c_str(), m.c_str());
  }
  std::printf("\n");
  if (!versions.empty()) {
    const auto& newest = versions.back();
    std::printf("\nops of %s (%zu; `vfssim library %s OP` prints one)\n", newest.name.c_str(), newest.ops.size(),
                newest.name.c_str());
    for (const auto& o : newest.ops)
      std::printf("  %-26s %-8s %s\n", o.name.c_str(), o.version.c_str(), o.description.c_str());
  }
  std::printf("\nbenchmarks (`vfssim new BENCHMARK TEST_MODE --kernel VERSION --machine PRESET` writes a scenario)\n");
  for (const auto& b : benches) {
    std::string modes;
    for (const auto& m : b.modes) modes += (modes.empty() ? "" : ", ") + m;
    std::printf("  %s: %s%s\n", b.name.c_str(), b.description.c_str(), modes.empty() ? "" : (" (modes: " + modes + ")").c_str());
    for (const auto& t : b.tests) std::printf("    %-20s %s\n", t.name.c_str(), t.description.c_str());
  }
  return 0;
}

namespace {

// The starter scenarios of `vfssim new`: each loads and runs as written
// (tests/cli/test_cli.py runs every one). @NAME@ is the scenario's name.
struct Template {
  const char* name;
  const char* summary;
  const char* text;
};

const Template kTemplates[] = {
    {"lock-microbench", "one global lock taken in a loop by every CPU (locktorture-like)",
     R"(# @NAME@: a lock microbenchmark (written by `vfssim new lock-microbench`).
#
# Every CPU loops: take one global lock, update the data it protects, drop
# it, work outside it. Try another lock kind or other hold and think times:
#   vfssim run @NAME@.yaml --cpus 1,2,4,8
#   vfssim run @NAME@.yaml --set ticket.locks.test_lock.kind=mcs --set think=50ns
# docs/scenario-format.md describes every key.
scenario: @NAME@
description: one global lock taken in a loop by every CPU
machine: skylake-sp-2s        # a preset: `vfssim machines` lists them
workload:
  tasks: process              # independent processes: nothing shared but what a strategy declares
  placement: spread           # over NUMA nodes, cores before SMT siblings
  loop: [iteration]           # ops/s counts iterations of this loop
  warmup: 20us                # simulated time before the measurement
  duration: 500us             # the measurement window (simulated)
  cpus: [1, 2, 4, 8, 16, 32]  # the default sweep: one task per CPU
params:
  think: 200ns                # work outside the lock per iteration
strategies:
  ticket:
    description: a ticket spinlock (tas, ticket, mcs, qspinlock, cna, mutex, rwsem, rwlock, brlock)
    locks:
      test_lock: {kind: ticket, scope: global}
    lines:
      test_data: {scope: global}  # the protected data, on a cache line of its own
    ops:
      iteration:
        - lock: test_lock
          body:
            - atomic: test_data   # the update of the protected data
            - compute: 20ns       # the rest of the critical section
        - compute: $think
)"},
    {"open-close", "open+close of a private file: a per-process fd table, a global file list lock, a shared dentry",
     R"(# @NAME@: open+close of a private file (written by `vfssim new open-close`).
#
# Each process opens and closes a file of its own. What the processes
# share: the superblock's file list lock, taken on open and on close, and
# the parent directory's dentry refcount. The fd table's lock is per
# process. Replace the estimates with your kernel's costs, then:
#   vfssim run @NAME@.yaml
#   vfssim run @NAME@.yaml --free files_lock     # what if the list lock cost nothing?
# docs/scenario-format.md describes every key.
scenario: @NAME@
description: open+close of a private file, one process per CPU
machine: skylake-sp-2s        # a preset: `vfssim machines` lists them
workload:
  tasks: process              # a files_struct (fd table) each
  placement: spread
  loop: [open, close]         # ops/s counts open+close pairs
  warmup: 20us
  duration: 500us
  cpus: [1, 2, 4, 8, 16]
strategies:
  baseline:
    description: one global file list lock
    locks:
      file_lock:  {kind: ticket, scope: process}  # files->file_lock: alloc_fd, fd_install, close
      files_lock: {kind: ticket, scope: global}   # the superblock's file list: add on open, remove on close
    lines:
      dir_count: {scope: global}                  # d_count of the shared parent directory
    ops:
      open:
        - compute: 300ns          # estimate: syscall entry, getname
        - lock: file_lock         # alloc_fd
          hold: 30ns
        - atomic: dir_count       # dget of the parent during the walk
        - compute: 400ns          # estimate: path walk, allocate struct file
        - atomic: dir_count       # dput of the parent
        - lock: files_lock        # add the file to the superblock's list
          hold: 40ns
        - lock: file_lock         # fd_install
          hold: 20ns
      close:
        - compute: 200ns          # estimate: syscall entry
        - lock: file_lock         # pick the fd
          hold: 30ns
        - lock: files_lock        # remove the file from the list
          hold: 40ns
        - compute: 300ns          # estimate: fput, free struct file
)"},
    {"design-review", "two strategies for one code path: a global lock against per-CPU locks",
     R"(# @NAME@: a design review of two strategies (written by `vfssim new design-review`).
#
# One code path, two ways to lock it: `current` takes a global lock and
# bumps a shared counter; `proposed` extends it, making the lock per CPU
# and the counter per CPU. Compare them, and see what each waits on:
#   vfssim run @NAME@.yaml
#   vfssim compare @NAME@.yaml --base current --new proposed --cpus 16
#   vfssim run @NAME@.yaml --next-bottleneck
# docs/scenario-format.md describes every key.
scenario: @NAME@
description: a global lock and counter against per-CPU ones
machine: skylake-sp-2s        # a preset: `vfssim machines` lists them
workload:
  tasks: process
  placement: spread
  loop: [op]
  warmup: 20us
  duration: 500us
  cpus: [1, 2, 4, 8, 16, 32]
params:
  work: 500ns                 # the path's work outside the lock
strategies:
  current:
    description: a global spinlock and a shared counter
    locks:
      table_lock: {kind: qspinlock, scope: global}
    lines:
      nr_items: {scope: global}   # a statistics counter every op updates
    ops:
      op:
        - compute: $work
        - lock: table_lock
          body:
            - compute: 50ns       # estimate: the update under the lock
        - atomic: nr_items
  proposed:
    description: per-CPU locks and a per-CPU counter
    extends: current              # the same ops; only what is listed here changes
    locks:
      table_lock: {kind: qspinlock, scope: cpu}
    lines:
      nr_items: {scope: cpu}
)"},
};

}  // namespace

int cmd_new(const std::vector<std::string>& args) {
  std::string list;
  for (const auto& t : kTemplates) list += std::string("\n  ") + t.name + ": " + t.summary;
  po::options_description opts("vfssim new TEMPLATE NAME [--out FILE] | new BENCHMARK TEST_MODE [--kernel V] [--machine M]");
  std::string tmpl, name, out, kernel, machine = "skylake-sp-2s";
  opts.add_options()("help,h", "this help")("out,o", po::value(&out),
                                            "the file to write (default NAME.yaml; '-' for standard output)")(
      "kernel", po::value(&kernel), "with a benchmark: the kernel version (default: the library's newest)")(
      "machine", po::value(&machine), "with a benchmark: the machine preset (default: skylake-sp-2s)");
  po::options_description hidden;
  hidden.add_options()("template", po::value(&tmpl))("name", po::value(&name));
  po::positional_options_description pos;
  pos.add("template", 1).add("name", 1);
  po::variables_map vm;
  parse_command(args, opts, hidden, pos, vm);
  models::LibraryCatalog lib;
  std::string benches;
  for (const auto& b : lib.benchmarks()) benches += (benches.empty() ? "" : ", ") + b.name;
  if (vm.count("help")) {
    std::cout << opts << "\nTEMPLATE:" << list << "\nBENCHMARK (NAME is the test and mode, such as open1_threads; "
              << "`vfssim library` lists them): " << benches << "\n";
    return 0;
  }
  if (tmpl.empty() || name.empty())
    throw po::error("new needs a TEMPLATE and a NAME (or a BENCHMARK and a TEST_MODE); templates:" + list +
                    "\nbenchmarks: " + benches);
  const Template* t = nullptr;
  for (const auto& c : kTemplates)
    if (tmpl == c.name) t = &c;
  bool bench = false;
  for (const auto& b : lib.benchmarks()) bench = bench || b.name == tmpl;
  if (!t && !bench) throw po::error("no template or benchmark '" + tmpl + "'; templates:" + list + "\nbenchmarks: " + benches);
  if (t && (vm.count("kernel") || vm.count("machine")))
    throw po::error("--kernel and --machine go with a benchmark, not the template '" + tmpl + "'");
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos)
    throw po::error("scenario name '" + name + "' is not made of ASCII letters, digits, '_', '-' and '.'");
  std::string text;
  if (t) {
    text = t->text;
    for (std::size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
  } else {
    if (kernel.empty()) {
      const auto versions = lib.versions();
      if (versions.empty()) throw po::error("the code-path library lists no versions");
      kernel = versions.back();
    }
    text = lib.new_scenario(tmpl + "/" + name, kernel, machine, name);
  }
  // What is written must load: the templates are checked by the loader here too.
  (void)models::load_scenario_string(text, "template " + tmpl);
  if (out == "-") {
    std::cout << text;
    return 0;
  }
  if (out.empty()) out = name + ".yaml";
  std::error_code ec;
  if (fs::exists(out, ec)) throw po::error(out + " exists: not overwritten (--out FILE to write elsewhere)");
  std::ofstream f(out);
  f << text;
  f.close();
  if (!f) throw po::error(out + ": cannot write the file");
  std::cerr << "wrote " << out << " (template " << tmpl << "); run it with: vfssim run " << out << "\n";
  return 0;
}

}  // namespace vfssim::report
