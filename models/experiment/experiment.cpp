#include "models/experiment/experiment.h"

#include <chrono>
#include <cmath>
#include <mutex>

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

PointResult run_point(const Scenario& scenario, const PointSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Strategy& strategy = scenario.strategy(spec.strategy);
  const Variant variant = resolve_variant(scenario, spec.variant);
  const Workload& wl = variant.workload;
  const Topology topo(variant.machine);
  const Program program = compile_program(strategy, wl.loop, variant.params);

  sim::Simulation sim;
  ExecutorConfig cfg;
  cfg.cpus = topo.place(spec.cpus, wl.placement);
  cfg.tasks = wl.tasks;
  cfg.seed = spec.seed;
  cfg.warmup = sim::kTimeZero + wl.warmup;
  cfg.end = cfg.warmup + wl.duration;
  // Tasks start spread over the first microsecond, as processes forked by
  // a benchmark driver do: it breaks lockstep between identical loops.
  cfg.start_jitter = sim::microseconds(1);
  Executor exec(sim, program, topo, cfg);
  exec.start();
  const sim::StopReason why = sim.run(sim::RunLimits{cfg.end});

  PointResult r;
  r.spec = spec;
  r.ops = exec.window_iterations();
  r.window_seconds = sim::seconds(wl.duration);
  r.ops_per_sec = static_cast<double>(r.ops) / r.window_seconds;
  r.events = sim.events_executed();
  r.window_events = r.events - exec.events_before_window();
  r.stop = sim::to_string(why);
  if (why == sim::StopReason::kQueueEmpty) {
    r.stop = "deadlock";
    for (const auto& b : exec.blocked_tasks()) r.stop += "; " + b;
  }
  r.locks = exec.lock_report();
  r.lines = exec.line_report();
  r.profile = exec.profile();
  r.seqcounts = exec.seq_report();
  r.rcu = exec.rcu_stats();
  r.cpu_time = wl.duration * spec.cpus;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress) {
  std::vector<std::string> strategies = spec.strategies;
  if (strategies.empty())
    for (const auto& s : scenario.strategies) strategies.push_back(s.name);
  for (const auto& s : strategies) (void)scenario.strategy(s);  // throws on unknown names
  std::vector<std::string> variants = spec.variants;
  if (variants.empty()) variants.push_back("default");
  const int reps = spec.reps < 1 ? 1 : spec.reps;

  std::vector<CurvePoint> curve;
  std::vector<PointSpec> points;
  for (const auto& s : strategies)
    for (const auto& vn : variants) {
      const Variant v = resolve_variant(scenario, vn);
      const Topology topo(v.machine);
      const std::vector<int> cpus = spec.cpus.empty() ? v.workload.cpus : spec.cpus;
      for (int c : cpus) {
        if (c < 1 || c > topo.num_cpus())
          throw std::invalid_argument("cannot run on " + std::to_string(c) + " CPUs: machine " + topo.name() + " has " +
                                      std::to_string(topo.num_cpus()));
        CurvePoint cp;
        cp.strategy = s;
        cp.variant = vn;
        cp.cpus = c;
        cp.reps.resize(reps);
        curve.push_back(std::move(cp));
        for (int r = 0; r < reps; ++r) points.push_back(PointSpec{s, c, r, rep_seed(spec.seed, r), vn});
      }
    }

  std::mutex progress_mutex;
  std::size_t done = 0;
  sim::parallel_for(points.size(), spec.jobs == 0 ? sim::default_jobs() : spec.jobs, [&](std::size_t i) {
    PointResult res = run_point(scenario, points[i]);
    if (progress) {
      std::lock_guard<std::mutex> lk(progress_mutex);
      progress(++done, points.size(), res);
    }
    curve[i / reps].reps[i % reps] = std::move(res);
  });

  for (auto& cp : curve) {
    double sum = 0;
    for (const auto& r : cp.reps) {
      sum += r.ops_per_sec;
      cp.events += r.events;
    }
    cp.ops_per_sec = sum / reps;
    double ss = 0;
    for (const auto& r : cp.reps) ss += (r.ops_per_sec - cp.ops_per_sec) * (r.ops_per_sec - cp.ops_per_sec);
    cp.stddev = reps > 1 ? std::sqrt(ss / (reps - 1)) : 0.0;
  }
  return curve;
}

}  // namespace vfssim::models
