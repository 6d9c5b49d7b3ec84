// A lock that is not there: the what-if "remove this lock" of a design
// review (`vfssim compare`, `vfssim run --next-bottleneck`).
//
// It grants at `now` at no cost, keeps no queue and never hands over, so
// two CPUs may "hold" it at once. Scenario files cannot declare it (the
// loader accepts only lock_kinds()); experiment code makes a lock free by
// setting a PointSpec's `free_locks`, which gives the lock kind "free" in
// a copy of the strategy. The executor treats acquire and release of a
// free lock as no-ops (no event, no time, no mutual-exclusion check), so
// this model is only reached through lockref's fast path (held(): never).
#pragma once

#include <vector>

#include "models/kernel/lock.h"

namespace vfssim::models {

class FreeLock final : public Lock {
 public:
  static constexpr const char* kKind = "free";

  std::optional<Time> acquire(int, Time now, LockMode) {
    ++stats_.acquisitions;
    return now;
  }
  Released release(int, Time now, LockMode) { return {now}; }
  bool held() const { return false; }
  CmpxchgOutcome cmpxchg_word(int, Time now, const CmpxchgLoop&) { return {now}; }
};

}  // namespace vfssim::models
