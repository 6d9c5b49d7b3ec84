// RCU grace periods on a non-preemptible kernel (tree RCU, kernel/rcu/).
//
// Readers cost nothing (rcu_read_lock is preempt_disable, itself free with
// CONFIG_PREEMPT=n). A grace period ends once every CPU has passed a
// quiescent state; in a loop of system calls a CPU reports one at the
// scheduler tick that finds it outside a read-side section, so a grace
// period that starts at t ends at
//
//     max over busy CPUs of (first tick of that CPU after t) + propagation
//
// where ticks come every 1/HZ with a per-CPU phase, and propagation is the
// GP kthread's wait before it forces quiescent states: 1 + (HZ > 250) +
// (HZ > 500) jiffies (kernel/rcu/tree.h, jiffies_till_first_fqs). Idle CPUs
// are in an extended quiescent state and do not count. A CPU still inside
// a read section at that instant holds the grace period until it leaves.
//
// Requests batch: a grace period serves every request made before it
// started; requests made while one runs are served together by the next.
// synchronize_rcu() sleeps until the grace period that serves it ends;
// call_rcu() callbacks run on their CPU after it (RCU_SOFTIRQ), which the
// interpreter charges as CPU time.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace vfssim::models {

using sim::Duration;
using sim::Time;

struct RcuStats {
  std::uint64_t grace_periods = 0;
  std::uint64_t synchronize_calls = 0;
  std::uint64_t callbacks_queued = 0;
  std::uint64_t callbacks_invoked = 0;
  Duration gp_total{0};  // summed grace-period durations
  void reset() { *this = RcuStats{}; }
};

class GracePeriods {
 public:
  // `tick`: 1/HZ; `phase`: each busy CPU's tick phase in [0, tick).
  GracePeriods(Duration tick, Duration propagation, std::vector<Duration> phase);

  static Duration fqs_delay(int hz);

  // A request at `now` (synchronize_rcu or call_rcu). Returns the number of
  // the grace period that serves it; `started` is set when that grace
  // period starts right now (the caller schedules its end).
  std::uint64_t request(Time now, bool& started);

  // The end of the running grace period if no reader holds it up.
  Time provisional_end() const { return provisional_end_; }
  Time current_start() const { return start_; }
  bool running() const { return running_; }
  std::uint64_t completed() const { return completed_; }

  // Ends the running grace period at `now`. Returns true when the next one
  // (already requested) starts at `now`.
  bool complete(Time now);

  RcuStats& stats() { return stats_; }
  const RcuStats& stats() const { return stats_; }

 private:
  Duration tick_, propagation_;
  std::vector<Duration> phase_;
  bool running_ = false;
  bool next_requested_ = false;
  std::uint64_t completed_ = 0;  // grace periods ended so far
  Time start_{};
  Time provisional_end_{};
  RcuStats stats_;

  void start(Time now);
};

}  // namespace vfssim::models
