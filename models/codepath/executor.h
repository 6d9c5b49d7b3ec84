// Runs a compiled Program on every simulated CPU: the code-path interpreter.
//
// One task per CPU walks the instruction list. Steps that touch only the
// CPU's own state (compute) run ahead of the clock: the task adds their
// time to its local clock and goes on. Before a step that touches shared
// state (a lock, a cache line) the task stops and schedules one event at
// its local time, so shared state is only ever changed at the simulated
// instant it happens, in global time order. A task waiting for a lock
// schedules nothing: the release that hands it the lock resumes it.
// So an acquisition costs O(1) events however many CPUs wait.
//
// Invariant checked on every grant, whatever the lock model says: an
// exclusive holder is alone, and a lock is never granted before its
// previous release. A violation throws InvariantViolation.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/codepath/program.h"
#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/kernel/lock.h"
#include "sim/rng.h"
#include "sim/simulation.h"

namespace vfssim::models {

class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Creates the lock instance for a declaration; tests substitute broken ones.
using LockFactory = std::unique_ptr<Lock> (*)(const LockDecl&, LockContext);
std::unique_ptr<Lock> make_lock(const LockDecl& decl, LockContext ctx);

struct ProfileEntry {
  std::string symbol;
  std::string chain;   // "sym <- caller <- caller's caller"
  std::string detail;  // the lock or line the step touches, or ""
  Duration time{0};    // CPU time over all CPUs during the window
};

struct LockReport {
  std::string name;
  std::string kind;
  Scope scope;
  int instances = 0;
  LockStats stats;  // summed over instances, as lock_stat reports a class
};

struct LineReport {
  std::string name;
  Scope scope;
  int instances = 0;
  LineStats stats;
};

struct ExecutorConfig {
  std::vector<int> cpus;        // CPU of each task
  TaskKind tasks = TaskKind::kProcess;
  std::uint64_t seed = 1;
  sim::Time warmup{};            // measurement window: (warmup, end]
  sim::Time end{};
  Duration start_jitter{0};     // tasks start uniformly in [0, start_jitter)
  LockFactory lock_factory = &make_lock;
};

class Executor final : public sim::EventHandler {
 public:
  Executor(sim::Simulation& sim, const Program& program, const Topology& topo, ExecutorConfig config);

  // Schedules every task's first step and the warm-up boundary.
  void start();

  void handle(sim::Simulation& sim, const sim::Event& e) override;

  // Loop iterations completed inside the window, all tasks together.
  std::uint64_t window_iterations() const { return window_iterations_; }
  // Engine events executed before the window opened.
  std::uint64_t events_before_window() const { return events_before_window_; }
  std::uint64_t iterations_of(std::size_t task) const { return tasks_.at(task).window_iterations; }
  std::vector<ProfileEntry> profile() const;
  std::vector<LockReport> lock_report() const;
  std::vector<LineReport> line_report() const;
  // Tasks blocked on a lock right now, as "cpu N at <chain> waiting for L".
  std::vector<std::string> blocked_tasks() const;

 private:
  enum EventKind : std::uint32_t { kResume = 0, kWarmupEnd = 1 };

  struct Task {
    int cpu = 0;
    std::uint32_t pc = 0;
    bool blocked = false;
    sim::Time blocked_since{};
    sim::Time last_iteration_end{Duration{-1}};
    std::uint64_t window_iterations = 0;
    sim::RngStream rng;
    Lock** locks = nullptr;        // slot -> instance (into lock_table_)
    std::uint32_t* lock_ids = nullptr;
    CacheLine** lines = nullptr;   // slot -> instance
  };

  // Runs task `t` from local time `at` (>= now) until it must wait.
  void run(std::size_t t, sim::Time at, bool from_event);
  sim::Duration draw(Task& task, const TimeDist& d);
  void granted(std::uint32_t lock_id, int cpu, sim::Time at, LockMode mode);
  void released(std::uint32_t lock_id, int cpu, sim::Time at, LockMode mode);
  const std::string& lock_name(std::uint32_t lock_id) const;
  void reset_window();

  sim::Simulation& sim_;
  const Program& program_;
  const Topology& topo_;
  ExecutorConfig config_;
  std::uint32_t handler_id_ = 0;

  std::vector<Task> tasks_;
  std::vector<int> task_of_cpu_;
  std::vector<std::unique_ptr<Lock>> lock_instances_;
  std::vector<std::uint32_t> lock_slot_of_instance_;
  std::vector<std::unique_ptr<CacheLine>> line_instances_;
  std::vector<std::uint32_t> line_slot_of_instance_;
  std::vector<Lock*> lock_table_;
  std::vector<std::uint32_t> lock_id_table_;
  std::vector<CacheLine*> line_table_;

  // Mutual-exclusion checker state, per lock instance.
  std::vector<int> exclusive_holder_;
  std::vector<int> shared_holders_;
  std::vector<sim::Time> last_release_;

  std::vector<std::int64_t> time_ps_;  // per instruction, CPU time in the window
  std::vector<Grant> woken_;           // scratch for releases
  std::uint64_t window_iterations_ = 0;
  std::uint64_t events_before_window_ = 0;
  bool measuring_ = false;
};

}  // namespace vfssim::models
