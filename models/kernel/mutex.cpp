#include "models/kernel/mutex.h"

namespace vfssim::models {

bool Mutex::acquire(int cpu, Time now, LockMode, Time& granted_at) {
  if (owner_ < 0) {
    granted_at = take_free(line_, *topo_, cpu, now);
    owner_ = cpu;
    hold_start_ = granted_at;
    return true;
  }
  if (coherent_ && spin_) line_.rmw(*topo_, cpu, now);  // osq_lock: xchg of the OSQ tail
  (spin_ ? spinners_ : sleepers_).push({cpu, now});
  return false;
}

Time Mutex::release(int cpu, Time now, LockMode, std::vector<Grant>& woken) {
  stats_.record_hold(now - hold_start_);
  if (!spinners_.empty()) {
    // 1,x -> 1,y: the OSQ head sees the owner field change and takes it.
    const auto next = spinners_.pop();
    Time at = now + topo_->transfer(cpu, next.cpu);
    if (coherent_) {
      const Time released = line_.rmw(*topo_, cpu, now);        // atomic_long_fetch_andnot(owner)
      const Time seen = released + topo_->transfer(cpu, next.cpu);  // the head's spinning read of owner
      const Time taken = line_.rmw(*topo_, next.cpu, seen);       // its cmpxchg of owner
      at = line_.rmw(*topo_, next.cpu, taken);                    // osq_unlock: cmpxchg of the tail
    }
    line_.move_to(next.cpu, at);
    owner_ = next.cpu;
    hold_start_ = at;
    stats_.record_handoff(cpu, next.cpu, at - next.since);
    woken.push_back({next.cpu, at});
    return now;
  }
  // 1,x -> 0,x: the lock is free; the first sleeper wakes and retries.
  owner_ = -1;
  if (!sleepers_.empty()) {
    if (coherent_) {  // the release's slow path: spin_lock(&wait_lock), wake_q, unlock
      const Time locked = line_.rmw(*topo_, cpu, now);
      now = line_.rmw(*topo_, cpu, locked);
    }
    const auto next = sleepers_.pop();
    stats_.record_wait(now + wake_latency_ - next.since);
    woken.push_back({next.cpu, now + wake_latency_, /*retry=*/true, /*slept=*/true});
  }
  return now;
}

}  // namespace vfssim::models
