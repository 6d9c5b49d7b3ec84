// What a simulation produces: a point's result (rate, events, lock_stat
// rows, the profile, the other objects' counters) and a curve point (the
// replications of one strategy, variant and CPU count). The experiment
// layer's vocabulary, used by the interpreter that fills it in and by
// everything that prints, stores or scores results.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "models/codepath/cpu_profile.h"  // ProfileEntry: the profiler's entries
#include "models/hardware/cache_line.h"
#include "models/kernel/free_pages.h"
#include "models/kernel/lock.h"
#include "models/kernel/rcu.h"
#include "models/kernel/seqcount.h"
#include "models/scenario/scenario.h"
#include "sim/time.h"

namespace vfssim::models {

struct LockReport {
  std::string name;
  std::string kind;
  Scope scope;
  int instances = 0;
  LockStats stats;  // summed over instances, as lock_stat reports a class
};

// A read/write lock class's shared ("R") or exclusive ("W") acquisitions
// apart: lock_stat's NAME-R and NAME-W rows.
struct LockModeReport {
  std::string name;
  std::string mode;  // "R" or "W"
  LockStats stats;   // summed over instances
};

// Where a lock class was contended (lock_stat's contention points: the
// code-path step whose acquisition had to wait) and where the holder that
// made it wait took the lock (its contending points), and how often.
struct ContentionPoint {
  std::string lock;
  std::string kind;    // "contention" or "contending"
  int step = 0;        // the acquire's index in the compiled code path
  std::string chain;   // its call chain, 'sym <- caller <- ...'
  std::uint64_t contentions = 0;
};

struct LineReport {
  std::string name;
  Scope scope;
  int instances = 0;
  LineStats stats;
};

struct SeqReport {
  std::string name;
  int instances = 0;
  SeqStats stats;
};

struct PoolReport {
  std::string name;
  Scope scope;
  int instances = 0;
  PoolStats stats;
};


// The distribution over the point's tasks: each task's rate (its loop
// iterations in the window / the window) and the per-op latency of every
// iteration completed in the window (from its start, the previous
// iteration's end, to its end), all tasks' iterations together. NaN and
// nullopt: not measured (no iteration in the window, or a run stored
// before these figures existed).
struct TaskStats {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double ops_per_sec_min = kNaN;     // the slowest task's iterations per second
  double ops_per_sec_median = kNaN;  // the median task's (the mean of the middle two for an even count)
  double ops_per_sec_max = kNaN;     // the fastest task's
  double fairness = kNaN;            // max / min; NaN when a task completed none (starved)
  double jain = kNaN;                // Jain's index (sum x)^2 / (n sum x^2): 1 all equal, 1/n one task did all
  std::optional<Duration> latency_p50, latency_p99, latency_p999, latency_max;
};

// A role's tasks (`workload: roles:`) and their loop iterations.
struct RoleReport {
  std::string name;
  int tasks = 0;
  std::uint64_t ops = 0;   // the role's loop iterations in the window, its tasks together
  double ops_per_sec = 0;  // ops / the window
  TaskStats tasks_stats;   // the distribution over the role's tasks (rates only: no latency quantiles)
};

struct PointSpec {
  std::string strategy;
  int cpus = 1;
  int rep = 0;
  std::uint64_t seed = 1;  // the point's own seed (already derived)
  std::string variant = "default";
  // What-if runs (design review): these locks become FreeLock (taken at no
  // cost, no mutual exclusion) and these lines become private (scope
  // task) in a copy of the strategy. Names must exist in the strategy.
  std::vector<std::string> free_locks{};
  std::vector<std::string> private_lines{};
  // --uncertainty: the sample of the ranges this run of replication 0
  // used (a job of sampled_scenario(..., sample)); -1: the scenario as loaded.
  int sample = -1;
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
  std::vector<LockModeReport> lock_modes;             // read/write locks with both modes held (lock_stat -R/-W)
  std::vector<ContentionPoint> contention_points;     // per lock class, most contentions first, at most 4
  std::vector<LineReport> lines;
  std::vector<ProfileEntry> profile;
  std::vector<SeqReport> seqcounts;
  std::vector<PoolReport> pools;
  RcuStats rcu;
  std::vector<RoleReport> roles;  // in the workload's order; empty without roles
  std::vector<std::uint64_t> task_ops;  // iterations in the window, per task (task i on the i-th placed CPU)
  TaskStats tasks;                      // their distribution, and the per-op latency's
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
  // --uncertainty N (models/experiment/uncertainty.h): each sample's rate,
  // in sample order; their 10th, 50th, 90th percentiles (NaN: not
  // sampled); each range's Spearman correlation with the rate, |rho|
  // largest first.
  std::vector<double> sample_rates;
  double band_p10 = std::numeric_limits<double>::quiet_NaN();
  double band_p50 = std::numeric_limits<double>::quiet_NaN();
  double band_p90 = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::string, double>> sensitivity;
};

}  // namespace vfssim::models
