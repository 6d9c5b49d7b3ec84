// Ranges on estimated constants (docs/scenario-format.md, "Ranges"): the
// loader reads them where a time or number goes, names them by their YAML
// path, uses the estimate unless sampled, and refuses bad ranges with
// FILE:LINE:COL.
#include <doctest/doctest.h>

#include <cmath>

#include "models/experiment/experiment.h"
#include "models/experiment/refit.h"
#include "models/experiment/uncertainty.h"
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

TEST_CASE("a Latin hypercube puts each constant's N samples one in each of N strata, the same for a seed") {
  const std::vector<std::string> names{"a", "b", "c"};
  for (int n : {1, 7, 64}) {
    const auto u = latin_hypercube(n, names, 5);
    REQUIRE(u.size() == static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < names.size(); ++k) {
      std::vector<int> hits(n, 0);
      for (const auto& row : u) {
        CHECK(row[k] >= 0.0);
        CHECK(row[k] < 1.0);
        ++hits[static_cast<int>(row[k] * n)];
      }
      for (int h : hits) CHECK(h == 1);
    }
  }
  CHECK(latin_hypercube(16, names, 5) == latin_hypercube(16, names, 5));
  CHECK(latin_hypercube(16, names, 5) != latin_hypercube(16, names, 6));
  // A constant's draws are its own: another name beside it does not move them.
  const auto alone = latin_hypercube(16, {"b"}, 5);
  const auto with = latin_hypercube(16, names, 5);
  for (int i = 0; i < 16; ++i) CHECK(alone[i][0] == with[i][1]);
}

TEST_CASE("a range maps uniformly, or log-uniformly past a factor of 3") {
  Range r{"x", false, 2, 1, 3, "", {}, ""};
  CHECK(range_value_at(r, 0.5) == doctest::Approx(2));
  r.hi = 100;
  CHECK(range_value_at(r, 0.5) == doctest::Approx(10));  // geometric midpoint of [1, 100]
  CHECK(range_value_at(r, 0.0) == doctest::Approx(1));
}

TEST_CASE("Spearman's rho on constructed cases, and the percentiles") {
  CHECK(spearman({1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}) == doctest::Approx(1));
  CHECK(spearman({1, 2, 3, 4, 5}, {5, 1, 0.5, 0.2, 0.1}) == doctest::Approx(-1));
  CHECK(spearman({1, 2, 3, 4, 5}, {1, 4, 9, 16, 1000}) == doctest::Approx(1));  // monotone, not linear
  // rho = 1 - 6 sum d^2 / (n (n^2 - 1)) without ties: ranks (1,2,3,4) against (2,1,4,3): d^2 = 4.
  CHECK(spearman({1, 2, 3, 4}, {2, 1, 4, 3}) == doctest::Approx(1 - 6.0 * 4 / (4 * 15)));
  CHECK(spearman({1, 1, 1}, {1, 2, 3}) == 0);
  CHECK(quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.1) == doctest::Approx(2));
  CHECK(quantile({1, 2}, 0.5) == doctest::Approx(1.5));
}

namespace {

std::vector<CurvePoint> banded(const std::string& text, int n, unsigned jobs) {
  const Scenario sc = load_scenario_string(text, "u.yaml");
  SweepSpec spec;
  spec.cpus = {1, 4};
  spec.strategies = {"base"};
  spec.uncertainty = n;
  spec.jobs = jobs;
  spec.seed = 3;
  return run_sweep(sc, spec);
}

}  // namespace

TEST_CASE("bands: the same whatever --jobs, zero width for lo == hi, wider for a wider range") {
  const auto a = banded(kRanged, 8, 1), b = banded(kRanged, 8, 2);
  REQUIRE(a.size() == 2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].sample_rates == b[i].sample_rates);
    CHECK(a[i].band_p10 == b[i].band_p10);
    CHECK(a[i].sensitivity == b[i].sensitivity);
    CHECK(a[i].band_p10 <= a[i].band_p50);
    CHECK(a[i].band_p50 <= a[i].band_p90);
    CHECK(a[i].band_p10 < a[i].band_p90);
  }
  // Only think has a range, of zero width: every sample is the plain run.
  std::string one = replace(kRanged, R"({estimate: 90ns, range: [60ns, 170ns], why: "no measurement"})", "90ns");
  one = replace(one, "10ns ± 2ns", "10ns");
  one = replace(one, "{estimate: 0.25, range: [0.1, 0.5]}", "0.25");
  one = replace(one, "{estimate: 2us, range: [1us, 4us]}", "2us");
  const auto zero = banded(replace(one, "1us +- 500ns", "{estimate: 1us, range: [1us, 1us]}"), 6, 2);
  for (const auto& cp : zero) {
    CHECK(cp.band_p10 == cp.ops_per_sec);
    CHECK(cp.band_p90 == cp.ops_per_sec);
  }
  const auto narrow = banded(replace(one, "1us +- 500ns", "1us ± 100ns"), 16, 2);
  const auto wide = banded(replace(one, "1us +- 500ns", "1us ± 500ns"), 16, 2);
  for (std::size_t i = 0; i < narrow.size(); ++i) {
    CHECK(narrow[i].band_p90 - narrow[i].band_p10 > 0);
    CHECK(wide[i].band_p90 - wide[i].band_p10 > 1.5 * (narrow[i].band_p90 - narrow[i].band_p10));
    // The think time is what moves the rate, downwards.
    CHECK(wide[i].sensitivity.front().first == "params.think");
    CHECK(wide[i].sensitivity.front().second < -0.7);
  }
}

namespace {

// One CPU, an op of two computes: `work` an estimate, `rest` fitted to the
// op rate. The re-fit `rest` of a sample is then 1.5 us - work (arithmetic).
const char* kFitted = R"(scenario: fitted
machine:
  levels:
    - {name: machine, count: 1, transfer: 100ns}
    - {name: cpu, count: 2}
  local_hit: 1ns
  local_atomic: 10ns
params:
  work: {estimate: 1us, range: [500ns, 1200ns]}
  rest: {estimate: 300ns, range: [50ns, 5us], fit: one-cpu}
workload:
  tasks: process
  loop: [op]
  warmup: 10us
  duration: 10ms
strategies:
  base:
    ops:
      op:
        - compute: $work
        - compute: $rest
expect:
  - figure: one-cpu
    value: {point: base@1}
    reported: 666666.667
    tolerance: 10%
    fitted: true
    source: test
)";

}  // namespace

TEST_CASE("a fitted constant is re-fitted per sample: the figure matches, the constant follows arithmetic") {
  const Scenario base = load_scenario_string(kFitted, "f.yaml");
  REQUIRE(base.ranges.size() == 2);
  CHECK(range_named(base, "params.rest").fit == "one-cpu");
  // Not drawn: only `work` is sampled.
  for (const auto& s : draw_samples(base, 4, 9)) {
    CHECK(s.count("params.work") == 1);
    CHECK(s.count("params.rest") == 0);
  }
  for (double work_ns : {500.0, 800.0, 1200.0}) {
    RangeSample sample{{"params.work", work_ns * 1000}};
    std::vector<FitResult> fits;
    const Scenario sc = refit_sample(base, sample, 1, {}, &fits);
    REQUIRE(fits.size() == 1);
    CHECK(fits[0].converged);
    CHECK(fits[0].evaluations <= kMaxRefitEvaluations);
    CHECK(std::abs(fits[0].predicted / 666666.667 - 1) <= kRefitTolerance);
    // rest = 1.5 us - work, within the 1% the search stops at (of the op's 1.5 us).
    CHECK(std::abs(fits[0].value - (1.5e6 - work_ns * 1000)) <= 0.01 * 1.5e6);
    CHECK(sample.at("params.rest") == fits[0].value);
    CHECK(sc.params.at("rest").time.count() == static_cast<std::int64_t>(fits[0].value));
    const double rate = run_point(sc, PointSpec{"base", 1, 0, rep_seed(1, 0)}).ops_per_sec;
    CHECK(rate == doctest::Approx(fits[0].predicted));
  }
  // The same sample, the same fit (the search depends on the sample alone).
  RangeSample a{{"params.work", 700000}}, b{{"params.work", 700000}};
  refit_sample(base, a, 1);
  refit_sample(base, b, 1);
  CHECK(a == b);
}

TEST_CASE("a fit its search range cannot reach keeps the closest bound and says so") {
  // 1.5 us per op needs rest = 1.5 us - work = 500 ns; searched in at most
  // 200 ns, an op takes at most 1.2 us: the rate stays above the figure's.
  std::string text = replace(kFitted, "rest: {estimate: 300ns, range: [50ns, 5us], fit: one-cpu}",
                             "rest: {estimate: 100ns, range: [50ns, 200ns], fit: one-cpu}");
  const Scenario base = load_scenario_string(text, "f.yaml");
  RangeSample sample{{"params.work", 1e6}};
  std::vector<FitResult> fits;
  refit_sample(base, sample, 1, {}, &fits);
  REQUIRE(fits.size() == 1);
  CHECK_FALSE(fits[0].converged);
  CHECK(fits[0].value == 200000);  // the bound nearest the figure
  CHECK(fits[0].predicted == doctest::Approx(1e6 / 1.2).epsilon(0.001));
  // A range narrower than the search's first 10% step, its estimate at the
  // low end: searched from the other end, which is the closest.
  text = replace(kFitted, "rest: {estimate: 300ns, range: [50ns, 5us], fit: one-cpu}",
                 "rest: {estimate: 100ns, range: [100ns, 105ns], fit: one-cpu}");
  const Scenario narrow = load_scenario_string(text, "f.yaml");
  RangeSample s2{{"params.work", 1e6}};
  fits.clear();
  refit_sample(narrow, s2, 1, {}, &fits);
  REQUIRE(fits.size() == 1);
  CHECK_FALSE(fits[0].converged);
  CHECK(fits[0].value == 105000);
  CHECK(fits[0].evaluations <= 3);
}

TEST_CASE("a sample keeps its re-fit's simulation of its own point: the same as running it") {
  const Scenario base = load_scenario_string(kFitted, "f.yaml");
  const SampledScenario s = sampled_scenario(base, 4, 3, 2);
  REQUIRE(s.fits.size() == 1);
  CHECK(s.fits[0].evaluations >= 1);
  const PointSpec spec{"base", 1, 0, rep_seed(3, 0)};
  // Only the value the search kept: the other values' simulations are dropped.
  REQUIRE(s.points.size() == 1);
  const auto it = s.points.find(point_fingerprint(s.scenario, spec));
  REQUIRE(it != s.points.end());
  const PointResult again = run_point(s.scenario, spec);
  CHECK(it->second.ops_per_sec == again.ops_per_sec);
  CHECK(it->second.events == again.events);
  CHECK(it->second.ops_per_sec == doctest::Approx(s.fits[0].predicted));
}

TEST_CASE("sampled_scenario re-fits, and the plain scenario keeps the written value") {
  const Scenario base = load_scenario_string(kFitted, "f.yaml");
  CHECK(base.params.at("rest").time == Duration{300000});
  const SampledScenario s = sampled_scenario(base, 4, 3, 2);
  REQUIRE(s.fits.size() == 1);
  CHECK(s.fits[0].converged);
  CHECK(std::abs(s.fits[0].value - (1.5e6 - s.sample.at("params.work"))) <= 0.01 * 1.5e6);
  CHECK(sampled_scenario(base, 4, 3, 2, {}, false).fits.empty());
}
