// CPU time per instruction inside the measurement window, and the
// perf-style profile made of it: one entry per (call chain, object), the
// way `perf report --children` folds samples by chain. Time charged here is
// CPU time: a spinning or cache-missing CPU is busy; a sleeping one is not
// charged (the interpreter does not call charge() for it).
#pragma once

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
  explicit CpuTimeProfile(std::size_t instructions) : time_ps_(instructions + 1, 0) {}

  void charge(std::uint32_t pc, Duration d) { time_ps_[pc] += d.count(); }
  // RCU callbacks run in softirq, outside the code path: one bucket.
  void charge_callbacks(Duration d) { time_ps_.back() += d.count(); }
  void reset() { std::fill(time_ps_.begin(), time_ps_.end(), 0); }

  // Entries by CPU time, largest first (ties in chain order).
  std::vector<ProfileEntry> entries(const Program& program) const;

 private:
  std::vector<std::int64_t> time_ps_;  // per instruction, and last: RCU callbacks
};

}  // namespace vfssim::models
