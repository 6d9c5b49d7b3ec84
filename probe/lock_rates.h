// `vfssim probe`: (c) real locks: the calibrated critical-section and think loops, and
// the acquisitions per second of the spinlocks of locks.h against threads (probe.h, docs/probe.md).
#pragma once

#include <cstdint>
#include <vector>

#include "probe/common.h"

namespace vfssim::probe {

struct Loops {
  double ns_per_iter = 0;               // of busy()
  std::uint64_t think_iters = 0, cs_iters = 0;
  Stat think, cs;                       // ns per call, on one thread
  std::uint64_t think_calls = 0, cs_calls = 0;
};

struct LockPoint {
  int threads = 0;
  Stat rate;  // acquisitions per second, all threads
  std::uint64_t acquisitions = 0, counter = 0;
};

Loops calibrate_loops(int cpu, double budget_ns);

// The think loop on every CPU at once (nothing shared): per-call time,
// median over the threads of each one's median; the range over threads in
// lo/hi. Slower than on one thread when CPUs share a core (SMT, also a host's
// SMT siblings under a hypervisor) or a power budget.
Stat parallel_think(const std::vector<int>& cpus, double budget_ns, const Loops& loops);

// Each thread: acquire; critical section (the protected counter, cs loop);
// release; think loop. The counter must equal the acquisitions.
template <class Lock>
LockPoint lock_point(const std::vector<int>& cpus, double budget_ns, const Loops& loops);

}  // namespace vfssim::probe
