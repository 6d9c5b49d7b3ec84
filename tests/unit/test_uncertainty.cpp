// Ranges on estimated constants (docs/scenario-format.md, "Ranges"): the
// loader reads them where a time or number goes, names them by their YAML
// path, uses the estimate unless sampled, and refuses bad ranges with
// FILE:LINE:COL.
#include <doctest/doctest.h>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

const char* kRanged = R"(scenario: ranged
machine:
  levels:
    - name: socket
      count: 2
      transfer: {estimate: 90ns, range: [60ns, 170ns], why: "no measurement"}
    - {name: core, count: 2}
  interconnect: {links: full, base: 100ns, hop: 0ns}
  local_hit: 1ns
  local_atomic: 10ns ± 2ns
params:
  think: 1us +- 500ns
  p: {estimate: 0.25, range: [0.1, 0.5]}
workload:
  tasks: process
  loop: [op]
  warmup: 1us
  duration: 10us
variants:
  other:
    params: {p: 0.5}
strategies:
  base:
    locks:
      l: {kind: mutex, scope: global, spin: false, wake: {estimate: 2us, range: [1us, 4us]}}
    ops:
      op:
        - compute: $think
        - branch: $p
          then:
            - compute: 10ns
        - lock: l
          hold: 50ns
  child:
    extends: base
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

const Range& range_named(const Scenario& sc, const std::string& name) {
  for (const auto& r : sc.ranges)
    if (r.name == name) return r;
  FAIL("no range " << name);
  throw;
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_string(text, "r.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("ranges are read where times and numbers are, named by their path, the estimate used") {
  const Scenario sc = load_scenario_string(kRanged, "r.yaml");
  REQUIRE(sc.ranges.size() == 5);
  const Range& t = range_named(sc, "machine.levels.socket.transfer");
  CHECK(t.time);
  CHECK(t.estimate == 90000);
  CHECK(t.lo == 60000);
  CHECK(t.hi == 170000);
  CHECK(t.why == "no measurement");
  CHECK(t.mark.line == 6);
  const Range& a = range_named(sc, "machine.local_atomic");
  CHECK(a.lo == 8000);
  CHECK(a.hi == 12000);
  const Range& think = range_named(sc, "params.think");
  CHECK(think.lo == 500000);
  CHECK(think.hi == 1500000);
  const Range& p = range_named(sc, "params.p");
  CHECK_FALSE(p.time);
  CHECK(p.estimate == 0.25);
  CHECK(range_named(sc, "strategies.base.locks.l.wake").estimate == 2e6);
  // The estimates are the values.
  CHECK(sc.machine.levels[0].transfer == Duration{90000});
  CHECK(sc.machine.local_atomic == Duration{10000});
  CHECK(sc.params.at("think").time == Duration{1000000});
  CHECK(sc.params.at("p").number == 0.25);
  CHECK(sc.strategy("child").locks.at("l").wake_latency == Duration{2000000});
}

TEST_CASE("a scenario with ranges at their estimates runs as the one with plain values") {
  std::string plain = replace(kRanged, R"({estimate: 90ns, range: [60ns, 170ns], why: "no measurement"})", "90ns");
  plain = replace(plain, "10ns ± 2ns", "10ns");
  plain = replace(plain, "1us +- 500ns", "1us");
  plain = replace(plain, "{estimate: 0.25, range: [0.1, 0.5]}", "0.25");
  plain = replace(plain, "{estimate: 2us, range: [1us, 4us]}", "2us");
  const Scenario a = load_scenario_string(kRanged, "r.yaml");
  const Scenario b = load_scenario_string(plain, "p.yaml");
  CHECK(b.ranges.empty());
  for (const char* s : {"base", "child"}) {
    const PointSpec spec{s, 4, 0, 7};
    CHECK(run_point(a, spec).ops_per_sec == run_point(b, spec).ops_per_sec);
  }
}

TEST_CASE("a sample sets each range it names, once for every place that shares it") {
  const Scenario base = load_scenario_string(kRanged, "r.yaml");
  const Scenario s = sample_scenario(base, {{"params.think", 700000.4}, {"strategies.base.locks.l.wake", 3e6}});
  CHECK(s.params.at("think").time == Duration{700000});
  CHECK(s.variant("other").params.at("think").time == Duration{700000});  // the variant shares the default's constant
  CHECK(s.strategy("child").locks.at("l").wake_latency == Duration{3000000});  // extends shares the parent's
  CHECK(s.machine.levels[0].transfer == Duration{90000});                  // not sampled: the estimate
  CHECK(s.ranges.size() == base.ranges.size());
  // Sampled at its estimate, a scenario runs as the base does.
  const Scenario e = sample_scenario(base, {{"params.think", 1e6}});
  CHECK(run_point(e, PointSpec{"base", 4, 0, 3}).ops_per_sec == run_point(base, PointSpec{"base", 4, 0, 3}).ops_per_sec);
}

TEST_CASE("bad ranges are refused with FILE:LINE:COL") {
  const std::string t = R"({estimate: 90ns, range: [60ns, 170ns], why: "no measurement"})";
  CHECK(error_of(replace(kRanged, t, "{estimate: 200ns, range: [60ns, 170ns]}")) ==
        "r.yaml:6:17: the range of transfer does not contain its estimate; expected a range [LOW, HIGH] with LOW <= estimate <= HIGH");
  CHECK(error_of(replace(kRanged, t, "{estimate: 90ns, range: [170ns, 60ns]}")).find(
            "r.yaml:6:17: the range of transfer has its lower bound above its upper bound") == 0);
  CHECK(error_of(replace(kRanged, t, "{estimate: 90ns, range: [60ns, 170]}")).find("r.yaml:6:48: time '170' has no unit") == 0);
  CHECK(error_of(replace(kRanged, t, "{estimate: 90ns, range: [-60ns, 170ns]}")).find(
            "r.yaml:6:42: the range of transfer has a negative lower bound '-60ns'") == 0);
  CHECK(error_of(replace(kRanged, "10ns ± 2ns", "10ns ± 20ns")).find(
            "r.yaml:10:17: the range of local_atomic 10ns ± 20ns has a negative lower bound") == 0);
  CHECK(error_of(replace(kRanged, "1us +- 500ns", "1us +- 0.5")).find("r.yaml:12:10: the range of parameter 'think' mixes units") == 0);
  CHECK(error_of(replace(kRanged, "count: 2\n      transfer", "count: {estimate: 2, range: [1, 3]}\n      transfer"))
            .find("r.yaml:5:14: level count has a range, and is an integer") == 0);
  CHECK(error_of(replace(kRanged, "tasks: process", "tasks: {estimate: process, range: [a, b]}"))
            .find("r.yaml:15:10: tasks has a range, and is not a time or a number") == 0);
  CHECK(error_of(replace(kRanged, t, "{estimate: 90ns, range: [60ns, 170ns], units: ns}")).find("unknown key 'units'") !=
        std::string::npos);
}
