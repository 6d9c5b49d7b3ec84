#include "cli/bench.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "bench/handwritten_mcs.h"
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

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall seconds of the point; its thread CPU seconds in `cpu`.
double wall_of(const models::Scenario& sc, const std::string& lock, int cpus, models::PointResult& out, double& cpu) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  out = models::run_point(sc, models::PointSpec{lock, cpus, 0, 1});
  cpu = thread_cpu_seconds() - c0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
  double cpu = 0;
  double wall = wall_of(sc, lock, cpus, r, cpu);
  if (r.window_events > 0 && r.window_events < min_events) {
    const double scale = static_cast<double>(min_events) / static_cast<double>(r.window_events);
    sc.workload.duration = sim::Duration{static_cast<std::int64_t>(static_cast<double>(duration.count()) * scale)};
    wall = wall_of(sc, lock, cpus, r, cpu);
  }
  models::Scenario empty = sc;
  empty.workload.duration = sim::Duration{1};
  models::PointResult setup;
  double setup_cpu = 0;
  const double setup_wall = wall_of(empty, lock, cpus, setup, setup_cpu);
  BenchResult b;
  b.wall_seconds = wall > setup_wall ? wall - setup_wall : wall;
  b.setup_seconds = setup_wall;
  b.cpu_seconds = cpu > setup_cpu ? cpu - setup_cpu : cpu;
  b.lock = lock;
  b.cpus = cpus;
  b.acquisitions = r.ops;
  b.events = r.window_events;
  b.sim_seconds = r.window_seconds;
  b.window = sc.workload.duration;
  return b;
}

HandwrittenComparison compare_handwritten(int cpus, sim::Duration duration, int pairs) {
  const models::Scenario sc = bench_scenario("mcs", cpus, duration);
  const std::int64_t warmup = sc.workload.warmup.count();
  duration = run_bench("mcs", cpus, duration).window;  // both run the window the engine's point runs
  HandwrittenComparison c;
  c.cpus = cpus;
  c.pairs = pairs;
  std::vector<double> hand_rate, engine_rate, hand_events, engine_events, cpu_ratios;
  for (int p = 0; p < pairs; ++p) {
    bench::HandwrittenResult h;
    BenchResult e;
    // Each in turn goes first: a machine whose load drifts favours neither.
    if (p % 2 == 0) {
      h = bench::run_handwritten_mcs(cpus, warmup, duration.count());
      e = run_bench("mcs", cpus, duration, /*min_events=*/0);  // already stretched
    } else {
      e = run_bench("mcs", cpus, duration, /*min_events=*/0);  // already stretched
      h = bench::run_handwritten_mcs(cpus, warmup, duration.count());
    }
    c.acquisitions = h.acquisitions;
    c.events = h.events;
    c.sim_acquisitions_per_sec = h.sim_acquisitions_per_sec();
    c.engine_acquisitions = e.acquisitions;
    c.engine_sim_acquisitions_per_sec = e.sim_acquisitions_per_sec();
    hand_rate.push_back(h.acquisitions_per_wall_sec());
    engine_rate.push_back(e.acquisitions_per_wall_sec());
    hand_events.push_back(h.events_per_sec());
    engine_events.push_back(e.events_per_sec());
    c.pair_ratios.push_back(hand_rate.back() > 0 ? engine_rate.back() / hand_rate.back() : 0);
    const double hand_cpu_rate = h.cpu_seconds > 0 ? h.acquisitions / h.cpu_seconds : 0;
    const double engine_cpu_rate = e.cpu_seconds > 0 ? e.acquisitions / e.cpu_seconds : 0;
    cpu_ratios.push_back(hand_cpu_rate > 0 ? engine_cpu_rate / hand_cpu_rate : 0);
  }
  c.acquisitions_per_wall_sec = median(hand_rate);
  c.engine_acquisitions_per_wall_sec = median(engine_rate);
  c.events_per_sec = median(hand_events);
  c.engine_events_per_sec = median(engine_events);
  c.ratio = median(c.pair_ratios);
  c.cpu_ratio = median(cpu_ratios);
  return c;
}

}  // namespace vfssim::report
