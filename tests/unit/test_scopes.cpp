// Per-object scopes (scope: object) and task roles, in the executor: which
// instance each acquisition touches, recorded by a lock wrapper.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "models/codepath/executor.h"
#include "models/experiment/experiment.h"
#include "sim/simulation.h"

using namespace vfssim;
using namespace vfssim::models;

namespace {

// Every acquire, as (cpu, instance): instances are numbered in the order
// the executor makes them, which for one per-object lock is its object
// index (the tasks' first rows make object 0, then 1..N-1 follow).
struct Acquire {
  int cpu, instance;
};
std::vector<Acquire> g_acquires;
int g_made = 0;

class Recording final : public ExternalLock {
 public:
  Recording(std::unique_ptr<AnyLock> inner, int id) : inner_(std::move(inner)), id_(id) {}
  std::optional<Time> acquire(int cpu, Time now, LockMode mode) override {
    g_acquires.push_back({cpu, id_});
    return inner_->acquire(cpu, now, mode);
  }
  Released release(int cpu, Time now, LockMode mode) override { return inner_->release(cpu, now, mode); }
  void take_more(std::vector<Grant>& into) override { inner_->take_more(into); }

 private:
  std::unique_ptr<AnyLock> inner_;
  int id_;
};

std::unique_ptr<AnyLock> recording_factory(const LockDecl& d, LockContext ctx) {
  return std::make_unique<AnyLock>(std::make_unique<Recording>(make_lock(d, ctx), g_made++));
}

// `cpus` tasks on a flat machine loop: compute 500ns, then the lock of
// scope object (N objects, `pick`) held 100ns.
std::map<int, std::vector<int>> run_picks(ObjectSet::Pick pick, int objects, int cpus, std::uint64_t seed,
                                          double zipf_s = 0, Duration window = sim::microseconds(200)) {
  TopologySpec m;
  m.name = "flat";
  m.levels = {{"machine", 1, sim::nanoseconds(20)}, {"cpu", 8, Duration{0}}};
  m.core_level = 1;
  m.numa_level = 0;
  m.local_atomic = sim::nanoseconds(5);
  m.local_hit = sim::nanoseconds(1);
  const Topology topo(m);
  Strategy s;
  s.name = "s";
  LockDecl d;
  d.name = "f_lock";
  d.kind = "mcs";
  d.scope = Scope::kObject;
  d.objects.objects.value = objects;
  d.objects.pick = pick;
  d.objects.zipf_s = zipf_s;
  s.locks["f_lock"] = d;
  Step c;
  c.kind = StepKind::kCompute;
  c.time = TimeDist::fixed(sim::nanoseconds(500));
  Step l;
  l.kind = StepKind::kLock;
  l.target = "f_lock";
  l.time = TimeDist::fixed(sim::nanoseconds(100));
  s.ops["iter"] = OpDef{"iter", {c, l}, {}};
  const Program prog = compile_program(s, std::vector<std::string>{"iter"});
  g_acquires.clear();
  g_made = 0;
  sim::Simulation sim;
  ExecutorConfig cfg;
  for (int i = 0; i < cpus; ++i) cfg.cpus.push_back(i);
  cfg.seed = seed;
  cfg.warmup = Time{} + sim::microseconds(1);
  cfg.end = cfg.warmup + window;
  cfg.lock_factory = &recording_factory;
  Executor exec(sim, prog, topo, cfg);
  exec.start();
  sim.run({cfg.end});
  REQUIRE(g_made == objects);
  std::map<int, std::vector<int>> by_cpu;
  for (const auto& a : g_acquires) by_cpu[a.cpu].push_back(a.instance);
  return by_cpu;
}

}  // namespace

TEST_CASE("scope: object, pick round_robin: iteration i of task t uses object (t + i) mod N") {
  const auto by_cpu = run_picks(ObjectSet::Pick::kRoundRobin, 5, 3, 1);
  REQUIRE(by_cpu.size() == 3);
  for (const auto& [cpu, seq] : by_cpu) {
    REQUIRE(seq.size() > 100);
    for (std::size_t i = 0; i < seq.size(); ++i) CHECK(seq[i] == static_cast<int>((cpu + i) % 5));
  }
  CHECK(run_picks(ObjectSet::Pick::kRoundRobin, 5, 3, 2) == by_cpu);  // no randomness in it
}

TEST_CASE("scope: object, pick task: task t always uses object t mod N") {
  const auto by_cpu = run_picks(ObjectSet::Pick::kTask, 3, 5, 1);
  for (const auto& [cpu, seq] : by_cpu)
    for (int o : seq) CHECK(o == cpu % 3);
}

TEST_CASE("scope: object, pick uniform: every object about equally often, from the seed") {
  const auto a = run_picks(ObjectSet::Pick::kUniform, 4, 2, 7, 0, sim::microseconds(2000));
  CHECK(run_picks(ObjectSet::Pick::kUniform, 4, 2, 7, 0, sim::microseconds(2000)) == a);
  CHECK(run_picks(ObjectSet::Pick::kUniform, 4, 2, 8, 0, sim::microseconds(2000)) != a);
  for (const auto& [cpu, seq] : a) {
    std::vector<int> n(4, 0);
    for (int o : seq) ++n[o];
    const double mean = static_cast<double>(seq.size()) / 4;
    for (int k = 0; k < 4; ++k) CHECK(n[k] == doctest::Approx(mean).epsilon(0.15));
  }
}

TEST_CASE("scope: object, pick zipf(1): object k about as often as 1/(k+1) says") {
  const auto a = run_picks(ObjectSet::Pick::kZipf, 4, 1, 3, 1.0, sim::microseconds(4000));
  const auto& seq = a.at(0);
  std::vector<double> n(4, 0);
  for (int o : seq) ++n[o];
  const double h = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;  // the normalisation
  for (int k = 0; k < 4; ++k) CHECK(n[k] / static_cast<double>(seq.size()) == doctest::Approx(1.0 / (k + 1) / h).epsilon(0.12));
}
