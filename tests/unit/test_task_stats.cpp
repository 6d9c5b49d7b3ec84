// Per-task figures: the log-linear histogram against exact quantiles, the
// per-task rate distribution, and both through the whole stack (a fixed
// loop's latency is its time exactly; a FIFO lock is fair where a lock
// that hands over to a random waiter is not).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "flat_machine.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"
#include "results/report.h"
#include "results/schema.h"
#include "sim/histogram.h"
#include "sim/rng.h"

using namespace vfssim;
using namespace vfssim::models;
using sim::LogLinearHistogram;

namespace {

// The value of rank ceil(q n) (at least 1) of the sorted data: the
// histogram's definition of a quantile, computed exactly.
std::int64_t exact_quantile(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const auto n = static_cast<double>(v.size());
  const auto rank = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(q * n)), 1, v.size());
  return v[rank - 1];
}

// Within the bucket resolution: half a bucket, at most 1/2^(kSubBits+1) of the value.
bool within_resolution(std::int64_t estimate, std::int64_t exact) {
  const auto slack = static_cast<double>(exact) / static_cast<double>(2 * LogLinearHistogram::kHalf);
  return std::abs(static_cast<double>(estimate - exact)) <= slack;
}

}  // namespace

TEST_CASE("histogram: every value lies in its bucket, buckets are contiguous and at most 1/128 wide") {
  sim::RngStream rng(7, "histogram-buckets");
  std::vector<std::int64_t> values = {0, 1, 255, 256, 257, 511, 512, 1000, 123456789, (std::int64_t{1} << 62),
                                      std::numeric_limits<std::int64_t>::max()};
  for (int i = 0; i < 10000; ++i) values.push_back(static_cast<std::int64_t>(rng.next_u64() >> (1 + rng.below(63))));
  for (const auto v : values) {
    const auto i = LogLinearHistogram::index_of(v);
    REQUIRE(i < LogLinearHistogram::kCounts);
    const auto lo = LogLinearHistogram::lowest_of(i), w = LogLinearHistogram::width_of(i);
    CHECK(lo <= v);
    CHECK(v - lo < w);
    if (v >= 2 * LogLinearHistogram::kHalf) CHECK(w * LogLinearHistogram::kHalf <= lo);
  }
  for (std::size_t i = 1; i < LogLinearHistogram::kCounts; ++i)
    CHECK(LogLinearHistogram::lowest_of(i) == LogLinearHistogram::lowest_of(i - 1) + LogLinearHistogram::width_of(i - 1));
}

TEST_CASE("histogram: quantiles of known data match the exact ones within the bucket resolution") {
  SUBCASE("small values are exact") {
    LogLinearHistogram h;
    std::vector<std::int64_t> v;
    for (std::int64_t x = 0; x < 256; ++x)
      for (int k = 0; k <= x % 3; ++k) {
        h.record(x);
        v.push_back(x);
      }
    for (const double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) CHECK(h.quantile(q) == exact_quantile(v, q));
  }
  SUBCASE("latencies from 1 ns to 10 ms (log-uniform), in picoseconds") {
    LogLinearHistogram h;
    std::vector<std::int64_t> v;
    sim::RngStream rng(3, "histogram-data");
    for (int i = 0; i < 20000; ++i) {
      const auto x = static_cast<std::int64_t>(std::exp(std::log(1e3) + rng.uniform() * (std::log(1e10) - std::log(1e3))));
      h.record(x);
      v.push_back(x);
    }
    REQUIRE(h.count() == v.size());
    CHECK(h.min() == *std::min_element(v.begin(), v.end()));
    CHECK(h.max() == *std::max_element(v.begin(), v.end()));
    for (const double q : {0.001, 0.1, 0.5, 0.9, 0.99, 0.999}) {
      const auto est = h.quantile(q), exact = exact_quantile(v, q);
      INFO("q " << q << ": histogram " << est << " ps, exact " << exact << " ps");
      CHECK(within_resolution(est, exact));
    }
    CHECK(h.quantile(1.0) == h.max());
  }
  SUBCASE("one repeated value is reported exactly (clamped to the exact min and max)") {
    LogLinearHistogram h;
    for (int i = 0; i < 1000; ++i) h.record(100'001);  // not a bucket boundary
    for (const double q : {0.0, 0.5, 0.99, 0.999, 1.0}) CHECK(h.quantile(q) == 100'001);
  }
  SUBCASE("empty") {
    const LogLinearHistogram h;
    CHECK(h.count() == 0);
    CHECK(h.quantile(0.99) == 0);
  }
}

TEST_CASE("histogram: merging equals recording everything into one, in any order") {
  LogLinearHistogram a, b, all, reverse;
  sim::RngStream rng(11, "histogram-merge");
  std::vector<std::int64_t> v;
  for (int i = 0; i < 5000; ++i) v.push_back(static_cast<std::int64_t>(rng.below(1'000'000'000)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    (i % 2 ? a : b).record(v[i]);
    all.record(v[i]);
  }
  for (auto it = v.rbegin(); it != v.rend(); ++it) reverse.record(*it);
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.min() == all.min());
  CHECK(a.max() == all.max());
  for (const double q : {0.1, 0.5, 0.99, 0.999}) {
    CHECK(a.quantile(q) == all.quantile(q));
    CHECK(reverse.quantile(q) == all.quantile(q));
  }
}

TEST_CASE("task_stats: per-task rates, fairness and Jain's index of known counts") {
  const LogLinearHistogram none;
  const TaskStats s = task_stats({40, 10, 30, 20}, 0.5, none);
  CHECK(s.ops_per_sec_min == doctest::Approx(20));
  CHECK(s.ops_per_sec_median == doctest::Approx(50));  // (20 + 30) / 2 iterations over 0.5 s
  CHECK(s.ops_per_sec_max == doctest::Approx(80));
  CHECK(s.fairness == doctest::Approx(4));
  CHECK(s.jain == doctest::Approx(100.0 * 100.0 / (4 * (1600.0 + 100 + 900 + 400))));
  CHECK_FALSE(s.latency_p99.has_value());  // nothing recorded: not measured

  const TaskStats odd = task_stats({5, 1, 3}, 1, none);
  CHECK(odd.ops_per_sec_median == doctest::Approx(3));

  const TaskStats starved = task_stats({0, 10}, 1, none);
  CHECK(std::isnan(starved.fairness));  // max/min is infinite: reported as not measurable
  CHECK(starved.jain == doctest::Approx(0.5));  // 1/n: one task did everything

  const TaskStats idle = task_stats({0, 0}, 1, none);
  CHECK(std::isnan(idle.jain));
  CHECK(idle.ops_per_sec_max == 0);
}

namespace {

Scenario lock_scenario(const std::string& kind, int cpus, const std::string& body) {
  const std::string text =
      "scenario: task-figures\n" + vfssim::testing::flat_machine(cpus) +
      "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 20us\n  duration: 2ms\n"
      "strategies:\n  s:\n"
      "    locks: {l: {kind: " + kind + ", scope: global}}\n"
      "    ops:\n      iter:\n" + body;
  return load_scenario_string(text, "task-figures.yaml");
}

}  // namespace

TEST_CASE("a fixed-time loop at 1 CPU: every per-op latency is the loop's time exactly") {
  // 700 ns of compute and an uncontended 1-CPU tas lock held 300 ns.
  const Scenario sc = lock_scenario("tas", 1, "        - compute: 700ns\n        - lock: l\n          hold: 300ns\n");
  const PointResult r = run_point(sc, PointSpec{"s", 1, 0, 1});
  REQUIRE(r.stop == "time-limit");
  REQUIRE(r.ops > 0);
  const Duration loop{static_cast<std::int64_t>(std::llround(r.window_seconds * 1e12 / static_cast<double>(r.ops)))};
  MESSAGE("1 CPU: " << r.ops << " iterations, " << sim::format_duration(loop) << " each");
  REQUIRE(r.tasks.latency_p50.has_value());
  CHECK(*r.tasks.latency_p50 == *r.tasks.latency_max);
  CHECK(*r.tasks.latency_p99 == *r.tasks.latency_max);
  CHECK(*r.tasks.latency_p999 == *r.tasks.latency_max);
  // The window holds a whole number of iterations of this one length, up to one at its edges.
  const double per_op = static_cast<double>(r.tasks.latency_max->count());
  CHECK(std::abs(r.window_seconds * 1e12 / per_op - static_cast<double>(r.ops)) <= 1.0);
  CHECK(r.tasks.fairness == 1);
  CHECK(r.tasks.jain == 1);
  CHECK(r.tasks.ops_per_sec_min == r.ops_per_sec);
}

TEST_CASE("fairness: a ticket lock serves in turn (max/min ~ 1), a tas lock hands over to a random waiter") {
  // Saturated: the critical section (1 us) is longer than all the others'
  // think time (8 x 100 ns), so 7 tasks always wait. FIFO (ticket) grants
  // go round the tasks: their counts differ by at most one, so max/min <=
  // (min + 1) / min. tas picks one of the waiters uniformly at random: a
  // task's count is a sum of random waits, its spread over ~250
  // acquisitions each is ~sqrt(250) ~ 6%, and the range over 8 tasks ~3
  // standard deviations, so max/min is ~1.2, far above ticket's.
  const std::string body = "        - compute: 100ns\n        - lock: l\n          hold: 1us\n";
  const PointResult ticket = run_point(lock_scenario("ticket", 8, body), PointSpec{"s", 8, 0, 1});
  const PointResult tas = run_point(lock_scenario("tas", 8, body), PointSpec{"s", 8, 0, 1});
  REQUIRE(ticket.stop == "time-limit");
  REQUIRE(tas.stop == "time-limit");
  const auto fewest = *std::min_element(ticket.task_ops.begin(), ticket.task_ops.end());
  REQUIRE(fewest > 100);
  MESSAGE("fairness: ticket " << ticket.tasks.fairness << " (jain " << ticket.tasks.jain << "), tas "
                              << tas.tasks.fairness << " (jain " << tas.tasks.jain << ")");
  CHECK(ticket.tasks.fairness <= (static_cast<double>(fewest) + 1) / static_cast<double>(fewest));
  CHECK(tas.tasks.fairness > 1.05);
  CHECK(tas.tasks.fairness > ticket.tasks.fairness + 0.04);
  CHECK(tas.tasks.jain < ticket.tasks.jain);
  // The ticket lock's turns: every iteration waits for the 7 others' critical
  // sections, so its latency is ~8 holds; p99 of tas's random waits is far longer.
  REQUIRE(ticket.tasks.latency_p99.has_value());
  REQUIRE(tas.tasks.latency_p99.has_value());
  const double ticket_p50 = static_cast<double>(ticket.tasks.latency_p50->count()) * 1e-6;  // us
  CHECK(ticket_p50 == doctest::Approx(8.0 * 1e6 / ticket.ops_per_sec).epsilon(0.02));
  CHECK(static_cast<double>(ticket.tasks.latency_p99->count()) <= 1.02 * static_cast<double>(ticket.tasks.latency_p50->count()));
  CHECK(static_cast<double>(tas.tasks.latency_p99->count()) > 2.0 * static_cast<double>(tas.tasks.latency_p50->count()));
}

TEST_CASE("the tasks record is in the schema: JSON keys, null when not measured, and it survives pack/unpack") {
  const Scenario sc = lock_scenario("ticket", 2, "        - compute: 100ns\n        - lock: l\n          hold: 1us\n");
  const PointResult r = run_point(sc, PointSpec{"s", 2, 0, 1});
  const PointResult back = report::schema::unpack(report::schema::pack(r));
  CHECK(back.tasks.ops_per_sec_min == r.tasks.ops_per_sec_min);
  CHECK(back.tasks.fairness == r.tasks.fairness);
  CHECK(back.tasks.latency_p99 == r.tasks.latency_p99);
  CHECK(back.tasks.latency_max == r.tasks.latency_max);

  const auto rows = report::schema::shown_record(report::schema::tasks().fields, r.tasks, report::schema::context_of(r));
  std::vector<std::string> keys;
  for (const auto& v : rows) keys.push_back(v.key);
  CHECK(keys == std::vector<std::string>{"ops_per_sec_min", "ops_per_sec_median", "ops_per_sec_max", "fairness", "jain",
                                         "latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us"});
  const TaskStats unmeasured;
  for (const auto& v : report::schema::shown_record(report::schema::tasks().fields, unmeasured, {}))
    CHECK(std::holds_alternative<std::monostate>(v.values.front()));
}

TEST_CASE("the table's p99 cell rounds before it picks the unit: 999.7 ns is 1us, not 1e+03ns") {
  auto cell = [](std::int64_t ps) {
    vfssim::models::CurvePoint cp;
    cp.strategy = "s";
    cp.cpus = 1;
    cp.ops_per_sec = 1;
    vfssim::models::PointResult r;
    r.tasks.latency_p99 = vfssim::sim::Duration{ps};
    cp.reps.push_back(r);
    std::ostringstream os;
    vfssim::report::print_curve_table(os, {cp});
    return os.str();
  };
  const std::string near_us = cell(999'700);
  CHECK(near_us.find("1us") != std::string::npos);
  CHECK(near_us.find("e+") == std::string::npos);
  CHECK(cell(998'400).find("998ns") != std::string::npos);
  CHECK(cell(2'500'000).find("2.5us") != std::string::npos);
  CHECK(cell(999).find("999ps") != std::string::npos);
}

namespace {

// Readers and writers of one rwsem as two roles, and a figure about them.
std::string roles_scenario(const std::string& expect) {
  return "scenario: roles\n" + testing::flat_machine(8) +
         "  wake_latency: 2us\n  context_switch: 500ns\n"
         "workload:\n  tasks: thread\n  roles:\n    reader: {count: 2, loop: [r]}\n    writer: {loop: [w]}\n"
         "  warmup: 20us\n  duration: 1ms\n  cpus: [8]\n"
         "strategies:\n  s:\n    locks:\n      sem: {kind: rwsem, scope: global, behaviour: v6.1}\n"
         "    ops:\n      r:\n        - compute: 200ns\n        - lock: sem\n          mode: read\n          hold: 100ns\n"
         "      w:\n        - compute: 200ns\n        - lock: sem\n          mode: write\n          hold: 100ns\n" +
         expect;
}

}  // namespace

TEST_CASE("roles: each role's tasks have their own rate distribution, in the schema and in spread figures") {
  const Scenario sc = load_scenario_string(roles_scenario(""), "roles.yaml");
  const PointResult r = run_point(sc, PointSpec{"s", 8, 0, 1});
  REQUIRE(r.roles.size() == 2);
  // The machine's wake-up latency applies: the lock declares none.
  const RoleReport& readers = r.roles[0];
  const RoleReport& writers = r.roles[1];
  CHECK(readers.tasks == 2);
  CHECK(writers.tasks == 6);
  // Tasks are laid out as the roles take them: the readers first.
  const auto lo = std::min(r.task_ops[0], r.task_ops[1]), hi = std::max(r.task_ops[0], r.task_ops[1]);
  CHECK(readers.tasks_stats.ops_per_sec_min == doctest::Approx(static_cast<double>(lo) / r.window_seconds));
  CHECK(readers.tasks_stats.ops_per_sec_max == doctest::Approx(static_cast<double>(hi) / r.window_seconds));
  const auto wmin = *std::min_element(r.task_ops.begin() + 2, r.task_ops.end());
  CHECK(writers.tasks_stats.ops_per_sec_min == doctest::Approx(static_cast<double>(wmin) / r.window_seconds));
  CHECK(writers.tasks_stats.jain <= 1.0);
  const PointResult back = report::schema::unpack(report::schema::pack(r));
  REQUIRE(back.roles.size() == 2);
  CHECK(back.roles[1].tasks_stats.fairness == r.roles[1].tasks_stats.fairness);
  CHECK(back.roles[1].tasks_stats.jain == r.roles[1].tasks_stats.jain);

  // A spread figure names a role of the point's workload.
  const Scenario with = load_scenario_string(
      roles_scenario("expect:\n  - figure: w\n    spread: {point: s@8, role: writer}\n    stat: fairness\n"
                     "    reported: 1.5\n    tolerance: 25%\n    source: test\n"),
      "roles.yaml");
  CHECK(with.expect.front().role == "writer");
  CHECK_THROWS_WITH_AS(load_scenario_string(roles_scenario("expect:\n  - figure: w\n    spread: {point: s@8, role: "
                                                           "scanner}\n    reported: [2, 1]\n    tolerance: 25%\n"
                                                           "    source: test\n"),
                                            "roles.yaml"),
                       doctest::Contains("has no role 'scanner'"), ScenarioError);
  CHECK_THROWS_WITH_AS(load_scenario_string(roles_scenario("expect:\n  - figure: w\n    spread: {point: s@8, role: "
                                                           "reader}\n    stat: p99_latency\n    reported: 2\n"
                                                           "    tolerance: 25%\n    source: test\n"),
                                            "roles.yaml"),
                       doctest::Contains("latency is of the whole point"), ScenarioError);
}

TEST_CASE("a sleeping lock without wake: takes the machine's wake_latency, and a machine without one is refused") {
  CHECK_NOTHROW(load_scenario_string(roles_scenario(""), "roles.yaml"));
  std::string text = roles_scenario("");
  text.replace(text.find("  wake_latency: 2us\n  context_switch: 500ns\n"), 44, "");
  CHECK_THROWS_WITH_AS(load_scenario_string(text, "roles.yaml"),
                       doctest::Contains("lock 'sem' of strategy 's' has sleeping waiters but no wake-up latency"),
                       ScenarioError);
  // context_switch needs a longer wake_latency beside it.
  std::string bad = roles_scenario("");
  bad.replace(bad.find("context_switch: 500ns"), 21, "context_switch: 5us");
  CHECK_THROWS_WITH_AS(load_scenario_string(bad, "roles.yaml"), doctest::Contains("context_switch needs a longer wake_latency"),
                       ScenarioError);
}
