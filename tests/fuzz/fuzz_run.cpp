// libFuzzer target: load, plan and run one small point of every input that
// loads. Where fuzz_scenario stops at the loader, this reaches the
// compiler, the sweep's checks and the engine: the run-time failures that
// only a running point shows (an iteration that takes no time, a model
// invariant, a budget that never fires).
//
// The contract: an input is refused with a ScenarioError or an
// std::invalid_argument before it runs, or its point runs to its end or to
// its budget. Anything else is a finding: an InvariantViolation or another
// exception (uncaught: libFuzzer reports the abort), a crash, an ASan or
// UBSan report, a timeout (the budget must stop the point) or running out
// of memory. Findings are fixed and their inputs kept in
// tests/fuzz/regressions/.
//
// The point is kept small whatever the input says: at most 4 CPUs of the
// first strategy's default variant, a window of at most 20 us, 20,000
// events and 2 s of wall time.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vfssim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  models::Scenario sc;
  try {
    sc = models::load_scenario_string(text, "fuzz.yaml");
  } catch (const models::ScenarioError&) {
    return 0;
  }
  for (auto& v : sc.variants) {
    v.workload.warmup = std::min(v.workload.warmup, sim::microseconds(5));
    v.workload.duration = std::min(v.workload.duration, sim::microseconds(20));
  }
  sc.workload = sc.variants.front().workload;
  const int cpus = std::min(4, sc.variants.front().workload.cpus.front());
  models::SweepSpec spec;
  spec.strategies = {sc.strategies.front().name};
  spec.cpus = {cpus};
  try {
    (void)models::plan_sweep(sc, spec);
  } catch (const models::ScenarioError&) {
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  }
  models::PointLimits limits;
  limits.max_events = 20000;
  limits.max_wall_seconds = 2;
  (void)models::run_point(sc, models::PointSpec{spec.strategies.front(), cpus, 0, 1}, limits);
  return 0;
}
