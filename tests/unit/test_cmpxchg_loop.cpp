// The cmpxchg retry loop (models/kernel/cmpxchg_loop.h): exact costs with
// mock neighbours (the line's other CPUs), and its tries under contention
// against an independent queueing model simulated grant by grant.
#include <doctest/doctest.h>

#include <cstdint>
#include <queue>
#include <tuple>
#include <vector>

#include "models/hardware/cache_line.h"
#include "models/kernel/cmpxchg_loop.h"
#include "sim/rng.h"

using namespace vfssim;
using namespace vfssim::models;
using sim::Time;

namespace {

// A flat machine: 8 CPUs, 40 ns transfer, 5 ns local atomic.
TopologySpec flat() {
  TopologySpec t;
  t.name = "flat";
  t.levels = {{"cpu", 8, Duration{0}}};
  t.cross_base = sim::nanoseconds(40);  // between any two CPUs
  t.local_hit = sim::nanoseconds(1);
  t.local_atomic = sim::nanoseconds(5);
  return t;
}

Time at_ns(std::int64_t ns) { return Time{} + sim::nanoseconds(ns); }

const CmpxchgLoop kNoRelax{false, kLockrefRetries, Duration{0}};
const CmpxchgLoop kRelax{true, kLockrefRetries, sim::nanoseconds(47)};

// The loop simulated one request at a time, nothing folded: N CPUs always
// in the loop on one line that serves requests in arrival order, each
// grant costing c. An operation loads the word (a grant: it sees the
// word's version) and then cmpxchgs (a grant: it succeeds iff the version
// is still the one it saw, and then bumps it). A failure sees the current
// version; with relax the CPU asks again after `pause`, without it the
// retry is local and succeeds at once (x86). After a success the CPU thinks
// for an exponential time of mean `think`, then starts its next operation.
// Returns the mean tries (cmpxchgs) per operation.
double queueing_tries(int n, bool relax, double think_ns, int ops) {
  const double c = 40, pause = 47, local = 5;
  sim::RngStream rng(7, "queueing");
  using Req = std::tuple<double, std::uint64_t, int, bool>;  // time, order, cpu, is the load
  std::priority_queue<Req, std::vector<Req>, std::greater<>> q;
  std::uint64_t order = 0, version = 0;
  std::vector<std::uint64_t> seen(n);
  std::vector<int> tries(n, 0);
  for (int i = 0; i < n; ++i) q.emplace(rng.uniform() * (think_ns + 1), order++, i, true);
  double busy = 0;
  long done = 0, total = 0;
  while (done < ops) {
    auto [t, o, i, is_load] = q.top();
    q.pop();
    double g = (t > busy ? t : busy) + c;
    busy = g;
    if (is_load) {
      seen[i] = version;
      tries[i] = 0;
      q.emplace(g, order++, i, false);
      continue;
    }
    ++tries[i];
    bool ok = seen[i] == version;
    if (!ok && !relax) {  // the failed cmpxchg left the line here: the retry is local
      g = busy = g + local;
      ++tries[i];
      ok = true;
    }
    if (ok) {
      ++version;
      ++done;
      total += tries[i];
      q.emplace(g + (think_ns > 0 ? rng.exponential(think_ns) : 0), order++, i, true);
    } else {
      seen[i] = version;
      q.emplace(g + pause, order++, i, false);
    }
  }
  return static_cast<double>(total) / static_cast<double>(done);
}

}  // namespace

SCENARIO("a cmpxchg loop that nobody else is in costs one cmpxchg exactly") {
  const Topology topo(flat());
  for (const CmpxchgLoop& loop : {kNoRelax, kRelax}) {
    CacheLine line, plain;
    WHEN("one CPU runs it again and again, and another CPU then takes the line") {
      for (int i = 0; i < 3; ++i) {
        const Time now = at_ns(100 * i);
        const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 0, now, loop);
        CHECK(o.done == plain.rmw(topo, 0, now));
        CHECK(o.tries == 1);
        CHECK_FALSE(o.gave_up);
      }
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 1, at_ns(1000), loop);
      THEN("each is the line's RMW: a local atomic, then a transfer and the atomic") {
        CHECK(o.done == at_ns(1000 + 40 + 5));
        CHECK(o.tries == 1);
      }
    }
  }
}

SCENARIO("a first try queued behind another CPU in the loop fails") {
  const Topology topo(flat());
  GIVEN("the line at cpu 0, and cpu 1 in the loop on it from 5 ns to 50 ns") {
    CacheLine line;
    (void)line.rmw(topo, 0, at_ns(0));
    WHEN("cpu 2 tries at 10 ns without cpu_relax()") {
      CHECK(run_cmpxchg_loop(line, topo, 1, at_ns(5), kNoRelax).done == at_ns(50));
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 2, at_ns(10), kNoRelax);
      THEN("its cmpxchg waits (50 ns), fails after the transfer (95 ns), and the retry is local (100 ns)") {
        CHECK(o.tries == 2);
        CHECK(o.done == at_ns(50 + 45 + 5));
        CHECK(line.owner() == 2);
      }
    }
    WHEN("cpu 2 tries at 10 ns with cpu_relax()") {
      (void)run_cmpxchg_loop(line, topo, 1, at_ns(5), kRelax);
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 2, at_ns(10), kRelax);
      THEN("with one other CPU it takes two tries: the retry is a pause and another grant") {
        CHECK(o.tries == 2);
        CHECK(o.done == at_ns(95 + 47 + 45));
        CHECK(line.busy_until() == at_ns(95 + 45));  // the line is free for others during the pause
      }
    }
    WHEN("cpu 2 tries at 60 ns, after cpu 1 has left the loop") {
      (void)run_cmpxchg_loop(line, topo, 1, at_ns(5), kRelax);
      THEN("nothing is queued: one cmpxchg") { CHECK(run_cmpxchg_loop(line, topo, 2, at_ns(60), kRelax).tries == 1); }
    }
  }
}

SCENARIO("with cpu_relax() an operation takes max(2, k) tries, and gives up past `retries`") {
  CHECK(cmpxchg_relax_tries(1) == 2);
  CHECK(cmpxchg_relax_tries(2) == 2);
  CHECK(cmpxchg_relax_tries(7) == 7);
  CHECK(cmpxchg_relax_tries(95) == 95);
  CHECK_THROWS(cmpxchg_relax_tries(0));
  const Topology topo(flat());
  GIVEN("five CPUs in the loop on the line") {
    CacheLine line;
    for (int cpu = 1; cpu <= 5; ++cpu) (void)run_cmpxchg_loop(line, topo, cpu, at_ns(0), kRelax);
    const Time start = line.busy_until();
    WHEN("cpu 6 tries with retries: 3") {
      REQUIRE(line.in_loop(at_ns(1)) == 5);
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 6, at_ns(1), {true, 3, sim::nanoseconds(47)});
      THEN("it fails 3 tries, 2 of them after a pause, and gives up") {
        CHECK(o.gave_up);
        CHECK(o.tries == 3);
        CHECK(o.done == start + sim::nanoseconds(45) + sim::nanoseconds(47 + 45) * 2);
      }
    }
  }
}

SCENARIO("the tries under contention match a queueing model simulated grant by grant") {
  // The simulation folds nothing and draws its think times: its means
  // approach the closed form as the line saturates (k CPUs always queued).
  for (int n : {8, 16, 32, 96}) {
    for (double think : {0.0, 300.0}) {
      INFO("N = ", n, ", think ", think, " ns");
      CHECK(queueing_tries(n, true, think, 20000) == doctest::Approx(cmpxchg_relax_tries(n - 1)).epsilon(0.10));
      CHECK(queueing_tries(n, false, think, 20000) == doctest::Approx(2.0).epsilon(0.10));
    }
  }
}

// The relaxed loop's feedback (each failed try requeues behind the others,
// so an operation takes max(2, k) tries and k grows with the time spent in
// the loop) holds when the pause is longer than the line's hold-off (a
// Skylake PAUSE, 140 cycles: why f5fe24ef17b5, v6.2, removed cpu_relax()
// from lockref). With a pause inside the retention window (a ~10-cycle
// PAUSE before Skylake) the retry finds the line still here and succeeds:
// the operation is the two tries of a loop without cpu_relax(), plus the
// pause, whatever k.
SCENARIO("a cpu_relax() shorter than the retention window retries locally: two tries, not max(2, k)") {
  TopologySpec spec = flat();
  spec.coherence.retention_ops = 4;
  spec.coherence.retention_window = sim::nanoseconds(20);
  const Topology topo(spec);
  const CmpxchgLoop short_pause{true, kLockrefRetries, sim::nanoseconds(5)};
  const CmpxchgLoop long_pause{true, kLockrefRetries, sim::nanoseconds(47)};
  GIVEN("five CPUs in the loop on the line") {
    CacheLine line;
    for (int cpu = 1; cpu <= 5; ++cpu) (void)run_cmpxchg_loop(line, topo, cpu, at_ns(0), short_pause);
    const Time start = line.busy_until();
    WHEN("cpu 6 tries with a 5 ns pause") {
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 6, at_ns(1), short_pause);
      THEN("its first try fails, the retry after the pause succeeds locally") {
        CHECK_FALSE(o.gave_up);
        CHECK(o.tries == 2);
        CHECK(o.done == start + sim::nanoseconds(45) + sim::nanoseconds(5 + 5));
      }
    }
    WHEN("cpu 6 tries with a 47 ns pause, longer than the window") {
      const CmpxchgOutcome o = run_cmpxchg_loop(line, topo, 6, at_ns(1), long_pause);
      THEN("the feedback of the relaxed loop stays: k = 5 tries") { CHECK(o.tries == 5); }
    }
  }
}
