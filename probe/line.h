// `vfssim probe`: (b) one contended line: fetch_add throughput against the number of
// threads; and the rates over time windows the line and the locks share (probe.h, docs/probe.md).
#pragma once

#include <cstdint>
#include <vector>

#include "probe/common.h"

namespace vfssim::probe {

// One thread's (time, count, its CPU time) at each window boundary.
struct Mark {
  double t;
  std::uint64_t c;
  double cpu;
};

struct Contended {
  int threads = 0;
  Stat rate;  // fetch_adds per second, all threads
  std::uint64_t ops = 0;
  std::uint64_t visits = 0;  // runs of consecutive fetch_adds by one thread (the line's visits)
};

// Boundaries: a tenth of the budget of warm-up, then kRateBatches windows.
std::vector<double> windows(double start, double budget_ns);

// Total rate (per second, all threads) in each window: the sum of the
// threads' own rates between their marks; a window is as disturbed as its
// most disturbed thread; median over the least disturbed windows.
Stat total_rate(const std::vector<std::vector<Mark>>& marks);

Contended contended_line(const std::vector<int>& cpus, double budget_ns);

}  // namespace vfssim::probe
