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

struct Bottleneck {
  std::string name;
  std::string kind;  // "lock" or "line"
  double share = 0;  // wait / CPU time
};

// The bottleneck over a point's replications; nullopt when nothing waits.
std::optional<Bottleneck> find_bottleneck(const std::vector<models::PointResult>& reps);

// {"name", "kind", "share"} or null.
nlohmann::json bottleneck_json(const std::optional<Bottleneck>& b);
// "files_lock (lock, 23.4% of CPU time waiting)" or "nothing waits".
std::string describe(const std::optional<Bottleneck>& b);

struct WhatIf {
  std::optional<Bottleneck> removed;  // the bottleneck made free (nullopt: nothing ran)
  std::optional<Bottleneck> next;     // the bottleneck of the run without it
  double ops_per_sec = 0;             // mean rate of the run without it
};

// For each group (the replications of one point), runs it again with its
// bottleneck removed, all groups' runs in parallel on `jobs` workers
// (0: all cores). A group where nothing waits runs nothing. A what-if run
// stopped by `limits` throws std::runtime_error naming it and its stop.
std::vector<WhatIf> next_bottlenecks(const models::Scenario& sc,
                                     const std::vector<const std::vector<models::PointResult>*>& groups,
                                     unsigned jobs = 0, const models::PointLimits& limits = {});

// "bottleneck: ..." and, when `what_if` ran, "without X: ... ops/s, next bottleneck: ...".
void print_bottleneck(std::ostream& os, const std::vector<models::PointResult>& reps, const WhatIf* what_if);

}  // namespace vfssim::report
