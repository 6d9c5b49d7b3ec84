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

#include "models/experiment/point_result.h"
#include "models/scenario/scenario.h"
#include "sim/histogram.h"

namespace vfssim::models {

// What-ifs asked of a whole sweep or comparison (vfssim run --free LOCK,
// --private LINE): each point's strategy gets those it declares, as
// PointSpec::free_locks and private_lines.
struct WhatIfs {
  std::vector<std::string> free_locks;
  std::vector<std::string> private_lines;
  bool empty() const { return free_locks.empty() && private_lines.empty(); }
};

// Throws std::invalid_argument for a name that none of `strategies`
// declares: "no strategy run has a lock 'x' to make free (their locks: ...)".
void check_what_ifs(const Scenario& scenario, const std::vector<std::string>& strategies, const WhatIfs& w);
// Adds to `spec` the names of `w` that its strategy declares.
void apply_what_ifs(const Scenario& scenario, const WhatIfs& w, PointSpec& spec);

struct SweepSpec {
  std::vector<std::string> strategies;  // empty: all, in file order
  std::vector<std::string> variants;    // empty: "default" only
  std::vector<int> cpus;                // empty: the workload's list
  int reps = 1;
  std::uint64_t seed = 1;
  unsigned jobs = 0;                    // 0: all hardware threads
  WhatIfs what_ifs;                     // checked against the strategies run
  int uncertainty = 0;                  // samples of the ranges per point (models/experiment/uncertainty.h); 0: none
};

// Seed of replication `rep` of a run seeded `seed`.
std::uint64_t rep_seed(std::uint64_t seed, int rep);

Variant resolve_variant(const Scenario& scenario, const std::string& name);

// Per-point budgets (vfssim run --max-events, --max-wall) and cancellation.
// A point stopped by one of them is not a result: its `stop` says why
// ("event budget exceeded: ...", "wall-time budget exceeded: ...",
// "cancelled ...") and finished() is false.
struct PointLimits {
  std::uint64_t max_events = 0;     // engine events of the whole run; 0: no limit
  double max_wall_seconds = 0;      // wall-clock seconds; 0: no limit
  std::function<bool()> cancelled;  // polled between chunks of events
};

PointResult run_point(const Scenario& scenario, const PointSpec& spec, const PointLimits& limits = {});

// The distribution of per-task rates (iterations in the window per task, /
// the window) and the per-op latency quantiles of `latency` (picoseconds).
TaskStats task_stats(const std::vector<std::uint64_t>& task_ops, double window_seconds,
                     const sim::LogLinearHistogram& latency);

// A hash (16 hex digits) of everything the point's simulation depends on
// except its seed: the compiled program (parameters resolved), the machine,
// the task kind, the CPUs the tasks run on, warm-up and window. Two points
// with the same fingerprint and seed are the same simulation, whatever
// their strategy or variant is called (vfssim validate's restated figures).
std::string point_fingerprint(const Scenario& scenario, const PointSpec& spec);

// A point is a result when it ran to the end of its window, or deadlocked
// (stop "deadlock: cpu N waiting for lock 'L' at CHAIN held by cpu M; ...").
bool finished(const PointResult& p);
bool finished(const CurvePoint& cp);
bool deadlocked(const PointResult& p);

using ProgressFn = std::function<void(std::size_t done, std::size_t total, const PointResult&)>;

// Runs every (strategy, variant, cpus, rep) point; curve points come back
// in strategy order, then variant order, then CPU order. A variant's CPU
// list is used when the spec gives none.
std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress = {});

// The points of a sweep, checked before anything runs: names, CPU counts
// against each variant's machine, and every (strategy, variant) program
// compiled (a ScenarioError names the step). `curve` has every curve point
// with `reps` slots; `points[i]` is replication i % reps of curve[i / reps].
struct SweepPlan {
  std::vector<CurvePoint> curve;
  std::vector<PointSpec> points;
  // Per point: the CPU time it simulates (CPUs x (warm-up + duration)),
  // what its wall time grows with; run_sweep starts the longest first.
  std::vector<double> cost;
  int reps = 1;
};
SweepPlan plan_sweep(const Scenario& scenario, const SweepSpec& spec);

// How a sweep runs beyond its spec: budgets, cancellation, results kept
// from an earlier interrupted run, and each curve point as it completes.
struct SweepControl {
  PointLimits limits;  // per point; `cancelled` also stops launching points
  // Fills a curve point from earlier results (its reps and statistics) and
  // returns true: the sweep then does not run it (vfssim run --resume).
  std::function<bool(CurvePoint&)> preload;
  // Called, one at a time, for each curve point once all its replications
  // are finished() (not for preloaded ones).
  std::function<void(const CurvePoint&)> on_curve_point;
  // Called, one at a time, for each curve point run to the end, after its
  // statistics and parameter band are summarized and before on_curve_point:
  // a layer above may widen the band (the model's error, results/
  // discrepancy.h) so that what is stored is what is shown.
  std::function<void(CurvePoint&)> finish_point;
  // Called from the worker thread as each point (one replication) starts,
  // concurrently with other calls: for progress that counts running points.
  std::function<void(const PointSpec&)> on_start;
  // Called from the worker thread as each sample of --uncertainty is made
  // (its fitted constants re-fitted: the simulations it took), before its
  // points run: progress while the re-fits run.
  std::function<void(int sample, int simulations)> on_sample;
};

// The same sweep under control. Points not launched (cancelled, or after a
// point ran out of its budget) come back with an empty `stop`; check
// finished(curve point) before using a curve point.
std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress,
                                  const SweepControl& control);

// Mean, standard deviation and events of a curve point from its reps.
void summarize(CurvePoint& cp);

}  // namespace vfssim::models
