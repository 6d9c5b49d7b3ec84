// `vfssim probe`: the writers: DIR/machine.yaml, DIR/probe-locks.yaml and the summary.
#include "probe/output.h"

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

// ------------------------------------------------------------------ writers

namespace {

std::string preemptions(const Results& r, std::initializer_list<const char*> phases) {
  std::string s;
  bool high = false;
  for (const char* p : phases) {
    const Loss v = r.preempted.count(p) ? r.preempted.at(p) : Loss{};
    high = high || v.fraction() > kLossWarning;
    const int again = r.retries.count(p) ? r.retries.at(p) : 0;
    s += (s.empty() ? "" : ", ") + std::string(p) + " " + pct(v.fraction()) + " (" + std::to_string(v.switches) +
         " preemptions" + (again ? ", " + std::to_string(again) + " re-measurements" : "") + ")";
  }
  return "# Time other tasks took from the measuring threads (wall - thread CPU time): " + s +
         (high ? ";\n# WARNING: more than " + pct(kLossWarning) + ": the numbers of that phase may be high.\n" : ".\n");
}

// "value   # comment", the comments lined up.
std::string commented(const std::string& value, const std::string& comment, std::size_t col = 34) {
  std::string s = value;
  if (s.size() < col) s.append(col - s.size(), ' ');
  else s += "  ";
  return s + "# " + comment;
}

// "median of 7 batches", or "median of the 4 of 7 batches least disturbed
// by other tasks (up to 3.1% of their time lost)".
std::string median_of(const Stat& s, const std::string& noun) {
  if (s.used == s.total) return "median of " + std::to_string(s.total) + " " + noun;
  return "median of the " + std::to_string(s.used) + " of " + std::to_string(s.total) + " " + noun +
         " least disturbed by other tasks (up to " + pct(s.loss) + " of their time lost)";
}

// Batches kept over a set of measurements: "all 9" or "5 to 9 of 9".
std::string kept_range(const std::vector<Stat>& v) {
  int lo = 1 << 30, hi = 0, total = 0;
  for (const auto& s : v) {
    lo = std::min(lo, s.used);
    hi = std::max(hi, s.used);
    total = std::max(total, s.total);
  }
  if (lo == total) return "all " + std::to_string(total);
  return (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) + " of " +
         std::to_string(total);
}

double matrix_entry(const Results& r, int a, int b) {
  return std::max(0.1, r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median - r.local_atomic);
}

// `reread:` (a directory machine's time per re-read of a line its socket
// holds): an L3 hit, measured when sysfs gives the cache sizes.
std::string reread_line(const Results& r, const Model& m) {
  const int n = static_cast<int>(m.os.size());
  if (r.llc.bytes > 0)
    return commented("  reread: " + ns(r.llc.load.median),
                     "measured: an L3 hit: dependent loads over a random " + std::to_string(r.llc.bytes >> 10) +
                         " KiB ring (L2 " + std::to_string(r.caches.l2 >> 10) + " KiB, L3 " +
                         std::to_string(r.caches.l3 >> 10) + " KiB shared by CPUs " + r.caches.l3_shared +
                         ") on OS CPU " + std::to_string(m.os.empty() ? 0 : m.os[0]) + ", " +
                         median_of(r.llc.load, "batches") + " of " + std::to_string(r.llc.loads) +
                         " loads, spread " + pct(r.llc.load.spread()),
                     25) +
           "\n";
  std::vector<double> v;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) v.push_back(matrix_entry(r, a, b));
  return commented("  reread: " + ns(stat_of(v).median),
                   "not measured: sysfs gives no L2/L3 sizes; the median transfer (a re-read as dear as a transfer)",
                   25) +
         "\n";
}

}  // namespace

std::string machine_yaml(const Results& r, const Options& o) {
  const Model& m = r.topo;
  const int n = static_cast<int>(m.os.size());
  std::ostringstream y;
  Stat all_handoff;
  {
    std::vector<double> v;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) v.push_back(r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median);
    all_handoff = stat_of(v);
  }
  std::uint64_t rmin = ~0ull, rmax = 0;
  double worst_spread = 0;
  std::vector<Stat> pair_stats;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) {
        const auto& p = r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
        pair_stats.push_back(p.handoff);
        rmin = std::min(rmin, p.rounds);
        rmax = std::max(rmax, p.rounds);
        worst_spread = std::max(worst_spread, p.handoff.spread());
      }
  const std::string pair_kept = kept_range(pair_stats);

  y << "# Written by `vfssim probe --seconds " << fmt("%g", o.seconds) << "` on " << r.host << ", " << r.when
    << " (" << fmt("%.1f", r.wall) << " s):\n"
    << "# " << r.model << (r.vm ? " (a virtual machine: /proc/cpuinfo has the hypervisor flag)" : "") << ".\n"
    << "# Probed OS CPUs " << ranges(o.cpus) << "; the simulator's CPU k is OS CPU " << join(m.os, ", ")
    << " (k = 0, 1, ...), ordered by socket, NUMA node, core from sysfs"
    << (m.sysfs ? "" : " (sysfs topology missing: each CPU taken as its own core)") << ".\n"
    << "# Every number is measured with threads pinned by sched_setaffinity (docs/probe.md) or marked\n"
    << "# 'not measured'. Spread = (max - min) / median over the batches.\n"
    << "# Convention: the simulator charges an RMW on a line another CPU holds transfer + local_atomic,\n"
    << "# so every transfer below (levels, interconnect, matrix) is the measured CAS handoff (half a\n"
    << "# ping-pong round trip: one CAS that first pulls the line over) minus local_atomic ("
    << ns(r.local_atomic) << "), and a\n# simulated remote CAS reproduces the measured handoff.\n";
  y << preemptions(r, {"local", "matrix", "contended"});
  if (!r.unstable.empty()) y << "# WARNING: " << r.unstable << ".\n";
  if (!m.uniform)
    y << "# The levels are flat: " << m.why_flat << "; written as one socket of " << n
      << " single-thread cores.\n";
  y << "machine: probed-" << r.host << "\n";
  std::string shape;
  for (std::size_t l = 0; l < m.level_names.size(); ++l)
    shape += (l ? " x " : "") + std::to_string(m.counts[l]) + " " + m.level_names[l] + (m.counts[l] > 1 ? "s" : "");
  y << "description: " << quoted(r.model + ", " + shape + " probed (OS CPUs " + ranges(o.cpus) + ") by vfssim probe on " +
                                 r.host + ", " + r.date)
    << "\n";

  // Level transfers: the median of the entries whose CPUs share that level's
  // element and no deeper one; a level without such pairs takes its inner
  // level's value (the loader wants outer >= inner).
  const std::size_t L = m.level_names.size();
  std::vector<std::vector<double>> at(L);
  std::vector<double> cross;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const int s = m.shared(a, b);
      (s < 0 ? cross : at[static_cast<std::size_t>(s)]).push_back(matrix_entry(r, a, b));
    }
  std::vector<std::string> value(L), note(L);
  double inner = 0;
  std::string inner_name;
  for (int l = static_cast<int>(L) - 2; l >= 0; --l) {
    const auto& v = at[static_cast<std::size_t>(l)];
    const std::string& lname = m.level_names[static_cast<std::size_t>(l)];
    const std::string& child = m.level_names[static_cast<std::size_t>(l) + 1];
    double x = inner;
    if (v.empty()) {
      note[static_cast<std::size_t>(l)] =
          inner_name.empty()
              ? "not measured: no two probed CPUs share a " + lname + " but not a " + child + "; never charged"
              : "not measured: no two probed CPUs share a " + lname + " but not a " + child + "; the " + inner_name +
                    " level's value";
    } else {
      const Stat s = stat_of(v);
      x = std::max(s.median, inner);
      note[static_cast<std::size_t>(l)] = "measured: median of the " + std::to_string(v.size()) +
                                          " matrix entries between CPUs sharing a " + lname + " but not a " + child +
                                          " (" + ns(s.lo) + " to " + ns(s.hi) + ")" +
                                          (x > s.median ? ", raised to the inner level's value" : "");
      inner_name = lname;
    }
    value[static_cast<std::size_t>(l)] = ns(x);
    inner = x;
  }
  y << "levels:\n";
  for (std::size_t l = 0; l < L; ++l) {
    std::string entry = "  - {name: " + m.level_names[l] + ", count: " + std::to_string(m.counts[l]);
    if (l + 1 < L) {
      entry += ", transfer: " + value[l] + "}";
      y << commented(entry, note[l], 52) << "\n";
    } else {
      y << entry << "}\n";
    }
  }
  const std::string numa_note =
      r.topo.numa_level < r.topo.core_level && m.level_names[static_cast<std::size_t>(m.numa_level)] == "node"
          ? "sysfs: the probed CPUs lie in " + std::to_string(m.nodes) + " NUMA nodes"
          : "sysfs: the probed CPUs lie in " + std::to_string(m.nodes) + " NUMA node" + (m.nodes > 1 ? "s" : "") +
                "; nodes taken as sockets";
  y << commented("numa: " + m.level_names[static_cast<std::size_t>(m.numa_level)], numa_note) << "\n";
  y << "core: " << m.level_names[static_cast<std::size_t>(m.core_level)] << "\n";
  if (m.counts[0] > 1) {
    const Stat s = stat_of(cross);
    y << "interconnect:\n"
      << commented("  links: full", "not measured: every socket taken as one hop from every other") << "\n"
      << commented("  base: " + ns(s.median), "measured: median of the " + std::to_string(cross.size()) +
                                                  " cross-socket matrix entries (" + ns(s.lo) + " to " + ns(s.hi) +
                                                  ")")
      << "\n"
      << commented("  hop: 0ns", "not measured: the matrix carries each pair's cost") << "\n";
  }
  Stat hit_cpus, cas_cpus;
  {
    std::vector<double> h, c;
    for (const auto& l : r.local) {
      h.push_back(l.hit.median);
      c.push_back(l.cas.median);
    }
    hit_cpus = stat_of(h);
    cas_cpus = stat_of(c);
  }
  double hit_spread = 0, cas_spread = 0;
  std::uint64_t hit_ops = 0, cas_ops = 0;
  std::vector<Stat> hit_stats, cas_stats;
  for (const auto& l : r.local) {
    hit_stats.push_back(l.hit);
    cas_stats.push_back(l.cas);
    hit_spread = std::max(hit_spread, l.hit.spread());
    cas_spread = std::max(cas_spread, l.cas.spread());
    hit_ops = std::max(hit_ops, l.hit_ops);
    cas_ops = std::max(cas_ops, l.cas_ops);
  }
  y << commented("local_hit: " + ns(r.local_hit),
                 "measured: dependent loads of an L1-resident line (pointer chase), median over " +
                     std::to_string(n) + " CPUs (" + ns(hit_cpus.lo) + " to " + ns(hit_cpus.hi) +
                     ") of the median of " + kept_range(hit_stats) + " batches of up to " + std::to_string(hit_ops) +
                     " loads, batch spread up to " + pct(hit_spread))
    << "\n";
  y << commented("local_atomic: " + ns(r.local_atomic),
                 "measured: uncontended lock cmpxchg in a loop on a line held here, median over " +
                     std::to_string(n) + " CPUs (" + ns(cas_cpus.lo) + " to " + ns(cas_cpus.hi) +
                     ") of the median of " + kept_range(cas_stats) + " batches of up to " + std::to_string(cas_ops) +
                     " ops, batch spread up to " + pct(cas_spread) + "; fetch_add " + ns(r.local_fadd))
    << "\n";
  y << commented("invalidate_per_sharer: 0ns", "not measured") << "\n";
  y << "# measured: CAS ping-pong on one 64-byte line, the row's CPU leading (it CASes 2k to 2k+1, the\n"
    << "# column's CPU 2k+1 to 2k+2, each retrying its CAS until the value is its own); per entry the median\n"
    << "# over " << pair_kept << " batches (those that lost at most " << pct(kCleanLoss)
    << " of their time to other tasks, or the least disturbed\n# half) of " << rmin
    << (rmin == rmax ? "" : " to " + std::to_string(rmax))
    << " round trips of the handoff (round trip / 2), minus local_atomic " << ns(r.local_atomic)
    << " (entries under 0.1ns are written as 0.1ns);\n"
    << "# handoffs " << ns(all_handoff.lo) << " to " << ns(all_handoff.hi) << ", median " << ns(all_handoff.median)
    << "; batch spread up to " << pct(worst_spread) << ". Diagonal: 0ns (a CPU's own line costs local_hit).\n";
  y << "matrix:\n";
  for (int a = 0; a < n; ++a) {
    std::string row = "  - [";
    double spread = 0;
    std::vector<Stat> row_stats;
    for (int b = 0; b < n; ++b) {
      row += (b ? ", " : "") + (a == b ? std::string("0ns") : ns(matrix_entry(r, a, b)));
      if (a == b) continue;
      const Stat& h = r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff;
      spread = std::max(spread, h.spread());
      row_stats.push_back(h);
    }
    row += "]";
    y << commented(row, "OS CPU " + std::to_string(m.os[static_cast<std::size_t>(a)]) + " leading; batch spread up to " +
                            pct(spread) + ", batches kept " + kept_range(row_stats), 0)
      << "\n";
  }
  const Contended& most = r.contended.back();
  y << "# (b) one contended line: back-to-back fetch_add by n threads on the first n probed CPUs,\n"
    << "# per-op time = 1 / throughput (the line's time per op; each thread waits n times that); a\n"
    << "# visit = a run of one thread's fetch_adds with no other's between (the line stays while they run):\n";
  for (const auto& c : r.contended)
    y << "#   n = " << c.threads << ": " << fmt("%.1f", c.rate.median / 1e6) << " Mops/s, " << ns(1e9 / c.rate.median)
      << " per op (" << median_of(c.rate, "windows") << ", spread " << pct(c.rate.spread()) << ")"
      << (c.threads > 1 ? ", " + fmt("%.1f", static_cast<double>(c.ops) /
                                                static_cast<double>(std::max<std::uint64_t>(c.visits, 1))) +
                              " ops per visit (" +
                              ns(1e9 / c.rate.median * static_cast<double>(c.ops) /
                                 static_cast<double>(std::max<std::uint64_t>(c.visits, 1))) +
                              " per visit)"
                        : std::string())
      << "\n";
  y << "coherence:\n"
    << "  kind: directory        # not measured: probe cannot tell; see docs/probe.md\n"
    << reread_line(r, m)
    << commented("  contended_rmw: " + ns(1e9 / most.rate.median),
                 "measured: per-op time of one line's fetch_add with " + std::to_string(most.threads) +
                     " contenders (1 / throughput), " + median_of(most.rate, "windows") +
                     ", spread " + pct(most.rate.spread()) +
                     (m.counts[0] > 1 ? "; the contenders span sockets" : ""),
                 25)
    << "\n";
  // Retention (models/hardware/cache_line.h): the ops a visit served with
  // the most contenders, and how long that visit held the line (ops x
  // per-op time): a core's back-to-back RMW inside that time stayed local.
  if (most.threads > 1) {
    const double per_visit = static_cast<double>(most.ops) / static_cast<double>(std::max<std::uint64_t>(most.visits, 1));
    const long ops = std::max(1L, std::lround(per_visit));
    y << commented("  retention: {ops: " + std::to_string(ops) + ", window: " + ns(1e9 / most.rate.median * per_visit) + "}",
                   "measured: " + fmt("%.1f", per_visit) + " fetch_adds per visit of the line with " +
                       std::to_string(most.threads) + " contenders, the visit lasting ops x per-op time",
                   25)
      << "\n";
  }
  return y.str();
}

std::string locks_yaml(const Results& r, const Options& o) {
  const Model& m = r.topo;
  std::ostringstream y;
  const double think = r.loops.think.median;
  const double cs = std::max(0.0, r.loops.cs.median - r.local_atomic);
  std::vector<int> placement;
  for (int c : o.cpus) placement.push_back(m.index.at(c));
  y << "# Written by `vfssim probe --seconds " << fmt("%g", o.seconds) << "` on " << r.host << ", " << r.when << ".\n"
    << "# The probe's lock loop on real spinlocks, threads pinned to OS CPUs " << ranges(o.cpus)
    << " (thread k on the k-th; the\n# simulator's CPUs " << join(placement, ", ")
    << " in ./machine.yaml). Each thread loops: acquire; critical section (a non-atomic increment\n"
    << "# of a counter on a line of its own, then a busy loop); release; think (a busy loop). The\n"
    << "# busy loop runs " << fmt("%.3f", r.loops.ns_per_iter) << " ns per iteration on OS CPU " << o.cpus[0]
    << ": think " << r.loops.think_iters << " iterations, critical section " << r.loops.cs_iters << ".\n"
    << "# The think loop with the " << r.topo.os.size() << " probed CPUs running it at once: " << ns(r.think_all.median)
    << " per call (" << ns(r.think_all.lo) << " to " << ns(r.think_all.hi) << " over the CPUs; one thread alone: "
    << ns(r.loops.think.median) << ")" << (r.think_all.hi > 1.1 * r.loops.think.median
                                            ? ": the CPUs slow each other (shared cores, a host's SMT siblings?)"
                                            : "") << ".\n"
    << preemptions(r, {"loops", "locks"})
    << "# Mutual exclusion held at every point: the protected counter equals the acquisitions:\n";
  for (const auto& [kind, points] : r.locks) {
    y << "#   " << kind << ":";
    for (const auto& p : points) y << " " << p.threads << " threads " << p.counter << " = " << p.acquisitions << ";";
    y << "\n";
  }
  y << "scenario: probe-locks-" << r.host << "\n"
    << "description: >\n  The lock loop of vfssim probe on " << r.host << " (" << r.model << "), " << r.date
    << ":\n  test-and-set, ticket and MCS spinlocks, " << r.counts.front() << " to " << r.counts.back()
    << " threads; the measured curves are the expect: figures.\n"
    << "source: " << quoted("vfssim probe on " + r.host + ", " + r.when) << "\n"
    << "machine: ./machine.yaml\n"
    << "workload:\n"
    << "  tasks: thread\n"
    << commented("  placement: [" + join(placement, ", ") + "]",
                 "thread k ran on OS CPU " + join(o.cpus) + " (k-th); these are those CPUs' indices in the machine",
                 40)
    << "\n"
    << "  loop: [iteration]\n"
    << "  warmup: 100us\n"
    << "  duration: 10ms\n"
    << "  cpus: [" << join(r.counts, ", ") << "]\n"
    << "strategies:\n";
  const std::map<std::string, std::string> what = {
      {"tas", "test-and-test-and-set with pause (probe/locks.h TasLock)"},
      {"ticket", "ticket lock: fetch_add on next, spin on owner with pause (probe/locks.h TicketLock)"},
      {"mcs", "MCS queue lock, one node per thread (probe/locks.h McsLock)"}};
  for (const char* kind : {"tas", "ticket", "mcs"}) {
    y << "  " << kind << ":\n"
      << "    description: " << quoted(what.at(kind)) << "\n"
      << "    locks:\n"
      << "      probe_lock: {kind: " << kind << ", scope: global}\n"
      << "    lines:\n"
      << "      data: {scope: global}        # the protected counter's line\n"
      << "    ops:\n"
      << "      iteration:\n"
      << commented("        - compute: " + ns(think),
                   "measured: the think loop on one thread, " + median_of(r.loops.think, "batches") + " of " +
                       std::to_string(r.loops.think_calls) + " calls, spread " + pct(r.loops.think.spread()),
                   40)
      << "\n"
      << "        - lock: probe_lock\n"
      << "          body:\n"
      << commented("            - atomic: data", "the counter increment (charged local_atomic on one thread)", 40)
      << "\n"
      << commented("            - compute: " + ns(cs),
                   "measured: the critical section on one thread (" + ns(r.loops.cs.median) + ", " +
                       median_of(r.loops.cs, "batches") + " of " + std::to_string(r.loops.cs_calls) +
                       " calls, spread " + pct(r.loops.cs.spread()) + ") minus local_atomic " + ns(r.local_atomic),
                   40)
      << "\n";
  }
  y << "expect:\n";
  for (const char* kind : {"tas", "ticket", "mcs"}) {
    const auto& points = r.locks.at(kind);
    std::string rep, spreads;
    std::vector<Stat> stats;
    for (const auto& p : points) {
      rep += (rep.empty() ? "" : ", ") + std::to_string(p.threads) + ": " + fmt("%.0f", p.rate.median);
      spreads += (spreads.empty() ? "" : ", ") + std::to_string(p.threads) + ": " + pct(p.rate.spread());
      stats.push_back(p.rate);
    }
    const double secs = r.lock_point_ns / 1e9 * 0.9 / kRateBatches;
    y << "  - figure: " << kind << "-acquisitions\n"
      << "    curve: {strategy: " << kind << "}\n"
      << "    metric: ops_per_sec               # acquisitions per second, all threads\n"
      << "    reported: {" << rep << "}\n"
      << "    fitted_at: 1                      # the think and critical-section times come from 1 thread\n"
      << "    tolerance: 25%\n"
      << "    source: "
      << quoted("vfssim probe on " + r.host + ", " + r.date + ": " + kind + " lock, threads on OS CPUs " +
                ranges(o.cpus) + "; per point the median of " + kept_range(stats) + " windows of " +
                fmt("%.3f", secs) + " s (the least disturbed by other tasks), spread " + spreads)
      << "\n";
  }
  return y.str();
}

void print_summary(std::ostream& out, const Results& r, const Options& o) {
  const Model& m = r.topo;
  const int n = static_cast<int>(m.os.size());
  out << "vfssim probe on " << r.host << " (" << r.model << "), OS CPUs " << ranges(o.cpus) << ", "
      << fmt("%.1f", r.wall) << " s\n";
  out << "local_hit " << fmt("%.2f", r.local_hit) << " ns, local_atomic " << fmt("%.2f", r.local_atomic)
      << " ns (CAS; fetch_add " << fmt("%.2f", r.local_fadd) << " ns)\n";
  if (n > 16) {  // too wide for a terminal: the range; machine.yaml has every entry
    std::vector<double> v;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) v.push_back(r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median);
    const Stat h = stat_of(v);
    out << "CAS handoff over " << v.size() << " pairs: " << fmt("%.1f", h.lo) << " to " << fmt("%.1f", h.hi)
        << " ns, median " << fmt("%.1f", h.median) << " ns (every pair in machine.yaml)\n";
  } else {
    out << "CAS handoff (ns; row leads; machine.yaml subtracts local_atomic):\n      ";
    for (int b = 0; b < n; ++b) out << fmt("%8.0f", m.os[static_cast<std::size_t>(b)]);
    out << "\n";
    for (int a = 0; a < n; ++a) {
      out << fmt("%6.0f", m.os[static_cast<std::size_t>(a)]);
      for (int b = 0; b < n; ++b)
        out << (a == b ? std::string("       -")
                       : fmt("%8.1f", r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median));
      out << "\n";
    }
  }
  out << "contended line (fetch_add on one line):\n  threads      Mops/s   ns/op (line)   ns/op (thread)\n";
  for (const auto& c : r.contended)
    out << fmt("  %7.0f", c.threads) << fmt("  %10.2f", c.rate.median / 1e6) << fmt("  %13.2f", 1e9 / c.rate.median)
        << fmt("  %15.2f", c.threads * 1e9 / c.rate.median) << "\n";
  out << "locks (acquisitions/s; think " << fmt("%.1f", r.loops.think.median) << " ns, critical section "
      << fmt("%.1f", r.loops.cs.median) << " ns):\n  threads";
  for (const char* k : {"tas", "ticket", "mcs"}) out << "  " << std::string(10 - std::strlen(k), ' ') << k;
  out << "\n";
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    out << fmt("  %7.0f", r.counts[i]);
    for (const char* k : {"tas", "ticket", "mcs"}) out << fmt("  %10.0f", r.locks.at(k)[i].rate.median);
    out << "\n";
  }
  out << "wrote " << (fs::path(o.out) / "machine.yaml").string() << " and "
      << (fs::path(o.out) / "probe-locks.yaml").string() << "\n";
}

void write_file(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Failure("cannot write " + tmp.string() + ": " + std::strerror(errno));
    f << text;
    f.close();
    if (!f) throw Failure("cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw Failure("cannot rename " + tmp.string() + " to " + p.string() + ": " + ec.message());
}

}  // namespace vfssim::probe
