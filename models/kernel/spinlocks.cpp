#include "models/kernel/spinlocks.h"

#include <algorithm>

namespace vfssim::models {

void LockStats::merge(const LockStats& o) {
  con_bounces += o.con_bounces;
  if (o.contentions) {
    if (contentions == 0 || o.wait_min < wait_min) wait_min = o.wait_min;
    if (o.wait_max > wait_max) wait_max = o.wait_max;
  }
  contentions += o.contentions;
  wait_total += o.wait_total;
  acq_bounces += o.acq_bounces;
  acquisitions += o.acquisitions;
  if (o.holds) {
    if (holds == 0 || o.hold_min < hold_min) hold_min = o.hold_min;
    if (o.hold_max > hold_max) hold_max = o.hold_max;
  }
  holds += o.holds;
  hold_total += o.hold_total;
}

// Free lock (holder -1, no waiters): the caller's atomic on the lock word
// takes the line from its last owner; the lock is its from that instant.
// Held lock: the caller joins the queue and waits for a release.
bool FifoSpinlock::acquire(int cpu, Time now, LockMode, Time& granted_at) {
  if (holder_ < 0) {
    granted_at = take_free(line_, *topo_, cpu, now);
    holder_ = cpu;
    hold_start_ = granted_at;
    return true;
  }
  waiters_.push({cpu, now});
  return false;
}

// A spinner's group: the outermost level at which it and `next` sit in
// different elements, and its element there. One fetch per group.
Duration FifoSpinlock::rereads_ahead(int next, const WaiterQueue& others) const {
  const int levels = static_cast<int>(topo_->spec().levels.size());
  groups_.clear();
  Duration sum{0};
  for (std::size_t i = 0; i < others.size(); ++i) {
    const int w = others.at(i).cpu;
    int level = 0;
    while (level < levels && topo_->element_of(w, level) == topo_->element_of(next, level)) ++level;
    const std::pair<int, int> g{level, topo_->element_of(w, level < levels ? level : levels - 1)};
    if (std::find(groups_.begin(), groups_.end(), g) != groups_.end()) continue;
    groups_.push_back(g);
    sum += topo_->transfer(w, next);
  }
  return sum / 2;
}

// No waiter: the lock is free, the releaser keeps the line.
// Waiters: the head gets the lock after the model's handoff cost; the line
// moves to it.
Time FifoSpinlock::release(int cpu, Time now, LockMode, std::vector<Grant>& woken) {
  stats_.record_hold(now - hold_start_);
  if (waiters_.empty()) {
    holder_ = -1;
    return now;
  }
  const auto next = waiters_.take(pick_next(waiters_.size()));
  const Time at = now + handoff_cost(cpu, next.cpu, waiters_);
  line_.move_to(next.cpu, at);
  holder_ = next.cpu;
  hold_start_ = at;
  stats_.record_handoff(cpu, next.cpu, at - next.since);
  woken.push_back({next.cpu, at});
  return now;
}

}  // namespace vfssim::models
