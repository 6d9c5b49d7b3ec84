// Robustness: deadlocks come out as results, budgets and cancellation stop
// a point with a clear reason, a controlled sweep hands out each finished
// curve point and skips preloaded ones, the loader refuses absurd input
// (duplicate keys, alias bombs, machines too large), and every input the
// fuzzer ever crashed on now loads or fails cleanly.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "models/codepath/program.h"
#include "models/codepath/executor.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

std::string scenario_text(const std::string& ops, const std::string& duration = "50us",
                          const std::string& cpus = "[1, 2, 4]") {
  return "scenario: robust\n"
         "machine:\n"
         "  levels:\n"
         "    - {name: socket, count: 1, transfer: 20ns}\n"
         "    - {name: core, count: 8}\n"
         "  local_hit: 1ns\n"
         "  local_atomic: 10ns\n"
         "workload:\n"
         "  tasks: process\n"
         "  placement: compact\n"
         "  loop: [pick]\n"
         "  warmup: 1us\n"
         "  duration: " + duration + "\n"
         "  cpus: " + cpus + "\n"
         "strategies:\n"
         "  s:\n"
         "    locks:\n"
         "      a: {kind: mcs, scope: global}\n"
         "      b: {kind: ticket, scope: global}\n"
         "    ops:\n" + ops;
}

// Half the iterations take a then b, the others b then a.
const char* kAbba =
    "      pick:\n"
    "        - compute: 100ns\n"
    "        - branch: 0.5\n"
    "          then: [{call: ab}]\n"
    "          else: [{call: ba}]\n"
    "      ab:\n"
    "        - lock: a\n"
    "          body:\n"
    "            - compute: 50ns\n"
    "            - lock: b\n"
    "              hold: 50ns\n"
    "      ba:\n"
    "        - lock: b\n"
    "          body:\n"
    "            - compute: 50ns\n"
    "            - lock: a\n"
    "              hold: 50ns\n";

// Takes a, then (in a called op) a again.
const char* kSelf =
    "      pick:\n"
    "        - compute: 100ns\n"
    "        - lock: a\n"
    "          body:\n"
    "            - compute: 50ns\n"
    "            - call: again\n"
    "      again:\n"
    "        - lock: a\n"
    "          hold: 10ns\n";

// Never deadlocks.
const char* kPlain =
    "      pick:\n"
    "        - compute: 100ns\n"
    "        - lock: a\n"
    "          hold: 50ns\n";

std::string expect_load_error(const std::string& text) {
  try {
    load_scenario_string(text, "bad.yaml");
  } catch (const ScenarioError& e) {
    CHECK(e.mark().file == "bad.yaml");
    CHECK(e.mark().line > 0);
    return e.what();
  }
  FAIL("the loader accepted it");
  return {};
}

}  // namespace

TEST_CASE("an ABBA deadlock is a result naming the CPUs, the locks, the steps and the holders") {
  const Scenario sc = load_scenario_string(scenario_text(kAbba, "200us"), "abba.yaml");
  bool seen = false;
  for (std::uint64_t seed = 1; seed <= 5 && !seen; ++seed) {
    const PointResult r = run_point(sc, PointSpec{"s", 4, 0, seed});
    if (!deadlocked(r)) continue;
    seen = true;
    CAPTURE(r.stop);
    CHECK(r.stop.rfind("deadlock: cpu ", 0) == 0);
    CHECK(r.stop.find("waiting for lock 'a' at _raw_spin_lock <- ba <- pick held by cpu") != std::string::npos);
    CHECK(r.stop.find("waiting for lock 'b' at _raw_spin_lock <- ab <- pick held by cpu") != std::string::npos);
    CHECK(finished(r));
  }
  CHECK(seen);
  // One CPU cannot deadlock with itself through two different locks.
  const PointResult one = run_point(sc, PointSpec{"s", 1, 0, 1});
  CHECK(one.stop == "time-limit");
  CHECK(one.ops > 0);
}

TEST_CASE("a lock taken twice by one CPU is a deadlock result, not an exception") {
  const Scenario sc = load_scenario_string(scenario_text(kSelf), "self.yaml");
  PointResult r;
  REQUIRE_NOTHROW(r = run_point(sc, PointSpec{"s", 2, 0, 1}));
  CAPTURE(r.stop);
  CHECK(r.stop.rfind("deadlock: cpu ", 0) == 0);
  CHECK(r.stop.find("waiting for lock 'a' at _raw_spin_lock <- again <- pick held by cpu") != std::string::npos);
  CHECK(r.stop.find("itself") != std::string::npos);
  CHECK(deadlocked(r));
}

TEST_CASE("event budget, wall-time budget and cancellation stop a point with their reason") {
  const Scenario sc = load_scenario_string(scenario_text(kPlain, "3600s"), "long.yaml");
  PointLimits events;
  events.max_events = 5000;
  const PointResult a = run_point(sc, PointSpec{"s", 2, 0, 1}, events);
  CAPTURE(a.stop);
  CHECK(a.stop.rfind("event budget exceeded: 5000 events at ", 0) == 0);
  CHECK(a.events == 5000);
  CHECK_FALSE(finished(a));

  PointLimits wall;
  wall.max_wall_seconds = 0.2;
  const auto t0 = std::chrono::steady_clock::now();
  const PointResult b = run_point(sc, PointSpec{"s", 2, 0, 1}, wall);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CAPTURE(b.stop);
  CHECK(b.stop.rfind("wall-time budget exceeded: 0.2 s", 0) == 0);
  CHECK(took < 5.0);
  CHECK_FALSE(finished(b));

  PointLimits cancel;
  cancel.cancelled = [] { return true; };
  const PointResult c = run_point(sc, PointSpec{"s", 2, 0, 1}, cancel);
  CHECK(c.stop.rfind("cancelled at ", 0) == 0);
  CHECK_FALSE(finished(c));
}

TEST_CASE("budgets do not change a point that fits in them") {
  const Scenario sc = load_scenario_string(scenario_text(kPlain), "plain.yaml");
  PointLimits generous;
  generous.max_events = 1'000'000'000;
  generous.max_wall_seconds = 600;
  const PointResult a = run_point(sc, PointSpec{"s", 4, 0, 7});
  const PointResult b = run_point(sc, PointSpec{"s", 4, 0, 7}, generous);
  CHECK(a.stop == "time-limit");
  CHECK(b.stop == "time-limit");
  CHECK(a.ops == b.ops);
  CHECK(a.events == b.events);
  CHECK(a.ops_per_sec == b.ops_per_sec);
}

TEST_CASE("a controlled sweep hands out each finished curve point once and skips preloaded ones") {
  const Scenario sc = load_scenario_string(scenario_text(kPlain), "plain.yaml");
  SweepSpec spec;
  spec.reps = 2;
  spec.jobs = 2;
  const auto plain = run_sweep(sc, spec);
  REQUIRE(plain.size() == 3);

  SweepControl control;
  std::vector<int> handed;
  control.preload = [&](CurvePoint& cp) {
    if (cp.cpus != 2) return false;
    cp = plain[1];
    return true;
  };
  control.on_curve_point = [&](const CurvePoint& cp) {
    CHECK(finished(cp));
    CHECK(cp.reps.size() == 2);
    handed.push_back(cp.cpus);
  };
  std::size_t runs = 0;
  const auto curve = run_sweep(sc, spec, [&](std::size_t, std::size_t total, const PointResult&) {
    ++runs;
    CHECK(total == 4);  // 2 curve points x 2 replications; the preloaded one is not run
  }, control);
  CHECK(runs == 4);
  std::sort(handed.begin(), handed.end());
  CHECK(handed == std::vector<int>{1, 4});
  REQUIRE(curve.size() == plain.size());
  for (std::size_t i = 0; i < curve.size(); ++i) {
    CHECK(curve[i].ops_per_sec == plain[i].ops_per_sec);
    CHECK(curve[i].stddev == plain[i].stddev);
    CHECK(curve[i].events == plain[i].events);
  }
}

TEST_CASE("a cancelled sweep launches nothing more and reports unfinished curve points") {
  const Scenario sc = load_scenario_string(scenario_text(kPlain), "plain.yaml");
  SweepSpec spec;
  spec.jobs = 1;
  std::atomic<int> done{0};
  SweepControl control;
  control.limits.cancelled = [&] { return done.load() >= 1; };
  int handed = 0;
  control.on_curve_point = [&](const CurvePoint&) { ++handed; };
  const auto curve = run_sweep(sc, spec, [&](std::size_t, std::size_t, const PointResult&) { ++done; }, control);
  REQUIRE(curve.size() == 3);
  // The longest point (most CPUs) starts first; the other two never start.
  CHECK(finished(curve[2]));
  for (int i : {0, 1}) {
    CHECK_FALSE(finished(curve[i]));
    CHECK(curve[i].reps[0].stop.empty());  // never launched
  }
  CHECK(handed == 1);
}

TEST_CASE("a sweep plan is checked before anything runs") {
  // A repeat that expands past the instruction limit is found by the plan.
  const std::string ops =
      "      pick:\n"
      "        - repeat: 10000\n"
      "          body:\n"
      "            - repeat: 10000\n"
      "              body:\n"
      "                - compute: 1ns\n";
  const Scenario sc = load_scenario_string(scenario_text(ops), "big.yaml");
  SweepSpec spec;
  try {
    plan_sweep(sc, spec);
    FAIL("no error");
  } catch (const ScenarioError& e) {
    CHECK(e.mark().line == 26);  // the step whose expansion crosses the limit
    CHECK(std::string(e.what()).find("grows past") != std::string::npos);
  }
  // Too many CPUs, and CPUs x window beyond the picosecond clock.
  const Scenario plain = load_scenario_string(scenario_text(kPlain, "86400s", "[1, 8]"), "day.yaml");
  spec.cpus = {9};
  CHECK_THROWS_AS(plan_sweep(plain, spec), std::invalid_argument);
  spec.cpus = {8};
  CHECK_NOTHROW(plan_sweep(plain, spec));
  const Scenario machine4k = load_scenario_string(
      "scenario: wide\nmachine:\n  levels:\n    - {name: socket, count: 4, transfer: 100ns}\n"
      "    - {name: core, count: 1024}\n  interconnect: {base: 100ns, hop: 0ns}\n  local_hit: 1ns\n"
      "  local_atomic: 10ns\nworkload:\n  tasks: process\n  loop: [pick]\n  warmup: 1us\n  duration: 86400s\n"
      "  cpus: [4096]\nstrategies:\n  s:\n    locks:\n      a: {kind: mcs, scope: global}\n    ops:\n" +
          std::string(kPlain),
      "wide.yaml");
  spec.cpus = {};
  try {
    plan_sweep(machine4k, spec);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("shorten the warmup and duration") != std::string::npos);
  }
}

TEST_CASE("the loader refuses duplicate keys, alias bombs, huge machines and absurd times") {
  const std::string base = scenario_text(kPlain);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  CHECK(expect_load_error(with("  warmup: 1us\n", "  warmup: 1us\n  warmup: 2us\n")).find("appears twice") !=
        std::string::npos);
  CHECK(expect_load_error(with("      b: {kind: ticket", "      a: {kind: ticket")).find("key 'a' appears twice") !=
        std::string::npos);
  CHECK(expect_load_error(with("duration: 50us", "duration: 86401s")).find("too large") != std::string::npos);
  CHECK_NOTHROW(load_scenario_string(with("duration: 50us", "duration: 86400s"), "ok.yaml"));
  CHECK(expect_load_error(with("compute: 100ns", "compute: -1ns")).find("negative") != std::string::npos);
  CHECK(expect_load_error(with("compute: 100ns", "compute: 1.0000000000001s")).find("finer than a picosecond") !=
        std::string::npos);
  CHECK(expect_load_error(with("count: 8}", "count: 5000}")).find("more than 4096 hardware threads") !=
        std::string::npos);

  // Each level doubles the steps through aliases: 2^30 of them if expanded.
  std::string bomb = "      pick: &l0 [{compute: 1ns}, {compute: 1ns}]\n";
  for (int i = 1; i <= 30; ++i)
    bomb += "      o" + std::to_string(i) + ": &l" + std::to_string(i) + " [{repeat: 1, body: *l" +
            std::to_string(i - 1) + "}, {repeat: 1, body: *l" + std::to_string(i - 1) + "}]\n";
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(expect_load_error(scenario_text(bomb)).find("more than 100000 steps") != std::string::npos);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 10.0);
}

// Strategies that extend one long op each hold a copy of it: the copies are
// bounded (kMaxResolvedSteps), refused at the extends that crosses the bound.
TEST_CASE("extends that copy more than 400,000 steps in all are refused at the extends that crosses the bound") {
  auto text = [](int strategies) {
    std::string steps;
    for (int i = 0; i < 20000; ++i) steps += "        - compute: 1ns\n";
    std::string others;
    for (int i = 1; i < strategies; ++i) others += "  e" + std::to_string(i) + ": {extends: s}\n";
    std::string t = scenario_text("      pick:\n" + steps);
    return t + others;
  };
  CHECK_NOTHROW(load_scenario_string(text(20), "ok.yaml"));  // 20 x 20,000: at the bound
  const std::string e = expect_load_error(text(21));
  CHECK(e.find("strategy 'e20' extends 's'") != std::string::npos);
  CHECK(e.find("more than 400000 steps") != std::string::npos);
}

// zero_time_probability follows the control flow: the probability that
// an iteration ends at the instant it began is the mass of the paths that
// pass only zero-time steps.
TEST_CASE("the share of zero-time iterations follows branches, jumps and free locks") {
  auto q = [](const std::string& ops, const std::vector<std::string>& free = {}) {
    const Scenario sc = load_scenario_string(scenario_text(ops), "q.yaml");
    return zero_time_probability(compile_program(sc.strategy("s"), sc.workload.loop, sc.params), free);
  };
  CHECK(q("      pick:\n        - compute: 1ns\n") == 0.0);
  CHECK(q("      pick:\n        - branch: 0\n          then: [{compute: 1ns}]\n") == 1.0);
  CHECK(q("      pick:\n        - branch: 1\n          then: [{compute: 1ns}]\n") == 0.0);
  CHECK(q("      pick:\n        - branch: 0.3\n          then: [{compute: 1ns}]\n") == doctest::Approx(0.7));
  // Two independent branches: both skipped, 0.7 x 0.4.
  CHECK(q("      pick:\n        - branch: 0.3\n          then: [{compute: 1ns}]\n"
          "        - branch: 0.6\n          then: [{compute: 1ns}]\n") == doctest::Approx(0.28));
  // else: a zero-time else keeps its share, a timed one removes it.
  CHECK(q("      pick:\n        - branch: 0.3\n          then: [{compute: 1ns}]\n          else: [{compute: 0ns}]\n") ==
        doctest::Approx(0.7));
  CHECK(q("      pick:\n        - branch: 0.3\n          then: [{compute: 1ns}]\n          else: [{compute: 2ns}]\n") ==
        0.0);
  // A lock made free by a what-if costs nothing; the same lock costs time.
  CHECK(q("      pick:\n        - lock: a\n          hold: 0ns\n") == 0.0);
  CHECK(q("      pick:\n        - lock: a\n          hold: 0ns\n", {"a"}) == 1.0);
}

TEST_CASE("a repeat of nothing compiles without expanding it") {
  const std::string ops =
      "      pick:\n"
      "        - compute: 100ns\n"
      "        - repeat: 100000\n"
      "          body:\n"
      "            - repeat: 100000\n"
      "              body:\n"
      "                - call: nothing\n"
      "      nothing: []\n";
  const Scenario sc = load_scenario_string(scenario_text(ops), "empty-repeat.yaml");
  const auto t0 = std::chrono::steady_clock::now();
  const Program p = compile_program(sc.strategy("s"), sc.workload.loop, sc.params);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
  CHECK(p.code.size() == 2);  // the compute and the end of the iteration
  CHECK(p.frames.size() < 100);
}

// Every input the fuzzer (tests/fuzz/fuzz_scenario.cpp) crashed on, and the
// seed corpus: each loads, or fails with a ScenarioError, and compiles.
TEST_CASE("fuzz regressions and the fuzz corpus load or fail cleanly") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* dir : {"/tests/fuzz/regressions", "/tests/fuzz/corpus"}) {
    const fs::path root = fs::path(VFSSIM_SOURCE_DIR) / (std::string(dir).substr(1));
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().filename().string()[0] == '.') continue;
      ++files;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      CAPTURE(entry.path().string());
      try {
        const Scenario sc = load_scenario_string(ss.str(), "fuzz.yaml");
        for (const auto& s : sc.strategies)
          for (const auto& v : sc.variants) {
            try {
              (void)compile_program(s, v.workload, v.params, 1 << 14);
            } catch (const ScenarioError&) {
            }
          }
      } catch (const ScenarioError& e) {
        CHECK(e.mark().file == "fuzz.yaml");
      }
    }
  }
  CHECK(files > 0);
}

TEST_CASE("a seqcount's writers must be serialised by a lock its writers share, checked at load") {
  // `pick` writes seq through `w`, under lock L (held in MODE) of scope LS;
  // the seqcount has scope QS; the tasks are TASKS.
  auto text = [](const std::string& ls, const std::string& qs, const std::string& tasks, const std::string& mode,
                 const std::string& extra = "") {
    std::string t = scenario_text(
        "      pick:\n"
        "        - compute: 100ns\n"
        "        - lock: l\n" + mode +
        "          body:\n"
        "            - call: w\n"
        "      w:\n"
        "        - seq_write: q\n" + extra +
        "          body:\n"
        "            - compute: 10ns\n");
    const std::string b = "      b: {kind: ticket, scope: global}\n", process = "tasks: process";
    t.replace(t.find(b), b.size(), "      l: {kind: rwsem, wake: 2us, scope: " + ls + "}\n    seqcounts:\n      q: {scope: " + qs + "}\n");
    t.replace(t.find(process), process.size(), "tasks: " + tasks);
    return t;
  };
  // Serialised: a global lock; per-CPU data under a per-CPU lock or none;
  // a process's data under the process's lock, threads or processes.
  for (const auto& [ls, qs, tasks] : std::vector<std::array<std::string, 3>>{
           {"global", "global", "process"}, {"global", "node", "thread"}, {"cpu", "cpu", "process"},
           {"task", "cpu", "process"}, {"process", "process", "thread"}, {"process", "process", "process"},
           {"node", "node", "process"}, {"task", "process", "process"}}) {
    CAPTURE(ls);
    CAPTURE(qs);
    CAPTURE(tasks);
    CHECK_NOTHROW(load_scenario_string(text(ls, qs, tasks, ""), "ok.yaml"));
    // and it runs: the engine's own check finds no two writers inside at once
    const Scenario sc = load_scenario_string(text(ls, qs, tasks, ""), "ok.yaml");
    const PointResult r = run_point(sc, PointSpec{"s", 4, 0, 1});
    CHECK_MESSAGE(models::finished(r), r.stop);
    CHECK(r.ops > 0);
  }
  // Not serialised: a narrower lock, a read-mode hold, threads sharing a
  // process-scope seqcount under a per-task lock.
  for (const auto& [ls, qs, tasks, mode] : std::vector<std::array<std::string, 4>>{
           {"cpu", "global", "process", ""}, {"node", "global", "process", ""},
           {"global", "global", "process", "          mode: read\n"}, {"task", "process", "thread", ""}}) {
    CAPTURE(ls);
    CAPTURE(qs);
    CAPTURE(tasks);
    const std::string msg = expect_load_error(text(ls, qs, tasks, mode));
    CHECK(msg.find("seq_write on seqcount 'q'") != std::string::npos);
    CHECK(msg.find("through op 'w'") != std::string::npos);
    CHECK(msg.find("two writers can be inside at once") != std::string::npos);
  }
  // `unlocked: true` says an order serialises them: loaded, and the engine
  // still stops the run when two writers overlap.
  const Scenario sc = load_scenario_string(text("cpu", "global", "process", "", "          unlocked: true\n"), "u.yaml");
  CHECK_THROWS_WITH_AS(run_point(sc, PointSpec{"s", 4, 0, 1}), doctest::Contains("two writers inside at once"),
                       std::exception);
}
