// struct mutex (kernel/locking/mutex.c), reduced to what costs time.
//
//   free                 -> fast path: one cmpxchg on the owner word
//   held, spin allowed   -> optimistic spinning: the waiter joins the OSQ
//                           (an MCS queue) and spins while the owner runs;
//                           the release hands the lock to the OSQ head for
//                           one line transfer
//   held, no spinning    -> the waiter sleeps on wait_list. The release
//                           frees the lock and wakes the first sleeper,
//                           which runs `wake_latency` later and tries
//                           again: anyone arriving meanwhile takes the
//                           lock (no handoff), the waker goes back to sleep
//
// With a coherence model (topology.h) the mutex's one cache line (owner,
// wait_lock and the OSQ tail sit together in struct mutex) sees what the
// kernel does to it: a spinner joining the OSQ xchg's the tail; a release
// to a spinner is the owner word's fetch_andnot, the OSQ head's re-read of
// the word (a transfer), its cmpxchg taking it, and osq_unlock's cmpxchg
// of the tail; a release with sleepers takes wait_lock to wake the first.
// Without one (pairwise) a handoff is one transfer, as before.
//
// "Spin allowed" stands for "the owner is on a CPU": one task per CPU
// never gives up its CPU in the model, so a mutex whose holder does not
// sleep is spun on (as kernfs_mutex was), while a mutex held across I/O
// (dqio_mutex around the quota block write) is declared `spin: false`.
#pragma once

#include "models/kernel/spinlocks.h"

namespace vfssim::models {

class Mutex final : public Lock {
 public:
  Mutex(LockContext ctx, bool spin, Duration wake_latency)
      : topo_(ctx.topo),
        spin_(spin),
        coherent_(ctx.topo->coherence().kind != CoherenceKind::kPairwise),
        wake_latency_(wake_latency) {}

  bool acquire(int cpu, Time now, LockMode mode, Time& granted_at) override;
  Time release(int cpu, Time now, LockMode mode, std::vector<Grant>& woken) override;

  int owner() const { return owner_; }

 private:
  const Topology* topo_;
  bool spin_;
  bool coherent_;  // the machine has a coherence model: the mutex's line traffic costs
  Duration wake_latency_;
  int owner_ = -1;
  Time hold_start_{};
  WaiterQueue spinners_;  // the OSQ
  WaiterQueue sleepers_;  // wait_list
  CacheLine line_;        // the owner word
};

}  // namespace vfssim::models
