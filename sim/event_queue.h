// The pending-event set: the earliest events in a short sorted array, the
// others in a 4-ary min-heap, ordered on (time, priority, sequence).
//
// Order is total: two events at the same picosecond run by priority, then
// by the order they were scheduled, so a replay is exact. (time, order) is
// packed into one 128-bit key, compared once (no data-dependent branch of
// a two-field compare).
//
// A lock simulation keeps about one pending event per CPU that is not
// waiting (a waiter schedules nothing): at saturation a handful, however
// many CPUs. Up to kNear of the earliest sit in `near_`, sorted latest
// first: the next event is its last entry (a pop is a decrement, no sift),
// and an insertion scans from the soon end, where most new events (a hold,
// a handoff) land. Every near event runs before every heap event, so the
// heap is touched only when more than kNear events are pending: then a
// push later than all near events goes straight to the heap, and once the
// near events are spent pops come from the heap (4-ary: half the levels of
// a binary heap; its four children share a cache line pair). The sequence
// of events is the same whatever sits where: only the speed changes.
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

// (time, order) as one unsigned 128-bit key ordered as runs_before: the
// time's sign bit flipped (a signed picosecond count), then the order.
inline unsigned __int128 time_order_key(Time time, std::uint64_t order) {
  const auto t = static_cast<std::uint64_t>(time.time_since_epoch().count()) ^ (std::uint64_t{1} << 63);
  return static_cast<unsigned __int128>(t) << 64 | order;
}
inline unsigned __int128 event_key(const Event& e) { return time_order_key(e.time, e.order); }

inline bool runs_before(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time < b.time;
  return a.order < b.order;
}

class EventQueue {
 public:
  bool empty() const { return near_n_ == 0 && heap_.empty(); }
  std::size_t size() const { return heap_.size() + near_n_; }

  // The event that runs next (the queue is not empty).
  Event top() const { return event_of(near_n_ ? near_[near_n_ - 1] : heap_.front()); }
  Time next_time() const { return time_of(near_n_ ? near_[near_n_ - 1].key : heap_.front().key); }

  // Inlined into the handlers that schedule: a call's prologue and
  // epilogue cost as much as a short insertion.
  [[gnu::always_inline]] void push(const Event& e) {
    const unsigned __int128 key = event_key(e);
    if (near_n_ < kNear) {
      if (heap_.empty() || key < heap_.front().key) near_insert(key, e);
      else heap_push(key, e);
      return;
    }
    if (near_[0].key < key) {  // later than every near event
      heap_push(key, e);
      return;
    }
    const Node latest = near_[0];  // makes room
    std::size_t i = 1;
    while (i < kNear && key < near_[i].key) {
      near_[i - 1] = near_[i];
      ++i;
    }
    put(near_[i - 1], key, e);
    heap_push(latest.key, latest);
  }

  Event pop() {
    if (near_n_) return event_of(near_[--near_n_]);
    const Event out = event_of(heap_.front());
    const Node last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return out;
  }

  // Takes the next event into `out` if there is one at or before `end`
  // (one look at where it sits, for the engine loop); false otherwise, and
  // nothing is taken.
  [[gnu::always_inline]] bool pop_until(Time end, Event& out) {
    const unsigned __int128 limit = time_order_key(end, ~std::uint64_t{0});  // the last key at `end`
    if (near_n_) {
      const Node& n = near_[near_n_ - 1];
      if (limit < n.key) return false;
      out = event_of(n);
      --near_n_;
      return true;
    }
    if (heap_.empty() || limit < heap_.front().key) return false;
    out = pop();
    return true;
  }

  void clear() {
    heap_.clear();
    near_n_ = 0;
  }

 private:
  static constexpr std::size_t kArity = 4;
  static constexpr std::size_t kNear = 16;

  // An event with its (time, order) packed into one unsigned 128-bit key
  // ordered as runs_before (event_key): one compare, computed once.
  struct Node {
    unsigned __int128 key;
    std::uint32_t target, kind;
    std::uint64_t arg;
  };
  static Time time_of(unsigned __int128 key) {
    return Time{Duration{static_cast<std::int64_t>(static_cast<std::uint64_t>(key >> 64) ^ (std::uint64_t{1} << 63))}};
  }
  static Event event_of(const Node& n) {
    return Event{time_of(n.key), static_cast<std::uint64_t>(n.key), n.target, n.kind, n.arg};
  }
  // Writes the node field by field (a node assembled on the stack and
  // copied whole is a store-forwarding stall on every push).
  template <class E>
  static void put(Node& dst, unsigned __int128 key, const E& e) {
    dst.key = key;
    dst.target = e.target;
    dst.kind = e.kind;
    dst.arg = e.arg;
  }

  // Into the near events (not full), kept in order from the back.
  [[gnu::always_inline]] void near_insert(unsigned __int128 key, const Event& e) {
    std::size_t i = near_n_;
    while (i > 0 && near_[i - 1].key < key) {
      near_[i] = near_[i - 1];
      --i;
    }
    put(near_[i], key, e);
    ++near_n_;
  }

  template <class E>
  void heap_push(unsigned __int128 key, const E& e) {
    std::size_t i = heap_.size();
    heap_.emplace_back();
    Node* h = heap_.data();
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(key < h[parent].key)) break;
      h[i] = h[parent];
      i = parent;
    }
    put(h[i], key, e);
  }

  // Places `e` (the old last element) starting from the root.
  void sift_down(const Node& e) {
    const std::size_t n = heap_.size();
    Node* h = heap_.data();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) best = h[c].key < h[best].key ? c : best;
      if (!(h[best].key < e.key)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = e;
  }

  // The earliest events, at most kNear, sorted latest first (the next
  // event is the last); every one of them runs before any in the heap.
  Node near_[kNear];
  std::size_t near_n_ = 0;
  std::vector<Node> heap_;  // the later ones: a 4-ary min-heap
};

}  // namespace vfssim::sim
