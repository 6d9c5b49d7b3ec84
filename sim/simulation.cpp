#include "sim/simulation.h"

#include <cstdio>
#include <string>

namespace vfssim::sim {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kTimeLimit: return "time-limit";
    case StopReason::kRequested: return "requested";
    case StopReason::kQueueEmpty: return "queue-empty";
    case StopReason::kEventBudget: return "event-budget";
  }
  return "?";
}

void Simulation::scheduled_in_the_past() { throw SimulationError("event scheduled in the past"); }

StopReason Simulation::run(const RunLimits& limits) {
  stop_requested_ = false;
  std::uint64_t budget = limits.max_events;
  const std::uint64_t work_end =
      limits.max_work > std::numeric_limits<std::uint64_t>::max() - work_ ? std::numeric_limits<std::uint64_t>::max()
                                                                          : work_ + limits.max_work;
  Event e;
  for (;;) {
    if (budget == 0) {
      if (queue_.empty()) return StopReason::kQueueEmpty;
      if (queue_.next_time() > limits.end) break;
      return StopReason::kEventBudget;
    }
    if (!queue_.pop_until(limits.end, e)) {
      if (queue_.empty()) return StopReason::kQueueEmpty;
      break;
    }
    --budget;
    now_ = e.time;
    ++events_executed_;
    handlers_[e.target]->handle(*this, e);
    if (stop_requested_ || work_ >= work_end) [[unlikely]]
      return stop_requested_ ? StopReason::kRequested : StopReason::kEventBudget;
  }
  now_ = limits.end;
  return StopReason::kTimeLimit;
}

std::string format_duration(Duration d) {
  const std::int64_t v = d.count();
  const std::int64_t a = v < 0 ? -v : v;
  char buf[64];
  if (a >= 1'000'000'000'000) std::snprintf(buf, sizeof buf, "%gs", static_cast<double>(v) * 1e-12);
  else if (a >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%gms", static_cast<double>(v) * 1e-9);
  else if (a >= 1'000'000) std::snprintf(buf, sizeof buf, "%gus", static_cast<double>(v) * 1e-6);
  else if (a >= 1'000) std::snprintf(buf, sizeof buf, "%gns", static_cast<double>(v) * 1e-3);
  else std::snprintf(buf, sizeof buf, "%lldps", static_cast<long long>(v));
  return buf;
}

}  // namespace vfssim::sim
