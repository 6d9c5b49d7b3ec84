// The yardstick of `vfssim bench`: the bench's MCS point written by hand as
// a single-purpose discrete-event loop, with none of the engine's
// generality (no interpreter, no lock interface, no checker, no lock_stat,
// no profile). The engine's mcs point is compared with it in the same run
// (cli/bench.cpp, scripts/bench.py: issue 12, item 7).
#pragma once

#include <cstdint>

namespace vfssim::bench {

struct HandwrittenResult {
  std::uint64_t acquisitions = 0;  // lock hold intervals ended in the window (warmup, end]
  std::uint64_t events = 0;        // events run at or after the warm-up's end
  double sim_seconds = 0;          // the window's length
  double wall_seconds = 0;         // the whole run, set-up included
  double cpu_seconds = 0;          // the same, this thread's CPU time
  double sim_acquisitions_per_sec() const { return sim_seconds > 0 ? acquisitions / sim_seconds : 0; }
  double acquisitions_per_wall_sec() const { return wall_seconds > 0 ? acquisitions / wall_seconds : 0; }
  double events_per_sec() const { return wall_seconds > 0 ? events / wall_seconds : 0; }
};

// `cpus` tasks, each looping: think (exponential, mean 2 us), take one MCS
// lock, hold it 200 ns, release. A free lock costs the taker an atomic on
// the lock word (100 ns), plus a 100 ns transfer when another CPU had the
// word last; a release with waiters hands the lock to the queue's head
// after one 100 ns transfer. Tasks start uniformly in the first
// microsecond; the window is (warmup, warmup + window], in picoseconds.
HandwrittenResult run_handwritten_mcs(int cpus, std::int64_t warmup_ps, std::int64_t window_ps,
                                      std::uint64_t seed = 1);

}  // namespace vfssim::bench
