// Design review: where a point waits most (its bottleneck) and what it
// would wait on next if that were gone.
//
// The bottleneck of a point is the lock or cache line with the largest
// wait: a lock's lock_stat wait_total, a line's queue_wait (requests
// serialised behind earlier ones). Its share is that wait over the
// point's CPU time (CPUs x window), summed over replications. The next
// bottleneck comes from running the point again (same seeds) with the
// bottleneck removed: a lock made free (FreeLock: no cost, no exclusion),
// a line made private to each task.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

// A lock or line is named the bottleneck only when the CPU time spent
// synchronizing on it is at least this share of all CPU time: below it,
// the point is not bound by any one lock or line (a task-private lock at
// 1 CPU costs its atomics, 1%, and is no bottleneck).
inline constexpr double kBottleneckThreshold = 0.05;

struct Bottleneck {
  std::string name;
  std::string kind;   // "lock" or "line"
  double share = 0;   // wait / CPU time
  double margin = 0;  // share minus the second's (the next lock or line, thresholded or not; its share when alone)
};

// The bottleneck over a point's replications; nullopt when nothing waits
// at least kBottleneckThreshold of the CPU time.
std::optional<Bottleneck> find_bottleneck(const std::vector<models::PointResult>& reps);

// {"name", "kind", "share", "margin"} or null.
nlohmann::json bottleneck_json(const std::optional<Bottleneck>& b);
// "files_lock (lock, 23.4% of CPU time synchronizing, 12.1 points ahead of the next)" or
// "nothing waits 5% of CPU time or more".
std::string describe(const std::optional<Bottleneck>& b);

// One step of a chain of bottlenecks: `removed` made free (a lock) or
// private (a line), together with every bottleneck removed before it; the
// rate of that run and its own bottleneck.
struct ChainStep {
  Bottleneck removed;
  double ops_per_sec = 0;
  std::optional<Bottleneck> next;
};

struct WhatIf {
  std::optional<Bottleneck> removed;  // the bottleneck made free (nullopt: nothing ran)
  std::optional<Bottleneck> next;     // the bottleneck of the run without it
  double ops_per_sec = 0;             // mean rate of the run without it
  std::vector<ChainStep> chain;       // chain[0] is (removed, ops_per_sec, next); up to `depth` steps
};

// For each group (the replications of one point), runs it again with its
// bottleneck removed, then without the next one too, `depth` times (or
// until nothing waits), all groups' runs of a step in parallel on `jobs`
// workers (0: all cores). A group where nothing waits runs nothing. A
// what-if run stopped by `limits` throws std::runtime_error naming it.
std::vector<WhatIf> next_bottlenecks(const models::Scenario& sc,
                                     const std::vector<const std::vector<models::PointResult>*>& groups,
                                     unsigned jobs = 0, const models::PointLimits& limits = {}, int depth = 1);

// [{"name", "kind", "share", "ops_per_sec_without"}, ...]: the point's own
// bottleneck, then each next one; ops_per_sec_without is the rate once it
// and those before it are removed (null for the last, which was not).
nlohmann::json bottleneck_chain_json(const WhatIf& w);

// "bottleneck: ..." and, when `what_if` ran, "without X: ... ops/s, next bottleneck: ..." per step.
void print_bottleneck(std::ostream& os, const std::vector<models::PointResult>& reps, const WhatIf* what_if);

}  // namespace vfssim::report
