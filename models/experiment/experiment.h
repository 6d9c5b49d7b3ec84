// Experiments: a scenario's strategy on N CPUs, run as one simulation
// (a point), and sweeps of points over CPU counts, strategies and
// replications run in parallel.
//
// A point's result depends only on (scenario, strategy, CPUs, seed): the
// seed of replication r is derived from the run seed and r alone, so the
// same seed gives the same numbers whatever the number of workers, and
// every strategy sees the same random start offsets (common random
// numbers make strategy comparisons sharper).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/codepath/executor.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

struct PointSpec {
  std::string strategy;
  int cpus = 1;
  int rep = 0;
  std::uint64_t seed = 1;  // the point's own seed (already derived)
  std::string variant = "default";
};
struct PointResult {
  PointSpec spec;
  double ops_per_sec = 0;       // loop iterations per simulated second, all CPUs
  std::uint64_t ops = 0;        // iterations in the window
  std::uint64_t events = 0;     // engine events, whole run
  std::uint64_t window_events = 0;  // engine events inside the measurement window
  double window_seconds = 0;    // simulated measurement window
  std::string stop;             // engine stop reason
  std::vector<LockReport> locks;
  std::vector<LineReport> lines;
  std::vector<ProfileEntry> profile;
  std::vector<SeqReport> seqcounts;
  RcuStats rcu;
  Duration cpu_time{0};         // CPUs x window: the profile's 100%
  double wall_seconds = 0;      // not part of deterministic output
};

struct CurvePoint {
  std::string strategy;
  std::string variant = "default";
  int cpus = 0;
  double ops_per_sec = 0;  // mean over replications
  double stddev = 0;       // sample standard deviation over replications
  std::uint64_t events = 0;  // summed over replications
  std::vector<PointResult> reps;
};

struct SweepSpec {
  std::vector<std::string> strategies;  // empty: all, in file order
  std::vector<std::string> variants;    // empty: "default" only
  std::vector<int> cpus;                // empty: the workload's list
  int reps = 1;
  std::uint64_t seed = 1;
  unsigned jobs = 0;                    // 0: all hardware threads
};

// Seed of replication `rep` of a run seeded `seed`.
std::uint64_t rep_seed(std::uint64_t seed, int rep);

Variant resolve_variant(const Scenario& scenario, const std::string& name);

PointResult run_point(const Scenario& scenario, const PointSpec& spec);

using ProgressFn = std::function<void(std::size_t done, std::size_t total, const PointResult&)>;

// Runs every (strategy, variant, cpus, rep) point; curve points come back
// in strategy order, then variant order, then CPU order. A variant's CPU
// list is used when the spec gives none.
std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress = {});

}  // namespace vfssim::models
