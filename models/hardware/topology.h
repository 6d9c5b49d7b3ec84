// Machine topology: hardware threads grouped into cores, chips, sockets...
// and an interconnect between the outermost groups.
//
// Inside an outermost element the machine is a tree: two hardware threads
// whose nearest shared element is at `level` pay `levels[level].transfer`
// to move a modified line. Between outermost elements the interconnect
// (QPI/UPI links, POWER MCM/book links) is a Boost.Graph whose shortest
// paths (Dijkstra, all pairs) give the hop counts: not every machine is
// fully connected (8-socket Nehalem-EX and the 8-die Opteron are 2 hops
// across). The
// all-pairs matrix is computed once and every model reads it in O(1).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"

namespace vfssim::models {

using sim::Duration;

struct TopologyLevel {
  std::string name;  // "socket", "core", "thread", ...
  int count = 1;     // children per element of the level above (or total, for the first)
  // Cost of a cache-line transfer between two hardware threads whose
  // nearest shared element is at this level. Unused for the outermost
  // level when it has no common parent (the interconnect decides).
  Duration transfer{0};
};

struct InterconnectLink {
  int a = 0, b = 0;  // indices of outermost elements
};

// How the machine keeps one cache line coherent when several CPUs want it
// (models/hardware/cache_line.h applies it):
//   pairwise:  every request costs its pair's transfer, whatever is queued
//              (machines without a `coherence:` block; the model before
//              coherence kinds, and the flat machine of the oracle tests)
//   directory: an inclusive LLC or snoop filter answers for its socket
//              (Intel since Nehalem-EP inside a socket, with a directory or
//              snoop filter between sockets): a line already in a socket is
//              re-read there at `reread` each; one fetch per other socket
//   broadcast: every miss is a probe answered by the line's home in turn
//              (Opteron, Nehalem-EX/Westmere-EX): every spinner's re-read is
//              its own transfer, and a store to a shared line broadcasts its
//              invalidation (`shared_store`)
enum class CoherenceKind { kPairwise, kDirectory, kBroadcast };
const char* to_string(CoherenceKind k);

struct Coherence {
  CoherenceKind kind = CoherenceKind::kPairwise;
  // An RMW that queues behind another request to the line, from a CPU of
  // the socket the line is in, costs at least this (the measured per-op
  // time of one line's atomic counter hammered inside a socket).
  Duration contended_rmw{0};
  // A queued RMW from another socket than the line's costs at most this:
  // under contention a line serves a run of requests inside one socket
  // before it crosses, so the mean per-op time across sockets stays well
  // below a remote transfer (SOSP'13 Figure 4: 2.2-2.4x the in-socket time
  // on 2 to 8 sockets of Westmere-EX). 0: the pair's transfer.
  Duration contended_rmw_remote{0};
  // directory: the home's time per re-read of a line its socket holds.
  Duration reread{0};
  // What a spinner's re-read of a shared line costs the line's home, given
  // what the transfer between the two CPUs would: on a directory machine,
  // inside the line's socket, an LLC re-read (or the transfer where that is
  // less: SMT siblings share an L1); elsewhere the transfer.
  Duration reread_of(Duration transfer, bool same_socket) const {
    return kind == CoherenceKind::kDirectory && same_socket && reread < transfer ? reread : transfer;
  }
  // broadcast: a store or RMW to a line other CPUs share costs at least
  // this: the invalidation broadcast (SOSP'13 Table 2 "store, Shared").
  Duration shared_store{0};
  // Line retention: a core that holds a line answers a snoop for it only
  // after a short hold-off, so an RMW or store it issues while the line
  // is still on its way out (the next request's transfer has not
  // completed) and within `retention_window` of its previous one on the
  // line completes there at its own cost, up to `retention_ops` per visit
  // (the visit's first access included). SOSP'13 5.4 paces its threads to
  // stop such "long runs"; `vfssim probe` counts ops per visit (cache_line.h).
  // 0 ops: no retention (every request queued behind another pays its way).
  int retention_ops = 0;
  Duration retention_window{0};
};

struct TopologySpec {
  std::string name;
  std::string description;
  std::vector<TopologyLevel> levels;  // outermost first; the last is the hardware thread
  // Interconnect between the outermost elements. When `links` is empty the
  // outermost elements are fully connected. A transfer between two of them
  // costs `cross_base` plus `hop` per link on the shortest path.
  std::vector<InterconnectLink> links;
  Duration cross_base{0};
  Duration hop{0};
  // Level whose elements are NUMA nodes (index into levels).
  int numa_level = 0;
  // Level whose elements are physical cores (SMT siblings share one).
  int core_level = 0;
  Duration local_hit{1000};     // load of a line this CPU already holds
  Duration local_atomic{10000};  // atomic RMW on a line held exclusively here
  // What one cpu_relax() costs (x86 PAUSE): a `relax: true` cmpxchg loop
  // pauses this long after a failed try. 0: not given (such loops refused).
  Duration pause{0};
  // The scheduler on this machine, for sleeping locks (wake_latency.h):
  // the wake-to-run latency of a task whose CPU went idle (try_to_wake_up,
  // the IPI, the idle state's exit, the switch in), and the time a task
  // takes to get off its CPU once it decided to sleep (schedule() to the
  // idle loop): a wake-up inside that window finds it still there. 0: not
  // given (a sleeping lock then needs its own `wake:`).
  Duration wake_latency{0};
  Duration context_switch{0};
  // Extra cost of a store or RMW per other CPU sharing the line (invalidations).
  Duration invalidate_per_sharer{0};
  // Throughput of a core with all its hardware threads busy, relative to
  // one thread alone (SMT yield, e.g. 1.25); 0: not given, siblings do not
  // slow each other. See compute_slowdown().
  double smt_throughput = 0;
  // Optional measured CPU-to-CPU transfer matrix, row-major, cpus x cpus
  // (replaces the graph's shortest paths when given).
  std::vector<Duration> measured_matrix;
  Coherence coherence;
};

enum class Placement { kCompact, kSpread, kSmtLast };

const char* to_string(Placement p);

class Topology {
 public:
  // The largest machine: the cost matrix is kMaxCpus^2 int64 (128 MiB).
  static constexpr int kMaxCpus = 4096;

  explicit Topology(TopologySpec spec);

  const TopologySpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  int num_cpus() const { return num_cpus_; }
  int num_cores() const { return num_elements(spec_.core_level); }
  int num_nodes() const { return num_elements(spec_.numa_level); }

  // Cost of moving a modified line from `from` to `to`; local_hit if equal.
  Duration transfer(int from, int to) const {
    return has_measured_ ? Duration{measured_(from, to)} : level_transfer(from, to);
  }
  Duration local_hit() const { return spec_.local_hit; }
  Duration local_atomic() const { return spec_.local_atomic; }
  Duration pause() const { return spec_.pause; }
  Duration wake_latency() const { return spec_.wake_latency; }
  Duration context_switch() const { return spec_.context_switch; }
  Duration invalidate_per_sharer() const { return spec_.invalidate_per_sharer; }
  const Coherence& coherence() const { return spec_.coherence; }
  // Whether two CPUs sit in one outermost element (socket, package).
  bool same_socket(int a, int b) const { return element_of(a, 0) == element_of(b, 0); }

  // How much longer a compute step takes on a hardware thread whose core
  // runs `busy` threads (1 = alone): the core's throughput grows linearly
  // from 1 (one thread) to smt_throughput (all threads), shared equally,
  // so each thread runs at that throughput / busy. 1 when alone or when
  // the machine gives no smt_throughput.
  double compute_slowdown(int busy) const;
  // Index of the element at `level` that contains `cpu`.
  int element_of(int cpu, int level) const {
    return element_[static_cast<std::size_t>(level) * static_cast<std::size_t>(num_cpus_) + static_cast<std::size_t>(cpu)];
  }
  int node_of(int cpu) const { return element_of(cpu, spec_.numa_level); }
  int core_of(int cpu) const { return element_of(cpu, spec_.core_level); }
  int num_elements(int level) const;

  // The first `n` CPUs in the order a placement policy fills them.
  // compact: thread order (SMT siblings first); spread: round-robin over
  // NUMA nodes, one thread per core before siblings; smt-last: every core's
  // first thread in order, then the siblings.
  std::vector<int> place(int n, Placement p) const;

  // The all-pairs matrix of transfer() (built on demand: tests, printers).
  Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic> cost_matrix_ps() const;

 private:
  TopologySpec spec_;
  int num_cpus_ = 0;
  std::vector<int> per_level_total_;  // elements at each level
  std::vector<int> cpus_per_element_;  // hardware threads in one element of each level
  // element_of(cpu, level) for every pair, level-major: a load where a
  // division was (the hottest question of a lock model's handoff).
  std::vector<int> element_;
  bool has_measured_ = false;
  int inner_levels_ = 0;                // levels.size() - 1: the levels a pair may share an element of
  std::vector<Duration> level_cost_;    // levels[l].transfer
  Duration level_transfer(int from, int to) const {
    if (from == to) return spec_.local_hit;
    // Deepest level at which both CPUs share an element.
    int shared = -1;
    for (int lv = 0; lv < inner_levels_; ++lv) {
      if (element_of(from, lv) != element_of(to, lv)) break;
      shared = lv;
    }
    if (shared >= 0) return level_cost_[static_cast<std::size_t>(shared)];
    const auto outer = static_cast<std::size_t>(per_level_total_[0]);
    return Duration{cross_[static_cast<std::size_t>(element_of(from, 0)) * outer + static_cast<std::size_t>(element_of(to, 0))]};
  }
  std::vector<std::int64_t> cross_;  // outermost x outermost interconnect costs (ps), row-major
  Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic> measured_;  // a measured matrix, when given
};

}  // namespace vfssim::models
