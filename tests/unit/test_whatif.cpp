// What-if runs of the design review: PointSpec::free_locks makes a lock a
// FreeLock (no cost, no exclusion, no checker complaint) and
// PointSpec::private_lines gives a line scope task.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "flat_machine.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

using namespace vfssim::models;

namespace {

Scenario contended(int cpus) {
  const std::string text =
      "scenario: whatif\n" + vfssim::testing::flat_machine(cpus) +
      "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 20us\n  duration: 1000us\n"
      "strategies:\n"
      "  s:\n"
      "    locks:\n      big: {kind: ticket, scope: global}\n"
      "    lines:\n      counter: {scope: global}\n"
      "    ops:\n"
      "      iter:\n"
      "        - lock: big\n          hold: 100ns\n"
      "        - atomic: counter\n"
      "        - compute: 100ns\n";
  return load_scenario_string(text, "whatif.yaml");
}

}  // namespace

TEST_CASE("a free lock is taken at no cost by every CPU at once") {
  const Scenario sc = contended(4);
  PointSpec spec{"s", 4, 0, 1};
  const PointResult locked = run_point(sc, spec);
  spec.free_locks = {"big"};
  spec.private_lines = {"counter"};
  const PointResult free = run_point(sc, spec);
  // 100 ns hold + 10 ns local atomic + 100 ns compute per iteration, 4 CPUs in parallel.
  CHECK(free.ops_per_sec == doctest::Approx(4 / 210e-9).epsilon(0.002));
  CHECK(locked.ops_per_sec < free.ops_per_sec / 2);
  for (const auto& l : free.locks) {
    CHECK(l.kind == "free");
    CHECK(l.stats.contentions == 0);
  }
  for (const auto& l : free.lines) CHECK(l.stats.queue_wait.count() == 0);
  bool waited = false;
  for (const auto& l : locked.locks) waited = waited || l.stats.wait_total.count() > 0;
  CHECK(waited);
}

TEST_CASE("what-if names must exist in the strategy") {
  const Scenario sc = contended(2);
  PointSpec spec{"s", 2, 0, 1};
  spec.free_locks = {"nonesuch"};
  CHECK_THROWS_AS(run_point(sc, spec), std::invalid_argument);
  spec.free_locks.clear();
  spec.private_lines = {"nonesuch"};
  CHECK_THROWS_AS(run_point(sc, spec), std::invalid_argument);
}

TEST_CASE("scenario files cannot declare a free lock") {
  const std::string text =
      "scenario: nofree\nmachine: power5p-64\n"
      "workload:\n  loop: [iter]\n  warmup: 1us\n  duration: 10us\n  cpus: [1]\n"
      "strategies:\n  s:\n    locks:\n      l: {kind: free, scope: global}\n"
      "    ops:\n      iter:\n        - lock: l\n          hold: 1ns\n";
  CHECK_THROWS_AS(load_scenario_string(text, "nofree.yaml"), ScenarioError);
}

namespace {

const char* kTwoStrategies =
    "scenario: settings\n"
    "machine:\n"
    "  levels:\n"
    "    - {name: machine, count: 1, transfer: 100ns}\n"
    "    - {name: cpu, count: 4}\n"
    "  local_hit: 1ns\n"
    "  local_atomic: 10ns\n"
    "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 1us\n  duration: 10us\n"
    "params:\n  hold: 100ns\n"
    "variants:\n  short:\n    params: {hold: 10ns}\n"
    "strategies:\n"
    "  a:\n"
    "    locks:\n      big: {kind: ticket, scope: global}\n"
    "    ops:\n      iter:\n        - lock: big\n          hold: $hold\n"
    "  b:\n"
    "    extends: a\n";

Scenario with(std::vector<std::string> sets) {
  std::vector<Setting> s;
  for (auto& a : sets) s.push_back(Setting{a, "--set"});
  return load_scenario_string(kTwoStrategies, "settings.yaml", {}, s);
}

}  // namespace

TEST_CASE("a setting edits the document before it is checked; the resolved text has it") {
  const Scenario sc = with({"b.locks.big.kind=mcs", "hold=50ns"});
  CHECK(sc.strategy("a").locks.at("big").kind == "ticket");  // inherited entry copied into b, a unchanged
  CHECK(sc.strategy("b").locks.at("big").kind == "mcs");
  CHECK(sc.params.at("hold").time == vfssim::sim::nanoseconds(50));
  CHECK(sc.variant("short").params.at("hold").time == vfssim::sim::nanoseconds(50));  // every variant's value
  CHECK(sc.resolved_text.find("kind: mcs") != std::string::npos);
  CHECK(sc.resolved_hash != load_scenario_string(kTwoStrategies, "settings.yaml").resolved_hash);
  CHECK(sc.text == kTwoStrategies);  // the file's text stays the file's
}

TEST_CASE("an error in a setting is placed in the setting") {
  auto message = [](const std::string& a) {
    try {
      (void)with({a});
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("a.locks.big.kind=nope").rfind("--set 'a.locks.big.kind=nope':1:18: unknown lock kind 'nope'", 0) == 0);
  CHECK(message("nope=1").rfind("--set 'nope=1':1:1: no parameter 'nope'; expected a parameter of the scenario (hold)", 0) == 0);
  CHECK(message("a.locks.small.kind=mcs").find(":1:9: no 'small' in 'strategies.a.locks'; expected one of: big") !=
        std::string::npos);
  CHECK(message("a.locks.big.color=red").find(":1:13: unknown key 'color' in lock 'big'") != std::string::npos);
  CHECK(message("hold").find(":1:1: 'hold' is not KEY=VALUE") != std::string::npos);
  // an error elsewhere in the file still names the file
  CHECK(message("workload.loop=[nosuch]").find("nosuch") != std::string::npos);
}
