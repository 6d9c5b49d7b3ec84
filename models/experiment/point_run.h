// Internal to models/experiment: one point's simulation run within its
// limits, and the `stop` text of its result.
#pragma once

#include <chrono>
#include <string>

#include "models/codepath/executor.h"
#include "models/experiment/experiment.h"
#include "sim/simulation.h"

namespace vfssim::models {

// Runs `sim` until `end` in chunks of events, checking between chunks the
// event budget, the wall-time budget (from `wall_start`) and cancellation.
// When one of them stops the run, `limit_stop` says which and the clock is
// left where it stopped.
sim::StopReason run_within_limits(sim::Simulation& sim, sim::Time end, const PointLimits& limits,
                                  std::chrono::steady_clock::time_point wall_start, std::string& limit_stop);

// "time-limit" for a complete run; "deadlock: ..." naming the waiting CPUs,
// what they wait for, where, and who holds it; or `limit_stop`.
std::string stop_description(sim::StopReason why, const std::string& limit_stop, const Executor& exec);

}  // namespace vfssim::models
