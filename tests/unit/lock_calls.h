// The lock interface (models/kernel/lock.h) in the shape of the exact-time
// tests: acquire says whether the caller got the lock, and when in
// `granted_at`; release appends every grant of the release, in order, to
// `woken` (release_all) and returns when the releaser goes on.
#pragma once

#include <vector>

#include "models/kernel/lock.h"

namespace vfssim::testing {

template <class L>
bool acquire(L& lock, int cpu, sim::Time now, models::LockMode mode, sim::Time& granted_at) {
  const auto g = lock.acquire(cpu, now, mode);
  if (g) granted_at = *g;
  return g.has_value();
}

template <class L>
sim::Time release(L& lock, int cpu, sim::Time now, models::LockMode mode, std::vector<models::Grant>& woken) {
  return models::release_all(lock, cpu, now, mode, woken);
}

}  // namespace vfssim::testing
