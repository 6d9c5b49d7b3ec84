// The interface every lock model implements, and its lock_stat counters.
//
// A lock model is a passive state machine: the code-path interpreter asks
// it to acquire or release at a simulated instant and it answers with the
// instant the caller (or the waiter it hands the lock to) gets the lock.
// It never schedules events and never sees the engine, so a model is
// tested on its own with exact times, and spinning costs no events: a
// waiter is an entry in a queue until a release computes its grant time.
//
// The interface is static: a model is a class derived from Lock (below),
// and the executor reaches it through AnyLock (lock_kinds.h), the closed
// set of the registry's models, which dispatches on the kind with a switch
// and calls the model's members directly: no virtual call per acquisition.
// A model has
//
//   std::optional<Time> acquire(int cpu, Time now, LockMode mode);
//       `cpu` asks for the lock at `now`: the instant it holds it when it
//       gets it without queueing (possibly after a line transfer), or
//       nullopt when it must wait for a release to hand it over (or to
//       wake it to retry: then it calls acquire again when it runs).
//   Released release(int cpu, Time now, LockMode mode);
//       `cpu` releases the lock at `now`. Released::done is when the
//       releaser may go on (an atomic on a shared word, such as up_read,
//       costs it a transfer); Released::grant the waiter that now gets the
//       lock, or must wake and retry (Grant::retry), and when; its cpu is
//       -1 when nobody does. A release that hands over to several waiters
//       at once (an rwsem waking its queued readers, rwlock_t and brlock
//       admitting theirs, a mutex whose spinner takes it while a sleeper is
//       woken) returns the first in `grant` and leaves the others, in
//       order, in the lock's overflow, with Released::more set: the caller
//       takes them with take_more() before its next call on the lock. Such
//       a release builds its answer with a Handover (woken.push_back(g),
//       then woken.released(done)); one that hands over to at most one
//       returns it directly. The common path touches no vector.
//
// and, when the kind needs them, members that hide Lock's defaults below
// (found by name, so a kind's own must keep their signatures):
//   bool held() const;                              lockref: the lock is held
//   CmpxchgOutcome cmpxchg_word(int, Time, const CmpxchgLoop&);
//                                                   lockref's cmpxchg on the word
//   void holder_sleeps(int cpu, Time from, Time until);
//                                                   the holder left its CPU
//   CacheLine* word_line();                         the lock word's line
// A new kind is its model file and its row in the registry
// (lock_kinds.{h,cpp}: the class in LockModels, the row in the table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/kernel/cmpxchg_loop.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace vfssim::models {

enum class LockMode : std::uint8_t { kExclusive, kShared };

// /proc/lock_stat's columns for one lock (class or instance).
struct LockStats {
  std::uint64_t con_bounces = 0;   // contended acquisitions whose line came from another CPU
  std::uint64_t contentions = 0;   // acquisitions that had to wait
  Duration wait_min{0}, wait_max{0}, wait_total{0};
  std::uint64_t acq_bounces = 0;   // acquisitions whose line came from another CPU
  std::uint64_t acquisitions = 0;
  Duration hold_min{0}, hold_max{0}, hold_total{0};
  std::uint64_t holds = 0;  // completed hold intervals (for the average)

  void record_wait(Duration w) {
    if (contentions == 0 || w < wait_min) wait_min = w;
    if (w > wait_max) wait_max = w;
    wait_total += w;
    ++contentions;
  }
  // An acquisition without waiting; the lock word was last owned by `prev`.
  void record_uncontended(int prev, int cpu) {
    ++acquisitions;
    if (prev >= 0 && prev != cpu) ++acq_bounces;
  }
  // An acquisition handed over by `from` to `to` after waiting `wait`.
  void record_handoff(int from, int to, Duration wait) {
    ++acquisitions;
    record_wait(wait);
    if (to != from) {
      ++acq_bounces;
      ++con_bounces;
    }
  }
  void record_hold(Duration h) {
    if (holds == 0 || h < hold_min) hold_min = h;
    if (h > hold_max) hold_max = h;
    hold_total += h;
    ++holds;
  }
  void merge(const LockStats& o);
  void reset() { *this = LockStats{}; }
};

// A decision of the lock about a waiter.
struct Grant {
  int cpu = -1;        // -1: nobody (a release that hands over to no one)
  Time at{};           // when it happens
  bool retry = false;  // the waiter only wakes at `at` and must try again (not granted)
  bool slept = false;  // the waiter slept (its wait is idle time, not CPU time)
};

// What a release answers (see the top of this file).
struct Released {
  Time done;           // when the releaser may go on
  Grant grant{};       // the first (usually only) waiter handed the lock; cpu -1: none
  bool more = false;   // further grants wait, in order, in the lock's overflow: take_more()
};

// What a lock model may use: the machine and a random stream of its own.
struct LockContext {
  const Topology* topo = nullptr;
  sim::RngStream rng;
};

// The common part of every lock model: lock_stat's counters, the overflow
// of a release's grants beyond its first, and the defaults of the members
// a kind may define (see the top of this file). Not polymorphic: AnyLock
// (lock_kinds.h) knows the concrete class of every instance.
class Lock {
 public:
  // Defaults, hidden by the kinds that have them.
  // For lockref: whether the lock is held, and lockref's cmpxchg loop on
  // its word by `cpu` at `now` (models/kernel/cmpxchg_loop.h). Spinlocks only.
  bool held() const { return true; }
  CmpxchgOutcome cmpxchg_word(int cpu, Time now, const CmpxchgLoop& loop) {
    (void)cpu, (void)loop;
    return {now};
  }
  // The holder `cpu` is off its CPU from `from` to `until` (a `sleep:` step
  // inside its critical section). Only the versioned sleeping locks
  // (`behaviour:`) care: their spinners stop when the owner sleeps.
  void holder_sleeps(int cpu, Time from, Time until) { (void)cpu, (void)from, (void)until; }
  // The cache line of the lock word, when data may live on it (`lines:
  // NAME: {on: LOCK}`): a spinlock's word; nullptr for kinds without one.
  CacheLine* word_line() { return nullptr; }

  // The grants of the last releases beyond the first of each, in order,
  // appended to `into`; the overflow is empty after. Called when a
  // release answered `more`.
  void take_more(std::vector<Grant>& into) {
    into.insert(into.end(), overflow_.begin(), overflow_.end());
    overflow_.clear();
  }

  // A kind's name, perf symbols and flags are its registry row's
  // (lock_kinds.h), not the instance's.

  const LockStats& stats() const { return stats_; }
  // A read/write lock's shared and exclusive acquisitions apart (lock_stat's
  // -R and -W rows); stats() is their sum. Zero for kinds without a shared mode.
  const LockStats& mode_stats(LockMode m) const { return by_mode_[m == LockMode::kShared]; }
  void reset_stats() {
    stats_.reset();
    for (auto& s : by_mode_) s.reset();
  }

 protected:
  // Taking a free lock: `cpu`'s atomic on the lock word at `now`, which
  // pulls the word's line from its last owner; lock_stat counts an
  // uncontended acquisition (an acq-bounce when the line moved). Returns
  // when the caller holds the lock.
  Time take_free(CacheLine& word, const Topology& topo, int cpu, Time now) {
    const int prev = word.owner();
    const Time at = word.rmw(topo, cpu, now);
    stats_.record_uncontended(prev, cpu);
    return at;
  }

  // A read/write lock's update of its counters for an acquisition in mode
  // `m`: applied to the sum and to that mode's counters.
  template <class F>
  void record(LockMode m, F&& f) {
    f(stats_);
    f(by_mode_[m == LockMode::kShared]);
  }
  // take_free for a read/write lock: counted in `mode`'s counters too.
  Time take_free(CacheLine& word, const Topology& topo, int cpu, Time now, LockMode mode) {
    const int prev = word.owner();
    const Time at = word.rmw(topo, cpu, now);
    record(mode, [&](LockStats& s) { s.record_uncontended(prev, cpu); });
    return at;
  }

  // A release's answer for a kind that may hand over to several waiters:
  // the first grant pushed is the answer's, the others go to the overflow.
  class Handover {
   public:
    explicit Handover(Lock& lock) : overflow_(&lock.overflow_) {}
    void push_back(const Grant& g) {
      if (first_.cpu < 0) {
        first_ = g;
      } else {
        overflow_->push_back(g);
        more_ = true;
      }
    }
    bool empty() const { return first_.cpu < 0; }
    Released released(Time done) const { return {done, first_, more_}; }

   private:
    std::vector<Grant>* overflow_;
    Grant first_{};
    bool more_ = false;
  };

  LockStats stats_;
  LockStats by_mode_[2];  // [0] exclusive, [1] shared; read/write kinds only

 private:
  std::vector<Grant> overflow_;  // a release's grants after its first (Handover)
};

// Every grant of one release, in order (its first, then the overflow),
// appended to `woken`; returns when the releaser goes on. For tests and
// tools that want the list; the executor takes the first without one.
template <class L>
Time release_all(L& lock, int cpu, Time now, LockMode mode, std::vector<Grant>& woken) {
  const Released r = lock.release(cpu, now, mode);
  if (r.grant.cpu >= 0) woken.push_back(r.grant);
  if (r.more) lock.take_more(woken);
  return r.done;
}

}  // namespace vfssim::models
