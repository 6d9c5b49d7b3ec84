#include "models/codepath/executor.h"

#include <algorithm>

#include "models/kernel/free_lock.h"
#include "models/kernel/lock_kinds.h"

namespace vfssim::models {

Executor::Executor(sim::Simulation& sim, const Program& program, const Topology& topo, ExecutorConfig config)
    : sim_(sim), program_(program), topo_(topo), config_(std::move(config)), picks_(program), profile_(program.code.size(), config_.warmup, config_.end) {
  handler_id_ = sim_.add_handler(this);
  const std::size_t n = config_.cpus.size();
  tasks_.resize(n);
  cold_.resize(n);
  task_of_cpu_.assign(topo_.num_cpus(), -1);
  for (std::size_t t = 0; t < n; ++t) {
    Task& task = tasks_[t];
    task.cpu = config_.cpus[t];
    if (task.cpu < 0 || task.cpu >= topo_.num_cpus()) throw std::invalid_argument("task placed on a CPU the machine lacks");
    if (task_of_cpu_[task.cpu] >= 0) throw std::invalid_argument("two tasks placed on one CPU");
    task_of_cpu_[task.cpu] = static_cast<int>(t);
    task.rng = sim::RngStream(config_.seed, "task", static_cast<std::uint64_t>(t));
    cold_[t].pick_rng = sim::RngStream(config_.seed, "pick", static_cast<std::uint64_t>(t));
    if (!config_.roles.empty()) task.entry = task.pc = program_.entries.at(static_cast<std::size_t>(config_.roles.at(t)));
    cold_[t].percpu.assign(program_.percpu_counters, 0);
  }
  build_instances();
  for (std::size_t t = 0; t < n; ++t) pick_objects(t);
  smt_.emplace(topo_, config_.cpus);
  for (std::size_t t = 0; t < n; ++t) tasks_[t].has_smt_siblings = smt_->has_siblings(t);
  if (program_.uses_sum) {
    // Reading every CPU's copy of a per-CPU line: a copy that a busy CPU
    // keeps writing comes from that CPU's cache; an idle CPU's copy is never
    // written, so after the first sum it stays in the reader's cache.
    for (std::size_t t = 0; t < n; ++t) {
      Duration& cost = cold_[t].sum_cost;
      cost = topo_.local_hit() * static_cast<std::int64_t>(topo_.num_cpus() - static_cast<int>(n));
      for (const auto& other : tasks_) cost += topo_.transfer(other.cpu, tasks_[t].cpu);
    }
  }
  for (std::uint32_t s = 0; s < program_.locks.size(); ++s)
    if (program_.locks[s].versioned) owner_watch_slots_.push_back(s);
  code_ = program_.code;
  for (std::uint32_t pc = 0; pc < code_.size(); ++pc) {
    Instr& in = code_[pc];
    if ((in.kind == InstrKind::kAcquire || in.kind == InstrKind::kRelease) && program_.locks[in.slot].kind == FreeLock::kKind) {
      in.kind = InstrKind::kJump;  // a lock made free (FreeLock): nothing to take or check
      in.jump = pc + 1;
    }
  }
  std::vector<std::string> lock_names;
  for (std::size_t i = 0; i < locks_.size(); ++i) lock_names.push_back(program_.locks[locks_.slot_of(i)].name);
  checker_.emplace(std::move(lock_names), seqs_.size());
  if (program_.uses_rcu_gp) rcu_ = std::make_unique<RcuDriver>(program_.hz, config_.cpus, config_.seed, config_.broken_rcu_ignores_readers);
}

void Executor::start() {
  sim_.schedule(config_.warmup, handler_id_, kWarmupEnd, 0, /*priority=*/0);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    Duration offset{0};
    if (config_.start_jitter > Duration{0})
      offset = Duration{static_cast<std::int64_t>(task.rng.below(static_cast<std::uint64_t>(config_.start_jitter.count())))};
    task.iteration_start = sim_.now() + offset;
    sim_.schedule(sim_.now() + offset, handler_id_, kResume, t);
  }
}

void Executor::handle(sim::Simulation& sim, const sim::Event& e) {
  if (e.kind == kResume) [[likely]] {
    run<true>(static_cast<std::size_t>(e.arg), sim.now());
    return;
  }
  if (e.kind == kWarmupEnd) reset_window();
  else grace_period_end(sim.now());
}

void Executor::reset_window() {
  // Iterations are counted by their completion time, not here: a task
  // running ahead of the clock may already have completed one inside the
  // window before this event fires.
  events_before_window_ = sim_.events_executed();
  for (auto& l : locks_.instances()) l->reset_stats();
  for (auto& l : lines_.instances()) l->reset_stats();
  for (auto& q : seqs_.instances()) q->reset_stats();
  for (auto& p : pools_.instances()) p->reset_stats();
  if (rcu_) rcu_->reset_stats();
  // The profile keeps only time inside the window (CpuTimeProfile clips it).
  std::fill(contended_at_.begin(), contended_at_.end(), 0);
  std::fill(contending_at_.begin(), contending_at_.end(), 0);
}

[[gnu::always_inline]] inline sim::Duration Executor::draw(Task& task, const TimeDist& d) {
  switch (d.kind) {
    case TimeDist::Kind::kFixed: return d.a;
    case TimeDist::Kind::kExponential:
      return Duration{static_cast<std::int64_t>(task.rng.exponential(static_cast<double>(d.a.count())) + 0.5)};
    case TimeDist::Kind::kUniform:
      return d.a + Duration{static_cast<std::int64_t>(task.rng.below(static_cast<std::uint64_t>((d.b - d.a).count()) + 1))};
  }
  return d.a;
}

const std::string& Executor::lock_name(std::uint32_t id) const { return program_.locks[locks_.slot_of(id)].name; }

// Resumes the task `gr` names at its instant. A grant of lock `lock_id`
// makes the task the holder and moves it past its acquire; a retry makes it
// run the same instruction again. The nested run() executes only local
// steps before it schedules, so no lock or seqcount is called under us.
[[gnu::always_inline]] inline void Executor::wake(const Grant& gr, std::optional<std::uint32_t> lock_id) {
  const int wt = task_of_cpu_[gr.cpu];
  Task& other = tasks_[wt];
  const Instr& their = program_.code[other.pc];
  if (!gr.slept) profile_.charge(other.pc, other.blocked_since, gr.at - other.blocked_since);
  other.blocked = false;
  if (lock_id && !gr.retry) {
    checker_->granted(*lock_id, gr.cpu, gr.at, their.mode);
    other.lock_retry = false;
    acquired_at_[*lock_id] = other.pc;
    ++other.pc;
  } else if (lock_id) {
    other.lock_retry = true;
  }
  run<false>(static_cast<std::size_t>(wt), gr.at);
}

bool Executor::rcu_flood(const Task& task, sim::Time at) {
  model_stop_ = "RCU callback flood: " + std::to_string(rcu_->queued()) + " callbacks queued and not yet invoked at " +
                sim::format_duration(at - sim::kTimeZero) + " (cpu " + std::to_string(task.cpu) + " queued the last; " +
                std::to_string(rcu_->stats().grace_periods) +
                " grace periods ended): call_rcu() outruns the grace periods, as in a kernel that runs out of "
                "memory; the run stops at vfssim's limit of " + std::to_string(RcuDriver::kMaxQueuedCallbacks) +
                " queued callbacks";
  sim_.request_stop();
  return false;
}

void Executor::schedule_grace_period_end(std::optional<sim::Time> at) {
  if (at) sim_.schedule(*at, handler_id_, kGracePeriodEnd);
}

// The running grace period reached its provisional end, or its last
// reader left. Once complete, synchronize_rcu() callers it served resume
// (after their synchronize step), and the next grace period, if already
// requested, starts.
void Executor::grace_period_end(sim::Time now) {
  if (!rcu_->provisional_end_reached()) return;
  std::vector<std::size_t> released;
  const std::optional<sim::Time> next = rcu_->complete(now, released);
  for (const std::size_t t : released) {
    Task& task = tasks_[t];
    task.blocked = false;
    ++task.pc;
    run<false>(t, now);
  }
  schedule_grace_period_end(next);
}

// The interpreter loop. `at` is the task's local clock; local steps
// advance it without events, shared steps wait for the global clock. RCU
// read-side markers cost nothing but are shared steps: whether a CPU is
// inside a read section must be true at the global instant a grace period
// looks at it. A task resumed by another task (FromEvent false) runs
// only local steps before it schedules, so hand-overs never nest.
template <bool FromEvent>
[[gnu::always_inline]] inline void Executor::run(std::size_t t, sim::Time at) {
  const Instr* const code = code_.data();
  Task& task = tasks_[t];
  const sim::Time clock = sim_.now();  // at >= now: a task never runs behind the clock
  bool ended_iteration = false;
  // Counted here, added once: the budget checks count steps run ahead of
  // the clock too (Simulation::add_work).
  std::uint64_t steps = 0;
  for (;;) {
    ++steps;
    switch (step<FromEvent>(t, task, code[task.pc], at, clock, ended_iteration)) {
      case Next::kStep: continue;
      case Next::kStop: sim_.add_work(steps); return;
      case Next::kWait:
        sim_.add_work(steps);
        sim_.schedule(at, handler_id_, kResume, t);
        return;
    }
  }
}

// One instruction: local steps run at once, shared steps only at the
// global clock (else kWait: the caller schedules the task). The kinds of
// every lock loop (compute, acquire, release, end of iteration) are tested
// in turn before the others' jump table: conditional branches that follow
// a task's repeating pattern, where one indirect jump served every step
// (perf put 12% of a lock benchmark's samples on it).
template <bool FromEvent>
[[gnu::always_inline]] inline Executor::Next Executor::step(std::size_t t, Task& task, const Instr& in, sim::Time& at,
                                                            sim::Time clock, bool& ended_iteration) {
  const bool at_clock = FromEvent && at == clock;
  const InstrKind kind = in.kind;
  if (kind == InstrKind::kCompute) {
    Duration d = draw(task, in.time);
    if (task.has_smt_siblings) d = smt_->stretch(t, d, [this](std::size_t u) { return !tasks_[u].blocked; });
    profile_.charge(task.pc, at, d);
    at += d;
    ++task.pc;
    return Next::kStep;
  }
  if (kind == InstrKind::kAcquire || kind == InstrKind::kRelease) {
    if (!at_clock) return Next::kWait;
    if (kind == InstrKind::kRelease) {
      release(task, in, at);
      return Next::kStep;
    }
    return acquire(task, in, at) ? Next::kStep : Next::kStop;
  }
  if (kind == InstrKind::kEndIteration) return end_iteration(t, at, ended_iteration) ? Next::kStep : Next::kStop;
  if (run_local(t, task, in, at)) return Next::kStep;
  if (!at_clock) return Next::kWait;
  return run_shared(t, in, at) ? Next::kStep : Next::kStop;
}

// The other local steps: true when `in` is one (and has run).
[[gnu::always_inline]] inline bool Executor::run_local(std::size_t t, Task& task, const Instr& in, sim::Time& at) {
  switch (in.kind) {
    case InstrKind::kSleep: {
      const Duration d = draw(task, in.time);  // idle: not CPU time
      // A versioned mutex or rwsem this task holds sees its owner off the CPU.
      for (const std::uint32_t s : owner_watch_slots_) task.locks[s]->holder_sleeps(task.cpu, at, at + d);
      at += d;
      ++task.pc;
      return true;
    }
    case InstrKind::kBranch:
      task.pc = task.rng.uniform() < in.p ? task.pc + 1 : in.jump;
      return true;
    case InstrKind::kJump:
      task.pc = in.jump;
      return true;
    case InstrKind::kCallbackEnd:
      task.pc = task.callback_return;
      return true;
    case InstrKind::kPercpuCount: {
      profile_.charge(task.pc, at, topo_.local_hit());  // this_cpu_add
      at += topo_.local_hit();
      std::uint32_t& c = cold_[t].percpu[in.aux];
      if (++c < static_cast<std::uint32_t>(in.count)) {
        task.pc = in.jump;
      } else {
        c = 0;
        ++task.pc;
      }
      return true;
    }
    default: return false;
  }
}

[[gnu::always_inline]] inline bool Executor::end_iteration(std::size_t t, sim::Time& at, bool& ended_before) {
  Task& task = tasks_[t];
  if (rcu_) {  // callbacks whose grace period has ended: softirq, CPU time of this task
    std::uint32_t entry = 0;
    const Duration cb = rcu_->run_callbacks(t, entry);
    profile_.charge_callbacks(at, cb);
    at += cb;
    if (entry) {  // a callback with steps: they run here, then this end of iteration again
      task.callback_return = task.pc;
      task.pc = entry;
      return true;
    }
  }
  TaskCold& cold = cold_[t];
  if (at > config_.warmup && at <= config_.end) {
    ++cold.window_iterations;
    ++window_iterations_;
    latency_.record((at - task.iteration_start).count());
  }
  task.iteration_start = at;
  task.pc = task.entry;
  if (at > config_.end) return false;  // past the window: this task is done
  ++cold.iteration;
  if (!picks_.empty()) pick_objects(t);  // between iterations: the task holds no lock, is in no read section
  // A random time may draw 0 (compute: {exp: 1ns}), a branch may skip every
  // timed step; a loop that would stall by chance is refused before the run
  // (zero_time_probability), so only a long run of zero-time iterations
  // means the clock cannot advance.
  if (at == cold.last_iteration_end) {
    if (++cold.zero_time_iterations > kMaxZeroTimeIterations)
      throw InvariantViolation("the loop took no simulated time " + std::to_string(kMaxZeroTimeIterations) +
                               " iterations in a row on cpu " + std::to_string(task.cpu) +
                               ": the run would never advance");
  } else {
    cold.zero_time_iterations = 0;
  }
  cold.last_iteration_end = at;
  // A loop with no shared step would never yield: one event per iteration
  // at most keeps the engine in charge.
  if (ended_before) {
    sim_.schedule(at, handler_id_, kResume, t);
    return false;
  }
  ended_before = true;
  return true;
}

[[gnu::always_inline]] inline bool Executor::run_shared(std::size_t t, const Instr& in, sim::Time& at) {
  Task& task = tasks_[t];
  switch (in.kind) {
    case InstrKind::kLockrefFast: {
      AnyLock* lock = task.locks[in.slot];
      if (lock->held()) {
        ++task.pc;  // slow path: the spinlock
        return true;
      }
      const CmpxchgOutcome o = lock->cmpxchg_word(task.cpu, at, cmpxchg_loop(in));
      finish(task, at, o.done);
      task.pc = o.gave_up ? task.pc + 1 : in.jump;  // tries exhausted: the spinlock
      return true;
    }
    case InstrKind::kCmpxchg: {
      const CmpxchgOutcome o = run_cmpxchg_loop(*task.lines[in.slot], topo_, task.cpu, at, cmpxchg_loop(in));
      finish(task, at, o.done);
      task.pc = o.gave_up ? task.pc + 1 : in.jump;  // tries exhausted: the fallback steps
      return true;
    }
    case InstrKind::kAtomic: finish(task, at, task.lines[in.slot]->rmw(topo_, task.cpu, at)); break;
    case InstrKind::kLoad: finish(task, at, task.lines[in.slot]->load(topo_, task.cpu, at)); break;
    case InstrKind::kStore: finish(task, at, task.lines[in.slot]->store(topo_, task.cpu, at)); break;
    case InstrKind::kSumPerCpu: finish(task, at, at + cold_[t].sum_cost); break;
    case InstrKind::kSeqBegin: return seq_begin(t, in, at);
    case InstrKind::kSeqRetry: seq_retry(t, in, at); return true;
    case InstrKind::kSeqWriteBegin: seq_write_begin(task, in, at); return true;
    case InstrKind::kSeqWriteEnd: seq_write_end(task, in, at); return true;
    case InstrKind::kRcuReadLock:
      if (rcu_) rcu_->read_lock(t, at);  // no grace period in the program: nothing looks at readers
      break;
    case InstrKind::kRcuReadUnlock:
      // The last reader a grace period waited for lets it end, at this instant.
      if (rcu_ && rcu_->read_unlock(t, at)) schedule_grace_period_end(at > sim_.now() ? at : sim_.now());
      break;
    case InstrKind::kSynchronizeRcu: synchronize_rcu(t, at); return false;
    case InstrKind::kCallRcu:
      if (in.aux) {  // a callback of steps: queue its code, go on past it
        schedule_grace_period_end(rcu_->call_rcu(t, at, Duration{0}, in.jump2));
        task.pc = in.jump;
        if (rcu_->flooded()) return rcu_flood(task, at);
        return true;
      }
      schedule_grace_period_end(rcu_->call_rcu(t, at, draw(task, in.time)));
      if (rcu_->flooded()) return rcu_flood(task, at);
      break;
    case InstrKind::kPoolAlloc:
      // Above the low watermark: take the pages and skip direct reclaim.
      task.pc = task.pools[in.slot]->try_take(at, in.count) ? in.jump : task.pc + 1;
      return true;
    case InstrKind::kPoolReclaimed: task.pools[in.slot]->reclaimed(at, in.aux, in.count); break;
    default: throw std::logic_error("interpreter: unhandled instruction");
  }
  ++task.pc;
  return true;
}

[[gnu::always_inline]] inline bool Executor::acquire(Task& task, const Instr& in, sim::Time& at) {
  const std::uint32_t id = task.lock_ids[in.slot];
  if (checker_->exclusive_holder(id) == task.cpu) {
    // Self-deadlock: the CPU would wait forever for a lock it holds. A
    // result of the strategy, not a model bug: the task stays blocked and
    // the run stops; wait_cycle() names it.
    task.blocked = true;
    task.blocked_since = at;
    sim_.request_stop();
    return false;
  }
  const std::optional<sim::Time> g = task.locks[in.slot]->acquire(task.cpu, at, in.mode);
  if (!g) {
    if (!task.lock_retry) {
      ++contended_at_[task.pc];
      ++contending_at_[acquired_at_[id]];
    }
    task.blocked = true;
    task.blocked_since = at;
    return false;  // the release that hands over the lock resumes us
  }
  task.lock_retry = false;
  acquired_at_[id] = task.pc;
  checker_->granted(id, task.cpu, *g, in.mode);
  profile_.charge_fast(task.pc, at, *g - at);  // found free: the kind's fast path (qspinlock's _raw_spin_lock)
  at = *g;
  ++task.pc;
  return true;
}

[[gnu::always_inline]] inline void Executor::release(Task& task, const Instr& in, sim::Time& at) {
  const std::uint32_t id = task.lock_ids[in.slot];
  checker_->released(id, task.cpu, at, in.mode);
  AnyLock& lock = *task.locks[in.slot];
  const Released r = lock.release(task.cpu, at, in.mode);
  profile_.charge(task.pc, at, r.done - at);
  ++task.pc;
  if (r.grant.cpu >= 0) wake(r.grant, id);
  if (r.more) [[unlikely]] {  // several waiters at once (readers): the others, in order
    woken_.clear();
    lock.take_more(woken_);
    for (const Grant& gr : woken_) wake(gr, id);
  }
  at = r.done;
}

bool Executor::seq_begin(std::size_t t, const Instr& in, sim::Time& at) {
  Task& task = tasks_[t];
  TaskCold& cold = cold_[t];
  sim::Time begun;
  std::uint64_t seq = 0;
  if (!task.seqs[in.slot]->read_begin(task.cpu, at, begun, seq)) {
    task.blocked = true;
    task.blocked_since = at;
    return false;  // write_end wakes us to try again
  }
  const SeqFrame f{seq, checker_->epoch(task.seq_ids[in.slot]), 0};
  if (cold.seq_restart) {
    cold.seq_restart = false;
    cold.seq_stack.back().seq = f.seq;
    cold.seq_stack.back().epoch = f.epoch;
  } else {
    cold.seq_stack.push_back(f);
  }
  finish(task, at, begun);
  ++task.pc;
  return true;
}

void Executor::seq_retry(std::size_t t, const Instr& in, sim::Time& at) {
  Task& task = tasks_[t];
  TaskCold& cold = cold_[t];
  SeqFrame& f = cold.seq_stack.back();
  sim::Time checked;
  const bool retry = task.seqs[in.slot]->read_retry(task.cpu, at, f.seq, checked);
  finish(task, at, checked);
  if (!retry) {
    checker_->accept_read(task.seq_ids[in.slot], f.epoch, program_.seqcounts[in.slot].name, task.cpu);
    cold.seq_stack.pop_back();
    task.pc = in.aux;
  } else if (in.count < 0 || f.retries < in.count) {
    ++f.retries;
    cold.seq_restart = true;
    task.pc = in.jump;
  } else {
    cold.seq_stack.pop_back();  // read_seqbegin_or_lock: take the lock
    task.pc = in.jump2;
  }
}

void Executor::seq_write_begin(Task& task, const Instr& in, sim::Time& at) {
  checker_->write_begin(task.seq_ids[in.slot], program_.seqcounts[in.slot].name);
  finish(task, at, task.seqs[in.slot]->write_begin(task.cpu, at));
  ++task.pc;
}

void Executor::seq_write_end(Task& task, const Instr& in, sim::Time& at) {
  checker_->write_end(task.seq_ids[in.slot]);
  woken_.clear();
  const sim::Time done = task.seqs[in.slot]->write_end(task.cpu, at, woken_);
  profile_.charge(task.pc, at, done - at);
  ++task.pc;
  for (const Grant& gr : woken_) wake(gr, std::nullopt);
  at = done;
}

void Executor::synchronize_rcu(std::size_t t, sim::Time at) {
  Task& task = tasks_[t];
  schedule_grace_period_end(rcu_->synchronize(t, at));
  task.blocked = true;
  task.blocked_since = at;  // the grace period's end resumes us
}

}  // namespace vfssim::models
