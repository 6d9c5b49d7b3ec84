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
//
// VersionedMutex (`behaviour:` v4.9, v4.10, v6.1, or `handoff:`) is the
// mutex by kernel version, with the owner's running state; see below.
#pragma once

#include "models/kernel/holder_sleeps.h"
#include "models/kernel/spinlocks.h"
#include "models/kernel/wake_latency.h"

namespace vfssim::models {

class Mutex final : public Lock {
 public:
  Mutex(LockContext ctx, bool spin, Duration wake_latency, WakeShape shape = WakeShape::kFixed)
      : topo_(ctx.topo),
        spin_(spin),
        coherent_(ctx.topo->coherence().kind != CoherenceKind::kPairwise),
        wake_latency_(wake_latency, ctx.rng, shape) {}

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);

  int owner() const { return owner_; }
  // struct mutex's line: owner, wait_lock and the OSQ tail (`on:` data too).
  CacheLine* word_line() { return &line_; }

 private:
  const Topology* topo_;
  bool spin_;
  bool coherent_;  // the machine has a coherence model: the mutex's line traffic costs
  WakeLatency wake_latency_;
  int owner_ = -1;
  Time hold_start_{};
  WaiterQueue spinners_;  // the OSQ
  WaiterQueue sleepers_;  // wait_list
  CacheLine line_;        // the owner word
};

// The rules a kernel version's mutex follows (behaviour: in lock_kinds.cpp).
struct MutexRules {
  // Optimistic spinning on a running owner (CONFIG_MUTEX_SPIN_ON_OWNER;
  // "mutex: implement adaptive spinning", 0d66bf6d3514, v2.6.30). `spin:`.
  bool spin = true;
  // MUTEX_FLAG_HANDOFF ("locking/mutex: Add lock handoff to avoid
  // starvation", 9d659ae14b54, Peter Zijlstra, v4.10): the first waiter that
  // wakes and finds the lock stolen sets the bit, and the next unlock hands
  // the lock to it; meanwhile it spins on a running owner ("locking/mutex:
  // Enable optimistic spinning of woken waiter", Waiman Long, v4.10).
  bool handoff = false;
};

// struct mutex by kernel version. The state is the tuple
//
//   (owner, handoff, osq, wait_list)
//
//   owner      the holding CPU, or - when the lock is free
//   handoff    MUTEX_FLAG_HANDOFF: the unlock passes the lock to wait_list's head
//   osq        spinners (FIFO), each spinning while the owner is on its CPU
//   wait_list  sleepers (FIFO); a woken one is still on it until it gets the lock
//
// Transitions (x: anything; W: wait_list not empty):
//
//   -,0,x,x   -> c,0,x,x   mutex_lock by a running task takes a free lock,
//                          even while a woken waiter is on its way (stealing)
//   o,x,x,x   -> o,x,+c,x  o is running and spinning is on: c spins in the OSQ
//   o,x,x,x   -> o,x,x,+c  o sleeps (or no spinning): c sleeps on wait_list
//   o,0,c,x   -> o,0,-c,+c o goes to sleep while c spins: c stops, sleeps
//   o,0,s,W   -> s,0,-s,W  unlock: the OSQ head takes it (a line transfer);
//                          wait_list's head is woken as well and will retry
//   o,0,-,W   -> -,0,-,W   unlock: free; wait_list's head wakes `wake` later
//                          and retries (wake-and-retry)
//   -,0,x,W   -> w,0,x,W-w the woken head retries and takes the free lock
//   o,0,x,W   -> o,0,x,W   the woken head finds it stolen: v4.9 sleeps again
//   o,0,x,W   -> o,1,x,W   (handoff) ... and sets MUTEX_FLAG_HANDOFF, spinning
//                          on o while o runs, else sleeping
//   o,1,x,W   -> w,0,x,W-w unlock hands the lock to the head (a transfer if it
//                          spins, its wake-up if it sleeps): no more stealing
class VersionedMutex final : public Lock {
 public:
  VersionedMutex(LockContext ctx, MutexRules rules, Duration wake_latency, WakeShape shape = WakeShape::kFixed,
                 Duration context_switch = Duration{0});

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);
  void holder_sleeps(int cpu, Time from, Time until) {
    if (cpu == owner_) sleeps_.add(from, until);
  }

  int owner() const { return owner_; }
  CacheLine* word_line() { return &line_; }
  bool handoff() const { return handoff_; }
  std::size_t spinners() const { return osq_.size(); }
  std::size_t sleepers() const { return wait_list_.size(); }

 private:
  struct Waiter {
    int cpu;
    Time since;               // asked for the lock
    Time joined;              // joined wait_list (a spinner that gave up: when it did; a woken waiter
                              // that lost: when it went back to sleep)
    bool woken = false;       // woken, on its way to retry
    bool spinning = false;    // handoff: the head spins on the owner from `spin_from`
    Time spin_from{};
  };
  // The spinners that saw the owner go to sleep during this hold join
  // wait_list at that instant (in order of joining).
  void stop_spinners();

  const Topology* topo_;
  MutexRules rules_;
  bool coherent_;
  WakeLatency wake_latency_;
  int owner_ = -1;
  bool handoff_ = false;
  Time hold_start_{};
  std::vector<Waiter> osq_;        // FIFO
  std::vector<Waiter> wait_list_;  // FIFO by `joined`
  HolderSleeps sleeps_;            // the owner's sleeps in this hold
  CacheLine line_;
};

}  // namespace vfssim::models
