#include "models/experiment/experiment.h"

#include <chrono>
#include <cmath>
#include <mutex>
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

PointResult run_point(const Scenario& scenario, const PointSpec& spec, const PointLimits& limits) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Strategy* chosen = &scenario.strategy(spec.strategy);
  Strategy what_if;  // the strategy with locks made free / lines made private
  if (!spec.free_locks.empty() || !spec.private_lines.empty()) {
    what_if = *chosen;
    for (const auto& name : spec.free_locks) {
      auto it = what_if.locks.find(name);
      if (it == what_if.locks.end())
        throw std::invalid_argument("strategy '" + what_if.name + "' has no lock '" + name + "' to make free");
      it->second.kind = FreeLock::kKind;
    }
    for (const auto& name : spec.private_lines) {
      auto it = what_if.lines.find(name);
      if (it == what_if.lines.end())
        throw std::invalid_argument("strategy '" + what_if.name + "' has no line '" + name + "' to make private");
      it->second.scope = Scope::kTask;
    }
    chosen = &what_if;
  }
  const Strategy& strategy = *chosen;
  const Variant variant = resolve_variant(scenario, spec.variant);
  const Workload& wl = variant.workload;
  const Topology topo(variant.machine);
  const Program program = compile_program(strategy, wl.loop, variant.params);

  sim::Simulation sim;
  ExecutorConfig cfg;
  cfg.cpus = Scenario::place_tasks(topo, wl, spec.cpus);
  cfg.tasks = wl.tasks;
  cfg.seed = spec.seed;
  cfg.warmup = sim::kTimeZero + wl.warmup;
  cfg.end = cfg.warmup + wl.duration;
  // Tasks start spread over the first microsecond, as processes forked by
  // a benchmark driver do: it breaks lockstep between identical loops.
  cfg.start_jitter = sim::microseconds(1);
  Executor exec(sim, program, topo, cfg);
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
  r.lines = exec.line_report();
  r.profile = exec.profile();
  r.seqcounts = exec.seq_report();
  r.pools = exec.pool_report();
  r.rcu = exec.rcu_stats();
  r.cpu_time = wl.duration * spec.cpus;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress) {
  return run_sweep(scenario, spec, progress, SweepControl{});  // models/experiment/sweep.cpp
}

}  // namespace vfssim::models
