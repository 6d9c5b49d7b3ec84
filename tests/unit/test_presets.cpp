// Machine presets of scenarios/machines/: every file loads, has the shape of
// the machine it names, and its costs reproduce the published figures it
// cites (shared/reported/hardware.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/scenario/scenario.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

std::string preset_path(const std::string& name) {
  return std::string(VFSSIM_SOURCE_DIR) + "/scenarios/machines/" + name + ".yaml";
}

Topology load_preset(const std::string& name) { return Topology(load_machine_file(preset_path(name))); }

std::int64_t ps(Duration d) { return d.count(); }

// Cycles a cost stands for at `ghz`.
double cycles(Duration d, double ghz) { return static_cast<double>(d.count()) * ghz / 1000.0; }

// Interconnect hop count between two CPUs in different outermost elements,
// recovered from the cost (base + hop x links) of a preset with hop > 0.
int hops_between(const Topology& t, int a, int b) {
  const auto& s = t.spec();
  const std::int64_t extra = ps(t.transfer(a, b)) - ps(s.cross_base);
  REQUIRE(s.hop.count() > 0);
  REQUIRE(extra % s.hop.count() == 0);
  return static_cast<int>(extra / s.hop.count());
}

// Hops between every pair of outermost elements (by their first CPUs).
std::map<std::pair<int, int>, int> outer_hops(const Topology& t) {
  const int outer = t.num_elements(0);
  const int per = t.num_cpus() / outer;
  std::map<std::pair<int, int>, int> h;
  for (int a = 0; a < outer; ++a)
    for (int b = 0; b < outer; ++b)
      if (a != b) h[{a, b}] = hops_between(t, a * per, b * per);
  return h;
}

struct Shape {
  const char* name;
  int cpus, cores, nodes;
};

const Shape kShapes[] = {
    {"nehalem-ep-2s", 16, 8, 2},      {"nehalem-ex-4s", 64, 32, 4},   {"nehalem-ex-8s", 128, 64, 8},
    {"ivybridge-ex-4s", 120, 60, 4},  {"skylake-sp-2s", 96, 48, 2},   {"opteron-48", 48, 48, 8},
    {"power5p-64", 128, 64, 8},       {"skylake-sp-8s", 448, 224, 8}, {"icelake-sp-2s", 128, 64, 2},
    {"sapphirerapids-2s", 224, 112, 2}, {"epyc-rome-2s", 256, 128, 2}, {"epyc-milan-2s", 192, 96, 2},
    {"epyc-genoa-2s", 384, 192, 2},
};

}  // namespace

TEST_CASE("preset files: every machine of scenarios/machines loads and every known preset is there") {
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(std::string(VFSSIM_SOURCE_DIR) + "/scenarios/machines")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string stem = e.path().stem().string();
    CAPTURE(stem);
    const auto spec = load_machine_file(e.path().string());
    CHECK(spec.name == stem);
    CHECK_FALSE(spec.description.empty());
    found.insert(stem);
  }
  std::set<std::string> expected;
  for (const auto& s : kShapes) expected.insert(s.name);
  // Every preset this file knows is there (others may be added; they must load).
  for (const auto& name : expected) CHECK(found.count(name) == 1);
}

TEST_CASE("preset shapes: thread, core and NUMA node counts") {
  for (const auto& s : kShapes) {
    CAPTURE(s.name);
    const Topology t = load_preset(s.name);
    CHECK(t.num_cpus() == s.cpus);
    CHECK(t.num_cores() == s.cores);
    CHECK(t.num_nodes() == s.nodes);
    CHECK(t.cost_matrix_ps() == t.cost_matrix_ps().transpose());
    // Every CPU of another core is further than a local hit. (Not always
    // an SMT sibling: skylake-sp-2s's sibling transfer is nviennot's 7.6 ns
    // CAS minus the 7.0 ns local CAS.)
    for (int b = 1; b < t.num_cpus(); ++b)
      if (t.core_of(b) != t.core_of(0)) CHECK(t.transfer(0, b) > t.local_hit());
  }
}

TEST_CASE("preset SMT machines: transfer grows from SMT sibling to same socket to other socket") {
  for (const auto* name : {"nehalem-ep-2s", "nehalem-ex-4s", "nehalem-ex-8s", "ivybridge-ex-4s", "skylake-sp-2s",
                           "icelake-sp-2s", "sapphirerapids-2s"}) {
    CAPTURE(name);
    const Topology t = load_preset(name);
    const int per_socket = t.num_cpus() / t.num_nodes();
    // Compact numbering: 0 and 1 are SMT siblings, 2 is another core of socket 0.
    REQUIRE(t.core_of(0) == t.core_of(1));
    REQUIRE(t.core_of(0) != t.core_of(2));
    REQUIRE(t.node_of(0) == t.node_of(2));
    REQUIRE(t.node_of(0) != t.node_of(per_socket));
    CHECK(t.transfer(0, 1) < t.transfer(0, 2));
    CHECK(t.transfer(0, 2) < t.transfer(0, per_socket));
    // Same costs from any CPU of the socket.
    CHECK(t.transfer(per_socket - 1, per_socket - 2) == t.transfer(0, 1));
    CHECK(t.transfer(per_socket - 1, 0) == t.transfer(0, 2));
    // And every remote socket costs at least the nearest one.
    for (int b = per_socket; b < t.num_cpus(); b += per_socket) CHECK(t.transfer(0, b) >= t.transfer(0, per_socket));
  }
}

TEST_CASE("preset opteron-48: transfer grows from same die to same package to other package") {
  const Topology t = load_preset("opteron-48");
  REQUIRE(t.node_of(0) == t.node_of(5));   // die 0: CPUs 0-5
  REQUIRE(t.node_of(0) != t.node_of(6));   // die 1, same package
  REQUIRE(t.element_of(6, 0) == 0);
  REQUIRE(t.element_of(12, 0) == 1);       // package 1
  CHECK(t.transfer(0, 5) < t.transfer(0, 6));
  CHECK(t.transfer(0, 6) < t.transfer(0, 12));
  CHECK(t.transfer(0, 12) < t.transfer(0, 24));  // the opposite package on the ring
}

TEST_CASE("preset nehalem-ex-8s: 3 QPI links per socket, at most 2 hops, 2 hops cost more than 1") {
  const Topology t = load_preset("nehalem-ex-8s");
  const auto& s = t.spec();
  REQUIRE(t.num_elements(0) == 8);
  std::map<int, std::set<int>> adj;
  for (const auto& l : s.links) {
    adj[l.a].insert(l.b);
    adj[l.b].insert(l.a);
  }
  CHECK(s.links.size() == 12);
  for (int a = 0; a < 8; ++a) CHECK(adj[a].size() == 3);

  const auto hops = outer_hops(t);
  int max_hops = 0, two_hop_pairs = 0;
  for (const auto& [pair, h] : hops) {
    max_hops = std::max(max_hops, h);
    if (h == 2) ++two_hop_pairs;
    CHECK((h == 1) == (adj[pair.first].count(pair.second) == 1));
  }
  CHECK(max_hops == 2);
  CHECK(two_hop_pairs == 8 * 4);  // from each socket: 3 at 1 hop, 4 at 2 hops
  // Socket 0 links to 1, 7 and 4; socket 2 is two hops away.
  const int per = 16;
  CHECK(hops_between(t, 0, 1 * per) == 1);
  CHECK(hops_between(t, 0, 2 * per) == 2);
  CHECK(t.transfer(0, 2 * per) > t.transfer(0, 1 * per));
  // Westmere-EX load-Modified cycles (SOSP13 Table 2) at 2.26 GHz.
  CHECK(cycles(t.transfer(0, 2), 2.26) == doctest::Approx(109).epsilon(0.001));
  CHECK(cycles(t.transfer(0, 1 * per), 2.26) == doctest::Approx(289).epsilon(0.001));
  CHECK(cycles(t.transfer(0, 2 * per), 2.26) == doctest::Approx(400).epsilon(0.001));
}

TEST_CASE("preset nehalem-ex-4s: four sockets fully connected, same costs as the 8-socket box at one hop") {
  const Topology t4 = load_preset("nehalem-ex-4s");
  const Topology t8 = load_preset("nehalem-ex-8s");
  for (const auto& [pair, h] : outer_hops(t4)) CHECK(h == 1);
  CHECK(t4.transfer(0, 1) == t8.transfer(0, 1));
  CHECK(t4.transfer(0, 2) == t8.transfer(0, 2));
  CHECK(t4.transfer(0, 16) == t8.transfer(0, 16));
}

TEST_CASE("preset opteron-48: SOSP13 Table 2 load-Modified cycles at 2.1 GHz, 2 hops cost more than 1") {
  const Topology t = load_preset("opteron-48");
  REQUIRE(t.num_elements(0) == 4);  // packages
  REQUIRE(t.num_elements(1) == 8);  // dies
  const auto hops = outer_hops(t);
  int max_hops = 0;
  for (const auto& [pair, h] : hops) max_hops = std::max(max_hops, h);
  CHECK(max_hops == 2);
  CHECK(hops_between(t, 0, 12) == 1);  // package 1
  CHECK(hops_between(t, 0, 36) == 1);  // package 3: the ring closes
  CHECK(hops_between(t, 0, 24) == 2);  // package 2
  CHECK(t.transfer(0, 24) > t.transfer(0, 12));

  // Encoded exactly as cycles / 2.1 GHz, to the picosecond.
  CHECK(ps(t.transfer(0, 1)) == 38571);    // same die
  CHECK(ps(t.transfer(0, 6)) == 76667);    // same package, other die
  CHECK(ps(t.transfer(0, 12)) == 81905);   // 1 hop
  CHECK(ps(t.transfer(0, 24)) == 120000);  // 2 hops
  // ...which are SOSP13's 81 / 161 / 172 / 252 cycles.
  CHECK(std::lround(cycles(t.transfer(0, 1), 2.1)) == 81);
  CHECK(std::lround(cycles(t.transfer(0, 6), 2.1)) == 161);
  CHECK(std::lround(cycles(t.transfer(0, 12), 2.1)) == 172);
  CHECK(std::lround(cycles(t.transfer(0, 24), 2.1)) == 252);
  CHECK(std::abs(cycles(t.transfer(0, 24), 2.1) - 252.0) < 0.01);
  // Every pair of CPUs costs one of those five values (or a local hit).
  const std::set<std::int64_t> allowed = {ps(t.local_hit()), 38571, 76667, 81905, 120000};
  for (int a = 0; a < t.num_cpus(); ++a)
    for (int b = 0; b < t.num_cpus(); ++b) CHECK(allowed.count(t.cost_matrix_ps()(a, b)) == 1);
  CHECK(std::lround(cycles(t.local_hit(), 2.1)) == 3);  // SOSP13 Table 3 L1
}

// The CAS a pair of pinned threads measures: the line held by `holder`,
// then taken by `cpu` (transfer + local_atomic, as the level-1 cases run it).
Duration cas_after(const Topology& t, int holder, int cpu) {
  CacheLine line;
  const sim::Time held = line.rmw(t, holder, sim::Time{});
  return line.rmw(t, cpu, held) - held;
}

TEST_CASE("preset skylake-sp-2s: a simulated remote CAS reproduces nviennot's 7.6 / 47 / 134 ns") {
  const Topology t = load_preset("skylake-sp-2s");
  CHECK(t.local_atomic() == sim::nanoseconds(7));  // perfbook, Platinum 8176
  CHECK(cas_after(t, 0, 1) == Duration{7600});          // SMT sibling
  CHECK(cas_after(t, 0, 2) == sim::nanoseconds(47));    // another core of the socket
  CHECK(cas_after(t, 0, 48) == sim::nanoseconds(134));  // other socket
  CHECK(cas_after(t, 0, 0) == sim::nanoseconds(7));     // already local
}

TEST_CASE("preset skylake-sp-8s: a simulated remote CAS reproduces perfbook's 8176 blind CAS 7.2 / 47.5 / 148.8 / 336.6 ns") {
  const Topology t = load_preset("skylake-sp-8s");
  CHECK(t.local_atomic() == sim::nanoseconds(7));       // perfbook: Same-CPU CAS
  CHECK(cas_after(t, 0, 1) == Duration{7200});          // on-core (SMT sibling)
  CHECK(cas_after(t, 0, 2) == Duration{47500});         // off-core
  CHECK(cas_after(t, 0, 56) == Duration{148800});       // off-socket, same four-socket component
  CHECK(cas_after(t, 0, 224) == Duration{336600});      // cross-interconnect
  CHECK(cas_after(t, 56, 168) == Duration{148800});     // any two sockets of one component
  CHECK(t.num_nodes() == 8);
}

TEST_CASE("preset icelake-sp-2s and EPYC presets: a simulated remote CAS reproduces the level-1 medians") {
  const Topology icx = load_preset("icelake-sp-2s");  // nviennot 8375C
  CHECK(cas_after(icx, 0, 1) == Duration{8000});
  CHECK(cas_after(icx, 0, 2) == Duration{51300});
  CHECK(cas_after(icx, 0, 64) == Duration{107800});
  struct Epyc {
    const char* name;
    int ccx_cpus;  // CPUs of one CCX: the first CPU of the next CCX
    long smt, ccx, socket, cross;  // ps
  };
  for (const Epyc& e : {Epyc{"epyc-rome-2s", 8, 8000, 25300, 132100, 266700},
                        Epyc{"epyc-milan-2s", 16, 9800, 22700, 107600, 198300},
                        Epyc{"epyc-genoa-2s", 16, 10300, 27100, 99300, 191600}}) {
    CAPTURE(e.name);
    const Topology t = load_preset(e.name);
    const int per_socket = t.num_cpus() / t.num_nodes();
    CHECK(cas_after(t, 0, 1) == Duration{e.smt});
    CHECK(cas_after(t, 0, 2) == Duration{e.ccx});
    CHECK(cas_after(t, 0, e.ccx_cpus) == Duration{e.socket});
    CHECK(cas_after(t, 0, per_socket) == Duration{e.cross});
    CHECK(t.transfer(0, 1) < t.transfer(0, 2));
    CHECK(t.transfer(0, 2) < t.transfer(0, e.ccx_cpus));
    CHECK(t.transfer(0, e.ccx_cpus) < t.transfer(0, per_socket));
  }
}

TEST_CASE("preset nehalem-ep-2s: perfbook's CAS figures for the X5550") {
  const Topology t = load_preset("nehalem-ep-2s");
  CHECK(t.local_atomic() == Duration{12200});  // perfbook: CAS on a local line
  CacheLine line;
  const sim::Time t0{};
  const sim::Time held = line.rmw(t, 0, t0);
  // Off-socket CAS: perfbook 95.9 ns.
  CHECK(line.rmw(t, 8, held) - held == Duration{95900});
  // Another core of the socket: perfbook's off-core CAS, 31.2 ns (the
  // ladder's level 1: scenarios/validation/hardware/perfbook-nehalem-ep.yaml).
  const sim::Time there = line.rmw(t, 8, held);
  CHECK(line.rmw(t, 10, there + sim::nanoseconds(1000)) - (there + sim::nanoseconds(1000)) == Duration{31200});
}
