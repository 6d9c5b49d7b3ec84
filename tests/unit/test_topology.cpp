// Topology: the cost matrix follows the hierarchy and the interconnect.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

// 4 sockets in a ring x 2 cores x 2 threads = 16 CPUs.
TopologySpec ring4() {
  TopologySpec t;
  t.name = "ring4";
  t.levels = {{"socket", 4, sim::nanoseconds(40)}, {"core", 2, sim::nanoseconds(5)}, {"thread", 2, Duration{0}}};
  t.links = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  t.cross_base = sim::nanoseconds(100);
  t.hop = sim::nanoseconds(50);
  t.core_level = 1;
  t.numa_level = 0;
  t.local_hit = sim::nanoseconds(1);
  t.local_atomic = sim::nanoseconds(10);
  return t;
}

}  // namespace

TEST_CASE("transfer cost is decided by the nearest shared level, then by interconnect hops") {
  Topology t(ring4());
  REQUIRE(t.num_cpus() == 16);
  CHECK(t.transfer(0, 0) == sim::nanoseconds(1));
  CHECK(t.transfer(0, 1) == sim::nanoseconds(5));    // SMT siblings
  CHECK(t.transfer(0, 2) == sim::nanoseconds(40));   // other core, same socket
  CHECK(t.transfer(0, 4) == sim::nanoseconds(150));  // neighbour socket: base + 1 hop
  CHECK(t.transfer(0, 8) == sim::nanoseconds(200));  // opposite socket on the ring: 2 hops
  CHECK(t.transfer(0, 12) == sim::nanoseconds(150)); // the ring closes
  CHECK(t.cost_matrix_ps() == t.cost_matrix_ps().transpose());
}

TEST_CASE("placement policies") {
  Topology t(ring4());
  CHECK(t.place(4, Placement::kCompact) == std::vector<int>{0, 1, 2, 3});
  CHECK(t.place(4, Placement::kSpread) == std::vector<int>{0, 4, 8, 12});
  CHECK(t.place(9, Placement::kSpread) == std::vector<int>{0, 4, 8, 12, 2, 6, 10, 14, 1});
  CHECK(t.place(9, Placement::kSmtLast) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14, 1});
  for (auto p : {Placement::kCompact, Placement::kSpread, Placement::kSmtLast}) {
    auto all = t.place(16, p);
    CHECK(std::set<int>(all.begin(), all.end()).size() == 16);
  }
  CHECK_THROWS(t.place(17, Placement::kCompact));
  CHECK_THROWS(t.place(0, Placement::kCompact));
}

TEST_CASE("a disconnected interconnect is refused") {
  auto spec = ring4();
  spec.links = {{0, 1}, {2, 3}};
  CHECK_THROWS_AS(Topology{spec}, std::invalid_argument);
}

TEST_CASE("the power5p-64 preset: 64 cores, SMT2, 8 NUMA nodes") {
  const auto spec = load_machine_file(std::string(VFSSIM_SOURCE_DIR) + "/scenarios/machines/power5p-64.yaml");
  Topology t(spec);
  CHECK(t.num_cpus() == 128);
  CHECK(t.num_cores() == 64);
  CHECK(t.num_nodes() == 8);
  // Costs grow outward: SMT < chip < MCM < book < other book.
  CHECK(t.transfer(0, 1) < t.transfer(0, 2));
  CHECK(t.transfer(0, 2) < t.transfer(0, 4));
  CHECK(t.transfer(0, 4) < t.transfer(0, 16));
  CHECK(t.transfer(0, 16) < t.transfer(0, 32));
  CHECK(t.transfer(0, 32) < t.transfer(0, 64));  // two hops on the ring of books
}

TEST_CASE("cache line: loads share, RMWs serialise and pay the transfer") {
  Topology t(ring4());
  CacheLine line;
  using sim::Time;
  const Time t0{};
  // First RMW by cpu 0: nobody holds it, local cost.
  CHECK(line.rmw(t, 0, t0) == t0 + sim::nanoseconds(10));
  // cpu 4 (other socket) at the same instant: waits for cpu 0's request, then transfer + atomic.
  CHECK(line.rmw(t, 4, t0) == t0 + sim::nanoseconds(10 + 150 + 10));
  CHECK(line.stats().queue_wait == sim::nanoseconds(10));
  CHECK(line.owner() == 4);
  // Loads by two CPUs, then a repeated load is a local hit.
  const Time t1 = t0 + sim::microseconds(1);
  CHECK(line.load(t, 2, t1) == t1 + t.transfer(4, 2));
  CHECK(line.sharer_count() == 2);
  const Time t2 = t1 + sim::microseconds(1);
  CHECK(line.load(t, 2, t2) == t2 + sim::nanoseconds(1));
  // A store from a third CPU pays invalidation of the sharers it does not take from.
  auto spec = ring4();
  spec.invalidate_per_sharer = sim::nanoseconds(3);
  Topology ti(spec);
  CacheLine l2;
  const Time t3{};
  for (int c : {0, 1, 2, 3}) l2.load(ti, c, t3 + sim::microseconds(c));
  const Time t4 = t3 + sim::microseconds(10);
  // source = most recent sharer (3), 3 other sharers to invalidate beyond the source.
  CHECK(l2.rmw(ti, 8, t4) == t4 + ti.transfer(3, 8) + sim::nanoseconds(10) + sim::nanoseconds(3) * 3);
  CHECK(l2.sharer_count() == 0);
  CHECK(l2.owner() == 8);
}
