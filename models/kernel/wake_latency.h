// The time from a sleeping waiter's wake-up (try_to_wake_up) to its
// running again: what `wake:` declares, as a distribution.
//
// The scheduler's wake-to-run latency is not a constant: it depends on the
// target CPU's idle state (an exit from a deep C-state, or a CPU already
// polling), on the IPI, and on what else is on its runqueue; wake-up
// latency benchmarks (schbench, cyclictest, perf bench sched) report
// medians with tails several times longer. A fixed latency makes a
// deterministic schedule whose wake-ups always land in the same phase of
// the others' loops, so a woken waiter can lose every race or win every
// race for a whole run, and a curve jumps between the two (the cliff of
// mutex-test-mutex-vfs at 1.245 -> 1.25 us of work, 115k -> 79k ops/s).
// Each wake-up here is an Erlang-2 draw (the sum of two exponentials) of
// mean `wake`: p50 0.84x the mean, p99 3.3x, none at zero, from the lock's
// own random stream (same seed, same draws). The shape is an estimate;
// the mean is the scenario's.
#pragma once

#include "sim/rng.h"
#include "sim/time.h"

namespace vfssim::models {

// `wake_shape:` of a lock: erlang2 (scenarios' default) or fixed (every
// wake-up exactly `wake`: the exact-time unit tests of the transitions).
enum class WakeShape { kErlang2, kFixed };

class WakeLatency {
 public:
  WakeLatency(Duration mean, sim::RngStream rng, WakeShape shape)
      : mean_(mean), shape_(shape), rng_(std::move(rng)) {}
  Duration mean() const { return mean_; }
  // One wake-up's latency (0 when the lock declares none).
  Duration draw() {
    if (mean_ <= Duration{0} || shape_ == WakeShape::kFixed) return mean_ > Duration{0} ? mean_ : Duration{0};
    const double half = static_cast<double>(mean_.count()) / 2;
    return Duration{static_cast<Duration::rep>(rng_.exponential(half) + rng_.exponential(half))};
  }

 private:
  Duration mean_;
  WakeShape shape_;
  sim::RngStream rng_;
};

}  // namespace vfssim::models
