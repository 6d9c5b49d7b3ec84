#include "models/kernel/rcu.h"

#include <stdexcept>

namespace vfssim::models {

GracePeriods::GracePeriods(Duration tick, Duration propagation, std::vector<Duration> phase)
    : tick_(tick), propagation_(propagation), phase_(std::move(phase)) {
  if (tick_ <= Duration{0}) throw std::invalid_argument("RCU tick must be positive");
}

Duration GracePeriods::fqs_delay(int hz) {
  const Duration jiffy{1'000'000'000'000LL / hz};
  return jiffy * (1 + (hz > 250) + (hz > 500));
}

void GracePeriods::start(Time now) {
  running_ = true;
  start_ = now;
  Time last = now;
  const std::int64_t t = (now - Time{}).count();
  for (Duration p : phase_) {
    // First tick of this CPU strictly after `now`: p + k * tick > now.
    std::int64_t k = t >= p.count() ? (t - p.count()) / tick_.count() + 1 : 0;
    const Time tick_at = Time{} + p + tick_ * k;
    if (tick_at > last) last = tick_at;
  }
  provisional_end_ = last + propagation_;
}

std::uint64_t GracePeriods::request(Time now, bool& started) {
  started = false;
  if (!running_) {
    start(now);
    started = true;
    return completed_ + 1;
  }
  next_requested_ = true;
  return completed_ + 2;
}

bool GracePeriods::complete(Time now) {
  if (!running_) throw std::logic_error("RCU: completing a grace period that is not running");
  running_ = false;
  ++completed_;
  ++stats_.grace_periods;
  stats_.gp_total += now - start_;
  if (next_requested_) {
    next_requested_ = false;
    start(now);
    return true;
  }
  return false;
}

}  // namespace vfssim::models
