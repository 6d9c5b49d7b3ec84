// Reader-writer locks: rw_semaphore, rwlock_t, and brlock/lglock.
//
// RwLock (rwsem, rwlock): one count word on one cache line. Every reader
// entry and exit is an atomic on that word, so readers that never wait for
// each other still bounce its line: a read-mostly rwsem does not scale
// (kernfs_rwsem after the 2021 series).
//
//   reader, no writer holding or queued    -> atomic on the word, enters
//   reader, fair lock, a writer queued     -> queues behind it
//   reader, reader-preferring rwlock_t     -> enters past queued writers
//   writer, lock idle and nobody queued    -> atomic on the word, enters
//   otherwise                              -> queues (FIFO)
//   last reader leaves, writer at the head -> writer gets it
//   writer leaves                          -> the head writer gets it, or
//                                             every reader queued before the
//                                             next writer enters together
// A handoff costs a line transfer when waiters spin (rwlock_t; rwsem with
// optimistic spinning) and `wake_latency` when they sleep.
//
// BrLock (brlock/lglock, per-CPU spinlocks): a reader takes only its own
// CPU's lock, a local line unless a writer took it last. A writer takes
// every CPU's lock in turn (for_each_possible_cpu): one transfer per CPU,
// O(NR_CPUS) time in one step, O(1) events.
#pragma once

#include "models/kernel/spinlocks.h"
#include "models/kernel/wake_latency.h"

namespace vfssim::models {

class RwLock final : public Lock {
 public:
  // The model of rwsem and rwlock. `sleeping`: waiters sleep (handoff costs
  // wake_latency). `reader_preference`: readers pass queued writers.
  RwLock(LockContext ctx, bool sleeping, bool reader_preference, Duration wake_latency,
         WakeShape shape = WakeShape::kFixed)
      : topo_(ctx.topo), sleeping_(sleeping), reader_pref_(reader_preference), wake_(wake_latency, ctx.rng, shape) {}

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);

  int readers() const { return readers_; }
  CacheLine* word_line() { return &line_; }  // rwlock_t's word (`on:` data)
  int writer() const { return writer_; }

 private:
  struct Waiter {
    int cpu;
    LockMode mode;
    Time since;
  };
  Duration handoff(int from, int to) { return sleeping_ ? wake_.draw() : topo_->transfer(from, to); }
  void grant_waiters(int releaser, Time now, Handover& woken);

  const Topology* topo_;
  bool sleeping_, reader_pref_;
  WakeLatency wake_;  // each wake-up's latency (wake_latency.h)
  int writer_ = -1;
  int readers_ = 0;
  Time write_start_{};
  std::vector<Time> read_start_;  // per CPU, for hold times
  std::vector<Waiter> queue_;     // FIFO; small in practice
  std::size_t head_ = 0;
  CacheLine line_;
};

class BrLock final : public Lock {
 public:
  explicit BrLock(LockContext ctx);

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);

 private:
  Duration take_all(int cpu);  // cost of the writer taking every CPU's lock
  void grant_waiters(int releaser, Time now, Handover& woken);
  // The CPU that touched CPU c's lock line last: c itself when c took it
  // since the last writer (`own_`), else that writer. A writer's take_all
  // then costs O(CPUs that read since the last writer), each paid for by
  // the read that put it there: O(1) per event amortised, however many CPUs.
  int owner_of(int c) const { return own_[static_cast<std::size_t>(c)] ? c : last_writer_; }
  void take_own(int c) {
    if (!own_[static_cast<std::size_t>(c)]) {
      own_[static_cast<std::size_t>(c)] = 1;
      owned_.push_back(c);
    }
  }

  const Topology* topo_;
  int last_writer_ = -1;
  std::vector<char> own_;    // per CPU lock: its own CPU took it since the last writer
  std::vector<int> owned_;   // those CPUs
  std::vector<Time> read_start_;
  int writer_ = -1;
  int readers_ = 0;
  Time write_start_{};
  struct Waiter {
    int cpu;
    LockMode mode;
    Time since;
  };
  std::vector<Waiter> queue_;
  std::size_t head_ = 0;
};

}  // namespace vfssim::models
