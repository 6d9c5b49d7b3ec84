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
  double cpu_seconds = 0;    // as wall_seconds, in this thread's CPU time
  double sim_seconds = 0;
  sim::Duration window{0};   // the simulated window run (stretched to min_events)
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

// The engine's mcs point against the same model written by hand
// (bench/handwritten_mcs.h), measured in alternating pairs in one run,
// after one engine run that fixes the window (stretched as run_bench does):
// each pair runs both (in turn first), its ratio is the engine's simulated
// acquisitions per wall second over the hand-written loop's (> 1: the
// engine is faster); the figures are the pairs' medians.
struct HandwrittenComparison {
  int cpus = 0;
  int pairs = 0;
  std::uint64_t acquisitions = 0;         // the hand-written loop's, in the window
  std::uint64_t engine_acquisitions = 0;  // the engine's, same window
  std::uint64_t events = 0;
  double sim_acquisitions_per_sec = 0;
  double engine_sim_acquisitions_per_sec = 0;
  double acquisitions_per_wall_sec = 0;         // median over the pairs
  double engine_acquisitions_per_wall_sec = 0;  // median over the pairs
  double events_per_sec = 0;
  double engine_events_per_sec = 0;
  double ratio = 0;      // median of the pairs' wall ratios
  double cpu_ratio = 0;  // the same in thread CPU time (less sensitive to a busy machine)
  std::vector<double> pair_ratios;
};
HandwrittenComparison compare_handwritten(int cpus, sim::Duration duration, int pairs);

// The lock kinds the bench runs (every kind a scenario may declare).
inline const std::vector<std::string>& kBenchLocks = models::lock_kinds();

}  // namespace vfssim::report
