// `vfssim probe`: measurements on the real machine, written as a machine
// preset and a lock scenario (see probe.h and docs/probe.md). This file
// runs them (options, the phases in order, retries, progress); each
// measurement is a part of its own: topology.cpp (a), line.cpp (b),
// lock_rates.cpp (c), the writers output.cpp, their helpers common.cpp.
#include "probe/probe.h"

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

#include "probe/common.h"
#include "probe/line.h"
#include "probe/lock_rates.h"
#include "probe/locks.h"
#include "probe/output.h"
#include "probe/run.h"
#include "probe/topology.h"

namespace vfssim::probe {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// ----------------------------------------------------------------- the run

std::vector<int> parse_cpus(const std::string& s, const std::vector<int>& allowed) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  auto number = [&](const std::string& t) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(t, &used);
    } catch (...) {
      used = 0;
    }
    if (t.empty() || used != t.size() || v < 0)
      throw BadInput("--cpus: '" + item + "' is not a CPU id (expected a list such as 0,1,2 or 0-3)");
    return v;
  };
  while (std::getline(ss, item, ',')) {
    const auto dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash != std::string::npos && dash > 0) {
      lo = number(item.substr(0, dash));
      hi = number(item.substr(dash + 1));
      if (hi < lo) throw BadInput("--cpus: range '" + item + "' runs backwards");
    } else {
      lo = hi = number(item);
    }
    for (int c = lo; c <= hi; ++c) {
      if (std::find(out.begin(), out.end(), c) != out.end())
        throw BadInput("--cpus lists CPU " + std::to_string(c) + " twice");
      if (!std::binary_search(allowed.begin(), allowed.end(), c))
        throw BadInput("--cpus: CPU " + std::to_string(c) + " is not usable (this process may run on CPUs " +
                       join(allowed) + ", from sched_getaffinity)");
      out.push_back(c);
    }
  }
  if (out.empty()) throw BadInput("--cpus is empty (expected a list such as 0,1,2 or 0-3)");
  return out;
}

// 1..N up to 16 CPUs; beyond, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, ... and N.
std::vector<int> thread_counts(int n) {
  std::vector<int> c;
  if (n <= 16) {
    for (int i = 1; i <= n; ++i) c.push_back(i);
    return c;
  }
  for (int p = 1; p <= n; p *= 2) {
    c.push_back(p);
    if (p >= 2 && p + p / 2 < std::min(2 * p, n + 1) && p + p / 2 <= n) c.push_back(p + p / 2);
  }
  if (c.back() != n) c.push_back(n);
  return c;
}

// A pair whose batches disagree (spread over 50%), or whose two directions
// do (one more than 1.5 times the other), saw the line's cost change while
// it measured: under a hypervisor the vCPUs may have moved between host
// cores. Returns what to say about it, or "".
std::string unstable_matrix(const std::vector<std::vector<Pair>>& pairs, bool vm) {
  const std::size_t n = pairs.size();
  double spread = 0, ratio = 1;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      spread = std::max(spread, pairs[a][b].handoff.spread());
      const double x = pairs[a][b].handoff.median, y = pairs[b][a].handoff.median;
      if (x > 0 && y > 0) ratio = std::max(ratio, std::max(x, y) / std::min(x, y));
    }
  if (spread <= 0.5 && ratio <= 1.5) return {};
  return "the transfer matrix is unstable (a pair's batches spread up to " + pct(spread) +
         ", the two directions of a pair differ up to " + fmt("%.1f", ratio) + "x)" +
         (vm ? ": under a hypervisor the vCPUs may have moved between host cores while it measured"
             : ": the line's cost changed while it measured (power states? other load?)") +
         "; run it again";
}

class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet) {}
  void step(const std::string& what, std::size_t done, std::size_t total, const char* unit) {
    if (quiet_) return;
    const std::size_t every = std::max<std::size_t>(1, total / 10);
    if (done % every == 0 || done == total)
      std::cerr << "probe: " << what << " " << done << "/" << total << " " << unit << std::endl;
  }
  void say(const std::string& s) {
    if (!quiet_) std::cerr << "probe: " << s << std::endl;
  }

 private:
  bool quiet_;
};

Results measure(const Options& o) {
  Results r;
  const auto t0 = now_ns();
  Progress progress(o.quiet);
  r.host = host_name();
  r.model = cpu_model();
  r.date = utc("%Y-%m-%d");
  r.when = utc("%Y-%m-%dT%H:%M:%SZ");
  r.vm = under_hypervisor();
  r.topo = build_model(o.cpus);
  const int n = static_cast<int>(o.cpus.size());
  // The phases share 90% of the budget; the rest measures again, while it
  // lasts, points that other tasks disturbed in more than half their windows.
  const double S = 0.9 * o.seconds * 1e9, end = t0 + o.seconds * 1e9;
  r.counts = thread_counts(n);
  // Up to two more attempts at a disturbed point while the budget lasts;
  // keeps the least disturbed attempt.
  auto retrying = [&](const char* phase, double point_ns, auto measure, auto stat) {
    auto best = measure();
    for (int attempt = 0; attempt < 2 && disturbed(stat(best)) && now_ns() + point_ns < end; ++attempt) {
      auto again = measure();
      ++r.retries[phase];
      if (less_disturbed(stat(again), stat(best))) best = std::move(again);
    }
    return best;
  };

  Loss mark = loss_now();
  auto phase_done = [&](const char* phase) {
    const Loss now = loss_now();
    r.preempted[phase] = {now.switches - mark.switches, now.lost_ns - mark.lost_ns, now.wall_ns - mark.wall_ns};
    mark = now;
  };
  // Local costs on every CPU: 4% of the budget; an L3 hit on the first: 1%.
  for (std::size_t k = 0; k < o.cpus.size(); ++k) {
    r.local.push_back(measure_local(o.cpus[k], 0.04 * S / n));
    progress.step("local costs", k + 1, o.cpus.size(), "CPUs");
  }
  std::vector<double> hit, cas, fadd;
  for (const auto& l : r.local) {
    hit.push_back(l.hit.median);
    cas.push_back(l.cas.median);
    fadd.push_back(l.fadd.median);
  }
  r.local_hit = stat_of(hit).median;
  r.local_atomic = stat_of(cas).median;
  r.local_fadd = stat_of(fadd).median;
  r.caches = read_caches(o.cpus[0]);
  if (r.caches.l2 > 0 && r.caches.l3 >= 4 * r.caches.l2) {
    // 4 x L2 (at most a quarter of the L3): out of the private caches, well inside the L3.
    const auto bytes = static_cast<std::size_t>(std::min(4 * r.caches.l2, r.caches.l3 / 4));
    r.llc = measure_llc(o.cpus[0], bytes, 0.01 * S);
  }
  phase_done("local");

  // (a) the matrix: 38%.
  r.pairs.assign(static_cast<std::size_t>(n), std::vector<Pair>(static_cast<std::size_t>(n)));
  const std::size_t npairs = static_cast<std::size_t>(n) * (n - 1);
  std::size_t done = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const int ca = r.topo.os[static_cast<std::size_t>(a)], cb = r.topo.os[static_cast<std::size_t>(b)];
      const double pair_ns = 0.38 * S / static_cast<double>(npairs);
      r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = retrying(
          "matrix", pair_ns, [&] { return pingpong(ca, cb, pair_ns); }, [](const Pair& p) { return p.handoff; });
      progress.step("transfer matrix", ++done, npairs, "pairs");
    }
  phase_done("matrix");
  r.unstable = unstable_matrix(r.pairs, r.vm);
  if (!r.unstable.empty()) std::cerr << "probe: warning: " << r.unstable << "\n";

  // (b) the contended line: 15%.
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    const std::vector<int> first(o.cpus.begin(), o.cpus.begin() + r.counts[i]);
    const double point_ns = 0.15 * S / static_cast<double>(r.counts.size());
    r.contended.push_back(retrying(
        "contended", point_ns, [&] { return contended_line(first, point_ns); },
        [](const Contended& c) { return c.rate; }));
    progress.step("contended line", i + 1, r.counts.size(), "thread counts");
  }
  phase_done("contended");

  // (c) the loops (2%) alone and on every CPU at once (2%), then the locks (38%).
  r.loops = calibrate_loops(o.cpus[0], 0.02 * S);
  r.think_all = parallel_think(o.cpus, 0.02 * S, r.loops);
  progress.say("think loop " + fmt("%.1f", r.loops.think.median) + " ns (" + fmt("%.1f", r.think_all.median) +
               " ns on " + std::to_string(n) + " CPUs at once), critical section " + fmt("%.1f", r.loops.cs.median) +
               " ns on one thread");
  phase_done("loops");
  const double per_lock_point = r.lock_point_ns = 0.38 * S / (3 * r.counts.size());
  auto run_lock = [&](const std::string& kind, auto* tag) {  // tag: a null Lock*, for its type
    using Lock = std::remove_pointer_t<decltype(tag)>;
    auto& points = r.locks[kind];
    for (std::size_t i = 0; i < r.counts.size(); ++i) {
      const std::vector<int> first(o.cpus.begin(), o.cpus.begin() + r.counts[i]);
      points.push_back(retrying(
          "locks", per_lock_point,
          [&] {
            const LockPoint p = lock_point<Lock>(first, per_lock_point, r.loops);
            if (p.counter != p.acquisitions)
              throw Failure(kind + " lock with " + std::to_string(p.threads) + " threads: mutual exclusion failed: " +
                            "the protected counter is " + std::to_string(p.counter) + " after " +
                            std::to_string(p.acquisitions) + " acquisitions");
            return p;
          },
          [](const LockPoint& p) { return p.rate; }));
      progress.step(kind + " lock", i + 1, r.counts.size(), "thread counts");
    }
  };
  run_lock("tas", static_cast<TasLock*>(nullptr));
  run_lock("ticket", static_cast<TicketLock*>(nullptr));
  run_lock("mcs", static_cast<McsLock*>(nullptr));
  phase_done("locks");
  std::string where;
  for (const auto& [ph, v] : r.preempted)
    if (v.fraction() > kLossWarning) where += (where.empty() ? "" : ", ") + ph + " " + pct(v.fraction());
  if (!where.empty())
    std::cerr << "probe: warning: other tasks took time from the measuring threads (" << where
              << "): those numbers may be high; run it on an idle machine (the files say so)\n";
  r.wall = (now_ns() - t0) / 1e9;
  return r;
}

int run(const std::vector<std::string>& args) {
  po::options_description opts("vfssim probe --out DIR [options]");
  Options o;
  std::string cpus;
  opts.add_options()
    ("help,h", "this help")
    ("out", po::value(&o.out), "directory for machine.yaml and probe-locks.yaml (created if missing); required")
    ("cpus", po::value(&cpus), "CPU ids to use, comma-separated or ranges (0,2,4 or 0-3; default: all "
                               "sched_getaffinity allows); thread counts n use the first n")
    ("seconds", po::value(&o.seconds)->default_value(20), "total time budget, split over the measurements (1 to under 60)")
    ("quiet,q", "no progress on stderr");
  po::variables_map vm;
  const po::positional_options_description none;  // no operands: a stray word is an error
  po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  o.quiet = vm.count("quiet") > 0;
  if (o.out.empty()) throw BadInput("--out DIR is required (the directory for machine.yaml and probe-locks.yaml)");
  if (!(o.seconds >= 1 && o.seconds < 60))
    throw BadInput("--seconds " + fmt("%g", o.seconds) + " is out of range (expected at least 1 and under 60)");
  const std::vector<int> allowed = allowed_cpus();
  if (vm.count("cpus")) {
    o.cpus = parse_cpus(cpus, allowed);
    o.cpus_given = true;
    if (o.cpus.size() < 2)
      throw BadInput("--cpus lists one CPU; the probe needs at least 2 (a transfer is between two CPUs)");
  } else {
    o.cpus = allowed;
    if (o.cpus.size() < 2)
      throw Failure("the probe needs at least 2 usable CPUs; sched_getaffinity allows only CPU " + join(allowed) +
                    " (run it without taskset, or on a machine with more CPUs)");
  }
  if (o.cpus.size() > 4096) throw BadInput("--cpus: more than 4096 CPUs (the simulator's limit)");
  {
    const fs::path out(o.out);
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
      throw BadInput("--out " + o.out + " exists and is not a directory");
    fs::create_directories(out, ec);
    if (ec) throw BadInput("--out: cannot create directory " + o.out + ": " + ec.message());
    if (access(out.c_str(), W_OK) != 0) throw BadInput("--out: cannot write to " + o.out + ": " + std::strerror(errno));
  }
  Results r;
  {
    // A large machine's N(N-1) pairs may need more than the budget (at least
    // ~0.4 ms each); the watchdog allows for them.
    const double pairs = static_cast<double>(o.cpus.size()) * static_cast<double>(o.cpus.size() - 1);
    if (pairs * 0.4e-3 > 0.38 * o.seconds && !o.quiet)
      std::cerr << "probe: the transfer matrix's " << fmt("%.0f", pairs) << " pairs need at least "
                << fmt("%.0f", pairs * 0.4e-3) << " s: the run will take longer than --seconds " << fmt("%g", o.seconds)
                << "\n";
    Watchdog dog(3 * o.seconds + 60 + pairs * 5e-3);
    r = measure(o);
  }
  const fs::path out(o.out);
  write_file(out / "machine.yaml", machine_yaml(r, o));
  write_file(out / "probe-locks.yaml", locks_yaml(r, o));
  print_summary(std::cout, r, o);
  if (!o.quiet) std::cerr << "probe: done in " << fmt("%.1f", r.wall) << " s\n";
  return 0;
}

}  // namespace

int cmd_probe(const std::vector<std::string>& args) {
  try {
    return run(args);
  } catch (const po::error& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 2;
  } catch (const BadInput& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace vfssim::probe
