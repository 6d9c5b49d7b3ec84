#include "models/codepath/rcu_driver.h"

#include <stdexcept>

#include "models/codepath/invariant_checker.h"

namespace vfssim::models {

GracePeriods RcuDriver::make_grace_periods(int hz, std::size_t tasks, std::uint64_t seed) {
  if (hz <= 0) throw std::invalid_argument("RCU grace periods need the kernel's HZ");
  const Duration tick{1'000'000'000'000LL / hz};
  sim::RngStream phases(seed, "rcu-tick");
  std::vector<Duration> phase;
  for (std::size_t t = 0; t < tasks; ++t) phase.push_back(Duration{static_cast<std::int64_t>(phases.below(tick.count()))});
  return GracePeriods(tick, GracePeriods::fqs_delay(hz), phase);
}

RcuDriver::RcuDriver(int hz, std::vector<int> cpus, std::uint64_t seed, bool ignores_readers)
    : cpus_(std::move(cpus)),
      ignores_readers_(ignores_readers),
      gp_(make_grace_periods(hz, cpus_.size(), seed)),
      tasks_(cpus_.size()) {}

void RcuDriver::read_lock(std::size_t t, sim::Time at) {
  if (tasks_[t].depth++ == 0) tasks_[t].section_start = at;
}

bool RcuDriver::read_unlock(std::size_t t, sim::Time) {
  TaskState& task = tasks_[t];
  if (--task.depth != 0 || !task.qs_pending) return false;
  // The deferred quiescent state: the last one lets the grace period end.
  task.qs_pending = false;
  return --qs_outstanding_ == 0 && waiting_for_readers_;
}

std::optional<sim::Time> RcuDriver::synchronize(std::size_t t, sim::Time at) {
  bool started = false;
  tasks_[t].waiting_gp = gp_.request(at, started);
  ++gp_.stats().synchronize_calls;
  return started ? std::optional<sim::Time>(gp_.provisional_end()) : std::nullopt;
}

std::optional<sim::Time> RcuDriver::call_rcu(std::size_t t, sim::Time at, Duration cost, std::uint32_t entry) {
  bool started = false;
  const std::uint64_t gp = gp_.request(at, started);
  ++gp_.stats().callbacks_queued;
  ++queued_;
  tasks_[t].callbacks.push_back({gp, cost, at, entry});
  return started ? std::optional<sim::Time>(gp_.provisional_end()) : std::nullopt;
}

// Every busy CPU has had a tick. CPUs still inside a read section that
// began before the grace period hold it until they leave.
bool RcuDriver::provisional_end_reached() {
  qs_outstanding_ = 0;
  if (!ignores_readers_) {
    for (TaskState& t : tasks_) {
      if (t.depth > 0 && t.section_start <= gp_.current_start()) {
        t.qs_pending = true;
        ++qs_outstanding_;
      }
    }
  }
  waiting_for_readers_ = qs_outstanding_ > 0;
  return !waiting_for_readers_;
}

std::optional<sim::Time> RcuDriver::complete(sim::Time now, std::vector<std::size_t>& released) {
  waiting_for_readers_ = false;
  const bool next = gp_.complete(now);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].waiting_gp != 0 && tasks_[t].waiting_gp <= gp_.completed()) {
      tasks_[t].waiting_gp = 0;
      released.push_back(t);
    }
  }
  return next ? std::optional<sim::Time>(gp_.provisional_end()) : std::nullopt;
}

Duration RcuDriver::run_callbacks(std::size_t t, std::uint32_t& entry) {
  Duration cost{0};
  entry = 0;
  auto& queue = tasks_[t].callbacks;
  while (!queue.empty() && queue.front().gp <= gp_.completed()) {
    const Callback cb = queue.front();
    queue.pop_front();
    --queued_;
    for (std::size_t u = 0; u < tasks_.size(); ++u)
      if (tasks_[u].depth > 0 && tasks_[u].section_start <= cb.queued)
        throw InvariantViolation("RCU callback queued at " + sim::format_duration(cb.queued - sim::Time{}) +
                                 " ran while cpu " + std::to_string(cpus_[u]) +
                                 " is still in a read section begun before it");
    ++gp_.stats().callbacks_invoked;
    if (cb.entry) {
      entry = cb.entry;
      break;
    }
    cost += cb.cost;
  }
  return cost;
}

}  // namespace vfssim::models
