// The RCU protocol as the interpreter drives it: who is inside a read
// section, which grace period each synchronize_rcu() caller waits for,
// the callbacks queued by call_rcu(), and the quiescent states a grace
// period still waits for. GracePeriods (models/kernel/rcu.h) says when a
// grace period may end; this says who holds it up and who it releases.
//
// A grace period's life, as events:
//   request  -- synchronize()/call_rcu() at t; if it starts one, the caller
//               schedules provisional_end() (every busy CPU had a tick)
//   provisional end -- readers whose section began before the grace period
//               started still hold it: each owes a quiescent state
//   last read_unlock of those -- the end is due now (the caller schedules it)
//   complete  -- synchronize() callers of ended grace periods are released;
//               callbacks of ended grace periods run at their CPU's next
//               end of iteration (softirq), after the safety check.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "models/kernel/rcu.h"
#include "sim/rng.h"

namespace vfssim::models {

class RcuDriver {
 public:
  // `cpus`: the CPU of each task (for messages). `ignores_readers`: a test
  // hook, a grace period that does not wait for readers (must be caught).
  RcuDriver(int hz, std::vector<int> cpus, std::uint64_t seed, bool ignores_readers);

  void read_lock(std::size_t task, sim::Time at);
  // True when this was the last quiescent state a grace period waited for:
  // its end is due now.
  bool read_unlock(std::size_t task, sim::Time at);
  bool in_read_section(std::size_t task) const { return tasks_[task].depth > 0; }

  // synchronize_rcu(): the task sleeps until the grace period serving it
  // ends. Returns the provisional end to schedule when a grace period
  // starts now.
  std::optional<sim::Time> synchronize(std::size_t task, sim::Time at);
  // call_rcu(): a callback costing `cost` once a grace period has passed,
  // or (`entry` > 0) running the program's code at `entry`.
  std::optional<sim::Time> call_rcu(std::size_t task, sim::Time at, Duration cost, std::uint32_t entry = 0);

  // The provisional end of the running grace period: true when it is
  // complete now, false when readers still hold it.
  bool provisional_end_reached();
  // Ends the grace period at `now`: the synchronize() callers it releases
  // are appended to `released` (in task order); returns the next grace
  // period's provisional end when one starts now.
  std::optional<sim::Time> complete(sim::Time now, std::vector<std::size_t>& released);

  // Runs task `task`'s callbacks whose grace period has ended, in the order
  // queued; returns the CPU time of those with a cost. The first with steps
  // stops it: `entry` is set to its code (else 0), which the task runs
  // before it calls this again. Throws InvariantViolation when a read
  // section open at a callback's call_rcu() is still open (grace-period
  // safety).
  Duration run_callbacks(std::size_t task, std::uint32_t& entry);

  // Callbacks queued and not yet invoked, over all CPUs. A loop that
  // queues them faster than grace periods end grows the queue without
  // bound, as a kernel under a call_rcu() flood runs out of memory (its
  // qhimark response, forcing quiescent states sooner, is not modelled:
  // busy CPUs still report theirs at a tick). kMaxQueuedCallbacks (about
  // 1 GB of queue) stops such a run rather than the machine.
  static constexpr std::size_t kMaxQueuedCallbacks = 16'000'000;
  std::size_t queued() const { return queued_; }
  bool flooded() const { return queued_ >= kMaxQueuedCallbacks; }

  const RcuStats& stats() const { return gp_.stats(); }
  void reset_stats() { gp_.stats().reset(); }

 private:
  struct Callback {
    std::uint64_t gp;  // grace period that must end first
    Duration cost;
    sim::Time queued;
    std::uint32_t entry;  // > 0: the callback's code in the program
  };
  struct TaskState {
    int depth = 0;                 // rcu_read_lock nesting
    sim::Time section_start{};
    bool qs_pending = false;       // the running grace period waits for this task
    std::uint64_t waiting_gp = 0;  // synchronize_rcu: grace period awaited, 0 if none
    std::deque<Callback> callbacks;
  };

  static GracePeriods make_grace_periods(int hz, std::size_t tasks, std::uint64_t seed);

  std::vector<int> cpus_;
  bool ignores_readers_;
  GracePeriods gp_;
  std::vector<TaskState> tasks_;
  int qs_outstanding_ = 0;
  std::size_t queued_ = 0;
  bool waiting_for_readers_ = false;
};

}  // namespace vfssim::models
