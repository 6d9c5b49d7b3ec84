// struct rw_semaphore by kernel version (`behaviour:` v4.19, v5.3, v6.1,
// or the switches): kernel/locking/rwsem-xadd.c (v4.19) and
// kernel/locking/rwsem.c (v5.3 on). Without `behaviour:` an rwsem is the
// version-less RwLock of rwlock.h, as before.
//
// The rules, each a switch (lock_kinds.cpp maps the versions onto them):
//
//   writers spin    on a running writer owner, never on reader owners
//                   (rwsem_spin_on_owner stops at a reader owner): `spin:`;
//                   "locking/rwsem: Support optimistic spinning",
//                   4fc828e24cd9, Davidlohr Bueso, v3.16. Writer lock
//                   stealing, every version: a running writer takes a free
//                   lock past queued waiters ("rwsem: Implement writer
//                   lock-stealing for better scalability",
//                   Alex Shi, v3.10).
//   reader_spin     readers spin on a running writer owner too, and the
//                   spinning reader's rwsem_try_read_lock_unqueued takes a
//                   reader-owned lock past queued waiters (so a stream of
//                   readers can keep a writer from ever being woken, the
//                   starvation "locking/rwsem: Prevent potential lock
//                   starvation", 2f06f702925b, closed in v5.11): "locking/
//                   rwsem: Enable readers spinning on writer", cf69482d62d9,
//                   Waiman Long, v5.3; removed in v5.11 by "locking/rwsem:
//                   Remove reader optimistic spinning", 617f3ef95177.
//   reader_steal    a reader takes a free lock past queued waiters, unless
//                   the handoff bit is set: the spinning reader from v5.3,
//                   the slow path's reader from v5.11 ("locking/rwsem:
//                   Enable reader optimistic lock stealing", 1a728dff855a),
//                   which queues when other readers own the lock.
//   handoff         RWSEM_FLAG_HANDOFF: the queue's head, once it has waited
//                   RWSEM_WAIT_TIMEOUT (DIV_ROUND_UP(HZ, 250) jiffies: 4 ms
//                   at HZ 250 or 1000) and found the lock stolen, sets the
//                   bit; then nobody steals and the lock goes to the head:
//                   "locking/rwsem: Implement lock handoff to prevent lock
//                   starvation", 4f23dbc1e657, Waiman Long, v5.3.
//   wake_readers    all: a wake-up grants up to MAX_READERS_WAKEUP (0x100)
//                   readers from anywhere in the queue, not only those
//                   before the first writer: "locking/rwsem: Wake up almost
//                   all readers in wait queue", d3681e269fff, v5.3.
//
// Wake-and-retry: a woken writer only runs again `wake` later and retries
// (rwsem_try_write_lock); woken readers are granted by the waker (it adds
// their READER_BIAS), so they never retry.
//
// The state is the tuple
//
//   (owner, handoff, spinners, queue)
//
//   owner     -: free; W(c): writer c; R(n): n readers
//   handoff   RWSEM_FLAG_HANDOFF
//   spinners  optimistic spinners (FIFO; the OSQ), readers or writers
//   queue     wait_list (FIFO); a woken writer stays on it until it gets the lock
//
// Transitions (x: anything; Q: queue not empty):
//
//   -,0,x,-    -> R(1),0,x,-  down_read's fast path (no waiters)
//   R(n),0,x,- -> R(n+1),..   likewise
//   -,0,x,Q    -> R(1),0,x,Q  reader_steal: the reader takes it past the queue
//   R(n),0,x,Q -> R(n+1),..   reader_spin: likewise for a reader-owned lock
//   W(o),0,x,x -> W(o),0,+c,x o runs: a writer (or, reader_spin, a reader) spins
//   W(o)|R,x,x,x -> ..,+c     otherwise: c sleeps on the queue
//   W(o),x,c,x -> W(o),x,-c,+c o goes to sleep: its spinners stop and sleep
//   -,0,x,x    -> W(c),0,x,x  a running writer takes a free lock (stealing)
//   W -> -, spinners          up_write: the head writer spinner, or every
//                             reader spinner at the head, takes it; the
//                             queue's head is woken as well (a writer to
//                             retry; readers find it taken: the handoff check)
//   W|R(1) -> -, no spinners  the last unlock wakes the queue's head: a
//                             writer retries `wake` later; readers (the leading
//                             ones, or wake_readers: up to 256) are granted
//   -,x,x,Q    -> W(w),0,..   the woken head writer's retry takes it
//   W|R,0,x,Q  -> ..,1,..     handoff: the head waited 4 ms and lost a race
#pragma once

#include "models/kernel/holder_sleeps.h"
#include "models/kernel/spinlocks.h"
#include "models/kernel/wake_latency.h"

namespace vfssim::models {

struct RwsemRules {
  bool writer_spin = true;
  bool reader_spin = false;
  bool reader_steal = false;
  bool handoff = false;
  bool wake_all_readers = false;
  Duration handoff_timeout = Duration{4'000'000'000};  // RWSEM_WAIT_TIMEOUT: 4 ms
  static constexpr int kMaxReadersWakeup = 0x100;     // MAX_READERS_WAKEUP
};

class Rwsem final : public Lock {
 public:
  Rwsem(LockContext ctx, RwsemRules rules, Duration wake_latency, WakeShape shape = WakeShape::kFixed)
      : topo_(ctx.topo), rules_(rules), wake_(wake_latency, ctx.rng, shape) {}

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);
  void holder_sleeps(int cpu, Time from, Time until) {
    if (cpu == writer_) sleeps_.add(from, until);
  }

  int writer() const { return writer_; }
  int readers() const { return readers_; }
  // The count word's line (the owner field beside it: `on:` data).
  CacheLine* word_line() { return &line_; }
  bool handoff() const { return handoff_; }
  std::size_t spinners() const { return spinners_.size(); }
  std::size_t queued() const { return queue_.size(); }

 private:
  struct Waiter {
    int cpu;
    LockMode mode;
    Time since;   // asked for the lock
    Time joined;  // joined the queue
    bool woken = false;
  };
  void stop_spinners();
  void spinners_to_queue(Time at);
  // The lock just became free at `now` (released by `releaser`): spinners
  // take it, and the queue's head is woken or granted.
  void grant(int releaser, Time now, Handover& woken);
  void wake_queue(int releaser, Time now, Handover& woken);
  void readers_take(int releaser, Time now, Handover& woken);
  Time take(int cpu, Time now, LockMode mode);

  const Topology* topo_;
  RwsemRules rules_;
  WakeLatency wake_;  // each wake-up's latency (wake_latency.h)
  int writer_ = -1;
  int readers_ = 0;
  bool handoff_ = false;
  Time write_start_{};
  std::vector<Time> read_start_;   // per CPU, for hold times
  std::vector<Waiter> spinners_;   // FIFO
  std::vector<Waiter> queue_;      // FIFO by `joined`
  HolderSleeps sleeps_;            // the writer owner's sleeps in this hold
  CacheLine line_;                 // the count word
};

}  // namespace vfssim::models
