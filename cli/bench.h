// `vfssim bench`: the standard lock microbenchmark, for engine speed.
//
// N CPUs, one lock (every kind), think time exponential with mean 2 us,
// hold 200 ns, a 100 ns line transfer on every acquisition, so that each
// acquisition occupies the lock exactly 300 ns at saturation (3.33 M/s).
// It measures simulated acquisitions per wall-clock second and events per
// acquisition (the cost rule: flat in N).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario/scenario.h"

namespace vfssim::report {

struct BenchResult {
  std::string lock;
  int cpus = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t events = 0;
  double wall_seconds = 0;   // the run's, set-up excluded
  double setup_seconds = 0;  // building the point and its warm-up
  double sim_seconds = 0;
  double acquisitions_per_wall_sec() const { return wall_seconds > 0 ? acquisitions / wall_seconds : 0; }
  double events_per_sec() const { return wall_seconds > 0 ? events / wall_seconds : 0; }
  double events_per_acquisition() const { return acquisitions ? static_cast<double>(events) / acquisitions : 0; }
  double sim_acquisitions_per_sec() const { return sim_seconds > 0 ? acquisitions / sim_seconds : 0; }
};

// The benchmark scenario for `lock` (any kind) on `cpus` CPUs.
models::Scenario bench_scenario(const std::string& lock, int cpus, sim::Duration duration);

// Runs the point for `duration` of simulated time, stretched until the
// window holds `min_events` events; wall time excludes the set-up.
BenchResult run_bench(const std::string& lock, int cpus, sim::Duration duration, std::uint64_t min_events = 2000000);

// The lock kinds the bench runs (every kind a scenario may declare).
inline const std::vector<std::string>& kBenchLocks = models::lock_kinds();

}  // namespace vfssim::report
