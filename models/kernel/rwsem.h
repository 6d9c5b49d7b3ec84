// struct rw_semaphore by kernel version (`behaviour:`, lock_kinds.cpp's
// rows): kernel/locking/rwsem-xadd.c (v4.19 to v5.2) and
// kernel/locking/rwsem.c (Waiman Long's rework, v5.3 on), at the releases
// and at the commits of the rework that published measurements name.
// Without `behaviour:` an rwsem is the version-less RwLock of rwlock.h.
//
// The word. The count (writer bit, reader count, WAITERS, HANDOFF) and the
// owner field (the writer's task, or a reader's with READER_OWNED, and the
// NONSPINNABLE bits) share one cache line with the OSQ tail and wait_lock
// (`on: LOCK` data shares it too). Every acquisition stores its owner
// (rwsem_set_owner, rwsem_set_reader_owned), up_write clears it, up_read
// leaves a reader owner behind: the last reader's task stays in the field
// after the lock is free.
//
// The rules, each a switch of RwsemRules:
//
//   writer_spin      a writer spins (OSQ) on a running writer owner or a
//                    free word (CONFIG_RWSEM_SPIN_ON_OWNER; "locking/rwsem:
//                    Support optimistic spinning", 4fc828e24cd9, v3.16).
//                    A reader owner, stale or not, stops it (is_rwsem_owner_
//                    spinnable: RWSEM_ANONYMOUSLY_OWNED) unless:
//   spin_on_readers  writers spin on a reader-owned rwsem for (10 + readers/2)
//                    us, at most 25 us, then set the NONSPINNABLE bits and
//                    sleep ("locking/rwsem: Enable time-based spinning on
//                    reader-owned rwsem", 7d43f1ce9dd0, v5.3).
//   reader_spin      readers spin on a running writer and take a reader-owned
//                    or free word past the queue (rwsem_try_read_lock_
//                    unqueued; "Enable readers spinning on writer",
//                    cf69482d62d9, v5.3; removed by 617f3ef95177, v5.11).
//   adaptive         a writer whose spin ended on NONSPINNABLE sets
//                    RD_NONSPINNABLE once it holds the lock, and readers do
//                    not spin while it stands ("Adaptive disabling of reader
//                    optimistic spinning", 5cfd92e12e13, v5.3 to v5.10);
//                    with it the two bits are apart (a reader owner keeps
//                    only RD, the last up_read with waiters clears WR).
//   handoff          the queue's head that has waited RWSEM_WAIT_TIMEOUT (4
//                    ms) and finds the lock taken sets RWSEM_FLAG_HANDOFF:
//                    then no fast path, no spinner and no stealing takes
//                    it, and v5.3's spinners stop ("Implement lock handoff to
//                    prevent lock starvation", 4f23dbc1e657, v5.3).
//   handoff_spin     the writer that set HANDOFF spins on a running writer
//                    owner and takes the word when it is freed instead of
//                    sleeping ("Make handoff writer optimistically spin on
//                    owner", 91d2a812dfb9, in v6.1).
//   wake_all_readers a wake-up grants up to MAX_READERS_WAKEUP (256) readers
//                    from anywhere in the queue ("Wake up almost all readers
//                    in wait queue", d3681e269fff, v5.3); before, the readers
//                    before the first writer.
//   reader_steal     a reader takes a word no writer holds past the queue,
//                    unless other readers hold it ("Enable reader optimistic
//                    lock stealing", 1a728dff855a, v5.11), and then grants
//                    the queued readers at the head (RWSEM_WAKE_READ_OWNED).
//
// The state is the tuple
//
//   (count, owner, osq, queue)
//
//   count   W(c): writer c, R(n): n readers, -: free; H: HANDOFF
//   owner   W, R (stays after the readers leave), -; + NONSPINNABLE bits
//   osq     the optimistic spinners, FIFO; only the head reads the word
//   queue   wait_list, FIFO by joining; a woken writer stays on it until it
//           takes the lock, granted readers leave it
//
// Transitions (a running task arriving, or the release at `t`):
//
//   -,x,x,-       -> R(1),R      down_read's fast path (no waiters, no H)
//   R(n),R,x,-    -> R(n+1),R
//   -,x,x,x       -> W(c),W      down_write: a running writer takes a free
//                                word, past any queue (stealing), unless H
//   W(o),W,x,x    -> ..,+c,x     o runs, writer_spin: c spins
//   R(n),R,x,x    -> ..,+c,x     spin_on_readers, no NONSPINNABLE: c spins
//                                until t + threshold, then sets them
//   W(o),W,x,x    -> ..,+r,x     reader_spin: a reader spins on a writer
//   x             -> ..,x,+c     otherwise c queues and sleeps
//   release       -> the word is free at t: the OSQ head re-reads it and
//                    tries its cmpxchg (or fetch_add), the releaser takes
//                    wait_lock and (head reader) adds READER_BIAS for the
//                    queue, a woken head writer runs after its wake-up
//                    latency, reads the count and tries rwsem_try_write_lock:
//                    the first to complete on the line wins (word_race.h);
//                    the others' attempts fail. A head writer woken without
//                    a spinner to race takes the word if it is free when it
//                    runs (a running writer may steal it first), else it
//                    sleeps again
//   the owner sleeps (a `sleep:` step in the hold): its spinners stop then
//                    and queue (rwsem_spin_on_owner: !owner_on_cpu)
//
// need_resched() never stops a spinner here: one task runs per CPU, so no
// other task is ever runnable where a spinner spins.
#pragma once

#include <limits>

#include "models/kernel/holder_sleeps.h"
#include "models/kernel/spinlocks.h"
#include "models/kernel/wake_latency.h"
#include "models/kernel/word_race.h"

namespace vfssim::models {

struct RwsemRules {
  bool writer_spin = true;
  bool spin_on_readers = false;
  bool reader_spin = false;
  bool adaptive = false;
  bool handoff = false;
  bool handoff_spin = false;
  bool wake_all_readers = false;
  bool reader_steal = false;
  Duration handoff_timeout = Duration{4'000'000'000};  // RWSEM_WAIT_TIMEOUT: DIV_ROUND_UP(HZ, 250) jiffies, 4 ms
  static constexpr int kMaxReadersWakeup = 0x100;     // MAX_READERS_WAKEUP
  // rwsem_rspin_threshold: (20 + min(readers, 30)) / 2 us.
  static Duration rspin_threshold(int readers) {
    if (readers > 30) readers = 30;
    return Duration{static_cast<Duration::rep>(20 + readers) * 500'000};  // ps
  }
};

class Rwsem final : public Lock {
 public:
  Rwsem(LockContext ctx, RwsemRules rules, Duration wake_latency, WakeShape shape = WakeShape::kFixed,
        Duration context_switch = Duration{0})
      : topo_(ctx.topo),
        rules_(rules),
        wake_(wake_latency, ctx.rng, shape, context_switch),
        rng_(ctx.rng.next_u64(), "rwsem-word-race") {}

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);
  void holder_sleeps(int cpu, Time from, Time until) {
    if (cpu == writer_) sleeps_.add(from, until);
  }

  int writer() const { return writer_; }
  int readers() const { return readers_; }
  CacheLine* word_line() { return &line_; }
  bool handoff() const { return handoff_; }
  bool nonspinnable() const { return nonspin_wr_ || nonspin_rd_; }
  std::size_t spinners() const { return osq_.size(); }
  std::size_t queued() const { return queue_.size(); }

 private:
  static constexpr Time kNever = Time{Duration{std::numeric_limits<Duration::rep>::max()}};
  enum class Owner : std::uint8_t { kNone, kWriter, kReader };
  struct Waiter {
    int cpu;
    LockMode mode;
    Time since;              // asked for the lock
    Time joined;             // joined the queue (its place in it)
    Time slept;              // went to sleep: joined, or a woken writer's lost retry
    bool woken = false;      // a writer woken, on its way to retry
    Time retry_at{};         // ... which runs then
    bool saw_nonspin = false;  // adaptive: its spin ended on NONSPINNABLE
    bool spinning = false;   // handoff_spin: the HANDOFF writer spins on the owner
    Time give_up = kNever;   // a writer spinning on readers stops then
  };

  void advance(Time now);
  bool writer_may_spin(Time now) const;
  void to_queue(Waiter w, Time at);
  void spinners_to_queue(Time at);
  void readers_own(Time at);
  Time take_write(int cpu, Time now);
  Time writer_owns(int cpu, Time taken);
  Time take_read(int cpu, Time now);
  Time queue_up(int cpu, Time now, LockMode mode, bool saw_nonspin);
  // The word became free at `t` (released by `releaser`): the race, the
  // grants and the wake-up. Returns when the releaser is done.
  Time freed(int releaser, Time t, Handover& woken);
  // Grants queued readers (the leading ones, or up to 256 from the whole
  // queue) at `t`; they run after their wake-ups.
  void grant_queued_readers(int releaser, Time t, Handover& woken);
  // The reader spinners at the OSQ's front take the reader-owned word.
  void spinning_readers_take(int releaser, Time t, Handover& woken);
  // How long after the word changes a spinner polling it with cpu_relax()
  // notices: somewhere in its current PAUSE.
  Duration pause_phase() {
    const auto p = topo_->pause().count();
    return Duration{p > 0 ? static_cast<Duration::rep>(rng_.below(static_cast<std::uint64_t>(p))) : 0};
  }

  const Topology* topo_;
  RwsemRules rules_;
  WakeLatency wake_;
  sim::RngStream rng_;  // a spinner's PAUSE phase when the word changes
  int writer_ = -1;
  int readers_ = 0;
  bool handoff_ = false;
  Owner owner_ = Owner::kNone;
  bool nonspin_rd_ = false, nonspin_wr_ = false;  // the NONSPINNABLE bits (one bit before 5cfd92e12e13 and after v5.10)
  Time write_start_{};
  std::vector<Time> read_start_;  // per CPU, for hold times
  // A woken writer that won the race for the word before its retry runs:
  // the word is its from `at`, its retry's acquire gets it.
  struct Reserved {
    int cpu = -1;
    Time since{}, at{};
  } reserved_;
  std::vector<Waiter> osq_;       // FIFO
  std::vector<Waiter> queue_;     // FIFO by `joined`
  HolderSleeps sleeps_;           // the writer owner's sleeps in this hold
  CacheLine line_;                // count, owner, osq tail, wait_lock
};

}  // namespace vfssim::models
