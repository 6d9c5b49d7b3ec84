#include "cli/bench.h"

#include <chrono>

#include "models/experiment/experiment.h"

namespace vfssim::report {

models::Scenario bench_scenario(const std::string& lock, int cpus, sim::Duration duration) {
  using namespace models;
  Scenario sc;
  sc.name = "bench-" + lock;
  sc.path = "<bench>";
  sc.machine_name = "uniform-100ns";
  // A flat machine: every transfer, local or not, costs 100 ns, so every
  // acquisition pays exactly one 100 ns transfer.
  sc.machine.name = sc.machine_name;
  sc.machine.levels = {{"machine", 1, sim::nanoseconds(100)}, {"cpu", cpus, Duration{0}}};
  sc.machine.core_level = 1;
  sc.machine.local_hit = sim::nanoseconds(100);
  sc.machine.local_atomic = sim::nanoseconds(100);
  sc.workload.tasks = TaskKind::kProcess;
  sc.workload.placement = Placement::kCompact;
  sc.workload.loop = {"iteration"};
  sc.workload.warmup = sim::microseconds(20);
  sc.workload.duration = duration;
  sc.workload.cpus = {cpus};
  Strategy s;
  s.name = lock;
  LockDecl decl;
  decl.name = "the_lock";
  decl.kind = lock;
  s.locks["the_lock"] = decl;
  Step think;
  think.kind = StepKind::kCompute;
  think.time = TimeDist::exponential(sim::microseconds(2));
  Step hold;
  hold.kind = StepKind::kLock;
  hold.target = "the_lock";
  hold.time = TimeDist::fixed(sim::nanoseconds(200));
  s.ops["iteration"] = OpDef{"iteration", {think, hold}, {}};
  sc.strategies.push_back(s);
  return sc;
}

BenchResult run_bench(const std::string& lock, int cpus, sim::Duration duration) {
  const models::Scenario sc = bench_scenario(lock, cpus, duration);
  const auto t0 = std::chrono::steady_clock::now();
  const models::PointResult r = models::run_point(sc, models::PointSpec{lock, cpus, 0, 1});
  BenchResult b;
  b.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  b.lock = lock;
  b.cpus = cpus;
  b.acquisitions = r.ops;
  b.events = r.window_events;
  b.sim_seconds = r.window_seconds;
  return b;
}

}  // namespace vfssim::report
