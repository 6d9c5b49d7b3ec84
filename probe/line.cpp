// `vfssim probe`: (b) one contended line: fetch_add throughput against the number of
// threads; and the rates over time windows the line and the locks share.
#include "probe/line.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>


#include "probe/locks.h"

namespace vfssim::probe {

namespace fs = std::filesystem;

// --------------------------------------------------- rates over time windows

// Boundaries: a tenth of the budget of warm-up, then kRateBatches windows.
std::vector<double> windows(double start, double budget_ns) {
  std::vector<double> b;
  const double warm = budget_ns * 0.1, w = budget_ns * 0.9 / kRateBatches;
  for (int i = 0; i <= kRateBatches; ++i) b.push_back(start + warm + i * w);
  return b;
}

// Total rate (per second, all threads) in each window: the sum of the
// threads' own rates between their marks; a window is as disturbed as its
// most disturbed thread; median over the least disturbed windows.
Stat total_rate(const std::vector<std::vector<Mark>>& marks) {
  std::vector<double> per_window, loss;
  for (int w = 0; w < kRateBatches; ++w) {
    double sum = 0, worst = 0;
    for (const auto& m : marks) {
      if (m.size() < static_cast<std::size_t>(w) + 2) throw Failure("a measuring thread stopped early");
      const double dt = m[w + 1].t - m[w].t;
      if (dt > 0) sum += static_cast<double>(m[w + 1].c - m[w].c) / dt * 1e9;
      worst = std::max(worst, lost(dt, m[w + 1].cpu - m[w].cpu));
    }
    per_window.push_back(sum);
    loss.push_back(worst);
  }
  return robust_stat(per_window, loss);
}

// ------------------------------------------------- (b) one contended line

Contended contended_line(const std::vector<int>& cpus, double budget_ns) {
  const std::size_t n = cpus.size();
  auto line = std::make_unique<Line>();
  std::vector<std::vector<Mark>> marks(n);
  std::vector<std::uint64_t> counts(n), visits(n);
  run_pinned(cpus, [&](int k, double start) {
    const auto bounds = windows(start, budget_ns);
    auto& m = marks[static_cast<std::size_t>(k)];
    std::uint64_t c = 0, runs = 0, prev = kStop - 1;
    std::size_t next = 0;
    for (;;) {
      // A fetch_add that does not return this thread's last value + 1
      // found the line moved on: another thread's ops came between.
      for (int i = 0; i < 32; ++i) {
        const std::uint64_t old = line->v.fetch_add(1);
        runs += old != prev + 1;
        prev = old;
      }
      c += 32;
      const double t = now_ns();
      if (t >= bounds[next]) {
        m.push_back({t, c, thread_cpu_ns()});
        if (++next == bounds.size()) break;
      }
    }
    counts[static_cast<std::size_t>(k)] = c;
    visits[static_cast<std::size_t>(k)] = runs;
  });
  Contended r;
  r.threads = static_cast<int>(n);
  for (auto c : counts) r.ops += c;
  for (auto v : visits) r.visits += v;
  if (line->v.load() != r.ops)
    throw Failure("contended line: the counter is " + std::to_string(line->v.load()) + " after " +
                  std::to_string(r.ops) + " fetch_adds");
  r.rate = total_rate(marks);
  return r;
}

}  // namespace vfssim::probe
