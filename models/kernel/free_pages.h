// A zone's free pages between its watermarks, and the two ways they come
// back: kswapd in the background, direct reclaim in the allocating task
// (mm/page_alloc.c __alloc_pages_nodemask / __alloc_pages_slowpath,
// mm/vmscan.c try_to_free_pages and kswapd's balance_pgdat).
//
//   fast path:      an allocation that leaves the level at or above the low
//                   watermark takes its pages and goes on;
//   direct reclaim: one that would go below it runs the caller's reclaim
//                   code path (shrink the LRU lists, shrink_slab), gives
//                   back what that freed, and then takes its pages;
//   kswapd:         refills at a steady rate while the level is below the
//                   high watermark. Modelled as a fluid evaluated lazily at
//                   each access, so it costs no events (and, a stated
//                   simplification, no CPU time of the tasks).
//
// This is the feedback a fixed reclaim probability lacks: when direct
// reclaim gets slower, allocations per second fall, kswapd covers a larger
// share of them and fewer tasks find the level below the watermark
// (Fengguang Wu's LKP vmstat for the 2014 sb_lock regression showed direct
// reclaims falling by more than throughput did). Levels are pages as
// doubles: kswapd's refill is continuous.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "sim/time.h"

namespace vfssim::models {

struct PoolStats {
  std::uint64_t allocations = 0;      // allocation steps
  std::uint64_t direct_reclaims = 0;  // of which took the slow path (vmstat allocstall)
  double pages_allocated = 0;
  double pages_reclaimed = 0;         // returned by direct reclaim
  double pages_refilled = 0;          // returned by kswapd
  void reset() { *this = PoolStats{}; }
  void merge(const PoolStats& o) {
    allocations += o.allocations;
    direct_reclaims += o.direct_reclaims;
    pages_allocated += o.pages_allocated;
    pages_reclaimed += o.pages_reclaimed;
    pages_refilled += o.pages_refilled;
  }
};

class FreePages {
 public:
  // Starts full, at the high watermark.
  FreePages(double low, double high, double refill_per_second)
      : low_(low), high_(high), rate_per_ps_(refill_per_second * 1e-12), level_(high) {
    if (!(low >= 0 && high >= low && refill_per_second >= 0))
      throw std::invalid_argument("free pages need 0 <= low <= high and a refill rate >= 0");
  }

  // An allocation of `pages` at `now`: true when the fast path takes them;
  // false when the caller must reclaim first (the pool is then unchanged).
  bool try_take(sim::Time now, double pages) {
    refill(now);
    ++stats_.allocations;
    if (level_ - pages >= low_) {
      level_ -= pages;
      stats_.pages_allocated += pages;
      return true;
    }
    ++stats_.direct_reclaims;
    return false;
  }

  // Direct reclaim finished at `now`: `freed` pages come back, then the
  // allocation that entered reclaim takes its `pages`. With freed >= pages
  // (the loader insists) the level never goes below zero.
  void reclaimed(sim::Time now, double freed, double pages) {
    refill(now);
    level_ += freed - pages;
    stats_.pages_reclaimed += freed;
    stats_.pages_allocated += pages;
    if (level_ < 0) throw std::logic_error("free pages went below zero");
  }

  double level(sim::Time now) {
    refill(now);
    return level_;
  }
  double low() const { return low_; }
  double high() const { return high_; }
  const PoolStats& stats() const { return stats_; }
  void reset_stats() { stats_.reset(); }

 private:
  // kswapd's work since the last access: the rate times the time spent
  // below the high watermark (the level only falls at accesses, so between
  // two of them it rises until it reaches high and stays there).
  void refill(sim::Time now) {
    if (now < last_) throw std::logic_error("free pages accessed out of time order");
    const double room = high_ - level_;
    if (room > 0) {
      const double added = std::min(room, rate_per_ps_ * static_cast<double>((now - last_).count()));
      level_ += added;
      stats_.pages_refilled += added;
    }
    last_ = now;
  }

  double low_, high_;
  double rate_per_ps_;
  double level_;
  sim::Time last_{};
  PoolStats stats_;
};

}  // namespace vfssim::models
