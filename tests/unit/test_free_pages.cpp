// Free pages between watermarks: the pool's own arithmetic (kswapd's fluid
// refill, the watermark test, conservation of pages) and, through the whole
// stack, the steady state that page conservation and CPU time force on a
// loop that allocates with direct reclaim.
#include <doctest/doctest.h>

#include <string>

#include "models/experiment/experiment.h"
#include "models/kernel/free_pages.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;
using sim::Time;

namespace {

Time at_us(std::int64_t us) { return Time{} + sim::microseconds(us); }

// Pages in = pages out: start (high) + kswapd + direct reclaim - taken.
void check_conserved(FreePages& p, Time now, double start) {
  const auto& s = p.stats();
  CHECK(p.level(now) == doctest::Approx(start + s.pages_refilled + s.pages_reclaimed - s.pages_allocated));
}

}  // namespace

TEST_CASE("free pages: the fast path keeps the level at or above the low watermark") {
  FreePages p(/*low=*/100, /*high=*/200, /*refill=*/0);
  CHECK(p.level(Time{}) == 200);
  CHECK(p.try_take(Time{}, 64));   // 136 left
  CHECK_FALSE(p.try_take(Time{}, 64));  // would leave 72 < 100: direct reclaim, level untouched
  CHECK(p.level(Time{}) == 136);
  p.reclaimed(Time{}, 128, 64);    // 136 + 128 - 64
  CHECK(p.level(Time{}) == 200);
  CHECK(p.stats().allocations == 2);
  CHECK(p.stats().direct_reclaims == 1);
  CHECK(p.stats().pages_allocated == 128);
  check_conserved(p, Time{}, 200);
}

TEST_CASE("free pages: kswapd refills at its rate, only up to the high watermark") {
  FreePages p(/*low=*/0, /*high=*/1000, /*refill=*/1e6);  // 1 page per microsecond
  REQUIRE(p.try_take(Time{}, 600));
  CHECK(p.level(at_us(100)) == doctest::Approx(500));   // 400 + 100 us x 1 page/us
  CHECK(p.level(at_us(700)) == doctest::Approx(1000));  // capped: 600 of room refilled by 600 us
  CHECK(p.stats().pages_refilled == doctest::Approx(600));
  CHECK(p.level(at_us(5000)) == doctest::Approx(1000)); // nothing more while full
  CHECK(p.stats().pages_refilled == doctest::Approx(600));
  check_conserved(p, at_us(5000), 1000);
  CHECK_THROWS_AS(p.level(at_us(10)), std::logic_error);  // time runs forward only
}

TEST_CASE("free pages: bad watermarks are refused") {
  CHECK_THROWS_AS(FreePages(10, 5, 0), std::invalid_argument);
  CHECK_THROWS_AS(FreePages(-1, 5, 0), std::invalid_argument);
  CHECK_THROWS_AS(FreePages(0, 5, -1), std::invalid_argument);
}

// N CPUs loop: compute Z, then allocate P pages; below the low watermark
// the allocation first runs direct reclaim (compute R) that frees M pages.
// kswapd refills r pages/s. In the steady state the level is stationary:
// P X = r + M D (X iterations/s, D direct reclaims/s), and the CPUs are
// always busy: N = X Z + D R. So X = (N + R r / M) / (Z + R P / M) and
// D = (P X - r) / M. Whenever kswapd alone cannot keep up, this is exact up
// to the transient and the window's edges; when it can, X = N / Z, D = 0.
TEST_CASE("free pages: throughput and direct reclaims match page conservation and CPU time") {
  const int n = 8;
  const double z = 1e-6, r_cost = 10e-6, pages = 32, freed = 128;
  for (const double refill : {0.0, 64e6, 200e6, 300e6}) {
    CAPTURE(refill);
    const std::string text =
        "scenario: pool\n"
        "machine:\n"
        "  levels:\n"
        "    - {name: machine, count: 1, transfer: 100ns}\n"
        "    - {name: cpu, count: 8}\n"
        "  local_hit: 1ns\n"
        "  local_atomic: 10ns\n"
        "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 200us\n  duration: 20ms\n"
        "params:\n  kswapd: " + std::to_string(refill) + "\n"
        "strategies:\n  s:\n"
        "    pools:\n      free: {scope: global, low: 1000, high: 2000, refill: $kswapd}\n"
        "    ops:\n      iter:\n"
        "        - compute: 1us\n"
        "        - alloc: free\n          pages: 32\n          reclaimed: 128\n"
        "          reclaim:\n            - compute: 10us\n";
    const Scenario sc = load_scenario_string(text, "pool.yaml");
    const PointResult res = run_point(sc, PointSpec{"s", n, 0, 1});
    double x = (n + r_cost * refill / freed) / (z + r_cost * pages / freed);
    double d = (pages * x - refill) / freed;
    if (refill * 1.0 >= pages * n / z) {
      x = n / z;
      d = 0;
    }
    CHECK(res.ops_per_sec == doctest::Approx(x).epsilon(0.01));
    REQUIRE(res.pools.size() == 1);
    const auto& st = res.pools[0].stats;
    CHECK(static_cast<double>(st.direct_reclaims) / res.window_seconds == doctest::Approx(d).epsilon(0.02));
    // kswapd works at its rate while the level is below high: always, unless it alone keeps up.
    CHECK(st.pages_refilled / res.window_seconds == doctest::Approx(std::min(refill, pages * x)).epsilon(0.01));
  }
}

TEST_CASE("free pages: the loader insists on a declared pool and a reclaim that gives back enough") {
  const std::string head =
      "scenario: pool\n"
      "machine:\n  levels:\n    - {name: machine, count: 1, transfer: 100ns}\n    - {name: cpu, count: 2}\n"
      "  local_hit: 1ns\n  local_atomic: 10ns\n"
      "workload:\n  tasks: process\n  placement: compact\n  loop: [iter]\n  warmup: 0us\n  duration: 1ms\n  cpus: [1]\n"
      "strategies:\n  s:\n";
  auto message = [&](const std::string& body) -> std::string {
    try {
      load_scenario_string(head + body, "pool.yaml");
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  };
  const std::string pool = "    pools:\n      free: {scope: node, low: 10, high: 20, refill: 1000}\n";
  const std::string alloc = "    ops:\n      iter:\n        - alloc: ";
  CHECK(message(pool + alloc + "other\n          pages: 1\n          reclaimed: 1\n          reclaim: [{compute: 1us}]\n")
            .find("pool 'other', which it does not declare") != std::string::npos);
  CHECK(message(pool + alloc + "free\n          pages: 32\n          reclaimed: 8\n          reclaim: [{compute: 1us}]\n")
            .find("pool.yaml:23:22: direct reclaim gives back 8 pages") == 0);
  CHECK(message(pool + alloc + "free\n          pages: 32\n          reclaim: [{compute: 1us}]\n")
            .find("has no 'reclaimed'") != std::string::npos);
  CHECK(message("    pools:\n      free: {scope: node, low: 30, high: 20, refill: 1000}\n" + alloc +
                "free\n          pages: 1\n          reclaimed: 1\n          reclaim: [{compute: 1us}]\n")
            .find("below its low watermark") != std::string::npos);
  CHECK(message("    pools:\n      free: {scope: node, low: 3, high: 20}\n" + alloc +
                "free\n          pages: 1\n          reclaimed: 1\n          reclaim: [{compute: 1us}]\n")
            .find("refill") != std::string::npos);
}
