// SMT siblings: compute on a hardware thread slows while other threads of
// its core compute too (the machine's smt_throughput), not while they wait.
#include <doctest/doctest.h>

#include <string>

#include "models/experiment/experiment.h"
#include "models/hardware/topology.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

// 1 socket x 2 cores x 2 threads; a core with both threads busy does 1.5x
// one thread's work, so each sibling computes at 0.75x.
Scenario smt_scenario(const std::string& placement, const std::string& op) {
  const std::string text =
      "scenario: smt\n"
      "machine:\n"
      "  levels:\n"
      "    - {name: socket, count: 1, transfer: 50ns}\n"
      "    - {name: core, count: 2, transfer: 2ns}\n"
      "    - {name: thread, count: 2}\n"
      "  core: core\n"
      "  local_hit: 1ns\n"
      "  local_atomic: 10ns\n"
      "  smt_throughput: 1.5\n"
      "workload:\n  tasks: process\n  placement: " + placement + "\n  loop: [iter]\n  warmup: 20us\n  duration: 4ms\n"
      "  cpus: [1]\n"
      "strategies:\n  s:\n    locks:\n      l: {kind: mcs, scope: global}\n"
      "    ops:\n      iter:\n" + op;
  return load_scenario_string(text, "smt.yaml");
}

}  // namespace

TEST_CASE("smt: a core's throughput rises from 1 to smt_throughput, shared by its busy threads") {
  TopologySpec spec;
  spec.levels = {{"core", 4, sim::nanoseconds(10)}, {"thread", 2, Duration{0}}};
  spec.core_level = 0;
  spec.smt_throughput = 1.25;
  Topology topo(spec);
  CHECK(topo.compute_slowdown(1) == 1.0);
  CHECK(topo.compute_slowdown(2) == doctest::Approx(2 / 1.25));
  spec.smt_throughput = 0;  // not given: siblings do not slow each other
  CHECK(Topology(spec).compute_slowdown(2) == 1.0);
}

TEST_CASE("smt: siblings that both compute each run at smt_throughput / 2") {
  const std::string compute = "        - compute: 1us\n";
  // compact: the two tasks share a core; spread: a core each.
  const PointResult shared = run_point(smt_scenario("compact", compute), PointSpec{"s", 2, 0, 1});
  const PointResult apart = run_point(smt_scenario("spread", compute), PointSpec{"s", 2, 0, 1});
  const PointResult four = run_point(smt_scenario("compact", compute), PointSpec{"s", 4, 0, 1});
  CHECK(apart.ops_per_sec == doctest::Approx(2e6).epsilon(0.002));
  CHECK(shared.ops_per_sec == doctest::Approx(1.5e6).epsilon(0.002));
  CHECK(four.ops_per_sec == doctest::Approx(3e6).epsilon(0.002));
}

TEST_CASE("smt: a sibling waiting for a lock does not slow the holder") {
  // Four tasks on one MCS lock held for 1 us, placed so that FIFO handoffs
  // alternate between the cores: the new holder's sibling is queued
  // (spinning in pause), so every hold takes 1 us, not 1/0.75 us; compare
  // the same loop with a computing sibling (compute-only loop above).
  const PointResult r = run_point(smt_scenario("[0, 2, 1, 3]", "        - lock: l\n          hold: 1us\n"),
                                  PointSpec{"s", 4, 0, 1});
  CHECK(r.ops_per_sec == doctest::Approx(1e6 / 1.05).epsilon(0.01));  // 1 us + a 50 ns cross-core transfer
}

TEST_CASE("smt: the loader refuses a throughput outside 1..threads per core") {
  const std::string compute = "        - compute: 1us\n";
  std::string text;
  try {
    const std::string bad = "scenario: smt\nmachine:\n  levels:\n    - {name: core, count: 1, transfer: 2ns}\n"
                            "    - {name: thread, count: 2}\n  core: core\n  local_hit: 1ns\n  local_atomic: 10ns\n"
                            "  smt_throughput: 2.5\n"
                            "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 0us\n"
                            "  duration: 1ms\n  cpus: [1]\nstrategies:\n  s:\n    ops:\n      iter:\n" + compute;
    load_scenario_string(bad, "smt.yaml");
  } catch (const ScenarioError& e) {
    text = e.what();
  }
  CHECK(text.find("smt.yaml:9:19: smt_throughput 2.5 is outside 1..2") == 0);
}
