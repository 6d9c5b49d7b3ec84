// A cache line under contention on machines with a coherence model
// (models/hardware/cache_line.h): exact costs of a contended RMW, a store to a
// shared line on a broadcast machine, the spinners' re-read burst that a store
// leaves behind; and the spinlocks that register their spinners.
#include <doctest/doctest.h>

#include "models/hardware/cache_line.h"
#include "models/experiment/experiment.h"
#include "models/kernel/spinlocks.h"
#include "models/scenario/scenario.h"
#include "tests/unit/lock_calls.h"

using namespace vfssim;
using namespace vfssim::models;
using sim::Time;
using testing::acquire;
using testing::release;

namespace {

// 2 sockets x 4 cores: 10 ns inside a socket, 100 ns across, 5 ns local atomic.
TopologySpec machine(CoherenceKind kind) {
  TopologySpec t;
  t.name = "coherent";
  t.levels = {{"socket", 2, sim::nanoseconds(10)}, {"core", 4, Duration{0}}};
  t.cross_base = sim::nanoseconds(100);
  t.core_level = 1;
  t.local_hit = sim::nanoseconds(1);
  t.local_atomic = sim::nanoseconds(5);
  t.invalidate_per_sharer = sim::nanoseconds(2);
  t.coherence.kind = kind;
  if (kind != CoherenceKind::kPairwise) t.coherence.contended_rmw = sim::nanoseconds(40);
  if (kind == CoherenceKind::kDirectory) t.coherence.reread = sim::nanoseconds(3);
  if (kind == CoherenceKind::kBroadcast) t.coherence.shared_store = sim::nanoseconds(150);
  return t;
}

Time at_ns(std::int64_t ns) { return Time{} + sim::nanoseconds(ns); }

}  // namespace

SCENARIO("an RMW queued behind another costs the machine's contended_rmw inside a socket") {
  GIVEN("a directory machine whose contended RMW costs 40 ns") {
    const Topology topo(machine(CoherenceKind::kDirectory));
    CacheLine line;
    CHECK(line.rmw(topo, 0, at_ns(0)) == at_ns(5));       // first touch: a local atomic
    WHEN("cpu 1 asks while the line is free") {
      THEN("it pays the pair's transfer and the atomic: 10 + 5 ns") { CHECK(line.rmw(topo, 1, at_ns(100)) == at_ns(115)); }
    }
    WHEN("cpu 1 and then cpu 2 ask at once") {
      const Time first = line.rmw(topo, 1, at_ns(5));
      const Time second = line.rmw(topo, 2, at_ns(5));
      THEN("the first is not queued (15 ns); the second queues and pays 40 ns") {
        CHECK(first == at_ns(20));
        CHECK(second == at_ns(60));
      }
    }
    WHEN("the queued request comes from the other socket") {
      (void)line.rmw(topo, 1, at_ns(5));
      THEN("it pays the cross-socket transfer, not the in-socket plateau") {
        CHECK(line.rmw(topo, 4, at_ns(5)) == at_ns(20 + 100 + 5));
      }
    }
  }
  GIVEN("the same machine with the pairwise model (no contended_rmw)") {
    const Topology topo(machine(CoherenceKind::kPairwise));
    CacheLine line;
    (void)line.rmw(topo, 0, at_ns(0));
    (void)line.rmw(topo, 1, at_ns(5));
    THEN("a queued request pays its pair's transfer only") { CHECK(line.rmw(topo, 2, at_ns(5)) == at_ns(20 + 15)); }
  }
}

SCENARIO("a plain store takes the line as an atomic does, at a store's own cost") {
  const Topology topo(machine(CoherenceKind::kPairwise));
  CacheLine line;
  CHECK(line.store(topo, 0, at_ns(0)) == at_ns(1));  // first touch: an L1 write, 1 ns (no locked instruction)
  CHECK(line.owner() == 0);
  WHEN("another CPU of the socket stores to it") {
    THEN("the CPU goes on after 1 ns; the line comes over (10 ns) and is written (1 ns), not 10 + 5 as for an atomic") {
      CHECK(line.store(topo, 1, at_ns(100)) == at_ns(101));
      CHECK(line.busy_until() == at_ns(111));
      CHECK(line.owner() == 1);
    }
  }
  WHEN("two CPUs read it and a third stores") {
    (void)line.load(topo, 1, at_ns(100));
    (void)line.load(topo, 2, at_ns(200));
    REQUIRE(line.sharer_count() == 3);
    THEN("one sharer supplies the line (10 ns), the two others are invalidated (2 x 2 ns), then the write (1 ns)") {
      CHECK(line.store(topo, 3, at_ns(300)) == at_ns(301));
      CHECK(line.busy_until() == at_ns(315));
      CHECK(line.sharer_count() == 0);
      AND_THEN("the next reader pays a transfer from the writer") { CHECK(line.load(topo, 0, at_ns(400)) == at_ns(410)); }
      AND_THEN("a reader that comes before the store is done waits for it") { CHECK(line.load(topo, 0, at_ns(302)) == at_ns(325)); }
    }
  }
  WHEN("a store queues behind an atomic") {
    (void)line.rmw(topo, 1, at_ns(5));  // 5 + 10 + 5 = 20
    THEN("the CPU waits until the line is free (its one store of the line in flight), then goes on") {
      CHECK(line.store(topo, 2, at_ns(5)) == at_ns(21));
      CHECK(line.busy_until() == at_ns(20 + 11));
    }
  }
}

SCENARIO("a store to a shared line on a broadcast machine pays the invalidation broadcast") {
  const Topology topo(machine(CoherenceKind::kBroadcast));
  CacheLine line;
  (void)line.rmw(topo, 0, at_ns(0));
  (void)line.load(topo, 1, at_ns(100));  // 10 ns transfer: cpus 0 and 1 share it
  CHECK(line.sharer_count() == 2);
  CHECK(line.rmw(topo, 2, at_ns(200)) == at_ns(350));  // max(10 + 5 + 2, 150)
}

SCENARIO("spinners re-read the line after every store: the next store waits for them") {
  const Topology topo(machine(CoherenceKind::kDirectory));
  CacheLine line;
  (void)line.rmw(topo, 0, at_ns(0));
  line.set_spinners(3, sim::nanoseconds(90));
  WHEN("the owner stores while three CPUs spin on the line") {
    const Time done = line.rmw(topo, 0, at_ns(10));
    THEN("it invalidates their copies (3 x 2 ns) and the line is busy for their re-reads") {
      CHECK(done == at_ns(10 + 5 + 6));
      CHECK(line.busy_until() == at_ns(21 + 90));
      CHECK(line.rmw(topo, 0, at_ns(30)) == at_ns(111 + 5 + 6));
    }
  }
}

SCENARIO("spinners of a ticket lock slow every store to its line; an MCS queue's do not") {
  GIVEN("a ticket lock on a broadcast machine held by cpu 0, cpus 1-3 (same socket) spinning") {
    const Topology topo(machine(CoherenceKind::kBroadcast));
    TicketSpinlock lock(LockContext{&topo, sim::RngStream(1, "t")});
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    CHECK(g == at_ns(5));
    for (int c = 1; c <= 3; ++c) CHECK_FALSE(acquire(lock, c, at_ns(10 * c), LockMode::kExclusive, g));
    CacheLine* word = lock.word_line();
    REQUIRE(word != nullptr);
    THEN("the line knows its three spinners, each a re-read of 10 ns (broadcast: no grouping)") {
      CHECK(word->spinners() == 3);
    }
    WHEN("cpu 0 releases at 1 us") {
      std::vector<Grant> woken;
      (void)release(lock, 0, at_ns(1000), LockMode::kExclusive, woken);
      REQUIRE(woken.size() == 1);
      THEN("the unlock store is a store to a line shared by the spinners (150 ns), then cpu 1 sees its turn "
           "after half its own fetch and half the others' (5 + 10 ns)") {
        CHECK(woken[0].cpu == 1);
        CHECK(woken[0].at == at_ns(1000 + 150 + 5 + 10));
        CHECK(word->spinners() == 2);
      }
    }
  }
  GIVEN("an MCS lock on the same machine") {
    const Topology topo(machine(CoherenceKind::kBroadcast));
    McsSpinlock lock(LockContext{&topo, sim::RngStream(1, "m")});
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    for (int c = 1; c <= 3; ++c) CHECK_FALSE(acquire(lock, c, at_ns(100 * c), LockMode::kExclusive, g));
    THEN("its waiters spin on their own nodes: nobody spins on the word") { CHECK(lock.word_line()->spinners() == 0); }
    WHEN("cpu 0 releases at 1 us") {
      std::vector<Grant> woken;
      (void)release(lock, 0, at_ns(1000), LockMode::kExclusive, woken);
      THEN("the successor gets it one transfer later") { CHECK(woken.at(0).at == at_ns(1010)); }
    }
    WHEN("the last holder releases an empty queue") {
      McsSpinlock alone(LockContext{&topo, sim::RngStream(1, "a")});
      REQUIRE(acquire(alone, 0, at_ns(0), LockMode::kExclusive, g));
      std::vector<Grant> woken;
      THEN("it pays a second atomic: cmpxchg of the tail (ticket's unlock is a plain store)") {
        CHECK(release(alone, 0, at_ns(100), LockMode::kExclusive, woken) == at_ns(105));
      }
    }
  }
}

SCENARIO("a qspinlock handoff is the unlock store, the waiter's re-read and its take of the word") {
  GIVEN("a pairwise machine: the re-read (10 ns) and the atomic (5 ns)") {
    const Topology topo(machine(CoherenceKind::kPairwise));
    QSpinlock lock(LockContext{&topo, sim::RngStream(1, "q")});
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    CHECK(g == at_ns(5));  // (0,0,0) -> (0,0,1): one cmpxchg
    CHECK_FALSE(acquire(lock, 1, at_ns(10), LockMode::kExclusive, g));
    std::vector<Grant> woken;
    (void)release(lock, 0, at_ns(100), LockMode::kExclusive, woken);
    CHECK(woken.at(0).at == at_ns(115));
  }
  GIVEN("a directory machine: cpu 0 holds, cpus 1-3 wait (cpu 1 pending, cpu 2 the queue head, cpu 3 on its node)") {
    const Topology topo(machine(CoherenceKind::kDirectory));
    QSpinlock lock(LockContext{&topo, sim::RngStream(1, "q")});
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    for (int c = 1; c <= 3; ++c) CHECK_FALSE(acquire(lock, c, at_ns(1000 * c), LockMode::kExclusive, g));
    THEN("two CPUs spin on the word, not three") { CHECK(lock.word_line()->spinners() == 2); }
    WHEN("cpu 0 unlocks at 10 us, the word idle since the last xchg") {
      std::vector<Grant> woken;
      (void)release(lock, 0, at_ns(10000), LockMode::kExclusive, woken);
      THEN("the unlock store pulls the word from cpu 3 (its xchg of the tail was last: 10 ns, and the store's own "
           "1 ns) and invalidates the copy of cpu 2, the queue head, still spinning (2 ns): visible at 10013; cpu 2 "
           "re-reads it from the LLC (3 ns), then cpu 1's re-read, its handoff, pulls it from cpu 0 (10 ns); cpu 1 "
           "holds pending, so it takes the lock with a plain store (qspinlock.c: clear_pending_set_locked), 1 ns, "
           "the line following in the background") {
        CHECK(woken.at(0).cpu == 1);
        CHECK(woken.at(0).at == at_ns(10013 + 3 + 10 + 1));
        CHECK(lock.word_line()->owner() == 1);
      }
    }
    WHEN("cpu 1 is the last waiter (the queue head is the tail)") {
      std::vector<Grant> woken;
      (void)release(lock, 0, at_ns(10000), LockMode::kExclusive, woken);
      (void)release(lock, 1, at_ns(20000), LockMode::kExclusive, woken);
      (void)release(lock, 2, at_ns(30000), LockMode::kExclusive, woken);
      THEN("its take is the cmpxchg of the tail: its re-read pulls the word (10 ns), then an atomic on the line it "
           "now shares with the releaser (5 ns, and 2 ns to invalidate the releaser's copy)") {
        CHECK(woken.at(2).cpu == 3);
        const Time released = woken.at(2).at - sim::nanoseconds(10 + 5 + 2);
        CHECK(released > at_ns(30000));
        CHECK(released < at_ns(30000 + 30));
      }
    }
  }
}

SCENARIO("CNA passes the lock to a waiter on the holder's node, parks the others, and lets none wait past its threshold") {
  const Topology topo(machine(CoherenceKind::kPairwise));  // node = socket: cpus 0-3 and 4-7
  GIVEN("cpu 0 holds; cpu 4 (other node) waits first, then cpu 5 (other node), then cpu 1 (same node)") {
    CnaSpinlock lock(LockContext{&topo, sim::RngStream(1, "c")}, sim::microseconds(10));
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    CHECK_FALSE(acquire(lock, 4, at_ns(10), LockMode::kExclusive, g));
    CHECK_FALSE(acquire(lock, 5, at_ns(20), LockMode::kExclusive, g));
    CHECK_FALSE(acquire(lock, 1, at_ns(30), LockMode::kExclusive, g));
    std::vector<Grant> woken;
    (void)release(lock, 0, at_ns(1000), LockMode::kExclusive, woken);
    THEN("cpu 1 gets it (one in-node transfer and its atomic), cpus 4 and 5 go to the secondary queue") {
      REQUIRE(woken.size() == 1);
      CHECK(woken[0].cpu == 1);
      CHECK(woken[0].at == at_ns(1000 + 10 + 5));
      CHECK(lock.secondary() == 2);
      CHECK(lock.local_handoffs() == 1);
    }
    WHEN("cpu 1 releases with no local waiter left") {
      woken.clear();
      (void)release(lock, 1, at_ns(2000), LockMode::kExclusive, woken);
      THEN("the secondary queue is spliced back: cpu 4, the oldest, gets it, then cpu 5") {
        CHECK(woken.at(0).cpu == 4);
        CHECK(lock.secondary() == 0);
        woken.clear();
        (void)release(lock, 4, at_ns(3000), LockMode::kExclusive, woken);
        CHECK(woken.at(0).cpu == 5);
      }
    }
  }
  GIVEN("local waiters keep arriving while cpu 4 waits in the secondary queue") {
    CnaSpinlock lock(LockContext{&topo, sim::RngStream(1, "c")}, sim::microseconds(10));
    Time g;
    REQUIRE(acquire(lock, 0, at_ns(0), LockMode::kExclusive, g));
    CHECK_FALSE(acquire(lock, 4, at_ns(10), LockMode::kExclusive, g));
    CHECK_FALSE(acquire(lock, 1, at_ns(20), LockMode::kExclusive, g));
    std::vector<Grant> woken;
    int holder = 0;
    Time now = at_ns(1000);
    int served_local = 0;
    while (true) {  // the holder hands to a local waiter while one is there and cpu 4 is under the threshold
      woken.clear();
      const int next_local = holder == 1 ? 2 : 1;
      CHECK_FALSE(acquire(lock, next_local, now, LockMode::kExclusive, g));
      (void)release(lock, holder, now + sim::nanoseconds(1), LockMode::kExclusive, woken);
      holder = woken.at(0).cpu;
      now = woken.at(0).at + sim::microseconds(1);
      if (holder == 4) break;
      ++served_local;
      REQUIRE(served_local < 100);
    }
    THEN("cpu 4 gets the lock once it has waited past the 10 us threshold, not before") {
      CHECK(served_local >= 9);
      CHECK(served_local <= 11);
    }
  }
}

TEST_CASE("CNA under load: mutual exclusion holds (the executor's checker), every task progresses, handoffs stay local") {
  const std::string yaml = R"(
scenario: cna-load
machine:
  levels:
    - {name: socket, count: 2, transfer: 40ns}
    - {name: core, count: 4}
  interconnect: {base: 120ns, hop: 0ns}
  local_hit: 1ns
  local_atomic: 5ns
  coherence: {kind: directory, reread: 3ns, contended_rmw: 40ns}
workload:
  tasks: thread
  placement: spread
  loop: [iteration]
  warmup: 20us
  duration: 2ms
  cpus: [8]
strategies:
  qspinlock:
    locks: {l: {kind: qspinlock, scope: global}}
    lines: {data: {scope: global}}
    ops:
      iteration:
        - compute: {exp: 300ns}
        - lock: l
          body:
            - atomic: data
            - compute: 30ns
  cna:
    extends: qspinlock
    locks: {l: {kind: cna, scope: global, threshold: 20us}}
)";
  const Scenario sc = load_scenario_string(yaml, "<cna-load>");
  const PointResult q = run_point(sc, PointSpec{"qspinlock", 8, 0, 1});
  const PointResult c = run_point(sc, PointSpec{"cna", 8, 0, 1});
  REQUIRE(c.stop == "time-limit");
  REQUIRE(q.stop == "time-limit");
  for (auto ops : c.task_ops) CHECK(ops > 0);
  MESSAGE("8 CPUs on 2 sockets: qspinlock " << q.ops_per_sec << " ops/s, cna " << c.ops_per_sec);
  CHECK(c.ops_per_sec > q.ops_per_sec);  // the data line and the word stay in a socket
}

// write: LINE through the whole stack. One CPU: the loop costs compute +
// local_hit exactly (the store's own cost), where `atomic:` costs compute
// + local_atomic. Eight CPUs storing to one flag: the line's service time
// (a 40 ns transfer and the write) bounds them (at most one store of the
// line in flight per CPU), but they pay less than atomics, whose requester
// waits for the line to arrive.
TEST_CASE("a write step costs its CPU local_hit and moves the line for the next reader") {
  const std::string yaml = R"(
scenario: store-flag
machine:
  levels:
    - {name: socket, count: 1, transfer: 40ns}
    - {name: core, count: 8}
  local_hit: 1ns
  local_atomic: 5ns
workload:
  tasks: thread
  placement: compact
  loop: [iteration]
  warmup: 10us
  duration: 1ms
  cpus: [1, 8]
strategies:
  store:
    lines: {flag: {scope: global}}
    ops:
      iteration:
        - compute: 100ns
        - write: flag
  store_read:
    extends: store
    ops:
      iteration:
        - compute: 100ns
        - write: flag
        - read: flag
  atomic_read:
    extends: store
    ops:
      iteration:
        - compute: 100ns
        - atomic: flag
        - read: flag
)";
  const Scenario sc = load_scenario_string(yaml, "<store-flag>");
  const PointResult one = run_point(sc, PointSpec{"store", 1, 0, 1});
  CHECK(one.ops_per_sec == doctest::Approx(1e9 / 101.0).epsilon(1e-3));
  const PointResult solo = run_point(sc, PointSpec{"store_read", 1, 0, 1});
  CHECK(solo.ops_per_sec == doctest::Approx(1e9 / 102.0).epsilon(1e-3));  // the read hits the line it wrote
  // Eight CPUs: the line serves one store per 41 ns (a 40 ns transfer and
  // the write), whatever the store buffers hide.
  const PointResult stores = run_point(sc, PointSpec{"store", 8, 0, 1});
  CHECK(stores.ops_per_sec < 1e9 / 41.0 * 1.01);
  CHECK(stores.ops_per_sec > 1e9 / 41.0 * 0.9);
  // With a read after each store the line serves two requests per
  // iteration: store (41 ns) and the read's transfer back (40 ns); an
  // atomic costs 40 + 5 ns. Stores are cheaper by the atomic's extra cost.
  const PointResult store_read = run_point(sc, PointSpec{"store_read", 8, 0, 1});
  const PointResult atomics = run_point(sc, PointSpec{"atomic_read", 8, 0, 1});
  MESSAGE("8 CPUs: write " << stores.ops_per_sec << " ops/s, write+read " << store_read.ops_per_sec
                           << ", atomic+read " << atomics.ops_per_sec);
  CHECK(store_read.ops_per_sec == doctest::Approx(1e9 / 81.0).epsilon(0.05));
  CHECK(atomics.ops_per_sec == doctest::Approx(1e9 / 85.0).epsilon(0.05));
  CHECK(store_read.ops_per_sec > atomics.ops_per_sec);
}

SCENARIO("line retention: a core finishes its back-to-back RMWs before the line leaves, up to retention_ops a visit") {
  // Pairwise costs (10 ns in a socket + 5 ns atomic), retention of 3 ops a
  // visit within 8 ns of the previous access.
  TopologySpec spec = machine(CoherenceKind::kPairwise);
  spec.coherence.retention_ops = 3;
  spec.coherence.retention_window = sim::nanoseconds(8);
  const Topology topo(spec);
  CacheLine line;
  CHECK(line.rmw(topo, 0, at_ns(0)) == at_ns(5));  // cpu 0 holds the line
  CHECK(line.rmw(topo, 1, at_ns(5)) == at_ns(20));  // cpu 1 queues: the line is in flight 5..20
  WHEN("cpu 0 asks again 2 ns after its access, while the line is still on its way out") {
    const Time again = line.rmw(topo, 0, at_ns(7));
    THEN("it completes here at its own cost (7 + 5 ns); cpu 1's grant keeps its time; later requests wait 5 ns more") {
      CHECK(again == at_ns(12));
      CHECK(line.busy_until() == at_ns(25));
      CHECK(line.stats().bounces == 1);  // cpu 0 -> cpu 1 only
    }
    AND_WHEN("cpu 0 keeps going back to back") {
      const Time third = line.rmw(topo, 0, at_ns(13));
      const Time fourth = line.rmw(topo, 0, at_ns(19));
      THEN("the visit's third access is retained; the fourth exceeds retention_ops and queues for the line") {
        CHECK(third == at_ns(18));
        CHECK(fourth == at_ns(30 + 10 + 5));  // behind cpu 1 (the line busy to 30 after two retained ops): transfer + atomic
      }
    }
  }
  WHEN("cpu 0 comes back after the window (paced, as SOSP'13's benchmark paces its threads)") {
    THEN("it queues and pays a transfer") { CHECK(line.rmw(topo, 0, at_ns(14)) == at_ns(20 + 10 + 5)); }
  }
  WHEN("the line has already arrived at cpu 1") {
    THEN("cpu 0 queues as without retention") { CHECK(line.rmw(topo, 0, at_ns(21)) == at_ns(21 + 10 + 5)); }
  }
  GIVEN("the same machine without retention") {
    const Topology plain(machine(CoherenceKind::kPairwise));
    CacheLine l2;
    (void)l2.rmw(plain, 0, at_ns(0));
    (void)l2.rmw(plain, 1, at_ns(5));
    THEN("cpu 0's request 2 ns later queues behind cpu 1") { CHECK(l2.rmw(plain, 0, at_ns(7)) == at_ns(20 + 10 + 5)); }
  }
}

SCENARIO("line retention under saturation: a visit serves retention_ops accesses for one transfer") {
  // N CPUs looping back to back on one line: each visit costs one transfer
  // (10 ns) and then serves up to 3 accesses of 5 ns; without retention
  // every access is a transfer + atomic (15 ns).
  TopologySpec spec = machine(CoherenceKind::kPairwise);
  spec.coherence.retention_ops = 3;
  spec.coherence.retention_window = sim::nanoseconds(2);
  const Topology topo(spec);
  CacheLine line;
  // Four CPUs each issue the next access 1 ns after the previous completes.
  std::vector<Time> next(4, at_ns(0));
  std::uint64_t ops = 0;
  const Time end = at_ns(100000);
  for (;;) {
    std::size_t c = 0;
    for (std::size_t i = 1; i < next.size(); ++i)
      if (next[i] < next[c]) c = i;
    if (next[c] >= end) break;
    next[c] = line.rmw(topo, static_cast<int>(c), next[c]) + sim::nanoseconds(1);
    ++ops;
  }
  const double ns_per_op = 100000.0 / static_cast<double>(ops);
  THEN("the per-op time is well under a transfer + atomic (15 ns)") {
    CHECK(ns_per_op < 10.0);
    CHECK(ns_per_op > 4.0);
  }
}
