#include "models/experiment/experiment.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <type_traits>
#include <cmath>
#include <mutex>
#include <set>
#include <stdexcept>

#include "models/experiment/point_run.h"
#include "models/kernel/free_lock.h"
#include "sim/parallel.h"
#include "sim/rng.h"
#include "sim/simulation.h"

namespace vfssim::models {

std::uint64_t rep_seed(std::uint64_t seed, int rep) {
  return sim::derive_seed(seed, "replication", static_cast<std::uint64_t>(rep));
}

// The variant a point runs. A scenario assembled in code (tests, bench) may
// have no variant list: its machine and workload are the default variant.
Variant resolve_variant(const Scenario& scenario, const std::string& name) {
  if (scenario.variants.empty() && name == "default") {
    Variant v;
    v.name = name;
    v.params = scenario.params;
    v.machine_name = scenario.machine_name;
    v.machine = scenario.machine;
    v.workload = scenario.workload;
    return v;
  }
  return scenario.variant(name);
}

namespace {

// The strategy a point runs: the scenario's, or a copy with the what-if's
// locks made free and lines made private.
Strategy point_strategy(const Scenario& scenario, const PointSpec& spec) {
  Strategy s = scenario.strategy(spec.strategy);
  for (const auto& name : spec.free_locks) {
    auto it = s.locks.find(name);
    if (it == s.locks.end()) throw std::invalid_argument("strategy '" + s.name + "' has no lock '" + name + "' to make free");
    it->second.kind = FreeLock::kKind;
    // A free lock has no word line: the data on its word (`on:`) keeps the
    // lock's sharing on a line of its own (issue 29 item 16).
    for (auto& [line_name, line] : s.lines)
      if (line.on == name) {
        line.on.clear();
        line.scope = it->second.scope;
        line.objects = it->second.objects;
        line.shared_by = 1;
      }
  }
  for (const auto& name : spec.private_lines) {
    auto it = s.lines.find(name);
    if (it == s.lines.end())
      throw std::invalid_argument("strategy '" + s.name + "' has no line '" + name + "' to make private");
    it->second.scope = Scope::kTask;
    it->second.shared_by = 1;  // a line of its own
    it->second.on.clear();     // off the lock's word, which stays shared (issue 29 item 10)
  }
  return s;
}

}  // namespace

void check_what_ifs(const Scenario& scenario, const std::vector<std::string>& strategies, const WhatIfs& w) {
  auto check = [&](const std::vector<std::string>& names, const char* what, const char* to, auto declared) {
    for (const auto& n : names) {
      std::set<std::string> all;
      bool found = false;
      for (const auto& s : strategies) {
        for (const auto& [k, v] : declared(scenario.strategy(s))) all.insert(k);
        found = found || all.count(n) > 0;
      }
      if (found) continue;
      std::string list;
      for (const auto& k : all) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("no strategy run has a " + std::string(what) + " '" + n + "' to make " + to +
                                  " (their " + what + "s: " + (list.empty() ? "none" : list) + ")");
    }
  };
  check(w.free_locks, "lock", "free", [](const Strategy& s) -> const auto& { return s.locks; });
  check(w.private_lines, "line", "private", [](const Strategy& s) -> const auto& { return s.lines; });
}

void apply_what_ifs(const Scenario& scenario, const WhatIfs& w, PointSpec& spec) {
  const Strategy& s = scenario.strategy(spec.strategy);
  for (const auto& n : w.free_locks)
    if (s.locks.count(n)) spec.free_locks.push_back(n);
  for (const auto& n : w.private_lines)
    if (s.lines.count(n)) spec.private_lines.push_back(n);
}

namespace {

// Everything a point's simulation depends on except its seed, resolved:
// the variant (machine, workload, parameters), the compiled program and
// the CPUs its tasks run on.
struct PointSetup {
  Variant variant;
  Topology topo;
  Program program;
  std::vector<int> cpus;
  std::vector<int> roles;  // per task
  PointSetup(const Scenario& scenario, const PointSpec& spec)
      : variant(resolve_variant(scenario, spec.variant)),
        topo(variant.machine),
        program(compile_program(point_strategy(scenario, spec), variant.workload, variant.params)),
        cpus(Scenario::place_tasks(topo, variant.workload, spec.cpus)),
        roles(assign_roles(variant.workload, topo, cpus)) {}
};

// Tasks start spread over the first microsecond, as processes forked by a
// benchmark driver do: it breaks lockstep between identical loops.
constexpr Duration kStartJitter = sim::microseconds(1);

// Appends the bytes of plain values: the fingerprint's canonical form.
struct Bytes {
  std::string out;
  template <typename T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  Bytes& operator<<(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Bytes& operator<<(Duration d) { return *this << d.count(); }
  Bytes& operator<<(const std::string& s) { return *this << s.size(), out.append(s), *this; }
  Bytes& operator<<(const TimeDist& t) { return *this << t.kind << t.a << t.b << t.param; }
  Bytes& operator<<(const NumberRef& n) { return *this << n.value << n.param; }
  // Only for scope: object, so that the other declarations' fingerprints stay as they were.
  Bytes& object_set(Scope scope, const ObjectSet& o) {
    if (scope == Scope::kObject) *this << o.objects << o.pick << o.zipf_s;
    return *this;
  }
  template <typename T>
  Bytes& operator<<(const std::vector<T>& v) {
    *this << v.size();
    for (const auto& x : v) *this << x;
    return *this;
  }
};

}  // namespace

std::string point_fingerprint(const Scenario& scenario, const PointSpec& spec) {
  const PointSetup setup(scenario, spec);
  const Program& p = setup.program;
  const Workload& wl = setup.variant.workload;
  const TopologySpec& m = setup.variant.machine;
  Bytes b;
  b << p.code.size();
  for (const Instr& in : p.code)
    b << in.kind << in.mode << in.slot << in.frame << in.symbol << in.jump << in.jump2 << in.aux << in.count << in.p
      << in.time;
  b << p.frames.size();
  for (const Frame& f : p.frames) b << f.parent << f.name;
  b << p.symbols << p.detail << p.locks.size();
  for (const LockDecl& l : p.locks) {
    (b << l.name << l.kind << l.scope << l.spin << l.wake_latency << l.reader_preference << l.threshold)
        .object_set(l.scope, l.objects);
    if (l.versioned)  // only then: the fingerprints of version-less locks stay as they were
      b << l.behaviour << l.handoff << l.reader_spin << l.reader_steal << l.wake_all_readers << l.spin_on_readers
        << l.adaptive << l.handoff_spin;
  }
  b << p.lines.size();
  for (const LineDecl& l : p.lines) {
    (b << l.name << l.scope << l.on).object_set(l.scope, l.objects);
    if (l.shared_by != 1) b << l.shared_by;  // only then: the other lines' fingerprints stay as they were
  }
  b << p.seqcounts.size();
  for (const SeqDecl& q : p.seqcounts) (b << q.name << q.scope).object_set(q.scope, q.objects);
  b << p.pools.size();
  for (const PoolDecl& q : p.pools) b << q.name << q.scope << q.low << q.high << q.refill;
  b << p.percpu_counters << p.uses_rcu_gp << p.uses_sum << p.hz;
  b << m.levels.size();
  for (const TopologyLevel& l : m.levels) b << l.name << l.count << l.transfer;
  b << m.links.size();
  for (const InterconnectLink& l : m.links) b << l.a << l.b;
  b << m.cross_base << m.hop << m.numa_level << m.core_level << m.local_hit << m.local_atomic
    << m.invalidate_per_sharer << m.smt_throughput << m.measured_matrix;
  if (m.wake_latency > Duration{0}) b << m.wake_latency << m.context_switch;  // (absent: fingerprints stay as they were)
  b << wl.tasks << setup.cpus << wl.warmup << wl.duration << kStartJitter;
  if (!wl.roles.empty()) b << p.entries << setup.roles;  // (absent without roles: fingerprints stay as they were)
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sim::stable_hash(b.out)));
  return hex;
}

TaskStats task_stats(const std::vector<std::uint64_t>& task_ops, double window_seconds,
                     const sim::LogLinearHistogram& latency) {
  TaskStats s;
  if (task_ops.empty() || window_seconds <= 0) return s;
  std::vector<std::uint64_t> sorted = task_ops;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  auto rate = [&](double ops) { return ops / window_seconds; };
  s.ops_per_sec_min = rate(static_cast<double>(sorted.front()));
  s.ops_per_sec_max = rate(static_cast<double>(sorted.back()));
  s.ops_per_sec_median = n % 2 ? rate(static_cast<double>(sorted[n / 2]))
                               : rate((static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2);
  if (sorted.front() > 0) s.fairness = static_cast<double>(sorted.back()) / static_cast<double>(sorted.front());
  double sum = 0, squares = 0;  // of the counts: the window cancels out of Jain's index
  for (const auto c : sorted) {
    sum += static_cast<double>(c);
    squares += static_cast<double>(c) * static_cast<double>(c);
  }
  if (squares > 0) s.jain = sum * sum / (static_cast<double>(n) * squares);
  if (latency.count() > 0) {
    s.latency_p50 = Duration{latency.quantile(0.50)};
    s.latency_p99 = Duration{latency.quantile(0.99)};
    s.latency_p999 = Duration{latency.quantile(0.999)};
    s.latency_max = Duration{latency.max()};
  }
  return s;
}

PointResult run_point(const Scenario& scenario, const PointSpec& spec, const PointLimits& limits) {
  const auto wall_start = std::chrono::steady_clock::now();
  const PointSetup setup(scenario, spec);
  const Workload& wl = setup.variant.workload;

  sim::Simulation sim;
  ExecutorConfig cfg;
  cfg.cpus = setup.cpus;
  cfg.tasks = wl.tasks;
  cfg.seed = spec.seed;
  cfg.warmup = sim::kTimeZero + wl.warmup;
  cfg.end = cfg.warmup + wl.duration;
  cfg.start_jitter = kStartJitter;
  cfg.roles = setup.roles;
  Executor exec(sim, setup.program, setup.topo, cfg);
  exec.start();
  std::string limit_stop;  // set when a budget or cancellation cut the run short
  const sim::StopReason why = run_within_limits(sim, cfg.end, limits, wall_start, limit_stop);

  PointResult r;
  r.spec = spec;
  r.ops = exec.window_iterations();
  r.window_seconds = sim::seconds(wl.duration);
  r.ops_per_sec = static_cast<double>(r.ops) / r.window_seconds;
  r.events = sim.events_executed();
  r.window_events = r.events - exec.events_before_window();
  r.stop = stop_description(why, limit_stop, exec);
  r.locks = exec.lock_report();
  r.lock_modes = exec.lock_mode_report();
  r.contention_points = exec.contention_points();
  r.lines = exec.line_report();
  r.profile = exec.profile();
  r.seqcounts = exec.seq_report();
  r.pools = exec.pool_report();
  r.rcu = exec.rcu_stats();
  r.task_ops.reserve(setup.cpus.size());
  for (std::size_t t = 0; t < setup.cpus.size(); ++t) r.task_ops.push_back(exec.iterations_of(t));
  r.tasks = task_stats(r.task_ops, r.window_seconds, exec.latency());
  for (std::size_t i = 0; i < wl.roles.size(); ++i) {
    RoleReport role{wl.roles[i].name, 0, 0, 0, {}};
    std::vector<std::uint64_t> ops;
    for (std::size_t t = 0; t < setup.roles.size(); ++t)
      if (setup.roles[t] == static_cast<int>(i)) {
        ++role.tasks;
        role.ops += r.task_ops[t];
        ops.push_back(r.task_ops[t]);
      }
    role.ops_per_sec = static_cast<double>(role.ops) / r.window_seconds;
    role.tasks_stats = task_stats(ops, r.window_seconds, sim::LogLinearHistogram{});  // readers and writers apart
    r.roles.push_back(role);
  }
  r.cpu_time = wl.duration * spec.cpus;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress) {
  return run_sweep(scenario, spec, progress, SweepControl{});  // models/experiment/sweep.cpp
}

}  // namespace vfssim::models
