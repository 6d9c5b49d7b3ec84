// The pending-event set: a 4-ary min-heap on (time, priority, sequence).
//
// Order is total: two events at the same picosecond run by priority, then
// by the order they were scheduled, so a replay is exact. A 4-ary heap does
// half the levels of a binary one and its four children share a cache line
// pair; with the few hundred to few thousand pending events of a lock
// simulation (about one per simulated CPU) it beat a binary heap and a
// calendar queue in bench/ (see docs/performance.md).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace vfssim::sim {

struct Event {
  Time time;
  // priority (high 8 bits) and insertion sequence (low 56 bits) packed into
  // one key: lower runs first.
  std::uint64_t order;
  std::uint32_t target;  // handler id, as registered with the Simulation
  std::uint32_t kind;    // meaning is the target's
  std::uint64_t arg;     // meaning is the target's

  std::uint8_t priority() const { return static_cast<std::uint8_t>(order >> 56); }
  std::uint64_t sequence() const { return order & ((std::uint64_t{1} << 56) - 1); }
};

inline bool runs_before(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time < b.time;
  return a.order < b.order;
}

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(const Event& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }

  Event pop() {
    Event out = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return out;
  }

  void clear() { heap_.clear(); }

 private:
  static constexpr std::size_t kArity = 4;

  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / kArity;
      if (!runs_before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Places `e` (the old last element) starting from the root.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (runs_before(heap_[c], heap_[best])) best = c;
      if (!runs_before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
};

}  // namespace vfssim::sim
