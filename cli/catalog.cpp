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
  po::options_description opts("vfssim new TEMPLATE NAME [--out FILE]");
  std::string tmpl, name, out;
  opts.add_options()("help,h", "this help")("out,o", po::value(&out),
                                            "the file to write (default NAME.yaml; '-' for standard output)");
  po::options_description hidden;
  hidden.add_options()("template", po::value(&tmpl))("name", po::value(&name));
  po::positional_options_description pos;
  pos.add("template", 1).add("name", 1);
  po::variables_map vm;
  parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts << "\nTEMPLATE:" << list << "\n";
    return 0;
  }
  if (tmpl.empty() || name.empty()) throw po::error("new needs a TEMPLATE and a NAME; templates:" + list);
  const Template* t = nullptr;
  for (const auto& c : kTemplates)
    if (tmpl == c.name) t = &c;
  if (!t) throw po::error("no template '" + tmpl + "'; templates:" + list);
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos)
    throw po::error("scenario name '" + name + "' is not made of ASCII letters, digits, '_', '-' and '.'");
  std::string text = t->text;
  for (std::size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
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
