#include "models/kernel/mutex.h"

#include <algorithm>

namespace vfssim::models {

namespace {

// The OSQ head `to` taking the mutex `from` releases at `now`: one transfer
// without a coherence model; with one, the owner word's fetch_andnot, the
// head's re-read of it, its cmpxchg, and osq_unlock's cmpxchg of the tail.
Time osq_take(CacheLine& line, const Topology& topo, bool coherent, int from, int to, Time now) {
  Time at = now + topo.transfer(from, to);
  if (coherent) {
    const Time released = line.rmw(topo, from, now);          // atomic_long_fetch_andnot(owner)
    const Time seen = released + topo.transfer(from, to);     // the head's spinning read of owner
    const Time taken = line.rmw(topo, to, seen);              // its cmpxchg of owner
    at = line.rmw(topo, to, taken);                           // osq_unlock: cmpxchg of the tail
  }
  line.move_to(to, at);
  return at;
}

// The unlock's slow path before it wakes a sleeper: spin_lock(&wait_lock),
// wake_q, unlock (two atomics on the mutex's line with a coherence model).
Time wait_lock_pass(CacheLine& line, const Topology& topo, bool coherent, int cpu, Time now) {
  if (!coherent) return now;
  const Time locked = line.rmw(topo, cpu, now);
  return line.rmw(topo, cpu, locked);
}

}  // namespace

std::optional<Time> Mutex::acquire(int cpu, Time now, LockMode) {
  if (owner_ < 0) {
    const Time granted_at = take_free(line_, *topo_, cpu, now);
    owner_ = cpu;
    hold_start_ = granted_at;
    return granted_at;
  }
  if (coherent_ && spin_) line_.rmw(*topo_, cpu, now);  // osq_lock: xchg of the OSQ tail
  (spin_ ? spinners_ : sleepers_).push({cpu, now});
  return std::nullopt;
}

Released Mutex::release(int cpu, Time now, LockMode) {
  Handover woken(*this);
  stats_.record_hold(now - hold_start_);
  if (!spinners_.empty()) {
    // 1,x -> 1,y: the OSQ head sees the owner field change and takes it.
    const auto next = spinners_.pop();
    const Time at = osq_take(line_, *topo_, coherent_, cpu, next.cpu, now);
    owner_ = next.cpu;
    hold_start_ = at;
    stats_.record_handoff(cpu, next.cpu, at - next.since);
    woken.push_back({next.cpu, at});
    return woken.released(now);
  }
  // 1,x -> 0,x: the lock is free; the first sleeper wakes and retries.
  owner_ = -1;
  if (!sleepers_.empty()) {
    now = wait_lock_pass(line_, *topo_, coherent_, cpu, now);
    const auto next = sleepers_.pop();
    const Time runs = now + wake_latency_.draw();
    stats_.record_wait(runs - next.since);
    woken.push_back({next.cpu, runs, /*retry=*/true, /*slept=*/true});
  }
  return woken.released(now);
}

// ---- VersionedMutex ---------------------------------------------------------

VersionedMutex::VersionedMutex(LockContext ctx, MutexRules rules, Duration wake_latency, WakeShape shape,
                               Duration context_switch)
    : topo_(ctx.topo),
      rules_(rules),
      coherent_(ctx.topo->coherence().kind != CoherenceKind::kPairwise),
      wake_latency_(wake_latency, ctx.rng, shape, context_switch) {}

void VersionedMutex::stop_spinners() {
  // o,0,c,x -> o,0,-c,+c: mutex_spin_on_owner saw !owner->on_cpu.
  models::stop_spinners(sleeps_, osq_, wait_list_);
  if (!wait_list_.empty() && wait_list_.front().spinning && sleeps_.spin_stops(wait_list_.front().spin_from))
    wait_list_.front().spinning = false;  // the handoff head gives up spinning and sleeps
}

std::optional<Time> VersionedMutex::acquire(int cpu, Time now, LockMode) {
  const auto me = std::find_if(wait_list_.begin(), wait_list_.end(), [cpu](const Waiter& w) { return w.cpu == cpu; });
  if (me != wait_list_.end()) {
    // A woken waiter retries (__mutex_lock_common's wait loop).
    if (owner_ < 0) {
      // -,0,x,W -> w,0,x,W-w (a free lock never carries the handoff bit:
      // the unlock that sees it passes the lock on).
      const int prev = line_.owner();
      const Time granted_at = line_.rmw(*topo_, cpu, now);
      stats_.record_uncontended(prev, cpu);
      stats_.record_wait(granted_at - me->since);
      wait_list_.erase(me);
      owner_ = cpu;
      hold_start_ = granted_at;
      return granted_at;
    }
    // Stolen while it woke: o,0,x,W -> o,0,x,W (v4.9) or o,1,x,W.
    me->woken = false;
    me->joined = now;
    if (rules_.handoff && me == wait_list_.begin()) {
      handoff_ = true;
      if (rules_.spin && sleeps_.running_at(now)) {
        me->spinning = true;
        me->spin_from = now;
      }
    }
    return std::nullopt;
  }
  if (owner_ < 0) {
    // -,0,x,x -> c,0,x,x: the fast path, stealing from any woken waiter.
    const Time granted_at = take_free(line_, *topo_, cpu, now);
    owner_ = cpu;
    hold_start_ = granted_at;
    return granted_at;
  }
  if (rules_.spin && sleeps_.running_at(now)) {
    if (coherent_) line_.rmw(*topo_, cpu, now);  // osq_lock: xchg of the OSQ tail
    osq_.push_back({cpu, now, now});
  } else {
    join_wait_list(wait_list_, Waiter{cpu, now, now});  // mutex_can_spin_on_owner: the owner is not on a CPU
  }
  return std::nullopt;
}

Released VersionedMutex::release(int cpu, Time now, LockMode) {
  Handover woken(*this);
  stats_.record_hold(now - hold_start_);
  stop_spinners();
  sleeps_.clear();
  if (handoff_ && !wait_list_.empty()) {
    // o,1,x,W -> w,0,x,W-w: __mutex_handoff to the head.
    const Waiter w = wait_list_.front();
    wait_list_.erase(wait_list_.begin());
    handoff_ = false;
    Time at;
    if (w.spinning) {
      at = osq_take(line_, *topo_, coherent_, cpu, w.cpu, now);
    } else {
      const Time passed = wait_lock_pass(line_, *topo_, coherent_, cpu, now);
      at = passed + wake_latency_.draw(passed - w.joined);
      line_.move_to(w.cpu, at);
    }
    owner_ = w.cpu;
    hold_start_ = at;
    stats_.record_handoff(cpu, w.cpu, at - w.since);
    woken.push_back({w.cpu, at, false, !w.spinning});
    return woken.released(now);
  }
  if (!osq_.empty()) {
    // o,0,s,W -> s,0,-s,W
    const Waiter next = osq_.front();
    osq_.erase(osq_.begin());
    const Time at = osq_take(line_, *topo_, coherent_, cpu, next.cpu, now);
    owner_ = next.cpu;
    hold_start_ = at;
    stats_.record_handoff(cpu, next.cpu, at - next.since);
    woken.push_back({next.cpu, at});
  } else {
    owner_ = -1;  // o,0,-,W -> -,0,-,W
  }
  // MUTEX_FLAG_WAITERS: the unlock wakes wait_list's head (unless already woken).
  if (!wait_list_.empty() && !wait_list_.front().woken) {
    Waiter& head = wait_list_.front();
    head.woken = true;
    now = wait_lock_pass(line_, *topo_, coherent_, cpu, now);
    woken.push_back({head.cpu, now + wake_latency_.draw(now - head.joined), /*retry=*/true, /*slept=*/true});
  }
  return woken.released(now);
}

}  // namespace vfssim::models
