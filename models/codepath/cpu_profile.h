// CPU time per instruction inside the measurement window, and the
// perf-style profile made of it: one entry per (call chain, object), the
// way `perf report --children` folds samples by chain. Time charged here is
// CPU time: a spinning or cache-missing CPU is busy; a sleeping one is not
// charged (the interpreter does not call charge() for it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/codepath/program.h"

namespace vfssim::models {

struct ProfileEntry {
  std::string symbol;
  std::string chain;   // "sym <- caller <- caller's caller"
  std::string detail;  // the lock or line the step touches, or ""
  Duration time{0};    // CPU time over all CPUs during the window
  // What `detail` is ("lock", "line", "seqcount", or "") and whether this
  // time is spent synchronizing on it (waiting, spinning, moving its line)
  // rather than computing while holding it.
  std::string object_kind;
  bool synchronizing = false;
};

class CpuTimeProfile {
 public:
  // Time is charged by the interval it covers, clipped to the window
  // (begin, end]: a task runs ahead of the clock, and its steps straddle
  // the window's edges, yet one CPU's steps never overlap in time, so the
  // entries of a point add up to at most CPUs x window (shares to at most 1).
  CpuTimeProfile(std::size_t instructions, sim::Time begin, sim::Time end)
      : time_ps_(instructions + 1, 0), fast_ps_(instructions, 0), begin_(begin), end_(end) {}

  void charge(std::uint32_t pc, sim::Time start, Duration d) { time_ps_[pc] += inside(start, d); }
  // An acquisition that found its lock free: shown under the kind's fast
  // path (Program::fast_symbol), else as charge().
  void charge_fast(std::uint32_t pc, sim::Time start, Duration d) { fast_ps_[pc] += inside(start, d); }
  // RCU callbacks run in softirq, outside the code path: one bucket.
  void charge_callbacks(sim::Time start, Duration d) { time_ps_.back() += inside(start, d); }

  // Entries by CPU time, largest first (ties in chain order).
  std::vector<ProfileEntry> entries(const Program& program) const;

 private:
  std::vector<std::int64_t> time_ps_;  // per instruction, and last: RCU callbacks
  std::vector<std::int64_t> fast_ps_;  // per instruction: acquisitions that found the lock free
  sim::Time begin_, end_;
  std::int64_t inside(sim::Time start, Duration d) const {
    const sim::Time from = std::max(start, begin_), to = std::min(start + d, end_);
    return to > from ? (to - from).count() : 0;
  }
};

}  // namespace vfssim::models
