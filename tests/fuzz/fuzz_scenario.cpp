// libFuzzer target: the scenario loader on arbitrary bytes.
//
// The loader's contract (models/scenario/scenario.h): load_scenario_string
// returns a validated Scenario or throws ScenarioError, and a valid
// scenario's strategies compile or refuse with a ScenarioError. Anything
// else is a finding: another exception (uncaught: libFuzzer reports the
// abort), a crash, an AddressSanitizer or UBSan report, a timeout, or
// running out of memory. Each finding is fixed and its input kept in
// tests/fuzz/regressions/, which tests/unit/test_robustness.cpp replays.
//
// Build and run: scripts/test.sh (cmake -DVFSSIM_FUZZ=ON with clang++), or
//   build-fuzz/fuzz_scenario -max_total_time=60 WORK_CORPUS tests/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/codepath/program.h"
#include "models/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using vfssim::models::ScenarioError;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const vfssim::models::Scenario sc = vfssim::models::load_scenario_string(text, "fuzz.yaml");
    // Every strategy under every variant, with a small instruction limit
    // so that large repeat counts stay cheap.
    for (const auto& s : sc.strategies)
      for (const auto& v : sc.variants) {
        try {
          (void)vfssim::models::compile_program(s, v.workload, v.params, 1 << 14);
        } catch (const ScenarioError&) {
        }
      }
  } catch (const ScenarioError&) {
  }
  return 0;
}
