// Runs a compiled Program on every simulated CPU: the code-path interpreter.
//
// One task per CPU walks the instruction list. Steps that touch only the
// CPU's own state (compute, branches, per-CPU counters, RCU read sections)
// run ahead of the clock: the task adds their time to its local clock and
// goes on. Before a step that touches shared state (a lock, a cache line,
// a seqcount, a grace period) the task stops and schedules one event at its
// local time, so shared state is only ever changed at the simulated
// instant it happens, in global time order. A task waiting for a lock
// schedules nothing: the release that hands it the lock resumes it. So an
// acquisition costs O(1) events however many CPUs wait.
//
// Invariants checked on every run, independently of the models:
//   - an exclusive holder is alone; readers share only with readers; a
//     lock is never granted before its previous release;
//   - a seqcount reader never accepts a read that overlapped a write
//     (the executor keeps its own write epochs);
//   - an RCU callback never runs while a read section that was open when
//     it was queued is still open (grace-period safety).
// A violation throws InvariantViolation.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/codepath/program.h"
#include "models/experiment/point_result.h"
#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/kernel/lock.h"
#include "models/kernel/free_pages.h"
#include "models/kernel/rcu.h"
#include "models/kernel/seqcount.h"
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
using SeqFactory = std::unique_ptr<SeqCount> (*)(const Topology&);
std::unique_ptr<SeqCount> make_seqcount(const Topology& topo);

struct ExecutorConfig {
  std::vector<int> cpus;        // CPU of each task
  TaskKind tasks = TaskKind::kProcess;
  std::uint64_t seed = 1;
  sim::Time warmup{};            // measurement window: (warmup, end]
  sim::Time end{};
  Duration start_jitter{0};     // tasks start uniformly in [0, start_jitter)
  LockFactory lock_factory = &make_lock;
  SeqFactory seq_factory = &make_seqcount;
  // Test hook: a grace period that ignores readers (must be caught).
  bool broken_rcu_ignores_readers = false;
};

class Executor final : public sim::EventHandler {
 public:
  Executor(sim::Simulation& sim, const Program& program, const Topology& topo, ExecutorConfig config);

  // Schedules every task's first step and the warm-up boundary.
  void start();

  void handle(sim::Simulation& sim, const sim::Event& e) override;

  // Loop iterations completed inside the window, all tasks together.
  std::uint64_t window_iterations() const { return window_iterations_; }
  std::uint64_t iterations_of(std::size_t task) const { return tasks_.at(task).window_iterations; }
  // Engine events executed before the window opened.
  std::uint64_t events_before_window() const { return events_before_window_; }
  std::vector<ProfileEntry> profile() const;
  std::vector<LockReport> lock_report() const;
  std::vector<LineReport> line_report() const;
  std::vector<SeqReport> seq_report() const;
  std::vector<PoolReport> pool_report() const;
  RcuStats rcu_stats() const { return rcu_ ? rcu_->stats() : RcuStats{}; }
  // Tasks blocked right now, as "cpu N waiting for L at <chain>".
  std::vector<std::string> blocked_tasks() const;
  // A cycle of CPUs each waiting for a lock the next one holds (a CPU
  // taking a lock it holds is a cycle of one), as "cpu 3 waiting for lock
  // 'B' at CHAIN held by cpu 5; cpu 5 waiting for lock 'A' at ... held by
  // cpu 3"; empty when there is none.
  std::string wait_cycle() const;
  // The first `max_listed` blocked tasks in that form, and how many more.
  std::string waits(std::size_t max_listed) const;

 private:
  enum EventKind : std::uint32_t { kResume = 0, kWarmupEnd = 1, kGracePeriodEnd = 2 };

  struct SeqFrame {
    std::uint64_t seq;    // the model's sequence at read_seqbegin
    std::uint64_t epoch;  // the checker's write epoch at read_seqbegin
    int retries;
  };
  struct Callback {
    std::uint64_t gp;  // grace period that must end first
    Duration cost;
    sim::Time queued;
  };

  struct Task {
    int cpu = 0;
    std::uint32_t pc = 0;
    bool blocked = false;
    bool sleeping = false;  // blocked idle (a sleeping lock, synchronize_rcu)
    sim::Time blocked_since{};
    sim::Time last_iteration_end{Duration{-1}};
    std::uint64_t window_iterations = 0;
    sim::RngStream rng;
    std::vector<std::size_t> siblings;  // tasks on the other hardware threads of this CPU's core
    Lock** locks = nullptr;        // slot -> instance
    std::uint32_t* lock_ids = nullptr;
    CacheLine** lines = nullptr;   // slot -> instance
    SeqCount** seqs = nullptr;     // slot -> instance
    std::uint32_t* seq_ids = nullptr;
    FreePages** pools = nullptr;   // slot -> instance
    std::vector<std::uint32_t> percpu;  // per kPercpuCount counter
    std::vector<SeqFrame> seq_stack;
    bool seq_restart = false;      // next kSeqBegin restarts the top frame
    int rcu_depth = 0;
    sim::Time rcu_section_start{};
    bool qs_pending = false;       // the running grace period waits for this task
    std::uint64_t waiting_gp = 0;  // synchronize_rcu: grace period awaited
    std::deque<Callback> callbacks;
    Duration sum_cost{0};          // cost of reading every CPU's copy of a per-CPU line
  };

  int waits_for_task(std::size_t t) const;  // task holding the lock `t` waits for, or -1
  std::string describe_wait(std::size_t t) const;

  // Runs task `t` from local time `at` (>= now) until it must wait.
  void run(std::size_t t, sim::Time at, bool from_event);
  sim::Duration draw(Task& task, const TimeDist& d);
  void granted(std::uint32_t lock_id, int cpu, sim::Time at, LockMode mode);
  void released(std::uint32_t lock_id, int cpu, sim::Time at, LockMode mode);
  const std::string& lock_name(std::uint32_t lock_id) const;
  // Resumes the tasks in woken_ (a lock id, or none for seqcount waits).
  void wake(std::optional<std::uint32_t> lock_id);
  void grace_period_end(sim::Time now);
  void complete_grace_period(sim::Time now);
  sim::Time run_callbacks(Task& task, sim::Time at);
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
  std::vector<std::unique_ptr<SeqCount>> seq_instances_;
  std::vector<std::uint32_t> seq_slot_of_instance_;
  std::vector<std::unique_ptr<FreePages>> pool_instances_;
  std::vector<std::uint32_t> pool_slot_of_instance_;
  std::vector<FreePages*> pool_table_;
  std::vector<Lock*> lock_table_;
  std::vector<std::uint32_t> lock_id_table_;
  std::vector<CacheLine*> line_table_;
  std::vector<SeqCount*> seq_table_;
  std::vector<std::uint32_t> seq_id_table_;

  std::vector<double> smt_slowdown_;  // by busy threads of a core (index 1..threads per core)

  std::vector<bool> lock_removed_;  // per lock slot: kind "free" (acquire/release are no-ops)

  // Checker state, per lock instance and per seqcount instance.
  std::vector<int> exclusive_holder_;
  std::vector<int> shared_holders_;
  std::vector<sim::Time> last_release_;
  std::vector<std::uint64_t> write_epoch_;

  // RCU.
  std::unique_ptr<GracePeriods> rcu_;
  int qs_outstanding_ = 0;
  bool gp_waiting_for_readers_ = false;

  std::vector<std::int64_t> time_ps_;  // per instruction (+1: RCU callbacks), CPU time in the window
  std::vector<Grant> woken_;           // scratch for releases
  std::uint64_t window_iterations_ = 0;
  std::uint64_t events_before_window_ = 0;
};

}  // namespace vfssim::models
