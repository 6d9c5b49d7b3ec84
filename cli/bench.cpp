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
  // Readers and writers alike take read/write locks exclusively here: the
  // bench measures the engine's cost per handoff, not reader concurrency.
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

namespace {

double wall_of(const models::Scenario& sc, const std::string& lock, int cpus, models::PointResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  out = models::run_point(sc, models::PointSpec{lock, cpus, 0, 1});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// The engine's time per event, not the set-up's: a point of 1024 CPUs
// builds an 8 MiB cost matrix before its first event, and a collapsed
// ticket lock completes few acquisitions per simulated second. So the
// window is stretched until it holds at least `min_events` events, and the
// wall time of the same point with an empty window (set-up and warm-up) is
// subtracted, events and all.
BenchResult run_bench(const std::string& lock, int cpus, sim::Duration duration, std::uint64_t min_events) {
  models::Scenario sc = bench_scenario(lock, cpus, duration);
  models::PointResult r;
  double wall = wall_of(sc, lock, cpus, r);
  if (r.window_events > 0 && r.window_events < min_events) {
    const double scale = static_cast<double>(min_events) / static_cast<double>(r.window_events);
    sc.workload.duration = sim::Duration{static_cast<std::int64_t>(static_cast<double>(duration.count()) * scale)};
    wall = wall_of(sc, lock, cpus, r);
  }
  models::Scenario empty = sc;
  empty.workload.duration = sim::Duration{1};
  models::PointResult setup;
  const double setup_wall = wall_of(empty, lock, cpus, setup);
  BenchResult b;
  b.wall_seconds = wall > setup_wall ? wall - setup_wall : wall;
  b.setup_seconds = setup_wall;
  b.lock = lock;
  b.cpus = cpus;
  b.acquisitions = r.ops;
  b.events = r.window_events;
  b.sim_seconds = r.window_seconds;
  return b;
}

}  // namespace vfssim::report
