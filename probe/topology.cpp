// `vfssim probe`: (a) the machine's topology: local costs (local_hit, local_atomic,
// caches, an LLC hit), the CAS ping-pong matrix, and the machine model
// (levels, links) built from the CPUs' ids.
#include "probe/topology.h"

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

// ---------------------------------------------------------------- local costs

namespace {

struct alignas(kLine) Ring {
  void* p[kLine / sizeof(void*)];
};

constexpr int kChase = 16;  // dependent loads per loop iteration

}  // namespace

LocalCosts measure_local(int cpu, double budget_ns) {
  LocalCosts r;
  r.cpu = cpu;
  run_pinned({cpu}, [&](int, double) {
    auto ring = std::make_unique<Ring>();
    for (auto& p : ring->p) p = &ring->p[0];  // every slot points at the first: a self loop
    void* volatile sink = nullptr;
    r.hit = per_op(
        [&](std::uint64_t n) {
          void* p = ring->p[0];
          for (std::uint64_t i = 0; i < n; ++i)
            for (int k = 0; k < kChase; ++k) p = *static_cast<void* volatile*>(p);
          sink = p;
        },
        budget_ns / 3, kLocalBatches, &r.hit_ops);
    r.hit.median /= kChase;
    r.hit.lo /= kChase;
    r.hit.hi /= kChase;
    r.hit_ops *= kChase;
    (void)sink;
    auto line = std::make_unique<Line>();
    r.cas = per_op(
        [&](std::uint64_t n) {
          std::uint64_t v = line->v.load(std::memory_order_relaxed);
          for (std::uint64_t i = 0; i < n; ++i, ++v) {
            std::uint64_t e = v;
            line->v.compare_exchange_strong(e, v + 1);
          }
        },
        budget_ns / 3, kLocalBatches, &r.cas_ops);
    r.fadd = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) line->v.fetch_add(1);
        },
        budget_ns / 3, kLocalBatches, &r.fadd_ops);
  });
  return r;
}

Caches read_caches(int cpu) {
  Caches c;
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
  for (int i = 0; i < 16; ++i) {
    const std::string idx = dir + "/index" + std::to_string(i);
    int level = 0;
    if (!read_int(idx + "/level", level)) continue;
    std::string type, size, shared;
    std::ifstream(idx + "/type") >> type;
    std::ifstream(idx + "/size") >> size;
    std::ifstream(idx + "/shared_cpu_list") >> shared;
    if (type == "Instruction" || size.empty()) continue;
    long v = 0;
    std::size_t used = 0;
    try {
      v = std::stol(size, &used);
    } catch (...) {
      continue;
    }
    const char unit = used < size.size() ? size[used] : 'B';
    v *= unit == 'K' ? 1024L : unit == 'M' ? 1024L * 1024 : unit == 'G' ? 1024L * 1024 * 1024 : 1;
    if (level == 2) c.l2 = v;
    if (level == 3) {
      c.l3 = v;
      c.l3_shared = shared;
    }
  }
  return c;
}

LlcHit measure_llc(int cpu, std::size_t bytes, double budget_ns) {
  LlcHit r;
  r.bytes = bytes;
  run_pinned({cpu}, [&](int, double) {
    constexpr std::size_t kHuge = 2u << 20;
    const std::size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
    void* mem = std::aligned_alloc(kHuge, size);
    if (!mem) throw Failure("cannot allocate " + std::to_string(size) + " bytes for the L3 ring");
    madvise(mem, size, MADV_HUGEPAGE);  // fewer TLB misses where transparent huge pages are on
    const std::size_t lines = bytes / kLine;
    std::vector<std::size_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = i;
    std::mt19937_64 rng(12345);
    for (std::size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
    auto* base = static_cast<char*>(mem);
    // order is a single cycle: line i points to line order[i].
    for (std::size_t i = 0; i < lines; ++i) *reinterpret_cast<void**>(base + i * kLine) = base + order[i] * kLine;
    void* p = base;
    for (std::size_t i = 0; i < 2 * lines; ++i) p = *static_cast<void* volatile*>(p);  // warm the L3
    r.load = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) p = *static_cast<void* volatile*>(p);
        },
        budget_ns, kLocalBatches, &r.loads);
    std::free(mem);
  });
  return r;
}

// ------------------------------------------------------- (a) the CAS ping-pong

namespace {

constexpr double kMinRounds = 50;  // round trips per batch, at least

}  // namespace

// The thread on `a` waits for 2k and CASes it to 2k+1, the thread on `b`
// waits for 2k+1 and CASes it to 2k+2. Both wait by retrying the CAS (as
// nviennot/core-to-core-latency does), so every step is one RMW on a line
// the other CPU holds: what the simulator charges transfer + local_atomic.
Pair pingpong(int a, int b, double budget_ns) {
  auto line = std::make_unique<Line>();
  // The batches' plan, on a line of its own: the leader publishes the
  // first batch's round and the rounds per batch, so the follower can note
  // its own CPU time at the same boundaries.
  struct alignas(kLine) Plan {
    std::atomic<std::uint64_t> first{kStop}, per{0};
  };
  auto plan = std::make_unique<Plan>();
  struct Tick {
    double wall, cpu;
  };
  std::vector<Tick> lead, follow;
  lead.reserve(kPairBatches + 1);
  follow.reserve(kPairBatches + 1);
  Pair r;
  int done = 0;  // batches run
  run_pinned({a, b}, [&](int k, double start) {
    auto& v = line->v;
    if (k == 1) {
      std::uint64_t boundary = kStop, per = 0;
      for (std::uint64_t round = 0;; ++round) {
        if (boundary == kStop) {
          boundary = plan->first.load(std::memory_order_acquire);
          if (boundary != kStop) per = plan->per.load(std::memory_order_relaxed);
        }
        if (round >= boundary) {
          follow.push_back({now_ns(), thread_cpu_ns()});
          boundary = follow.size() <= kPairBatches ? boundary + per : kStop - 1;
        }
        const std::uint64_t want = 2 * round + 1;
        std::uint64_t e = want;
        while (!v.compare_exchange_weak(e, want + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
          if (e == kStop) return;
          e = want;
        }
      }
    }
    std::uint64_t round = 0;
    auto rounds = [&](std::uint64_t count) {
      for (const std::uint64_t end = round + count; round < end; ++round) {
        const std::uint64_t want = 2 * round;
        std::uint64_t e = want;
        while (!v.compare_exchange_weak(e, want + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) e = want;
      }
    };
    rounds(200);  // warm up: both threads running, the line in play
    const double t0 = now_ns();
    rounds(500);
    const double rt = std::max((now_ns() - t0) / 500, 1.0);
    r.rounds = static_cast<std::uint64_t>(std::clamp(budget_ns * 0.85 / kPairBatches / rt, kMinRounds, 1e9));
    plan->per.store(r.rounds, std::memory_order_relaxed);
    plan->first.store(round + 50, std::memory_order_release);
    rounds(50);  // the follower sees the plan
    lead.push_back({now_ns(), thread_cpu_ns()});
    // Other tasks on these CPUs slow the batches down: past 1.5 times the
    // budget, stop after the batches run so far (at least 3).
    const double deadline = start + 1.5 * budget_ns;
    for (done = 0; done < kPairBatches; ++done) {
      if (done >= 3 && now_ns() > deadline) break;
      rounds(r.rounds);
      lead.push_back({now_ns(), thread_cpu_ns()});
    }
    while (v.load(std::memory_order_acquire) != 2 * round) cpu_relax();  // the partner's last CAS
    v.store(kStop, std::memory_order_release);
  });
  std::vector<double> batches, loss;
  for (int bt = 0; bt < done; ++bt) {
    const double wall = lead[bt + 1].wall - lead[bt].wall;
    batches.push_back(wall / (2.0 * static_cast<double>(r.rounds)));
    double l = lost(wall, lead[bt + 1].cpu - lead[bt].cpu);
    if (follow.size() > static_cast<std::size_t>(bt) + 1)
      l = std::max(l, lost(follow[bt + 1].wall - follow[bt].wall, follow[bt + 1].cpu - follow[bt].cpu));
    else
      l = 1;  // the follower's boundaries are missing: treat the batch as disturbed
    loss.push_back(l);
  }
  r.handoff = robust_stat(batches, loss);
  return r;
}

// ---------------------------------------------------------- the machine model

namespace {

// Socket > NUMA node (kept only when a socket holds several) > core >
// thread, from sysfs; the CPUs sorted so that every element's CPUs are
// consecutive, as the simulator numbers them. A tree that is not uniform
// (sockets with different numbers of probed cores, ...) cannot be written as
// levels: it becomes one socket of single-thread cores (the matrix still
// gives every pair its cost).
Model build_model_of(std::vector<CpuInfo> info) {
  Model m;
  for (const auto& i : info) m.sysfs = m.sysfs && i.sysfs;
  std::sort(info.begin(), info.end(), [](const CpuInfo& x, const CpuInfo& y) {
    return std::tie(x.package, x.node, x.core, x.os) < std::tie(y.package, y.node, y.core, y.os);
  });
  std::vector<std::vector<int>> tuples;
  for (const auto& i : info) tuples.push_back({i.package, i.node, i.core, i.os});
  std::set<int> node_set;
  for (const auto& i : info) node_set.insert(i.node);
  m.nodes = static_cast<int>(node_set.size());
  const std::vector<std::string> names = {"socket", "node", "core", "thread"};
  // Children per parent at each level; uniform if the same for every parent.
  std::vector<int> counts;
  std::string why;
  for (std::size_t l = 0; l < names.size(); ++l) {
    std::map<std::vector<int>, std::set<std::vector<int>>> children;
    for (const auto& t : tuples)
      children[std::vector<int>(t.begin(), t.begin() + static_cast<long>(l))].insert(
          std::vector<int>(t.begin(), t.begin() + static_cast<long>(l) + 1));
    std::set<std::size_t> sizes;
    for (const auto& [parent, ch] : children) sizes.insert(ch.size());
    if (sizes.size() != 1 && why.empty())
      why = "the probed CPUs' " + names[l] + "s are not spread evenly (" + std::to_string(*sizes.begin()) + " to " +
            std::to_string(*sizes.rbegin()) + " per parent)";
    counts.push_back(static_cast<int>(*sizes.rbegin()));
  }
  std::vector<std::size_t> keep;
  for (std::size_t l = 0; l < names.size(); ++l)
    if (names[l] != "node" || counts[l] > 1) keep.push_back(l);
  for (std::size_t k = 0; k < info.size(); ++k) {
    m.os.push_back(info[k].os);
    m.index[info[k].os] = static_cast<int>(k);
  }
  if (!why.empty()) {
    m.uniform = false;
    m.why_flat = why;
    m.level_names = {"socket", "core", "thread"};
    m.counts = {1, static_cast<int>(info.size()), 1};
    for (std::size_t k = 0; k < info.size(); ++k) m.keys.push_back({0, static_cast<int>(k), 0});
    m.numa_level = 0;
    m.core_level = 1;
    return m;
  }
  for (std::size_t l : keep) {
    m.level_names.push_back(names[l]);
    m.counts.push_back(counts[l]);
  }
  for (const auto& t : tuples) {
    std::vector<int> key;
    for (std::size_t l : keep) {
      // Element id: the rank of the prefix through level l among all CPUs.
      std::set<std::vector<int>> prefixes;
      for (const auto& u : tuples) prefixes.insert(std::vector<int>(u.begin(), u.begin() + static_cast<long>(l) + 1));
      const std::vector<int> mine(t.begin(), t.begin() + static_cast<long>(l) + 1);
      key.push_back(static_cast<int>(std::distance(prefixes.begin(), prefixes.find(mine))));
    }
    m.keys.push_back(key);
  }
  for (std::size_t l = 0; l < m.level_names.size(); ++l) {
    if (m.level_names[l] == "core") m.core_level = static_cast<int>(l);
    if (m.level_names[l] == "node") m.numa_level = static_cast<int>(l);
  }
  return m;
}

}  // namespace

Model build_model(const std::vector<int>& cpus) {
  std::vector<CpuInfo> info;
  for (int c : cpus) info.push_back(read_cpu(c));
  return build_model_of(std::move(info));
}

}  // namespace vfssim::probe
