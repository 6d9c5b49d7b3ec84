// `vfssim probe`: (a) the machine's topology: local costs (local_hit, local_atomic,
// caches, an LLC hit), the CAS ping-pong matrix, and the machine model
// (levels, links) built from the CPUs' ids (probe.h, docs/probe.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "probe/common.h"

namespace vfssim::probe {

struct LocalCosts {
  int cpu = 0;
  Stat hit, cas, fadd;  // ns per op
  std::uint64_t hit_ops = 0, cas_ops = 0, fadd_ops = 0;  // ops per batch
};

// The caches of a CPU from sysfs (bytes; 0: unknown).
struct Caches {
  long l2 = 0, l3 = 0;
  std::string l3_shared;  // CPUs sharing its L3 (shared_cpu_list)
};

// Dependent loads over a random cyclic ring of `bytes` (one pointer per
// 64-byte line, Sattolo's permutation, so no prefetcher guesses the next):
// sized between the L2 and the L3, every load is an L3 hit.
struct LlcHit {
  Stat load;  // ns per load
  std::size_t bytes = 0;
  std::uint64_t loads = 0;  // per batch
};

struct Pair {
  Stat handoff;             // ns: round trip / 2
  std::uint64_t rounds = 0; // round trips per batch
};

struct Model {
  std::vector<std::string> level_names;  // outermost first; the last is the thread
  std::vector<int> counts;               // children per element of the level above
  std::vector<int> os;                   // model CPU -> OS CPU
  std::map<int, int> index;              // OS CPU -> model CPU
  std::vector<std::vector<int>> keys;    // model CPU -> its element id at each level
  bool uniform = true;
  std::string why_flat;
  int numa_level = 0, core_level = 0;
  bool sysfs = true;
  int nodes = 1;

  // The level at which a and b share their deepest element; -1: none.
  int shared(int a, int b) const {
    int s = -1;
    for (std::size_t l = 0; l + 1 < level_names.size(); ++l) {
      if (keys[static_cast<std::size_t>(a)][l] != keys[static_cast<std::size_t>(b)][l]) break;
      s = static_cast<int>(l);
    }
    return s;
  }
};

LocalCosts measure_local(int cpu, double budget_ns);

Caches read_caches(int cpu);

LlcHit measure_llc(int cpu, std::size_t bytes, double budget_ns);

// The thread on `a` waits for 2k and CASes it to 2k+1, the thread on `b`
// waits for 2k+1 and CASes it to 2k+2. Both wait by retrying the CAS (as
// nviennot/core-to-core-latency does), so every step is one RMW on a line
// the other CPU holds: what the simulator charges transfer + local_atomic.
Pair pingpong(int a, int b, double budget_ns);

Model build_model(const std::vector<int>& cpus);

}  // namespace vfssim::probe
