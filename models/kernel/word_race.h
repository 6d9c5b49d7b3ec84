// Who reaches a lock word first, decided by the word's cache line.
//
// When a sleeping lock is released, several CPUs may try to take it at
// once: the optimistic spinner at the head of the OSQ (it was reading the
// word, sees the release, re-reads it and tries its cmpxchg), the releaser
// itself granting the lock to the readers at the head of the wait queue
// (rwsem_mark_wake: wait_lock, then its fetch_add of READER_BIAS), a woken
// waiter spinning outside the OSQ. The kernel does not decide between
// them; the machine does: each issues its accesses to the word's line back
// to back, the line serves them in the order they arrive, and the first
// take that completes wins (the others' cmpxchg or fetch_add finds the
// word taken and fails, as rwsem_try_write_lock_unqueued's cmpxchg and
// rwsem_mark_wake's "A writer stole the lock" do).
//
// A contender is a CPU, the instant it issues its first access, and its
// steps: accesses to the line (loads, RMWs, stores) and delays between
// them (what it does off the line: a spinner's PAUSE before it polls
// again, the waker's read of the first waiter on that task's stack); its
// last access is its take. The race issues
// them to the CacheLine in the order of their issue instants (a contender's
// next access is issued when its previous one completes; ties go to the
// contender added first), so the line's queueing (cache_line.h: busy_until,
// the transfer from the current holder, retention where the machine has
// it) decides the order. Nothing here knows which kernel it is: the lock
// models say who races and what each one's accesses are.
#pragma once

#include <array>
#include <cstdint>

#include "models/hardware/cache_line.h"

namespace vfssim::models {

class WordRace {
 public:
  enum class Op : std::uint8_t { kLoad, kRmw, kStore, kDelay };
  struct Step {
    Op op;
    Duration delay{0};  // kDelay only
    Step(Op o) : op(o) {}  // NOLINT: a bare access reads as a step
    Step(Op o, Duration d) : op(o), delay(d) {}
  };
  static Step delay(Duration d) { return {Op::kDelay, d}; }
  static constexpr int kMaxContenders = 4;
  static constexpr int kMaxOps = 5;

  // Adds a contender; returns its index. At most kMaxContenders, each with
  // 1 to kMaxOps accesses. `take`: its last access takes the word (false:
  // it only uses the line, as an unlock's wait_lock before waking a writer).
  int add(int cpu, Time issue, std::initializer_list<Step> steps, bool take = true) {
    Entry& e = entries_[static_cast<std::size_t>(n_)];
    e.cpu = cpu;
    e.take = take;
    e.next = issue;
    e.count = 0;
    for (const Step& st : steps) e.ops[static_cast<std::size_t>(e.count++)] = st;
    e.done_ops = 0;
    return n_++;
  }

  // Issues every access in issue order and settles the race.
  void run(CacheLine& line, const Topology& topo) {
    for (;;) {
      int pick = -1;
      for (int i = 0; i < n_; ++i) {
        const Entry& e = entries_[static_cast<std::size_t>(i)];
        if (e.done_ops < e.count && (pick < 0 || e.next < entries_[static_cast<std::size_t>(pick)].next)) pick = i;
      }
      if (pick < 0) break;
      Entry& e = entries_[static_cast<std::size_t>(pick)];
      const Step& st = e.ops[static_cast<std::size_t>(e.done_ops)];
      const Time done = st.op == Op::kLoad  ? line.load(topo, e.cpu, e.next)
                        : st.op == Op::kRmw ? line.rmw(topo, e.cpu, e.next)
                        : st.op == Op::kStore ? line.store(topo, e.cpu, e.next)
                                              : e.next + st.delay;
      e.next = done;
      if (++e.done_ops == e.count) {
        e.finished = done;
        if (winner_ < 0 && e.take) winner_ = pick;
      }
    }
  }

  // The contender whose take completed first (-1: none was added).
  int winner() const { return winner_; }
  // When contender `i`'s last access completed.
  Time done(int i) const { return entries_[static_cast<std::size_t>(i)].finished; }
  int cpu(int i) const { return entries_[static_cast<std::size_t>(i)].cpu; }

 private:
  struct Entry {
    int cpu = -1;
    Time next{};      // when its next access is issued
    Time finished{};  // when its last access completed
    std::array<Step, kMaxOps> ops{Op::kDelay, Op::kDelay, Op::kDelay, Op::kDelay, Op::kDelay};
    int count = 0, done_ops = 0;
    bool take = true;
  };
  std::array<Entry, kMaxContenders> entries_{};
  int n_ = 0;
  int winner_ = -1;
};

}  // namespace vfssim::models
