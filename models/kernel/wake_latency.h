// The time from a sleeping waiter's wake-up (try_to_wake_up) to its
// running again, and what it depends on.
//
// A waiter that decided to sleep (queued itself, set_current_state,
// schedule()) needs `context_switch` to get off its CPU. A wake-up inside
// that window finds it still there (its own check of waiter.task before
// schedule(), or schedule() seeing TASK_RUNNING again): it goes on at once,
// the wake-up costing it nothing beyond the waker's own work. (A wake-up
// late in the window, once schedule() deactivated the task, costs it up to
// a switch back; taking none is the model's simplification, and with it a
// pair of tasks that wake each other within the window stays there, as
// tasks that block for less than a switch do.) Past the window the task is
// off its CPU and the CPU idles: the wake-up then costs the scheduler's
// whole wake-to-run latency, `mean` (the IPI, the idle state's exit, the
// switch in; the machine preset's `wake_latency`, or the lock's `wake:`).
//
// That latency is not a constant: it depends on the target CPU's idle
// state, on the IPI, and on what else is on its runqueue; wake-up latency
// benchmarks (schbench, cyclictest) report medians with tails several
// times longer. A fixed latency makes a deterministic schedule whose
// wake-ups always land in the same phase of the others' loops, so a woken
// waiter can lose every race or win every race for a whole run, and a
// curve jumps between the two (the cliff of mutex-test-mutex-vfs at 1.245
// -> 1.25 us of work, 115k -> 79k ops/s, tests/unit/test_wake_latency.cpp).
// Each wake-up of a task off its CPU is an Erlang-2 draw (the sum of two
// exponentials) of mean `mean`: p50 0.84x the mean, p99 3.3x, none at zero,
// from the lock's own random stream (same seed, same draws). The shape is
// an estimate; the mean is the machine's (or the scenario's).
#pragma once

#include "sim/rng.h"
#include "sim/time.h"

namespace vfssim::models {

// `wake_shape:` of a lock: erlang2 (scenarios' default) or fixed (every
// wake-up of a task off its CPU exactly `wake`: the exact-time unit tests
// of the transitions).
enum class WakeShape { kErlang2, kFixed };

class WakeLatency {
 public:
  WakeLatency(Duration mean, sim::RngStream rng, WakeShape shape, Duration context_switch = Duration{0})
      : mean_(mean), switch_(context_switch), shape_(shape), rng_(std::move(rng)) {}
  Duration mean() const { return mean_; }
  Duration context_switch() const { return switch_; }

  // One wake-up's latency of a task off its CPU (0 when none is declared).
  Duration draw() {
    if (mean_ <= Duration{0} || shape_ == WakeShape::kFixed) return mean_ > Duration{0} ? mean_ : Duration{0};
    const double half = static_cast<double>(mean_.count()) / 2;
    return Duration{static_cast<Duration::rep>(rng_.exponential(half) + rng_.exponential(half))};
  }
  // The latency of a wake-up that comes `asleep` after the waiter decided
  // to sleep: inside the context switch it is still on its CPU.
  Duration draw(Duration asleep) { return asleep < switch_ ? Duration{0} : draw(); }

 private:
  Duration mean_;
  Duration switch_;
  WakeShape shape_;
  sim::RngStream rng_;
};

}  // namespace vfssim::models
