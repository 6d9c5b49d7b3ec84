// The interface every lock model implements, and its lock_stat counters.
//
// A lock model is a passive state machine: the code-path interpreter asks
// it to acquire or release at a simulated instant and it answers with the
// instant the caller (or the waiters it hands the lock to) gets the lock.
// It never schedules events and never sees the engine, so a model is
// tested on its own with exact times, and spinning costs no events: a
// waiter is an entry in a queue until a release computes its grant time.
#pragma once

#include <cstdint>
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
  int cpu;
  Time at;             // when it happens
  bool retry = false;  // the waiter only wakes at `at` and must try again (not granted)
  bool slept = false;  // the waiter slept (its wait is idle time, not CPU time)
};

// What a lock model may use: the machine and a random stream of its own.
struct LockContext {
  const Topology* topo = nullptr;
  sim::RngStream rng;
};

class Lock {
 public:
  virtual ~Lock() = default;

  // Asks for the lock at `now`. Returns true with `granted_at` set when the
  // caller gets it without queueing (possibly after a line transfer);
  // false when it must wait for a release to hand it over.
  virtual bool acquire(int cpu, Time now, LockMode mode, Time& granted_at) = 0;

  // Releases the lock held by `cpu` at `now` and appends to `woken` every
  // waiter that now gets it (or must wake and retry), with the instant it
  // does. Returns when the releaser may go on (an atomic release on a
  // shared word, such as up_read, costs the releaser a transfer).
  virtual Time release(int cpu, Time now, LockMode mode, std::vector<Grant>& woken) = 0;

  // For lockref: whether the lock is held, and lockref's cmpxchg loop on
  // its word by `cpu` at `now` (models/kernel/cmpxchg_loop.h). Spinlocks only.
  virtual bool held() const { return true; }
  virtual CmpxchgOutcome cmpxchg_word(int cpu, Time now, const CmpxchgLoop& loop) {
    (void)cpu, (void)loop;
    return {now};
  }

  // The holder `cpu` is off its CPU from `from` to `until` (a `sleep:` step
  // inside its critical section). Only the versioned sleeping locks
  // (`behaviour:`) care: their spinners stop when the owner sleeps.
  virtual void holder_sleeps(int cpu, Time from, Time until) { (void)cpu, (void)from, (void)until; }

  // The cache line of the lock word, when data may live on it (`lines:
  // NAME: {on: LOCK}`): a spinlock's word; nullptr for kinds without one.
  virtual CacheLine* word_line() { return nullptr; }

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

  LockStats stats_;
  LockStats by_mode_[2];  // [0] exclusive, [1] shared; read/write kinds only
};

}  // namespace vfssim::models
