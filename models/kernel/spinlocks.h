// Spinlocks: test-and-set, ticket, MCS and qspinlock.
//
// Ticket and MCS grant in FIFO order; they differ in what a handoff costs.
// Test-and-set grants to a random waiter.
//
//   ticket: every waiter spins reading the one lock word. The release store
//           invalidates all k spinning copies; the waiters then re-read the
//           line one after another (the line's home answers one request per
//           transfer c) and the next ticket holder sees its turn, on average,
//           after c k/2. Handoff time grows with the number of waiters: the
//           collapse of Boyd-Wickizer et al., "Non-scalable locks are
//           dangerous" (Linux Symposium 2012), whose Markov model this is.
//           On a machine with levels (sockets, chips, cores) a re-read is
//           a fetch per cache that holds a spinning copy, not per spinner:
//           the first spinner of a socket brings the line into that
//           socket, its neighbours are answered there, and SMT siblings share
//           an L1. So the next holder waits for half of the fetches of the
//           *groups* with spinners (each group: the waiters that diverge
//           from the next holder at one level, inside one element of that
//           level), each costing its own transfer. On a flat machine every
//           spinner is its own group and this is exactly c k/2.
//   mcs:    each waiter spins on its own queue node; the release writes the
//           successor's node only: one line transfer whatever the queue
//           length (kernel/locking/qspinlock.c, mcs_spinlock.h).
//   qspinlock: kernel/locking/qspinlock.c. The word is a tuple (tail,
//           pending, locked). Uncontended: (0,0,0) -> (0,0,1), one cmpxchg.
//           The first contender sets pending, (0,0,1) -> (0,1,1), and spins
//           on the word; the next ones xchg the tail, (0,1,1) -> (n,1,1),
//           and wait on their own MCS node until they are the queue head,
//           which spins on the word too: at most two CPUs spin on the word.
//           Unlock stores locked = 0, (*,1,1) -> (*,1,0); the pending
//           waiter re-reads the word and takes it, (*,1,0) -> (*,0,1)
//           (clear_pending_set_locked), and the head then waits for it in
//           turn; when nobody is pending the head re-reads and sets locked
//           itself and writes its successor's node (off the lock's path).
//           So a handoff is the unlock store, one re-read and one RMW of the
//           word, and every newcomer's xchg of the tail is a store to it.
//   tas:    test-and-test-and-set (powerpc's arch_spin_lock of the 2.6
//           era: lwarx/stwcx. loop). On release every spinner re-reads
//           the line and races an atomic on it; the atomics are served one
//           after another and the winner is any of them, so it gets the
//           lock after (k+1)/2 transfers on average: the same growth with
//           waiters as a ticket lock (SOSP'13 sec. 5 measured TAS and
//           ticket locks collapsing alike), without the FIFO order.
//
// Waiters cost no events: they sit in the queue until a release computes
// their grant time (the cost rule of DESIGN.md).
#pragma once

#include <cstdint>
#include <vector>

#include "models/kernel/lock.h"

namespace vfssim::models {

// FIFO queue of waiting CPUs, a ring buffer that never shrinks (no
// allocation per acquisition once warm).
class WaiterQueue {
 public:
  struct Waiter {
    int cpu;
    Time since;
  };
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void push(Waiter w) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & mask_] = w;
    ++size_;
  }
  void push_front(Waiter w) {
    if (size_ == buf_.size()) grow();
    head_ = (head_ + mask_) & mask_;
    buf_[head_] = w;
    ++size_;
  }
  Waiter pop() {
    Waiter w = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
    return w;
  }
  const Waiter& at(std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  // Removes and returns the last waiter.
  Waiter take_unordered_back() {
    Waiter w = at(size_ - 1);
    --size_;
    return w;
  }
  // Removes and returns the i-th waiter; the last one takes its place (the
  // order of the others is not kept: for a lock whose winner is random).
  Waiter take_unordered(std::size_t i) {
    Waiter w = at(i);
    buf_[(head_ + i) & mask_] = at(size_ - 1);
    --size_;
    return w;
  }
  // Removes and returns the i-th waiter, keeping the others in order.
  Waiter take(std::size_t i) {
    if (i == 0) return pop();
    Waiter w = at(i);
    for (std::size_t j = i; j + 1 < size_; ++j) buf_[(head_ + j) & mask_] = buf_[(head_ + j + 1) & mask_];
    --size_;
    return w;
  }

 private:
  // The capacity is a power of two (8, doubling), so an index wraps with a
  // mask, not a division.
  void grow() {
    std::vector<Waiter> nb(buf_.empty() ? 8 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) nb[i] = buf_[(head_ + i) & mask_];
    buf_.swap(nb);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  std::vector<Waiter> buf_;
  std::size_t head_ = 0, size_ = 0, mask_ = 0;
};

// The spinners of one lock counted by where they sit: per level of the
// machine, how many wait in each element, and per element how many of its
// children have any. fetches_to(next) is then the sum, over the groups of
// spinners that diverge from `next` at each level, of one transfer to it,
// in O(levels + sockets) whatever the number of spinners (O(children) per
// level on a machine with a measured transfer matrix).
class SpinnerGroups {
 public:
  explicit SpinnerGroups(const Topology& topo);
  void add(int cpu) { update(cpu, +1); }
  void remove(int cpu) { update(cpu, -1); }
  Duration fetches_to(int next) const;

 private:
  void update(int cpu, int delta);
  void allocate();  // on first use: a lock that is never contended costs nothing
  const Topology* topo_;
  int levels_ = 0;
  std::vector<std::vector<int>> waiting_;     // [level][element]: spinners inside it
  std::vector<std::vector<int>> busy_children_;  // [level][element]: children (level + 1) with spinners
};

// The state every FIFO spinlock shares: one holder, a queue, the lock
// word's line, and what a kind changes of it (Traits). FifoSpinlock<Kind>
// below adds acquire and release.
class SpinlockState : public Lock {
 public:
  // What a kind changes of the common lock, fixed at construction (members,
  // not calls, on every acquire and release):
  struct Traits {
    // Keep SpinnerGroups (kinds whose handoff depends on where the
    // spinners sit); MCS does not pay for it.
    bool count_spinners = false;
    // With a coherence model, what the lock word's line sees besides the
    // free lock's atomic: a waiter's RMW on the word as it joins (ticket's
    // xadd on the tail, MCS's xchg of the queue tail), and the release's
    // RMW when nobody waits (MCS's cmpxchg of the tail back to empty; a
    // ticket or test-and-set unlock is a plain store that retires from the
    // store buffer).
    bool joins_with_rmw = false;
    bool releases_with_rmw = false;
    // Whether the others' order matters when the next holder leaves the
    // queue (FIFO) or not (a random winner).
    bool fifo = true;
    // The next holder is not always the queue's head: pick_next_at decides.
    bool picks = false;
    // qspinlock's pending bit (qspinlock.c): a newcomer first tries the
    // fast path's cmpxchg, which fails on a held word (an RMW all the
    // same), then either sets pending, when nobody waits, and spins on the
    // word, or xchg's the tail and waits on its own MCS node until it is
    // the queue head, which spins on the word too. So at most two waiters
    // spin on the word (the pending one and the head), and under a
    // standing queue only the head does.
    bool pending_bit = false;
  };
  SpinlockState(LockContext ctx, Traits traits)
      : topo_(ctx.topo),
        rng_(ctx.rng),
        groups_(*ctx.topo),
        count_spinners_(traits.count_spinners),
        coherent_(ctx.topo->coherence().kind != CoherenceKind::kPairwise),
        spinners_read_line_(traits.count_spinners && coherent_),
        joins_with_rmw_(traits.joins_with_rmw),
        releases_with_rmw_(traits.releases_with_rmw),
        fifo_(traits.fifo),
        picks_(traits.picks),
        pending_bit_(traits.pending_bit),
        tracks_spinners_(spinners_read_line_ || (coherent_ && traits.pending_bit)) {}

  bool held() const { return holder_ >= 0; }
  CmpxchgOutcome cmpxchg_word(int cpu, Time now, const CmpxchgLoop& loop) {
    return run_cmpxchg_loop(line_, *topo_, cpu, now, loop);
  }

  int holder() const { return holder_; }
  std::size_t waiters() const { return waiters_.size(); }
  // The lock word's line: data declared `on:` this lock lives on it.
  CacheLine* word_line() { return &line_; }

 protected:
  // Half the fetches the spinning copies other than `next`'s make before
  // its own is answered: sum over groups of spinners (see the header) of
  // each group's transfer to `next`, divided by two.
  Duration rereads_ahead(int next) const { return groups_.fetches_to(next) / 2; }
  // A kind's defaults, hidden by the kinds that need their own (CNA):
  // index in the queue of the waiter that gets the lock (0: FIFO head),
  // knowing who releases and when, called only for kinds whose traits say
  // `picks`; and waiters outside waiters_ (CNA's secondary queue).
  std::size_t pick_next_at(int releaser, Time now) {
    (void)releaser;
    (void)now;
    return 0;
  }
  bool has_other_waiters() const { return false; }
  bool joins_with_rmw() const { return joins_with_rmw_; }
  bool releases_with_rmw() const { return releases_with_rmw_; }
  bool fifo() const { return fifo_; }
  // The waiter at the queue's front holds the pending bit (it came when
  // nobody waited); the next holder was that waiter (set by release()
  // before handoff_at).
  bool took_pending() const { return took_pending_; }
  CacheLine& word() { return line_; }

  // Tells the line how many spin on it and how long their re-reads take
  // (nothing to tell when no waiter spins on the word).
  void update_spinners() {
    if (tracks_spinners_) tell_spinners();
  }
  void tell_spinners();
  // The first `count` waiters spin on the word, their re-reads answered
  // after a store by `from` (pending-bit kinds).
  void tell_word_spinners(int from, std::size_t count);

  const Topology* topo_;
  sim::RngStream rng_;
  SpinnerGroups groups_;  // the queued CPUs, by socket / core / thread (when count_spinners_)
  bool count_spinners_;
  bool coherent_;  // the machine has a coherence model (not pairwise)
  // The waiters spin reading the lock word's line (ticket, tas) and the
  // machine has a coherence model: the line knows its spinners (cache_line.h).
  bool spinners_read_line_;
  bool joins_with_rmw_, releases_with_rmw_, fifo_, picks_;
  bool pending_bit_;
  // Some waiters spin on the lock word's line (spinners_read_line_, or a
  // coherence model and a pending bit): the line must know them.
  bool tracks_spinners_;
  bool front_pending_ = false, took_pending_ = false;
  WaiterQueue waiters_;  // in queue order (CNA: its main queue)
  int holder_ = -1;
  Time hold_start_{};
  CacheLine line_;
};

// A FIFO spinlock of kind `Kind`, the final class (CRTP): the release calls
// the kind's handoff_at(releaser, next, released) (when the lock is
// `next`'s after a release whose store completed at `released`),
// pick_next_at and has_other_waiters directly, with no virtual call. The
// kind befriends FifoSpinlock<Kind> to keep them protected.
template <class Kind>
class FifoSpinlock : public SpinlockState {
 public:
  using SpinlockState::SpinlockState;

  std::optional<Time> acquire(int cpu, Time now, LockMode mode);
  Released release(int cpu, Time now, LockMode mode);

 protected:
  // The pending-bit kinds' release with a coherence model (spinlocks.cpp).
  Released release_pending_bit(int cpu, Time now);
  bool has_waiters() const { return !waiters_.empty() || kind().has_other_waiters(); }

 private:
  const Kind& kind() const { return static_cast<const Kind&>(*this); }
  Kind& kind() { return static_cast<Kind&>(*this); }
};

class TicketSpinlock final : public FifoSpinlock<TicketSpinlock> {
 public:
  explicit TicketSpinlock(LockContext ctx) : FifoSpinlock(ctx, Traits{.count_spinners = true, .joins_with_rmw = true}) {}

 protected:
  friend class FifoSpinlock<TicketSpinlock>;
  // c k / 2 for k = waiters at the release (with `next`), c the transfer
  // to the next holder: the service time of Boyd-Wickizer et al.'s model,
  // s_k = 1/(s + c k/2) for the step from k+1 to k cores holding or waiting
  // (tests/unit/oracles.h, test_oracles.cpp); with levels, c/2 for the next
  // holder's own fetch plus rereads_ahead. Never less than one transfer:
  // a lone waiter still has to receive the line. (The mean position of the
  // next ticket among k re-reads, c (k+1)/2, is half a transfer more per
  // contended handoff than the paper's and put the collapse 5-6% off the
  // model near its knee.)
  Duration handoff_cost(int releaser, int next) const {
    const Duration t = topo_->transfer(releaser, next);
    const Duration ck2 = t / 2 + rereads_ahead(next);
    return ck2 > t ? ck2 : t;
  }
  Time handoff_at(int releaser, int next, Time released) { return released + handoff_cost(releaser, next); }
};

class TasSpinlock final : public FifoSpinlock<TasSpinlock> {
 public:
  explicit TasSpinlock(LockContext ctx)
      : FifoSpinlock(ctx, Traits{.count_spinners = true, .fifo = false, .picks = true}) {}

 protected:
  friend class FifoSpinlock<TasSpinlock>;
  // (k+1)/2 transfers on a flat machine: the winner's own atomic, and on
  // average half of the others' (one per group of spinners with levels).
  Duration handoff_cost(int releaser, int next) const {
    return topo_->transfer(releaser, next) + rereads_ahead(next);
  }
  Time handoff_at(int releaser, int next, Time released) { return released + handoff_cost(releaser, next); }
  std::size_t pick_next_at(int, Time) { return rng_.below(waiters_.size()); }
};

// qspinlock's handoff, for QSpinlock and CNA (`Self`: the final class).
template <class Self>
class QSpinlockOf : public FifoSpinlock<Self> {
 protected:
  friend class FifoSpinlock<Self>;
  using Traits = SpinlockState::Traits;
  // Joins with an RMW (set pending, or xchg the tail); two waiters spin on
  // the word (the pending waiter and the queue head); CNA picks.
  QSpinlockOf(LockContext ctx, bool picks)
      : FifoSpinlock<Self>(ctx, Traits{.joins_with_rmw = true, .picks = picks, .pending_bit = true}) {}
  // Pairwise: the re-read of the word and the waiter's atomic on it.
  Duration handoff_cost(int releaser, int next) const {
    return this->topo_->transfer(releaser, next) + this->topo_->local_atomic();
  }
  // With a coherence model, the next holder's take of the word as
  // queued_spin_lock_slowpath does it (kernel/locking/qspinlock.c, v4.2 on):
  // it re-reads the word until locked (the pending waiter) or locked and
  // pending (the queue head) clear. The re-read is the line's next request
  // after the unlock store (a load: the word goes shared), so a retention
  // window lets the releaser's own next lock attempt finish before it
  // (cache_line.h). Then
  //   the pending waiter: clear_pending_set_locked(), a plain store
  //              (*, 1, 0 -> *, 0, 1);
  //   the head, tail == its own (nobody queued behind it):
  //              atomic_try_cmpxchg (tail, 0, 0 -> 0, 0, 1), an RMW queued
  //              on the word's line like any other request;
  //   the head, others queued behind it: set_locked(), a plain byte store
  //              (*, *, 0 -> *, 0, 1).
  // A store retires from the store buffer and the holder enters its
  // critical section after the re-read (the line follows in the
  // background, CacheLine::store).
  Time handoff_at(int releaser, int next, Time released) {
    if (!this->coherent_) return released + handoff_cost(releaser, next);
    const Time seen = this->word().load(*this->topo_, next, released);
    if (!this->took_pending() && !this->has_waiters()) return this->word().rmw(*this->topo_, next, seen);
    this->word().store(*this->topo_, next, seen);
    return seen + this->topo_->local_hit();
  }
};

class QSpinlock final : public QSpinlockOf<QSpinlock> {
 public:
  explicit QSpinlock(LockContext ctx) : QSpinlockOf(ctx, false) {}
};

// CNA, the compact NUMA-aware qspinlock (Kogan, Dice et al., "Add
// NUMA-awareness to qspinlock", v10-v15, 2019-2021; qspinlock_cna.h). The
// waiters form a main queue and a secondary queue. At unlock the holder
// scans the main queue for the first waiter on its own NUMA node: found
// (T), the waiters ahead of T move to the end of the secondary queue and T
// gets the lock; not found, the secondary queue is spliced back at the
// head of the main queue and its first waiter gets it. Fairness: once the
// secondary queue's head has waited `threshold` (the series' default
// numa_spinlock_threshold_ns = 1 ms), the secondary queue is spliced back
// first. The word, its spinners and the handoff are qspinlock's. The scan
// is short when waiters are spread over the nodes (the first local waiter
// is a few entries in) and every waiter it passes moves once.
class CnaSpinlock final : public QSpinlockOf<CnaSpinlock> {
 public:
  CnaSpinlock(LockContext ctx, Duration threshold) : QSpinlockOf(ctx, true), threshold_(threshold) {}
  std::size_t secondary() const { return secondary_.size(); }
  std::uint64_t local_handoffs() const { return local_; }

 protected:
  friend class FifoSpinlock<CnaSpinlock>;
  std::size_t pick_next_at(int releaser, Time now);
  bool has_other_waiters() const { return !secondary_.empty(); }

 private:
  void splice_secondary() {
    while (!secondary_.empty()) waiters_.push_front(secondary_.take_unordered_back());
  }
  Duration threshold_;
  WaiterQueue secondary_;
  std::uint64_t local_ = 0;  // handoffs kept on the releaser's node
};

class McsSpinlock final : public FifoSpinlock<McsSpinlock> {
 public:
  // xchg(tail, node) to join; cmpxchg(tail, node, NULL) to leave an empty
  // queue: MCS's two atomics to ticket's one (NSL 2012: MCS ~15% slower
  // than ticket at 2 cores). With a successor the release writes only the
  // successor's node: the handoff below.
  explicit McsSpinlock(LockContext ctx) : FifoSpinlock(ctx, Traits{.joins_with_rmw = true, .releases_with_rmw = true}) {}

 protected:
  friend class FifoSpinlock<McsSpinlock>;
  Duration handoff_cost(int releaser, int next) const { return topo_->transfer(releaser, next); }
  Time handoff_at(int releaser, int next, Time released) { return released + handoff_cost(releaser, next); }
};

extern template class FifoSpinlock<TicketSpinlock>;
extern template class FifoSpinlock<TasSpinlock>;
extern template class FifoSpinlock<QSpinlock>;
extern template class FifoSpinlock<CnaSpinlock>;
extern template class FifoSpinlock<McsSpinlock>;

}  // namespace vfssim::models
