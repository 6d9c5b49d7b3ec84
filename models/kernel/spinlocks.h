// Spinlocks: ticket and queued (MCS / qspinlock).
//
// Both grant in FIFO order; they differ in what a handoff costs.
//
//   ticket: every waiter spins reading the one lock word. The release store
//           invalidates all k spinning copies; the waiters then re-read the
//           line one after another and the next ticket holder sees its turn,
//           on average, after (k+1)/2 of those transfers. Handoff time grows
//           with the number of waiters: the collapse of Boyd-Wickizer et al.,
//           "Non-scalable locks are dangerous" (2012).
//   mcs:    each waiter spins on its own queue node; the release writes the
//           successor's node only: one line transfer whatever the queue
//           length (kernel/locking/qspinlock.c, mcs_spinlock.h).
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
    buf_[(head_ + size_) % buf_.size()] = w;
    ++size_;
  }
  Waiter pop() {
    Waiter w = buf_[head_];
    head_ = (head_ + 1) % buf_.size();
    --size_;
    return w;
  }

 private:
  void grow() {
    std::vector<Waiter> nb(buf_.empty() ? 8 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) nb[i] = buf_[(head_ + i) % buf_.size()];
    buf_.swap(nb);
    head_ = 0;
  }
  std::vector<Waiter> buf_;
  std::size_t head_ = 0, size_ = 0;
};

// Common state of FIFO spinlocks: one holder, a queue, the lock word's line.
class FifoSpinlock : public Lock {
 public:
  explicit FifoSpinlock(const Topology& topo) : topo_(&topo) {}

  bool acquire(int cpu, Time now, LockMode mode, Time& granted_at) override;
  void release(int cpu, Time now, LockMode mode, std::vector<Grant>& woken) override;
  const char* wait_symbol() const override { return "_raw_spin_lock"; }

  int holder() const { return holder_; }
  std::size_t waiters() const { return waiters_.size(); }

 protected:
  // Time from the release at `now` to `next` owning the lock, with
  // `waiting` CPUs queued (including `next`).
  virtual Duration handoff_cost(int releaser, int next, std::size_t waiting) const = 0;

  const Topology* topo_;

 private:
  int holder_ = -1;
  Time hold_start_{};
  WaiterQueue waiters_;
  CacheLine line_;
};

class TicketSpinlock final : public FifoSpinlock {
 public:
  using FifoSpinlock::FifoSpinlock;
  const char* kind() const override { return "ticket"; }

 protected:
  // transfer + (k-1)/2 further transfers: the expected position of the
  // next ticket among k re-reads of the line.
  Duration handoff_cost(int releaser, int next, std::size_t waiting) const override {
    Duration t = topo_->transfer(releaser, next);
    return t + t * static_cast<std::int64_t>(waiting - 1) / 2;
  }
};

class McsSpinlock final : public FifoSpinlock {
 public:
  using FifoSpinlock::FifoSpinlock;
  const char* kind() const override { return "mcs"; }

 protected:
  Duration handoff_cost(int releaser, int next, std::size_t) const override {
    return topo_->transfer(releaser, next);
  }
};

}  // namespace vfssim::models
