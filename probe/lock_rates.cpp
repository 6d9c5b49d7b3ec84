// `vfssim probe`: (c) real locks: the calibrated critical-section and think loops, and
// the acquisitions per second of the spinlocks of locks.h against threads.
#include "probe/lock_rates.h"

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


#include "probe/line.h"
#include "probe/locks.h"

namespace vfssim::probe {

namespace fs = std::filesystem;

// ------------------------------------------------------------ (c) real locks

namespace {

struct alignas(kLine) Counter {
  std::uint64_t v = 0;
};

}  // namespace

Loops calibrate_loops(int cpu, double budget_ns) {
  Loops l;
  run_pinned({cpu}, [&](int, double) {
    const Stat it = per_op([](std::uint64_t n) { busy(n); }, budget_ns / 3, kLocalBatches);
    l.ns_per_iter = it.median;
    l.think_iters = std::max<std::uint64_t>(1, std::llround(1000 / it.median));
    l.cs_iters = std::max<std::uint64_t>(1, std::llround(200 / it.median));
    l.think = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) busy(l.think_iters);
        },
        budget_ns / 3, kLocalBatches, &l.think_calls);
    auto counter = std::make_unique<Counter>();
    l.cs = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) {
            plain_inc(&counter->v);
            busy(l.cs_iters);
          }
        },
        budget_ns / 3, kLocalBatches, &l.cs_calls);
  });
  return l;
}

// The think loop on every CPU at once (nothing shared): per-call time,
// median over the threads of each one's median; the range over threads in
// lo/hi. Slower than on one thread when CPUs share a core (SMT, also a host's
// SMT siblings under a hypervisor) or a power budget.
Stat parallel_think(const std::vector<int>& cpus, double budget_ns, const Loops& loops) {
  std::vector<double> med(cpus.size());
  run_pinned(cpus, [&](int k, double) {
    med[static_cast<std::size_t>(k)] = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) busy(loops.think_iters);
        },
        budget_ns, kLocalBatches).median;
  });
  return stat_of(med);
}

// Each thread: acquire; critical section (the protected counter, cs loop);
// release; think loop. The counter must equal the acquisitions.
template <class Lock>
LockPoint lock_point(const std::vector<int>& cpus, double budget_ns, const Loops& loops) {
  const std::size_t n = cpus.size();
  auto lock = std::make_unique<Lock>();
  auto counter = std::make_unique<Counter>();
  std::vector<McsNode> nodes(n);
  std::vector<std::vector<Mark>> marks(n);
  std::vector<std::uint64_t> counts(n);
  const std::uint64_t think = loops.think_iters, cs = loops.cs_iters;
  run_pinned(cpus, [&](int k, double start) {
    const auto bounds = windows(start, budget_ns);
    auto& m = marks[static_cast<std::size_t>(k)];
    McsNode& node = nodes[static_cast<std::size_t>(k)];
    std::uint64_t c = 0;
    std::size_t next = 0;
    for (;;) {
      lock->lock(node);
      plain_inc(&counter->v);
      busy(cs);
      lock->unlock(node);
      busy(think);
      if ((++c & 7) == 0) {
        const double t = now_ns();
        if (t >= bounds[next]) {
          m.push_back({t, c, thread_cpu_ns()});
          if (++next == bounds.size()) break;
        }
      }
    }
    counts[static_cast<std::size_t>(k)] = c;
  });
  LockPoint r;
  r.threads = static_cast<int>(n);
  for (auto c : counts) r.acquisitions += c;
  r.counter = counter->v;
  r.rate = total_rate(marks);
  return r;
}

// The kinds measure() runs.
template LockPoint lock_point<TasLock>(const std::vector<int>& cpus, double budget_ns, const Loops& loops);
template LockPoint lock_point<TicketLock>(const std::vector<int>& cpus, double budget_ns, const Loops& loops);
template LockPoint lock_point<McsLock>(const std::vector<int>& cpus, double budget_ns, const Loops& loops);

}  // namespace vfssim::probe
