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
// The executor is assembled from parts, each with its own state:
//   InstanceTable   the lock, line, seqcount and pool instances by scope;
//   ObjectPicks     which object a per-object declaration touches in an
//                   iteration;
//   InvariantChecker mutual exclusion, reader/writer exclusion, seqcount
//                   safety, independently of the models;
//   RcuDriver       read sections, grace periods, callbacks (and their
//                   safety check);
//   SmtSlowdown     compute stretched by busy hardware-thread siblings;
//   CpuTimeProfile  CPU time per instruction, the perf-style profile;
//   wait_report     deadlock and stall reports.
// A violation of an invariant throws InvariantViolation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/codepath/cpu_profile.h"
#include "models/codepath/instance_table.h"
#include "models/codepath/invariant_checker.h"
#include "models/codepath/object_picks.h"
#include "models/codepath/program.h"
#include "models/codepath/rcu_driver.h"
#include "models/codepath/smt.h"
#include "models/codepath/wait_report.h"
#include "models/experiment/point_result.h"
#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "models/kernel/lock.h"
#include "models/kernel/lock_kinds.h"
#include "models/kernel/free_pages.h"
#include "models/kernel/rcu.h"
#include "models/kernel/seqcount.h"
#include "sim/histogram.h"
#include "sim/rng.h"
#include "sim/simulation.h"

namespace vfssim::models {

// Creates the lock instance for a declaration; tests substitute broken ones.
using LockFactory = std::unique_ptr<AnyLock> (*)(const LockDecl&, LockContext);
std::unique_ptr<AnyLock> make_lock(const LockDecl& decl, LockContext ctx);
using SeqFactory = std::unique_ptr<SeqCount> (*)(const Topology&);
std::unique_ptr<SeqCount> make_seqcount(const Topology& topo);

struct ExecutorConfig {
  std::vector<int> cpus;        // CPU of each task
  TaskKind tasks = TaskKind::kProcess;
  std::uint64_t seed = 1;
  sim::Time warmup{};            // measurement window: (warmup, end]
  sim::Time end{};
  Duration start_jitter{0};     // tasks start uniformly in [0, start_jitter)
  std::vector<int> roles;       // role of each task: its loop starts at Program::entries[role] (empty: all 0)
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
  std::uint64_t iterations_of(std::size_t task) const { return cold_.at(task).window_iterations; }
  // Per-op latency: each iteration completed inside the window, from its
  // start (the previous iteration's end, or the task's start) to its end,
  // in picoseconds, all tasks together.
  const sim::LogLinearHistogram& latency() const { return latency_; }
  // Engine events executed before the window opened.
  std::uint64_t events_before_window() const { return events_before_window_; }
  std::vector<ProfileEntry> profile() const { return profile_.entries(program_); }
  std::vector<LockReport> lock_report() const;
  // Read/write lock classes whose shared and exclusive modes were both held
  // in the window: one row per mode, "W" then "R" (lock_stat's -W/-R rows).
  std::vector<LockModeReport> lock_mode_report() const;
  // Per lock class, in declaration order: the acquire steps that had to
  // wait ("contention"), then the steps where the holder they found took the
  // lock ("contending"), each most first and at most kContentionPoints
  // (lock_stat's LOCKSTAT_POINTS; the kernel keeps the first 4 it sees).
  std::vector<ContentionPoint> contention_points() const;
  static constexpr std::size_t kContentionPoints = 4;
  std::vector<LineReport> line_report() const;
  std::vector<SeqReport> seq_report() const;
  std::vector<PoolReport> pool_report() const;
  RcuStats rcu_stats() const { return rcu_ ? rcu_->stats() : RcuStats{}; }
  // Tasks blocked right now, as "cpu N waiting for L at <chain>".
  std::vector<std::string> blocked_tasks() const { return models::blocked_tasks(wait_snapshot()); }
  // A cycle of CPUs each waiting for a lock the next one holds (wait_report.h); empty when none.
  std::string wait_cycle() const { return models::wait_cycle(wait_snapshot()); }
  // Why the model stopped the run itself (an RCU callback flood); empty when it did not.
  const std::string& model_stop() const { return model_stop_; }
  // The first `max_listed` blocked tasks, and how many more.
  std::string waits(std::size_t max_listed) const { return models::waits(wait_snapshot(), max_listed); }

  // A task whose loop ends this many iterations in a row at one instant has
  // stalled. plan_sweep refuses loops that would stall by chance: those
  // whose iterations take time with probability below 1 - kMaxZeroTimeShare
  // (zero_time_probability).
  static constexpr std::uint32_t kMaxZeroTimeIterations = 10000;
  static constexpr double kMaxZeroTimeShare = 0.99;

 private:
  enum EventKind : std::uint32_t { kResume = 0, kWarmupEnd = 1, kGracePeriodEnd = 2 };

  struct SeqFrame {
    std::uint64_t seq;    // the model's sequence at read_seqbegin
    std::uint64_t epoch;  // the checker's write epoch at read_seqbegin
    int retries;
  };

  // One task per CPU, in two parts. Task: what the interpreter touches at
  // every step (where it is, its random stream, its blocked state, its rows
  // of the instance tables: slot -> the instance this task touches), the
  // first line all a lock loop's steps read. TaskCold: what only an
  // iteration's end, a kind of step other than a lock's, or a report reads
  // (iteration counts and checks, object picks, per-CPU counters, seqcount
  // frames). Both indexed by task.
  struct alignas(64) Task {
    sim::RngStream rng;  // compute times and branches
    std::uint32_t pc = 0;
    std::uint32_t entry = 0;  // the first instruction of its role's loop
    int cpu = 0;
    bool blocked = false;
    bool lock_retry = false;        // re-trying an acquire it was woken for (its contention is counted)
    bool has_smt_siblings = false;  // other tasks on its core's threads (SmtSlowdown)
    sim::Time blocked_since{};
    sim::Time iteration_start{};  // of the current iteration (per-op latency)
    AnyLock* const* locks = nullptr;
    const std::uint32_t* lock_ids = nullptr;
    CacheLine* const* lines = nullptr;
    SeqCount* const* seqs = nullptr;
    const std::uint32_t* seq_ids = nullptr;
    FreePages* const* pools = nullptr;
    std::uint32_t callback_return = 0;  // running an RCU callback's steps: the kEndIteration that ran it
  };
  struct TaskCold {
    std::uint64_t iteration = 0;  // loop iterations begun, warm-up included (round_robin picks)
    sim::RngStream pick_rng;      // uniform and zipf picks of scope: object declarations
    sim::Time last_iteration_end{Duration{-1}};
    std::uint64_t window_iterations = 0;
    std::uint32_t zero_time_iterations = 0;  // in a row, ending at last_iteration_end
    std::vector<std::uint32_t> percpu;       // per kPercpuCount counter
    std::vector<SeqFrame> seq_stack;
    bool seq_restart = false;  // next kSeqBegin restarts the top frame
    Duration sum_cost{0};      // cost of reading every CPU's copy of a per-CPU line
  };

  void build_instances();
  // scope: object: task `t`'s objects for its current iteration
  // (ObjectPicks), its rows rebound to them.
  void pick_objects(std::size_t t);
  std::vector<TaskWait> wait_snapshot() const;

  // Runs task `t` from local time `at` (>= now) until it must wait.
  // FromEvent: the task runs for its own event, at the global clock (else
  // another task's step resumed it, and it runs only local steps). Two
  // instances, so that the resumed one's loop has no shared steps to test.
  template <bool FromEvent>
  [[gnu::always_inline]] void run(std::size_t t, sim::Time at);
  // What run() does after a step: the next one, stop (the task waits, or
  // is done), or schedule the task at its local time.
  enum class Next : std::uint8_t { kStep, kStop, kWait };
  // `clock` is the global clock when the task runs for its own event
  // (FromEvent); a task another task's step resumed runs only local steps,
  // so hand-overs never nest.
  template <bool FromEvent>
  Next step(std::size_t t, Task& task, const Instr& in, sim::Time& at, sim::Time clock, bool& ended_iteration);
  // A step other than compute that touches only the CPU's own state: true
  // when `in` is one (and has run).
  bool run_local(std::size_t t, Task& task, const Instr& in, sim::Time& at);
  // The end of an iteration: false when the task stops here (past the
  // window, or it yields to the engine).
  bool end_iteration(std::size_t t, sim::Time& at, bool& ended_before);
  // A shared step other than acquire and release, at the global clock:
  // false when the task waits.
  bool run_shared(std::size_t t, const Instr& in, sim::Time& at);
  bool acquire(Task& task, const Instr& in, sim::Time& at);
  void release(Task& task, const Instr& in, sim::Time& at);
  bool seq_begin(std::size_t t, const Instr& in, sim::Time& at);
  void seq_retry(std::size_t t, const Instr& in, sim::Time& at);
  void seq_write_begin(Task& task, const Instr& in, sim::Time& at);
  void seq_write_end(Task& task, const Instr& in, sim::Time& at);
  void synchronize_rcu(std::size_t t, sim::Time at);
  // A step's model returned `done`: charge the time to the step, move on.
  CmpxchgLoop cmpxchg_loop(const Instr& in) const { return {in.aux != 0, in.count, topo_.pause()}; }
  void finish(Task& task, sim::Time& at, sim::Time done) {
    profile_.charge(task.pc, at, done - at);
    at = done;
  }

  sim::Duration draw(Task& task, const TimeDist& d);
  const std::string& lock_name(std::uint32_t lock_id) const;
  // Resumes the task a grant names (of lock `lock_id`, or none for a
  // seqcount wait) at its instant.
  void wake(const Grant& gr, std::optional<std::uint32_t> lock_id);
  void grace_period_end(sim::Time now);
  void schedule_grace_period_end(std::optional<sim::Time> at);
  bool rcu_flood(const Task& task, sim::Time at);  // stops the run: model_stop()
  void reset_window();

  sim::Simulation& sim_;
  const Program& program_;
  const Topology& topo_;
  ExecutorConfig config_;
  std::uint32_t handler_id_ = 0;

  std::vector<Task> tasks_;
  std::vector<TaskCold> cold_;
  std::vector<int> task_of_cpu_;
  ObjectPicks picks_;
  InstanceTable<AnyLock> locks_;
  InstanceTable<CacheLine> lines_;
  InstanceTable<SeqCount> seqs_;
  InstanceTable<FreePages> pools_;
  // The code this executor runs: program_.code with the acquire and release
  // steps of a lock made free (kind "free") turned into jumps to the next
  // instruction, so that no step tests for it. Reports keep program_.code.
  std::vector<Instr> code_;
  std::vector<std::uint32_t> owner_watch_slots_;  // lock slots whose model wants the holder's sleeps

  std::optional<InvariantChecker> checker_;
  std::optional<SmtSlowdown> smt_;
  CpuTimeProfile profile_;
  std::string model_stop_;
  std::unique_ptr<RcuDriver> rcu_;  // when the program has synchronize_rcu or call_rcu

  std::vector<Grant> woken_;  // scratch: a seqcount write_end's readers, a release's overflow
  // Contentions in the window per acquire pc (the pc names the lock slot):
  // an acquire that queued, counted once however often it is woken to retry.
  std::vector<std::uint64_t> contended_at_;
  // ... and per acquire pc of the lock's last taker: where the holder a
  // waiter found took it (lock_stat's contending points).
  std::vector<std::uint64_t> contending_at_;
  std::vector<std::uint32_t> acquired_at_;  // per lock instance: the pc of its last acquisition
  std::uint64_t window_iterations_ = 0;
  sim::LogLinearHistogram latency_;
  std::uint64_t events_before_window_ = 0;
};

}  // namespace vfssim::models
