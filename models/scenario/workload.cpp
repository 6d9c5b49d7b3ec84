// workload: what every CPU runs and for how long; variants: named
// overrides of it (parameters, machine, task kind, loop, CPU counts), read
// by the same parsers as the workload's own keys.
#include <algorithm>

#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace {

TaskKind parse_task_kind(const Reader& r, const YAML::Node& n) {
  const std::string t = r.scalar(n, "tasks");
  if (t == "process") return TaskKind::kProcess;
  if (t == "thread") return TaskKind::kThread;
  r.fail(n, "unknown task kind '" + t + "'", "process or thread");
}

// `label`: "workload" or "variant", for the message.
void parse_loop(const Reader& r, const YAML::Node& loop, const std::string& label, Workload& w) {
  w.loop.clear();
  w.loop_mark = r.mark(loop);
  if (!loop.IsSequence() || loop.size() == 0) r.fail(loop, label + " loop is not a non-empty list", "a list of op names");
  for (const auto& op : loop) w.loop.push_back(r.name(op, "loop op"));
}

// roles: NAME: {loop: [ops], count: N | fraction: F | per_node: N}; at
// most one role without a count (it takes the CPUs the others leave).
void parse_roles(const Reader& r, const YAML::Node& n, const std::string& label, Workload& w) {
  w.roles.clear();
  w.loop.clear();
  if (!n.IsMap() || n.size() == 0) r.fail(n, label + " roles is not a non-empty mapping", "NAME: {loop: [ops], count: N}");
  r.unique_keys(n, "roles of " + label);  // two roles of one name would be two rows nobody can tell apart
  std::string rest;  // the role without a count, if any
  for (const auto& kv : n) {
    Role role;
    role.name = r.name(kv.first, "role name");
    role.mark = r.mark(kv.first);
    const std::string what = "role '" + role.name + "'";
    r.expect_map(kv.second, what);
    r.only_keys(kv.second, what, {"loop", "count", "fraction", "per_node"});
    Workload one;
    parse_loop(r, r.require(kv.second, "loop", what), what, one);
    role.loop = one.loop;
    role.loop_mark = one.loop_mark;
    int sizes = 0;
    if (const auto c = kv.second["count"]) {
      role.count = static_cast<int>(r.integer(c, "count of " + what, 1, Topology::kMaxCpus));
      ++sizes;
    }
    if (const auto f = kv.second["fraction"]) {
      role.fraction = parse_fraction(r, f, "fraction of " + what);
      if (!(role.fraction > 0 && role.fraction <= 1))
        r.fail(f, "fraction of " + what + " " + f.Scalar() + " is outside (0, 1]", "a share of the CPUs above 0, at most 1 (0.5, 25%)");
      ++sizes;
    }
    if (const auto p = kv.second["per_node"]) {
      role.per_node = static_cast<int>(r.integer(p, "per_node of " + what, 1, Topology::kMaxCpus));
      ++sizes;
    }
    if (sizes > 1) r.fail(kv.second, what + " gives " + std::to_string(sizes) + " of count, fraction and per_node", "at most one of them");
    if (role.rest()) {
      if (!rest.empty())
        r.fail(kv.first, what + " and role '" + rest + "' both have no count",
               "a count (count, fraction or per_node) on every role but one, which takes the remaining CPUs");
      rest = role.name;
    }
    w.roles.push_back(role);
  }
  w.loop_mark = r.mark(n);
}

std::vector<int> parse_cpu_counts(const Reader& r, const YAML::Node& cpus, const Topology& machine) {
  if (!cpus.IsSequence() || cpus.size() == 0) r.fail(cpus, "cpus is not a non-empty list", "a list such as [1, 2, 4]");
  std::vector<int> out;
  for (const auto& c : cpus) {
    const int v = static_cast<int>(r.integer(c, "cpu count", 1, machine.num_cpus()));
    if (std::find(out.begin(), out.end(), v) != out.end())
      r.fail(c, "cpu count " + std::to_string(v) + " appears twice", "each CPU count once");
    out.push_back(v);
  }
  return out;
}

void parse_placement(const Reader& r, const YAML::Node& n, const Topology& machine, Workload& w) {
  if (n.IsSequence()) {
    // An explicit CPU list: task i runs on the i-th CPU.
    for (const auto& c : n) {
      const int cpu = static_cast<int>(r.integer(c, "placement CPU", 0, machine.num_cpus() - 1));
      if (std::find(w.cpu_list.begin(), w.cpu_list.end(), cpu) != w.cpu_list.end())
        r.fail(c, "placement lists CPU " + std::to_string(cpu) + " twice", "each CPU once");
      w.cpu_list.push_back(cpu);
    }
    if (w.cpu_list.empty()) r.fail(n, "placement is an empty list", "CPU numbers, or compact/spread/smt-last");
    w.placement_mark = r.mark(n);
    return;
  }
  const std::string p = r.scalar(n, "placement");
  if (p == "compact") w.placement = Placement::kCompact;
  else if (p == "spread") w.placement = Placement::kSpread;
  else if (p == "smt-last") w.placement = Placement::kSmtLast;
  else r.fail(n, "unknown placement '" + p + "'", "compact, spread, smt-last or a list of CPUs");
}

// An explicit placement must hold every CPU count the sweep runs, on CPUs
// the machine (a variant's, too) has.
void check_placement(const Reader& r, const YAML::Node& at, const Workload& w, const Topology& machine,
                     const std::string& what) {
  if (w.cpu_list.empty()) return;
  for (int cpu : w.cpu_list)
    if (cpu >= machine.num_cpus())
      r.fail(at, "the placement lists CPU " + std::to_string(cpu) + " but the machine of " + what + " (" +
                     machine.name() + ") has " + std::to_string(machine.num_cpus()) + " CPUs",
             "placement CPUs below " + std::to_string(machine.num_cpus()) + " (or a placement by name)");
  for (int c : w.cpus)
    if (c > static_cast<int>(w.cpu_list.size()))
      r.fail(at, what + " runs " + std::to_string(c) + " CPUs but the placement lists " +
                     std::to_string(w.cpu_list.size()), "CPU counts up to the placement's length");
}

// Roles must fit every CPU count the sweep runs (a `--cpus` list is
// checked again when the sweep is planned).
void check_roles(const Workload& w, const Topology& machine) {
  if (w.roles.empty()) return;
  for (int c : w.cpus) (void)assign_roles(w, machine, Scenario::place_tasks(machine, w, c));
}

void parse_variant_params(const Reader& r, const YAML::Node& ps, const std::string& what, const Params& declared,
                          Params& out) {
  r.expect_map(ps, "params of " + what);
  for (const auto& pv : ps) {
    const std::string pn = r.name(pv.first, "parameter name");
    auto it = declared.find(pn);
    if (it == declared.end())
      r.fail(pv.first, what + " sets parameter '" + pn + "', which 'params:' does not declare",
             "a parameter declared under 'params:' with its default");
    const ParamValue val = parse_param(r, pv.second, pn);
    if (val.type != it->second.type)
      r.fail(pv.second, what + " gives parameter '" + pn + "' a " + to_string(val.type),
             std::string("a ") + to_string(it->second.type) + ", as its default");
    out[pn] = val;
  }
}

Variant parse_variant(const Reader& r, const YAML::Node& key, const YAML::Node& n, const Variant& def,
                      const Scenario& sc, const std::vector<std::string>& machine_dirs) {
  Variant v = def;
  v.name = r.name(key, "variant name");
  v.mark = r.mark(key);
  if (v.name == "default") r.fail(key, "a variant is named 'default'", "another name: 'default' is the scenario as written");
  const std::string what = "variant '" + v.name + "'";
  r.expect_map(n, what);
  r.only_keys(n, what, {"description", "params", "machine", "tasks", "placement", "loop", "roles", "cpus"});
  if (n["description"]) v.description = r.scalar(n["description"], "description");
  if (const auto ps = n["params"]) parse_variant_params(r, ps, what, sc.params, v.params);
  if (const auto m = n["machine"]) {
    v.machine = load_machine_ref(r, m, r.file(), machine_dirs, sc.name + "-" + v.name + "-machine");
    v.machine_name = v.machine.name;
    if (!n["cpus"]) {  // the workload's CPU counts that fit the variant's machine
      const Topology vt(v.machine);
      v.workload.cpus.clear();
      for (int c : def.workload.cpus)
        if (c <= vt.num_cpus()) v.workload.cpus.push_back(c);
      if (v.workload.cpus.empty()) v.workload.cpus.push_back(vt.num_cpus());
    }
  }
  if (const auto t = n["tasks"]) v.workload.tasks = parse_task_kind(r, t);
  if (const auto pl = n["placement"]) {  // in place of the workload's (a policy, or a list of CPUs)
    v.workload.cpu_list.clear();
    parse_placement(r, pl, Topology(v.machine), v.workload);
  }
  if (n["loop"] && n["roles"])
    r.fail(n["roles"], what + " has both 'loop' and 'roles'", "either one loop for every task or roles, each with its loop");
  if (const auto loop = n["loop"]) {
    parse_loop(r, loop, "variant", v.workload);
    v.workload.roles.clear();  // one loop for every task, in place of the workload's roles
  }
  if (const auto roles = n["roles"]) parse_roles(r, roles, what, v.workload);
  const Topology vt(v.machine);
  if (const auto cpus = n["cpus"]) v.workload.cpus = parse_cpu_counts(r, cpus, vt);
  check_placement(r, n, v.workload, vt, what);
  check_roles(v.workload, vt);
  return v;
}

}  // namespace

Workload parse_workload(const Reader& r, const YAML::Node& wl, const TopologySpec& machine) {
  r.expect_map(wl, "workload");
  r.only_keys(wl, "workload", {"tasks", "placement", "loop", "roles", "warmup", "duration", "cpus"});
  Workload w;
  if (!wl["tasks"]) r.fail(wl, "workload has no 'tasks'", "'tasks: process' or 'tasks: thread'");
  w.tasks = parse_task_kind(r, wl["tasks"]);
  const Topology topo(machine);
  if (wl["placement"]) parse_placement(r, wl["placement"], topo, w);
  if (wl["loop"] && wl["roles"])
    r.fail(wl["roles"], "workload has both 'loop' and 'roles'", "either one loop for every task or roles, each with its loop");
  if (const auto roles = wl["roles"]) parse_roles(r, roles, "workload", w);
  else parse_loop(r, r.require(wl, "loop", "workload"), "workload", w);
  w.warmup = r.duration(r.require(wl, "warmup", "workload"), "warmup", false);
  w.duration = r.duration(r.require(wl, "duration", "workload"), "duration", true);
  if (const auto cpus = wl["cpus"]) {
    w.cpus = parse_cpu_counts(r, cpus, topo);
  } else {  // powers of two up to the machine, or up to an explicit placement's length
    const int most = w.cpu_list.empty() ? topo.num_cpus() : static_cast<int>(w.cpu_list.size());
    for (int c = 1; c < most; c *= 2) w.cpus.push_back(c);
    w.cpus.push_back(most);
  }
  check_placement(r, wl["cpus"] ? wl["cpus"] : wl, w, topo, "the workload");
  check_roles(w, topo);
  return w;
}

std::vector<Variant> parse_variants(const Reader& r, const YAML::Node& root, const Scenario& sc,
                                    const std::vector<std::string>& machine_dirs) {
  Variant def;
  def.name = "default";
  def.params = sc.params;
  def.machine_name = sc.machine_name;
  def.machine = sc.machine;
  def.workload = sc.workload;
  def.mark = r.mark(root);
  std::vector<Variant> out{def};
  if (const auto variants = root["variants"]) {
    r.expect_map(variants, "variants");
    if (variants.size() > kMaxVariants)
      r.fail(variants, "the scenario has " + std::to_string(variants.size()) + " variants",
             "at most " + std::to_string(kMaxVariants));
    for (const auto& kv : variants) out.push_back(parse_variant(r, kv.first, kv.second, def, sc, machine_dirs));
  }
  return out;
}

}  // namespace vfssim::models::parse
