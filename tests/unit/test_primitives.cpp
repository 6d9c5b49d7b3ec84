// Kernel primitives through the whole stack (YAML -> program -> executor):
// exact single-CPU rates, contended behaviour, and the invariant checkers
// firing on deliberately broken models.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "flat_machine.h"
#include "models/codepath/executor.h"
#include "models/experiment/experiment.h"
#include "models/experiment/figure.h"
#include "models/kernel/lock_kinds.h"
#include "models/kernel/rwlock.h"
#include "models/scenario/scenario.h"
#include "sim/simulation.h"

using namespace vfssim;
using namespace vfssim::models;
using sim::Time;

namespace {

using vfssim::testing::flat_machine;

// A scenario with one strategy `s` whose loop is the op `iter`.
Scenario scenario(const std::string& strategy_body, int cpus, const std::string& duration = "1000us",
                  const std::string& tasks = "process") {
  const std::string text = "scenario: prim\n" + flat_machine(cpus) +
                           "workload:\n  tasks: " + tasks + "\n  placement: compact\n  loop: [iter]\n"
                           "  warmup: 20us\n  duration: " + duration + "\n"
                           "strategies:\n  s:\n" + strategy_body;
  return load_scenario_string(text, "prim.yaml");
}

PointResult run(const Scenario& sc, int cpus, std::uint64_t seed = 1) {
  return run_point(sc, PointSpec{"s", cpus, 0, seed});
}

const LockReport& lock(const PointResult& r, const std::string& name) {
  for (const auto& l : r.locks)
    if (l.name == name) return l;
  FAIL("no lock " << name);
  return r.locks.front();
}

// A strategy whose op `iter` computes 1 us and walks [root, tmp, file]
// (root and tmp shared, file the task's own) at 100 ns per component:
// `walk` the walk's other keys, `locks` entries of a locks: mapping.
std::string walk_strategy(const std::string& walk, const std::string& locks = "") {
  return "    dentries:\n      root: {scope: global}\n      tmp: {scope: global}\n      file: {scope: task}\n"
         "    dentry_lock: ticket\n" + (locks.empty() ? std::string() : "    locks:\n" + locks) +
         "    ops:\n      iter:\n        - compute: 1000ns\n"
         "        - walk: [root, tmp, file]\n          component: 100ns\n          " + walk + "\n";
}

}  // namespace

TEST_CASE("one CPU's rate is 1/(path cost) exactly for every primitive") {
  struct Case {
    const char* name;
    std::string body;
    std::int64_t path_ns;  // cost of one iteration, by hand
  };
  const std::string locks =
      "    locks:\n"
      "      spin: {kind: tas, scope: global}\n"
      "      tick: {kind: ticket, scope: global}\n"
      "      q: {kind: mcs, scope: global}\n"
      "      m: {kind: mutex, scope: global}\n"
      "      ms: {kind: mutex, scope: global, spin: false, wake: 5us}\n"
      "      sem: {kind: rwsem, scope: global, wake: 5us}\n"
      "      rw: {kind: rwlock, scope: global}\n"
      "      br: {kind: brlock, scope: global}\n"
      "    lines:\n"
      "      counter: {scope: global}\n"
      "      pcpu: {scope: cpu}\n"
      "    seqcounts:\n"
      "      seq: {scope: global}\n";
  const Case cases[] = {
      // compute 1000 + atomic on the lock word 10 + hold 200
      {"tas", "        - lock: spin\n          hold: 200ns\n", 1210},
      {"ticket", "        - lock: tick\n          hold: 200ns\n", 1210},
      {"mcs", "        - lock: q\n          hold: 200ns\n", 1210},
      {"mutex fast path", "        - lock: m\n          hold: 200ns\n", 1210},
      {"sleeping mutex fast path", "        - lock: ms\n          hold: 200ns\n", 1210},
      // down_read: atomic 10, hold 200, up_read: atomic 10
      {"rwsem read", "        - lock: sem\n          mode: read\n          hold: 200ns\n", 1220},
      {"rwsem write", "        - lock: sem\n          mode: write\n          hold: 200ns\n", 1210},
      {"rwlock read", "        - lock: rw\n          mode: read\n          hold: 200ns\n", 1220},
      // brlock read: own CPU's lock, 10
      {"brlock read", "        - lock: br\n          mode: read\n          hold: 200ns\n", 1210},
      // brlock write on a 4-CPU machine: 4 locks x 10 (after the first
      // round every line is ours) + hold + 4 unlock stores x 1
      {"brlock write", "        - lock: br\n          mode: write\n          hold: 200ns\n", 1000 + 40 + 200 + 4},
      // atomic on a line we own: 10; load of a line we hold: 1
      {"atomic", "        - atomic: counter\n", 1010},
      {"read", "        - read: counter\n", 1001},
      // sum of 4 per-CPU copies with one busy CPU: its own 1, and the 3
      // idle CPUs' copies, never written, stay in its cache: 3 x 1
      {"sum", "        - sum: pcpu\n", 1004},
      // seq read: begin load 1 + body 50 + retry load 1
      {"seq read", "        - seq_read: seq\n          body:\n            - compute: 50ns\n", 1052},
      // seq write: two increments, 10 each, + body 50
      {"seq write", "        - seq_write: seq\n          unlocked: true\n          body:\n            - compute: 50ns\n", 1070},
      // lockref on a free spinlock: one cmpxchg on its word, 10
      {"lockref", "        - lockref: spin\n          hold: 30ns\n", 1010},
      // rcu_read costs nothing
      {"rcu_read", "        - rcu_read:\n            - compute: 50ns\n", 1050},
      // atomic_dec_and_lock never reaching zero: the atomic only
      {"dec_and_lock, not last",
       "        - dec_and_lock: counter\n          spinlock: spin\n          last: 0\n          hold: 100ns\n", 1010},
      // ... always the last reference: atomic 10 + lock word 10 + hold 100
      {"dec_and_lock, last",
       "        - dec_and_lock: counter\n          spinlock: spin\n          last: 1\n          hold: 100ns\n", 1120},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const Duration path = sim::nanoseconds(c.path_ns);
    const std::string strategy = locks + "    ops:\n      iter:\n        - compute: 1000ns\n" + c.body;
    // A window of exactly 1000 iterations.
    const Scenario sc = scenario(strategy, 4, std::to_string(c.path_ns) + "us");
    const auto r = run(sc, 1);
    CHECK(r.ops == 1000);
    CHECK(r.ops_per_sec == doctest::Approx(1.0 / sim::seconds(path)).epsilon(1e-12));
  }
}

TEST_CASE("percpu_counter: a local add per call, the shared count under its lock every batch") {
  const std::string strategy =
      "    locks:\n      count_lock: {kind: ticket, scope: global}\n"
      "    lines:\n      nr_files: {scope: global}\n"
      "    ops:\n      iter:\n        - compute: 1000ns\n"
      "        - percpu_add: nr_files\n          batch: 4\n          counter_lock: count_lock\n";
  // 4 iterations: 4 x (1000 + 1) + lock 10 + atomic 10 = 4024 ns.
  const Scenario sc = scenario(strategy, 4, "4024us");
  const auto r = run(sc, 1);
  CHECK(r.ops == 4000);
  CHECK(lock(r, "count_lock").stats.acquisitions == 1000);
}

TEST_CASE("a spinning mutex hands over like MCS; a sleeping one wakes its waiters and they sleep off-CPU") {
  auto strategy = [](const std::string& decl) {
    return "    locks:\n      m: {kind: mutex, scope: global" + decl +
           "}\n    ops:\n      iter:\n        - compute: {exp: 100ns}\n        - lock: m\n          hold: 200ns\n";
  };
  const auto spin = run(scenario(strategy(""), 8), 8);
  const auto sleep = run(scenario(strategy(", spin: false, wake: 2us"), 8), 8);
  // Spinning: always a waiter, so one hold plus one transfer per acquisition.
  CHECK(spin.ops_per_sec == doctest::Approx(1.0 / 300e-9).epsilon(0.01));
  // Sleeping: a release frees the lock and wakes one sleeper 2 us later;
  // meanwhile CPUs arriving on the fast path take it (no handoff), so the
  // lock keeps running while sleepers wait at least one wake-up.
  const auto& st = lock(sleep, "m").stats;
  CHECK(st.contentions > 0);
  CHECK(st.wait_max >= sim::microseconds(2));
  CHECK(sleep.ops_per_sec > 0.5 / 300e-9);
  // Spinning waits are CPU time (mutex_lock on top); sleeping waits are not.
  CHECK(spin.profile.front().symbol == "mutex_lock");
  double sleep_wait_share = 0;
  for (const auto& e : sleep.profile)
    if (e.symbol == "mutex_lock") sleep_wait_share += static_cast<double>(e.time.count()) / sleep.cpu_time.count();
  CHECK(sleep_wait_share < 0.05);
}

TEST_CASE("rwsem readers never wait for each other but bounce the count word") {
  const std::string strategy =
      "    locks:\n      sem: {kind: rwsem, scope: global, wake: 5us}\n"
      "    ops:\n      iter:\n        - compute: {exp: 50ns}\n"
      "        - lock: sem\n          mode: read\n          hold: 100ns\n";
  const auto r = run(scenario(strategy, 16), 16);
  CHECK(lock(r, "sem").stats.contentions == 0);
  // Every down_read and up_read is an RMW of one line that moves between
  // CPUs: at saturation the word serves one request per 100 ns transfer +
  // 10 ns atomic, two per read section.
  CHECK(r.ops_per_sec == doctest::Approx(1.0 / (2 * 110e-9)).epsilon(0.03));
}

TEST_CASE("reader-writer exclusion holds for rwsem, rwlock (fair and reader-preferring) and brlock") {
  for (const std::string decl : {"{kind: rwsem, scope: global, wake: 3us}", "{kind: rwsem, scope: global, spin: true}",
                                 "{kind: rwlock, scope: global}", "{kind: rwlock, scope: global, fair: false}",
                                 "{kind: brlock, scope: global}"}) {
    CAPTURE(decl);
    const std::string strategy =
        "    locks:\n      l: " + decl +
        "\n    ops:\n      iter:\n        - compute: {exp: 300ns}\n"
        "        - branch: 0.2\n          then:\n            - lock: l\n              mode: write\n              hold: 150ns\n"
        "          else:\n            - lock: l\n              mode: read\n              hold: {exp: 400ns}\n";
    const auto r = run(scenario(strategy, 8), 8, 17);
    CHECK(r.stop == "time-limit");
    CHECK(r.ops > 300);
    CHECK(lock(r, "l").stats.contentions > 0);
  }
}

// The lock interface (lock.h): a release that admits several readers
// answers the first and leaves the others, in queue order, in the lock's
// overflow; one that hands over to one waiter or none leaves it empty.
TEST_CASE("a release that admits several readers answers the first and leaves the rest in order in the overflow") {
  const Topology topo(scenario("    ops:\n      iter:\n        - compute: 1us\n", 8).machine);
  RwLock l(LockContext{&topo, {}}, false, false, Duration{0});
  REQUIRE(l.acquire(0, Time{}, LockMode::kExclusive));
  for (int c = 1; c <= 3; ++c) CHECK_FALSE(l.acquire(c, Time{} + sim::nanoseconds(c), LockMode::kShared));
  CHECK_FALSE(l.acquire(4, Time{} + sim::nanoseconds(4), LockMode::kExclusive));
  const Released r = l.release(0, Time{} + sim::nanoseconds(100), LockMode::kExclusive);
  CHECK(r.done == Time{} + sim::nanoseconds(100));  // write_unlock: a plain store
  // Each reader sees the release one transfer later (200 ns), then does its
  // atomic on the count word, queued on its line: the word's transfer from
  // its last owner and a local atomic, 110 ns each, one after the other.
  CHECK(r.grant.cpu == 1);
  CHECK(r.grant.at == Time{} + sim::nanoseconds(310));
  REQUIRE(r.more);
  std::vector<Grant> more;
  l.take_more(more);
  REQUIRE(more.size() == 2);
  CHECK(more[0].cpu == 2);
  CHECK(more[0].at == Time{} + sim::nanoseconds(420));
  CHECK(more[1].cpu == 3);
  CHECK(more[1].at == Time{} + sim::nanoseconds(530));
  std::vector<Grant> none;
  l.take_more(none);
  CHECK(none.empty());  // taken once
  // The last reader out hands the lock to the writer alone.
  CHECK_FALSE(l.release(1, Time{} + sim::nanoseconds(300), LockMode::kShared).more);
  CHECK_FALSE(l.release(2, Time{} + sim::nanoseconds(300), LockMode::kShared).more);
  const Released w = l.release(3, Time{} + sim::nanoseconds(400), LockMode::kShared);
  CHECK(w.grant.cpu == 4);
  CHECK_FALSE(w.more);
  const Released last = l.release(4, Time{} + sim::nanoseconds(900), LockMode::kExclusive);
  CHECK(last.grant.cpu == -1);
  CHECK_FALSE(last.more);
}

// AnyLock's closed set (lock_kinds.h): every model class in LockModels but
// the tests' ExternalLock is what some row makes, so a new model cannot be
// listed without its row, nor a row make a class the set lacks (that would
// not compile).
TEST_CASE("every model of the lock registry's closed set is made by a row") {
  const Topology topo(scenario("    ops:\n      iter:\n        - compute: 1us\n", 8).machine);
  std::vector<bool> made(std::variant_size_v<LockModels>, false);
  for (const LockKind& k : lock_kind_table())
    for (const bool versioned : {false, true}) {
      LockDecl d;
      d.name = "l";
      d.kind = k.name;
      d.versioned = versioned;
      made[k.make(d, LockContext{&topo, {}})->models().index()] = true;
    }
  for (std::size_t i = 0; i + 1 < made.size(); ++i) {
    CAPTURE(i);
    CHECK(made[i]);
  }
  CHECK_FALSE(made.back());  // ExternalLock: tests only
}

TEST_CASE("a brlock writer pays one transfer per CPU of the machine") {
  const std::string strategy =
      "    locks:\n      br: {kind: brlock, scope: global}\n"
      "    ops:\n      iter:\n        - compute: 1000ns\n"
      "        - lock: br\n          mode: write\n          hold: 100ns\n";
  // Two writers on a 64-CPU machine alternate: each write takes 64 locks
  // last touched by the other writer: 64 x (100 + 10) ns.
  const auto r = run(scenario(strategy, 64), 2);
  const auto& st = lock(r, "br").stats;
  CHECK(st.acquisitions > 100);
  CHECK(r.ops_per_sec < 2.0 / (1100e-9 + 64 * 110e-9) * 1.05);
}

TEST_CASE("seqcount readers retry when a write overlaps, and fall back to the lock") {
  const std::string strategy =
      "    locks:\n      wl: {kind: ticket, scope: global}\n"
      "    seqcounts:\n      seq: {scope: global}\n"
      "    ops:\n      iter:\n        - compute: {exp: 200ns}\n"
      "        - branch: 0.3\n          then:\n"
      "            - lock: wl\n              body:\n                - seq_write: seq\n                  body:\n"
      "                    - compute: 300ns\n"
      "          else:\n            - seq_read: seq\n              retries: 2\n              fallback: wl\n"
      "              body:\n                - compute: 400ns\n";
  const auto r = run(scenario(strategy, 8), 8, 5);
  const auto rs = [&] {
    // seq stats are not in PointResult yet; the executor checks overlap on
    // every accepted read, so a run without InvariantViolation is the proof.
    return r.ops;
  }();
  CHECK(rs > 1000);
  // Fallbacks take the writers' lock: more acquisitions than writes alone.
  CHECK(lock(r, "wl").stats.acquisitions > static_cast<std::uint64_t>(0.3 * static_cast<double>(r.ops)));
}

namespace {

// A seqcount that never tells a reader to retry: must be caught.
class BrokenSeqCount final : public SeqCount {
 public:
  using SeqCount::SeqCount;
  bool read_retry(int cpu, sim::Time now, std::uint64_t, sim::Time& at) override {
    at = now + topo_->transfer(cpu, cpu);
    return false;
  }
};
std::unique_ptr<SeqCount> broken_seq(const Topology& t) { return std::make_unique<BrokenSeqCount>(t); }

// An rwlock that lets a writer in while readers hold it.
class BrokenRwLock final : public ExternalLock {
 public:
  std::optional<sim::Time> acquire(int, sim::Time now, LockMode) override { return now; }
  Released release(int, sim::Time now, LockMode) override { return {now}; }
};
std::unique_ptr<AnyLock> broken_rw(const LockDecl&, LockContext) {
  return std::make_unique<AnyLock>(std::make_unique<BrokenRwLock>());
}

void run_with(const Scenario& sc, int cpus, SeqFactory sf, LockFactory lf, bool broken_rcu = false) {
  const Topology topo(sc.machine);
  const Program prog = compile_program(sc.strategies[0], sc.workload.loop);
  sim::Simulation sim;
  ExecutorConfig cfg;
  cfg.cpus = topo.place(cpus, Placement::kCompact);
  cfg.seed = 3;
  cfg.warmup = sim::Time{} + sim::microseconds(1);
  cfg.end = sim::Time{} + sim::microseconds(20000);
  cfg.start_jitter = sim::microseconds(1);
  cfg.seq_factory = sf;
  cfg.lock_factory = lf;
  cfg.broken_rcu_ignores_readers = broken_rcu;
  Executor exec(sim, prog, topo, cfg);
  exec.start();
  sim.run({cfg.end});
}

}  // namespace

TEST_CASE("the seqlock checker catches a reader that accepts a torn read") {
  const std::string strategy =
      "    locks:\n      wl: {kind: ticket, scope: global}\n"
      "    seqcounts:\n      seq: {scope: global}\n"
      "    ops:\n      iter:\n        - compute: {exp: 200ns}\n"
      "        - branch: 0.5\n          then:\n"
      "            - lock: wl\n              body:\n                - seq_write: seq\n                  body:\n"
      "                    - compute: 300ns\n"
      "          else:\n            - seq_read: seq\n              body:\n                - compute: 400ns\n";
  const Scenario sc = scenario(strategy, 8);
  CHECK_NOTHROW(run_with(sc, 8, &make_seqcount, &make_lock));
  CHECK_THROWS_AS(run_with(sc, 8, &broken_seq, &make_lock), InvariantViolation);
}

TEST_CASE("the reader-writer checker catches a writer admitted with readers") {
  const std::string strategy =
      "    locks:\n      l: {kind: rwlock, scope: global}\n"
      "    ops:\n      iter:\n        - compute: {exp: 100ns}\n"
      "        - branch: 0.5\n          then:\n            - lock: l\n              mode: write\n              hold: 100ns\n"
      "          else:\n            - lock: l\n              mode: read\n              hold: 300ns\n";
  CHECK_THROWS_AS(run_with(scenario(strategy, 8), 8, &make_seqcount, &broken_rw), InvariantViolation);
}

TEST_CASE("synchronize_rcu waits for every busy CPU's next tick plus the forcing delay") {
  const std::string strategy =
      "    kernel: {hz: 1000}\n"
      "    ops:\n      iter:\n        - compute: 10us\n        - synchronize_rcu: normal\n";
  // HZ=1000: a jiffy is 1 ms, the forcing delay 1+1+1 = 3 jiffies; a grace
  // period lasts 3 ms plus the wait for the last CPU's tick (< 1 ms).
  const auto one = run(scenario(strategy, 4, "200ms"), 1);
  const double per_op = 1.0 / one.ops_per_sec;
  CHECK(per_op > 3.01e-3);
  CHECK(per_op < 4.02e-3);
  // Four CPUs calling it share grace periods (batching): a request made
  // while one runs waits for the next, so each waits one to two grace
  // periods, never four.
  const auto four = run(scenario(strategy, 4, "200ms"), 4);
  CHECK(four.ops_per_sec / 4 > 1.0 / (2 * 4.02e-3));
  CHECK(four.ops_per_sec > 1.5 * one.ops_per_sec);
}

TEST_CASE("call_rcu callbacks run after their grace period; the checker catches a grace period that ignores readers") {
  // Both forms: a callback of a cost, and one of steps (a spinlock's hold,
  // charged under rcu_do_batch as the cost is).
  for (const std::string callback : {"        - call_rcu: 100ns\n",
                                     "        - call_rcu:\n            steps:\n"
                                     "              - lock: cb_lock\n                hold: 100ns\n"}) {
    CAPTURE(callback);
    const std::string strategy =
        "    kernel: {hz: 1000}\n"
        "    locks:\n      cb_lock: {kind: ticket, scope: global}\n"
        "    ops:\n      iter:\n        - compute: {exp: 20us}\n"
        "        - rcu_read:\n            - compute: {exp: 4ms}\n" + callback;
    // Read sections longer than a jiffy: a correct grace period waits for
    // them; one that ignores readers lets a callback run under a reader.
    const Scenario sc = scenario(strategy, 4, "50ms");
    CHECK_NOTHROW(run_with(sc, 4, &make_seqcount, &make_lock, false));
    CHECK_THROWS_AS(run_with(sc, 4, &make_seqcount, &make_lock, true), InvariantViolation);
    const auto r = run(sc, 4);
    double cb_share = 0;
    for (const auto& e : r.profile)
      if (e.symbol == "rcu_do_batch") cb_share += static_cast<double>(e.time.count());
    CHECK(cb_share > 0);  // callbacks ran, and were charged as CPU time
  }
}

TEST_CASE("lockref: cmpxchg while the lock is free, the spinlock while it is held") {
  const std::string strategy =
      "    locks:\n      d_lock: {kind: ticket, scope: global}\n"
      "    ops:\n      iter:\n        - compute: {exp: 2us}\n"
      "        - branch: 0.05\n          then:\n            - lock: d_lock\n              hold: 1us\n"
      "          else:\n            - lockref: d_lock\n              hold: 20ns\n";
  const auto r = run(scenario(strategy, 8, "5000us"), 8, 9);
  const auto& st = lock(r, "d_lock").stats;
  // The lock is held about 8 x 5% x 1 us / 2 us = 20% of the time: lockrefs
  // that find it held take it (more acquisitions than the 5% explicit
  // ones), the others only cmpxchg (far fewer than one per iteration).
  CHECK(static_cast<double>(st.acquisitions) > 0.08 * static_cast<double>(r.ops));
  CHECK(static_cast<double>(st.acquisitions) < 0.4 * static_cast<double>(r.ops));
}

TEST_CASE("path walk: exact single-CPU costs of ref-walk, rcu-walk and the two drops to ref-walk") {
  struct Case {
    const char* name;
    std::string walk;
    std::int64_t path_ns;
  };
  // C = 100 ns per component after the first; get = d_lock 10 + d_count 10;
  // put = d_count 10; a d_seq read = begin load 1 + retry load 1.
  const Case cases[] = {
      {"ref-walk", "mode: ref", 1000 + 10 + (100 + 20 + 10) * 2},  // dget of the start: an atomic
      {"rcu-walk", "mode: rcu", 1000 + 2 + (100 + 2) * 2 + 20},
      {"rcu-walk, ACL refuses at tmp, unlazy", "mode: rcu\n          refuse_rcu: [tmp]\n          on_refuse: unlazy",
       1000 + 2 + (100 + 2) + 20 + (100 + 20 + 10)},
      {"rcu-walk, ACL refuses at tmp, restart", "mode: rcu\n          refuse_rcu: [tmp]\n          on_refuse: restart",
       1000 + 2 + (100 + 2) + 10 + (100 + 20 + 10) * 2},
      {"lockref ref-walk", "mode: ref\n          refcount: lockref", 1000 + 10 + (100 + 10 + 10) * 2},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const Scenario sc = scenario(walk_strategy(c.walk), 4, std::to_string(c.path_ns) + "us");
    const auto r = run(sc, 1);
    CHECK(r.ops == 1000);
  }
}

TEST_CASE("walk hooks: exact single-CPU costs of permission and revalidate in ref-walk, rcu-walk and their refusals") {
  struct Case {
    const char* name;
    std::string hooks;
    std::int64_t path_ns;
  };
  // The path [root, tmp, file]: permission runs on root and tmp (the
  // directories walked through), revalidate on tmp and file (the dentries
  // looked up). P = 70 ns, V = 30 ns; C = 100 ns per component; get =
  // d_lock 10 + d_count 10; put = d_count 10; a d_seq read 2; dget of the
  // start 10; an uncontended i_lock 10 + its hold.
  const std::string perm = "\n          permission:\n            steps: [{compute: 70ns}]\n            rcu: ";
  const std::string reval = "\n          revalidate:\n            steps: [{compute: 30ns}]\n            rcu: ";
  const Case cases[] = {
      {"ref-walk, no hooks", "mode: ref", 1000 + 10 + (100 + 20 + 10) * 2},
      {"ref-walk: both hooks, twice each", "mode: ref" + perm + "run" + reval + "run",
       1000 + 10 + (100 + 20 + 10) * 2 + 2 * 70 + 2 * 30},
      {"rcu-walk: both hooks run under RCU", "mode: rcu" + perm + "run" + reval + "run",
       1000 + 2 + (100 + 2) * 2 + 20 + 2 * 70 + 2 * 30},
      // At root: -ECHILD, unlazy there (dget), then everything in ref-walk.
      {"rcu-walk: permission refuses at root", "mode: rcu" + perm + "refuse" + reval + "run",
       1000 + 2 + 10 + (70 + 100 + 20 + 30 + 10) * 2},
      // At tmp's revalidate: references on root and tmp, the op again, root put.
      {"rcu-walk: revalidate refuses at tmp", "mode: rcu" + perm + "run" + reval + "refuse",
       1000 + 2 + 70 + 100 + 2 + (20 + 20 + 30 + 10) + (70 + 100 + 20 + 30 + 10)},
      {"rcu-walk: permission only on tmp refuses there, unlazy",
       "mode: rcu" + perm + "refuse\n            at: [tmp]", 1000 + 2 + 100 + 2 + 20 + (70 + 100 + 20 + 10)},
      {"rcu-walk: permission only on tmp refuses there, restart",
       "mode: rcu\n          on_refuse: restart" + perm + "refuse\n            at: [tmp]",
       1000 + 2 + 100 + 2 + 10 + (100 + 20 + 10) + (70 + 100 + 20 + 10)},
      {"ref-walk: each directory's own i_lock ('.i_lock')",
       "mode: ref\n          permission:\n            steps: [{lock: .i_lock, hold: 50ns}]\n            rcu: run",
       1000 + 10 + (100 + 20 + 10) * 2 + 2 * (10 + 50)},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const std::string s = walk_strategy(
        c.hooks, "      root.i_lock: {kind: ticket, scope: global}\n      tmp.i_lock: {kind: ticket, scope: global}\n");
    // 10,000 iterations exactly: a cost 1.5 ns off either way would show.
    CHECK(run(scenario(s, 4, std::to_string(c.path_ns * 10) + "us"), 1).ops == 10000);
  }
}

TEST_CASE("walk hooks: a refusing permission drops rcu-walk to ref-walk; the profile and lock stats show it") {
  auto point = [](const std::string& rcu) {
    const std::string s = walk_strategy(
        "mode: rcu\n          permission:\n            steps: [{lock: fs_lock, hold: 40ns}]\n            rcu: " + rcu,
        "      fs_lock: {kind: ticket, scope: global}\n");
    return run(scenario(s, 4), 1);
  };
  const auto run_rcu = point("run"), refuse = point("refuse");
  // Acquisitions in the window, against iterations ended in it: an
  // iteration straddling either edge counts in one and not the other.
  auto acquisitions = [](const PointResult& r, const std::string& name) -> std::int64_t {
    for (const auto& l : r.locks)
      if (l.name == name) return static_cast<std::int64_t>(l.stats.acquisitions);
    return 0;  // never taken: not even in the program
  };
  auto near = [](std::int64_t a, std::int64_t b) { return a >= b - 2 && a <= b + 2; };
  // Under RCU nothing of tmp is stored to; after the refusal at root,
  // ref-walk takes a reference on tmp every iteration.
  const auto ops_run = static_cast<std::int64_t>(run_rcu.ops), ops_refuse = static_cast<std::int64_t>(refuse.ops);
  CHECK(acquisitions(run_rcu, "tmp.d_lock") == 0);
  CHECK(near(acquisitions(refuse, "tmp.d_lock"), ops_refuse));
  // The op runs per directory either way: twice an iteration.
  CHECK(near(acquisitions(run_rcu, "fs_lock"), 2 * ops_run));
  CHECK(near(acquisitions(refuse, "fs_lock"), 2 * ops_refuse));
  auto time_in = [](const PointResult& r, const std::string& frame) {
    std::int64_t t = 0;
    for (const auto& e : r.profile)
      if (e.chain.find(frame) != std::string::npos) t += e.time.count();
    return t;
  };
  CHECK(time_in(run_rcu, "inode_permission <- link_path_walk") > 0);
  CHECK(time_in(refuse, "inode_permission <- link_path_walk") > 0);
  CHECK(time_in(run_rcu, "d_revalidate") == 0);
}

TEST_CASE("path walk: ref-walk of a shared path stops scaling, rcu-walk does not") {
  auto rate = [](const std::string& mode, int cpus) {
    return run(scenario(walk_strategy("mode: " + mode), 16), cpus).ops_per_sec;
  };
  const double ref1 = rate("ref", 1), ref16 = rate("ref", 16);
  const double rcu1 = rate("rcu", 1), rcu16 = rate("rcu", 16);
  CHECK(rcu16 / rcu1 > 15.0);  // nothing shared is written
  CHECK(ref16 / ref1 < 10.0);  // every walk bounces the shared dentries' lines
}

TEST_CASE("call_rcu with steps: at one CPU exactly call_rcu of the steps' cost, charged under rcu_do_batch") {
  // The callback takes a ticket lock: the acquire's atomic 10 ns + hold 200 ns
  // (release: nothing at one CPU), so it costs 210 ns, as `call_rcu: 210ns`.
  const std::string head =
      "    kernel: {hz: 1000}\n"
      "    locks:\n      cb_lock: {kind: ticket, scope: global}\n"
      "    ops:\n      iter:\n        - compute: 1000ns\n";
  const std::string steps =
      head + "        - call_rcu:\n            fn: put_cred_rcu\n            steps:\n"
             "              - lock: cb_lock\n                hold: 200ns\n";
  const Scenario with_steps = scenario(steps, 1, "100ms");
  const Scenario with_cost = scenario(head + "        - call_rcu: 210ns\n", 1, "100ms");
  const auto a = run(with_steps, 1);
  const auto b = run(with_cost, 1);
  CHECK(a.ops == b.ops);
  // The window holds each iteration's 1000 ns and each callback run's
  // 210 ns, to within the iteration in progress at its end ...
  const std::int64_t used = static_cast<std::int64_t>(a.ops) * 1000 + static_cast<std::int64_t>(a.rcu.callbacks_invoked) * 210;
  CHECK(std::abs(used - 100'000'000) < 1210);
  // ... so the rate is 1/(1000 + 210 ns) once the grace period is amortised:
  // the callbacks queued in the last grace period or two (4 ms each, at
  // HZ 1000) have not run, the rest have.
  CHECK(a.rcu.callbacks_queued - a.rcu.callbacks_invoked < 8e-3 / 1000e-9);
  CHECK(static_cast<double>(a.ops) >= 100e-3 / 1210e-9 - 1);
  CHECK(static_cast<double>(a.ops) <= (100e-3 + 8e-3 * 210.0 / 1210.0) / 1210e-9);
  // lock_stat counts the callback's acquisitions: one per callback run
  // (a callback dequeued before the window opened may take it just after).
  const auto& st = lock(a, "cb_lock").stats;
  CHECK(st.acquisitions >= a.rcu.callbacks_invoked);
  CHECK(st.acquisitions <= a.rcu.callbacks_invoked + 1);
  Duration hold{0}, fixed{0};
  for (const auto& e : a.profile)
    if (e.chain == "put_cred_rcu <- rcu_do_batch <- rcu_process_callbacks") hold += e.time;
  for (const auto& e : b.profile)
    if (e.chain == "rcu_do_batch <- rcu_process_callbacks") fixed += e.time;
  // The profile keeps the window's time only: a hold that straddles its
  // end counts in part.
  CHECK(hold <= sim::nanoseconds(200) * static_cast<std::int64_t>(st.acquisitions));
  CHECK(hold > sim::nanoseconds(200) * static_cast<std::int64_t>(st.acquisitions - 1));
  CHECK(fixed > Duration{0});
}

TEST_CASE("call_rcu with steps: callbacks contend for their lock like tasks, and the checkers see them") {
  const std::string busy =
      "    kernel: {hz: 1000}\n"
      "    locks:\n      cb_lock: {kind: ticket, scope: global}\n"
      "    ops:\n      iter:\n        - compute: {exp: 1us}\n"
      "        - call_rcu:\n            steps:\n              - lock: cb_lock\n                hold: 500ns\n";
  // Eight CPUs each queue a 500 ns hold per ~1.5 us: the callbacks' lock
  // is saturated, and they wait for each other.
  const Scenario saturated = scenario(busy, 8, "20ms");
  const auto r = run(saturated, 8);
  const auto& st = lock(r, "cb_lock").stats;
  CHECK(st.contentions > st.acquisitions / 2);
  Duration spinning{0};  // the callbacks' wait, charged to their CPUs' tasks
  for (const auto& e : r.profile)
    if (e.chain == "_raw_spin_lock <- rcu_do_batch <- rcu_process_callbacks") spinning += e.time;
  CHECK(spinning > r.cpu_time / 2);
  // A lock that admits two holders is caught though only callbacks take it.
  CHECK_THROWS_AS(run_with(saturated, 8, &make_seqcount, &broken_rw), InvariantViolation);
}

TEST_CASE("shared_by: N tasks, or N CPUs, share one instance of a line") {
  auto run_line = [](const std::string& decl, int cpus) {
    const std::string s =
        "    lines:\n      slot: " + decl + "\n"
        "    ops:\n      iter:\n        - compute: 1000ns\n        - atomic: slot\n";
    return run(scenario(s, 8, "1010us"), cpus);
  };
  auto instances = [](const PointResult& r) { return r.lines.at(0).instances; };
  CHECK(instances(run_line("{scope: task, shared_by: 4}", 8)) == 2);
  CHECK(instances(run_line("{scope: task, shared_by: 3}", 8)) == 3);  // tasks 0-2, 3-5, 6-7
  CHECK(instances(run_line("{scope: cpu, shared_by: 4}", 8)) == 2);
  CHECK(instances(run_line("{scope: task, shared_by: 1}", 8)) == 8);
  // One CPU: its own line, exactly (compute 1000 + a local atomic 10).
  CHECK(run_line("{scope: task, shared_by: 8}", 1).ops == 1000);
  // Two tasks on one line bounce it (a transfer of 100 ns each way): slower
  // than private lines, and the same simulation as one global line.
  const auto packed = run_line("{scope: task, shared_by: 2}", 2);
  CHECK(run_line("{scope: task}", 2).ops == 2000);
  CHECK(packed.ops < 1900);
  CHECK(packed.ops == run_line("{scope: global}", 2).ops);
  // shared_by 2 at 4 CPUs: two pairs, each about as the 2-CPU case.
  const auto pairs = static_cast<double>(run_line("{scope: task, shared_by: 2}", 4).ops);
  CHECK(pairs == doctest::Approx(2.0 * static_cast<double>(packed.ops)).epsilon(0.02));
}

TEST_CASE("the profile of a point adds up to at most its CPUs x window: shares never sum past 1") {
  // Tasks run ahead of the clock and steps straddle the window's edges;
  // the profile keeps the time inside (warmup, end] only. A long step
  // (3 us) and a contended lock make the straddling common.
  const Scenario sc = scenario(
      "    locks:\n      l: {kind: ticket, scope: global}\n"
      "    ops:\n      iter:\n        - compute: 3000ns\n        - lock: l\n          hold: 700ns\n",
      8, "97us");
  for (int cpus : {1, 3, 8}) {
    const auto r = run(sc, cpus);
    Duration total{0};
    for (const auto& e : r.profile) total += e.time;
    CHECK(total <= r.cpu_time);
    CHECK(static_cast<double>(total.count()) > 0.97 * static_cast<double>(r.cpu_time.count()));  // busy CPUs: nearly all
  }
}

TEST_CASE("an uncontended qspinlock acquisition is the fast path _raw_spin_lock; a waiter's is the slow path") {
  const std::string body =
      "    locks:\n      l: {kind: qspinlock, scope: global}\n"
      "    ops:\n      iter:\n        - compute: 500ns\n        - lock: l\n          hold: 300ns\n          fn: take\n";
  const Scenario sc = scenario(body, 8);
  const auto one = run(sc, 1);
  Duration fast{0}, slow{0};
  for (const auto& e : one.profile) {
    if (e.chain == "_raw_spin_lock <- take <- iter") fast += e.time;
    if (e.chain.rfind("queued_spin_lock_slowpath", 0) == 0) slow += e.time;
  }
  CHECK(fast > Duration{0});
  CHECK(slow == Duration{0});
  const auto eight = run(sc, 8);
  slow = Duration{0};
  for (const auto& e : eight.profile)
    if (e.chain == "queued_spin_lock_slowpath <- take <- iter") slow += e.time;
  CHECK(slow > Duration{0});  // at 8 CPUs the lock is held 3/8 of the time by one of 8: waiters queue
}

TEST_CASE("a lockref step shows its fn and runs a slow-path body under the spinlock") {
  // One CPU: the cmpxchg succeeds (the local atomic), the body never runs.
  const std::string head = "    locks:\n      d: {kind: ticket, scope: global}\n"
                           "    lines:\n      seen: {scope: global}\n"
                           "    ops:\n      iter:\n        - compute: 1000ns\n";
  const Scenario sc = scenario(head + "        - lockref: d\n          fn: lockref_get_not_dead\n"
                                      "          body:\n            - read: seen\n            - compute: 50ns\n", 1);
  const auto r = run(sc, 1);
  bool named = false;
  for (const auto& e : r.profile) named = named || e.chain == "lockref_get_not_dead <- iter";
  CHECK(named);
  CHECK(lock(r, "d").stats.acquisitions == 0);
  CHECK(r.lines.front().stats.loads == 0);
  // Two CPUs that also hold d for 1 us: a lockref that finds it held takes
  // the spinlock and runs its body (the load of `seen`) under it.
  const Scenario busy = scenario("    locks:\n      d: {kind: ticket, scope: global}\n"
                                 "    lines:\n      seen: {scope: global}\n"
                                 "    ops:\n      iter:\n        - lock: d\n          hold: 1000ns\n"
                                 "        - lockref: d\n          body:\n            - read: seen\n", 2);
  const auto b = run(busy, 2);
  CHECK(b.lines.front().stats.loads > 0);
  CHECK(lock(b, "d").stats.acquisitions > b.lines.front().stats.loads);
  // A walk's lockrefs take relax: and retries: as a lockref step's; relax needs the machine's pause.
  CHECK_THROWS_WITH_AS(scenario(walk_strategy("mode: ref\n          refcount: lockref\n          relax: true"), 1),
                       doctest::Contains("relax: true on machine"), ScenarioError);
  CHECK_THROWS_WITH_AS(scenario(walk_strategy("mode: ref\n          relax: true"), 1),
                       doctest::Contains("whose refcount is not lockref"), ScenarioError);
  const Scenario walk = scenario(walk_strategy("mode: ref\n          refcount: lockref\n          retries: 0"), 1);
  CHECK(run(walk, 1).ops > 0);
}

TEST_CASE("a share: metric matches whole frames of the profile chain") {
  CHECK(chain_starts_with("nameidata_drop_rcu <- do_last", "nameidata_drop_rcu"));
  CHECK_FALSE(chain_starts_with("nameidata_drop_rcu_last <- do_last", "nameidata_drop_rcu"));
  CHECK(chain_starts_with("_raw_spin_lock <- grab_super_passive <- super_cache_count", "_raw_spin_lock <- grab_super_passive"));
  CHECK_FALSE(chain_starts_with("_raw_spin_lock <- grab_super_passive_x", "_raw_spin_lock <- grab_super_passive"));
  CHECK(chain_starts_with("mutex_lock", "mutex_lock"));
}
