#include "models/codepath/executor.h"

#include <algorithm>
#include <map>

#include "models/kernel/free_lock.h"
#include "models/kernel/lock_kinds.h"

namespace vfssim::models {

std::unique_ptr<Lock> make_lock(const LockDecl& decl, LockContext ctx) {
  if (const LockKind* k = find_lock_kind(decl.kind)) return k->make(decl, ctx);
  throw ScenarioError(decl.mark, "lock '" + decl.name + "' has kind '" + decl.kind + "', which has no model",
                      "a kind listed in docs/scenario-format.md");
}

namespace {

// Which instance of a scoped object task `task` on `cpu` touches.
int instance_key(Scope scope, const Topology& topo, TaskKind kind, int task, int cpu) {
  switch (scope) {
    case Scope::kGlobal: return 0;
    case Scope::kNode: return topo.node_of(cpu);
    case Scope::kCpu: return cpu;
    case Scope::kProcess: return kind == TaskKind::kThread ? 0 : task;
    case Scope::kTask: return task;
  }
  return 0;
}

}  // namespace

Executor::Executor(sim::Simulation& sim, const Program& program, const Topology& topo, ExecutorConfig config)
    : sim_(sim), program_(program), topo_(topo), config_(std::move(config)) {
  handler_id_ = sim_.add_handler(this);
  const std::size_t n = config_.cpus.size();
  const std::size_t nlocks = program_.locks.size();
  const std::size_t nlines = program_.lines.size();
  const std::size_t nseqs = program_.seqcounts.size();
  const std::size_t npools = program_.pools.size();
  tasks_.resize(n);
  pool_table_.resize(n * npools);
  lock_table_.resize(n * nlocks);
  lock_id_table_.resize(n * nlocks);
  line_table_.resize(n * nlines);
  seq_table_.resize(n * nseqs);
  seq_id_table_.resize(n * nseqs);
  task_of_cpu_.assign(topo_.num_cpus(), -1);

  std::map<std::pair<std::uint32_t, int>, std::uint32_t> lock_index, line_index, seq_index, pool_index;
  for (std::size_t t = 0; t < n; ++t) {
    Task& task = tasks_[t];
    task.cpu = config_.cpus[t];
    if (task.cpu < 0 || task.cpu >= topo_.num_cpus()) throw std::invalid_argument("task placed on a CPU the machine lacks");
    if (task_of_cpu_[task.cpu] >= 0) throw std::invalid_argument("two tasks placed on one CPU");
    task_of_cpu_[task.cpu] = static_cast<int>(t);
    task.rng = sim::RngStream(config_.seed, "task", static_cast<std::uint64_t>(t));
    task.percpu.assign(program_.percpu_counters, 0);
    for (std::uint32_t s = 0; s < nlocks; ++s) {
      const auto& d = program_.locks[s];
      const int key = instance_key(d.scope, topo_, config_.tasks, static_cast<int>(t), task.cpu);
      auto [it, inserted] = lock_index.try_emplace({s, key}, static_cast<std::uint32_t>(lock_instances_.size()));
      if (inserted) {
        LockContext ctx{&topo_, sim::RngStream(config_.seed, "lock:" + d.name, static_cast<std::uint64_t>(key))};
        lock_instances_.push_back(config_.lock_factory(d, ctx));
        lock_slot_of_instance_.push_back(s);
      }
      lock_table_[t * nlocks + s] = lock_instances_[it->second].get();
      lock_id_table_[t * nlocks + s] = it->second;
    }
    for (std::uint32_t s = 0; s < nlines; ++s) {
      const auto& d = program_.lines[s];
      if (!d.on.empty()) {  // the word's line of this task's instance of that lock
        std::uint32_t ls = 0;
        while (program_.locks[ls].name != d.on) ++ls;
        CacheLine* word = lock_table_[t * nlocks + ls]->word_line();
        if (!word) throw std::invalid_argument("line '" + d.name + "' is on lock '" + d.on + "', which has no word line");
        line_table_[t * nlines + s] = word;
        continue;
      }
      const int key = instance_key(d.scope, topo_, config_.tasks, static_cast<int>(t), task.cpu);
      auto [it, inserted] = line_index.try_emplace({s, key}, static_cast<std::uint32_t>(line_instances_.size()));
      if (inserted) {
        line_instances_.push_back(std::make_unique<CacheLine>());
        line_slot_of_instance_.push_back(s);
      }
      line_table_[t * nlines + s] = line_instances_[it->second].get();
    }
    for (std::uint32_t s = 0; s < nseqs; ++s) {
      const auto& d = program_.seqcounts[s];
      const int key = instance_key(d.scope, topo_, config_.tasks, static_cast<int>(t), task.cpu);
      auto [it, inserted] = seq_index.try_emplace({s, key}, static_cast<std::uint32_t>(seq_instances_.size()));
      if (inserted) {
        seq_instances_.push_back(config_.seq_factory(topo_));
        seq_slot_of_instance_.push_back(s);
      }
      seq_table_[t * nseqs + s] = seq_instances_[it->second].get();
      seq_id_table_[t * nseqs + s] = it->second;
    }
    for (std::uint32_t s = 0; s < npools; ++s) {
      const auto& d = program_.pools[s];
      const int key = instance_key(d.scope, topo_, config_.tasks, static_cast<int>(t), task.cpu);
      auto [it, inserted] = pool_index.try_emplace({s, key}, static_cast<std::uint32_t>(pool_instances_.size()));
      if (inserted) {
        pool_instances_.push_back(std::make_unique<FreePages>(d.low.value, d.high.value, d.refill.value));
        pool_slot_of_instance_.push_back(s);
      }
      pool_table_[t * npools + s] = pool_instances_[it->second].get();
    }
  }
  // SMT siblings share a core's execution resources: a compute step (and a
  // lock hold, which is one) takes longer while other threads of its core
  // run their code paths too. A sibling waiting for a lock does not count:
  // asleep it is off the core, and spinning it sits in `pause`, which
  // Intel introduced with Hyper-Threading to hand the core to the sibling
  // (and measured per-function times, as seed 004's profile, already
  // include such siblings). The sibling's state is read when the step
  // starts and the step keeps that rate (compute runs ahead of the clock);
  // so a lock's new holder counts the sibling that just handed it over as
  // busy, though that sibling's next step may be to wait again.
  {
    std::map<int, std::vector<std::size_t>> on_core;
    for (std::size_t t = 0; t < n; ++t) on_core[topo_.core_of(tasks_[t].cpu)].push_back(t);
    for (const auto& [core, ts] : on_core)
      for (const std::size_t t : ts)
        for (const std::size_t u : ts)
          if (u != t) tasks_[t].siblings.push_back(u);
  }
  smt_slowdown_.push_back(1.0);
  for (int busy = 1; busy <= topo_.num_cpus() / topo_.num_cores(); ++busy) smt_slowdown_.push_back(topo_.compute_slowdown(busy));
  if (program_.uses_sum) {
    // Reading every CPU's copy of a per-CPU line: a copy that a busy CPU
    // keeps writing comes from that CPU's cache; an idle CPU's copy is never
    // written, so after the first sum it stays in the reader's cache.
    for (auto& task : tasks_) {
      task.sum_cost = topo_.local_hit() * static_cast<std::int64_t>(topo_.num_cpus() - static_cast<int>(n));
      for (const auto& other : tasks_) task.sum_cost += topo_.transfer(other.cpu, task.cpu);
    }
  }
  for (std::size_t t = 0; t < n; ++t) {
    tasks_[t].locks = lock_table_.data() + t * nlocks;
    tasks_[t].lock_ids = lock_id_table_.data() + t * nlocks;
    tasks_[t].lines = line_table_.data() + t * nlines;
    tasks_[t].seqs = seq_table_.data() + t * nseqs;
    tasks_[t].seq_ids = seq_id_table_.data() + t * nseqs;
    tasks_[t].pools = pool_table_.data() + t * npools;
  }
  for (const auto& d : program_.locks) lock_removed_.push_back(d.kind == FreeLock::kKind);
  exclusive_holder_.assign(lock_instances_.size(), -1);
  shared_holders_.assign(lock_instances_.size(), 0);
  last_release_.assign(lock_instances_.size(), sim::Time{});
  write_epoch_.assign(seq_instances_.size(), 0);
  time_ps_.assign(program_.code.size() + 1, 0);
  if (program_.uses_rcu_gp) {
    if (program_.hz <= 0) throw std::invalid_argument("RCU grace periods need the kernel's HZ");
    const Duration tick{1'000'000'000'000LL / program_.hz};
    sim::RngStream phases(config_.seed, "rcu-tick");
    std::vector<Duration> phase;
    for (std::size_t t = 0; t < n; ++t) phase.push_back(Duration{static_cast<std::int64_t>(phases.below(tick.count()))});
    rcu_ = std::make_unique<GracePeriods>(tick, GracePeriods::fqs_delay(program_.hz), phase);
  }
}

std::unique_ptr<SeqCount> make_seqcount(const Topology& topo) { return std::make_unique<SeqCount>(topo); }

void Executor::start() {
  sim_.schedule(config_.warmup, handler_id_, kWarmupEnd, 0, /*priority=*/0);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    Duration offset{0};
    if (config_.start_jitter > Duration{0})
      offset = Duration{static_cast<std::int64_t>(task.rng.below(static_cast<std::uint64_t>(config_.start_jitter.count())))};
    sim_.schedule(sim_.now() + offset, handler_id_, kResume, t);
  }
}

void Executor::handle(sim::Simulation& sim, const sim::Event& e) {
  switch (e.kind) {
    case kWarmupEnd: reset_window(); return;
    case kGracePeriodEnd: grace_period_end(sim.now()); return;
    default: run(static_cast<std::size_t>(e.arg), sim.now(), true);
  }
}

void Executor::reset_window() {
  // Iterations are counted by their completion time, not here: a task
  // running ahead of the clock may already have completed one inside the
  // window before this event fires.
  events_before_window_ = sim_.events_executed();
  for (auto& l : lock_instances_) l->reset_stats();
  for (auto& l : line_instances_) l->reset_stats();
  for (auto& q : seq_instances_) q->reset_stats();
  for (auto& p : pool_instances_) p->reset_stats();
  if (rcu_) rcu_->stats().reset();
  std::fill(time_ps_.begin(), time_ps_.end(), 0);
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

const std::string& Executor::lock_name(std::uint32_t id) const {
  return program_.locks[lock_slot_of_instance_[id]].name;
}

// The checker, independent of the lock models: a writer (exclusive holder)
// is alone; readers share only with readers; an exclusive grant never
// precedes the release it follows.
[[gnu::always_inline]] inline void Executor::granted(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  if (exclusive_holder_[id] >= 0)
    throw InvariantViolation("mutual exclusion broken: lock '" + lock_name(id) + "' granted to cpu " +
                             std::to_string(cpu) + " while cpu " + std::to_string(exclusive_holder_[id]) +
                             " holds it exclusively");
  if (mode == LockMode::kShared) {
    ++shared_holders_[id];
    return;
  }
  if (shared_holders_[id] > 0)
    throw InvariantViolation("reader-writer exclusion broken: lock '" + lock_name(id) + "' granted to writer cpu " +
                             std::to_string(cpu) + " while " + std::to_string(shared_holders_[id]) + " readers hold it");
  if (at < last_release_[id])
    throw InvariantViolation("lock '" + lock_name(id) + "' granted before its previous release");
  exclusive_holder_[id] = cpu;
}

[[gnu::always_inline]] inline void Executor::released(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  if (mode == LockMode::kShared) {
    if (shared_holders_[id] <= 0)
      throw InvariantViolation("cpu " + std::to_string(cpu) + " released read lock '" + lock_name(id) + "' nobody holds");
    --shared_holders_[id];
  } else {
    if (exclusive_holder_[id] != cpu)
      throw InvariantViolation("cpu " + std::to_string(cpu) + " released lock '" + lock_name(id) + "' it does not hold");
    exclusive_holder_[id] = -1;
  }
  if (last_release_[id] < at) last_release_[id] = at;
}

// Resumes every task in woken_ at its instant. A grant of lock `lock_id`
// makes the task the holder and moves it past its acquire; a retry makes it
// run the same instruction again. The nested run() executes only local
// steps before it schedules, so woken_ is not reused under us.
[[gnu::always_inline]] inline void Executor::wake(std::optional<std::uint32_t> lock_id) {
  for (std::size_t w = 0; w < woken_.size(); ++w) {
    const Grant gr = woken_[w];
    const int wt = task_of_cpu_[gr.cpu];
    Task& other = tasks_[wt];
    const Instr& their = program_.code[other.pc];
    if (!gr.slept) time_ps_[other.pc] += (gr.at - other.blocked_since).count();
    other.blocked = false;
    other.sleeping = false;
    if (lock_id && !gr.retry) {
      granted(*lock_id, gr.cpu, gr.at, their.mode);
      ++other.pc;
    }
    run(static_cast<std::size_t>(wt), gr.at, false);
  }
}

// RCU callbacks whose grace period has ended run on their CPU (softirq
// after the iteration): their cost is CPU time of this task.
sim::Time Executor::run_callbacks(Task& task, sim::Time at) {
  if (!rcu_) return at;
  while (!task.callbacks.empty() && task.callbacks.front().gp <= rcu_->completed()) {
    const Callback cb = task.callbacks.front();
    task.callbacks.pop_front();
    // Grace-period safety: no read section open when the callback was
    // queued may still be open now.
    for (const Task& other : tasks_)
      if (other.rcu_depth > 0 && other.rcu_section_start <= cb.queued)
        throw InvariantViolation("RCU callback queued at " + sim::format_duration(cb.queued - sim::Time{}) +
                                 " ran while cpu " + std::to_string(other.cpu) +
                                 " is still in a read section begun before it");
    time_ps_.back() += cb.cost.count();
    at += cb.cost;
    ++rcu_->stats().callbacks_invoked;
  }
  return at;
}

// The running grace period reached its provisional end: every busy CPU has
// had a tick. CPUs still inside a read section that began before the
// grace period hold it until they leave.
void Executor::grace_period_end(sim::Time now) {
  qs_outstanding_ = 0;
  if (!config_.broken_rcu_ignores_readers) {
    for (Task& t : tasks_) {
      if (t.rcu_depth > 0 && t.rcu_section_start <= rcu_->current_start()) {
        t.qs_pending = true;
        ++qs_outstanding_;
      }
    }
  }
  if (qs_outstanding_ > 0) {
    gp_waiting_for_readers_ = true;
    return;
  }
  complete_grace_period(now);
}

void Executor::complete_grace_period(sim::Time now) {
  gp_waiting_for_readers_ = false;
  const bool next = rcu_->complete(now);
  // Wake synchronize_rcu() callers whose grace period is over.
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    if (task.blocked && task.waiting_gp != 0 && task.waiting_gp <= rcu_->completed()) {
      task.blocked = false;
      task.sleeping = false;
      task.waiting_gp = 0;
      ++task.pc;
      run(t, now, false);
    }
  }
  if (next) sim_.schedule(rcu_->provisional_end(), handler_id_, kGracePeriodEnd);
}

// The interpreter loop. `at` is the task's local clock; local steps
// advance it without events, shared steps wait for the global clock. RCU
// read-side markers cost nothing but are shared steps: whether a CPU is
// inside a read section must be true at the global instant a grace period
// looks at it. A task
// resumed by another task (`from_event` false) runs only local steps before
// it schedules, so hand-overs never nest.
void Executor::run(std::size_t t, sim::Time at, bool from_event) {
  Task& task = tasks_[t];
  const Instr* code = program_.code.data();
  bool ended_iteration = false;
  for (;;) {
    const Instr& in = code[task.pc];
    switch (in.kind) {
      // ---- local steps ----
      case InstrKind::kCompute: {
        Duration d = draw(task, in.time);
        if (!task.siblings.empty()) {
          std::size_t busy = 1;
          for (const std::size_t u : task.siblings) busy += !tasks_[u].blocked;
          const double slow = smt_slowdown_[busy];
          if (slow != 1.0) d = Duration{static_cast<std::int64_t>(static_cast<double>(d.count()) * slow + 0.5)};
        }
        time_ps_[task.pc] += d.count();
        at += d;
        ++task.pc;
        continue;
      }
      case InstrKind::kSleep:
        at += draw(task, in.time);  // idle: not CPU time
        ++task.pc;
        continue;
      case InstrKind::kBranch:
        task.pc = task.rng.uniform() < in.p ? task.pc + 1 : in.jump;
        continue;
      case InstrKind::kJump:
        task.pc = in.jump;
        continue;
      case InstrKind::kPercpuCount: {
        at += topo_.local_hit();  // this_cpu_add
        time_ps_[task.pc] += topo_.local_hit().count();
        std::uint32_t& c = task.percpu[in.aux];
        if (++c < static_cast<std::uint32_t>(in.count)) {
          task.pc = in.jump;
        } else {
          c = 0;
          ++task.pc;
        }
        continue;
      }
      case InstrKind::kAcquire:
      case InstrKind::kRelease:
        if (lock_removed_[in.slot]) {  // a lock made free (FreeLock): nothing to take or check
          ++task.pc;
          continue;
        }
        break;
      case InstrKind::kEndIteration:
        if (rcu_) at = run_callbacks(task, at);
        if (at > config_.warmup && at <= config_.end) {
          ++task.window_iterations;
          ++window_iterations_;
        }
        task.pc = 0;
        if (at > config_.end) return;  // past the window: this task is done
        if (at == task.last_iteration_end)
          throw InvariantViolation("an iteration of the loop took no simulated time on cpu " +
                                   std::to_string(task.cpu) + ": the run would never advance");
        task.last_iteration_end = at;
        // A loop with no shared step would never yield: one event per
        // iteration at most keeps the engine in charge.
        if (ended_iteration) {
          sim_.schedule(at, handler_id_, kResume, t);
          return;
        }
        ended_iteration = true;
        continue;
      default:
        break;
    }
    // ---- shared steps: only at the global clock ----
    if (at > sim_.now() || !from_event) {
      sim_.schedule(at, handler_id_, kResume, t);
      return;
    }
    switch (in.kind) {
      case InstrKind::kAcquire: {
        const std::uint32_t id = task.lock_ids[in.slot];
        if (exclusive_holder_[id] == task.cpu) {
          // Self-deadlock: the CPU would wait forever for a lock it holds.
          // A result of the strategy, not a model bug: the task stays
          // blocked and the run stops; wait_cycle() names it.
          task.blocked = true;
          task.blocked_since = at;
          sim_.request_stop();
          return;
        }
        sim::Time g;
        Lock* lock = task.locks[in.slot];
        if (!lock->acquire(task.cpu, at, in.mode, g)) {
          task.blocked = true;
          task.sleeping = lock->waits_asleep(in.mode);
          task.blocked_since = at;
          return;  // the release that hands over the lock resumes us
        }
        granted(id, task.cpu, g, in.mode);
        time_ps_[task.pc] += (g - at).count();
        at = g;
        ++task.pc;
        break;
      }
      case InstrKind::kRelease: {
        const std::uint32_t id = task.lock_ids[in.slot];
        released(id, task.cpu, at, in.mode);
        woken_.clear();
        const sim::Time done = task.locks[in.slot]->release(task.cpu, at, in.mode, woken_);
        time_ps_[task.pc] += (done - at).count();
        ++task.pc;
        wake(id);
        at = done;
        break;
      }
      case InstrKind::kLockrefFast: {
        Lock* lock = task.locks[in.slot];
        if (lock->held()) {
          ++task.pc;  // slow path: the spinlock
        } else {
          const sim::Time done = lock->cmpxchg_word(task.cpu, at);
          time_ps_[task.pc] += (done - at).count();
          at = done;
          task.pc = in.jump;
        }
        break;
      }
      case InstrKind::kAtomic: {
        const sim::Time done = task.lines[in.slot]->rmw(topo_, task.cpu, at);
        time_ps_[task.pc] += (done - at).count();
        at = done;
        ++task.pc;
        break;
      }
      case InstrKind::kLoad: {
        const sim::Time done = task.lines[in.slot]->load(topo_, task.cpu, at);
        time_ps_[task.pc] += (done - at).count();
        at = done;
        ++task.pc;
        break;
      }
      case InstrKind::kSumPerCpu:
        time_ps_[task.pc] += task.sum_cost.count();
        at += task.sum_cost;
        ++task.pc;
        break;
      case InstrKind::kSeqBegin: {
        SeqCount* sq = task.seqs[in.slot];
        sim::Time begun;
        std::uint64_t seq = 0;
        if (!sq->read_begin(task.cpu, at, begun, seq)) {
          task.blocked = true;
          task.blocked_since = at;
          return;  // write_end wakes us to try again
        }
        const SeqFrame f{seq, write_epoch_[task.seq_ids[in.slot]], 0};
        if (task.seq_restart) {
          task.seq_restart = false;
          task.seq_stack.back().seq = f.seq;
          task.seq_stack.back().epoch = f.epoch;
        } else {
          task.seq_stack.push_back(f);
        }
        time_ps_[task.pc] += (begun - at).count();
        at = begun;
        ++task.pc;
        break;
      }
      case InstrKind::kSeqRetry: {
        SeqCount* sq = task.seqs[in.slot];
        SeqFrame& f = task.seq_stack.back();
        sim::Time checked;
        const bool retry = sq->read_retry(task.cpu, at, f.seq, checked);
        time_ps_[task.pc] += (checked - at).count();
        at = checked;
        if (!retry) {
          const std::uint64_t epoch = write_epoch_[task.seq_ids[in.slot]];
          if (epoch != f.epoch || (epoch & 1))
            throw InvariantViolation("seqcount '" + program_.seqcounts[in.slot].name + "': cpu " +
                                     std::to_string(task.cpu) + " accepted a read that overlapped a write");
          task.seq_stack.pop_back();
          task.pc = in.aux;
        } else if (in.count < 0 || f.retries < in.count) {
          ++f.retries;
          task.seq_restart = true;
          task.pc = in.jump;
        } else {
          task.seq_stack.pop_back();  // read_seqbegin_or_lock: take the lock
          task.pc = in.jump2;
        }
        break;
      }
      case InstrKind::kSeqWriteBegin: {
        const std::uint32_t id = task.seq_ids[in.slot];
        if (write_epoch_[id] & 1)
          throw InvariantViolation("seqcount '" + program_.seqcounts[in.slot].name +
                                   "': two writers inside at once; serialise them with a lock");
        ++write_epoch_[id];
        const sim::Time done = task.seqs[in.slot]->write_begin(task.cpu, at);
        time_ps_[task.pc] += (done - at).count();
        at = done;
        ++task.pc;
        break;
      }
      case InstrKind::kSeqWriteEnd: {
        ++write_epoch_[task.seq_ids[in.slot]];
        woken_.clear();
        const sim::Time done = task.seqs[in.slot]->write_end(task.cpu, at, woken_);
        time_ps_[task.pc] += (done - at).count();
        ++task.pc;
        wake(std::nullopt);
        at = done;
        break;
      }
      case InstrKind::kRcuReadLock:
        if (task.rcu_depth++ == 0) task.rcu_section_start = at;
        ++task.pc;
        break;
      case InstrKind::kRcuReadUnlock:
        if (--task.rcu_depth == 0 && task.qs_pending) {
          // The deferred quiescent state: the last one lets the grace
          // period end, as an event at this instant.
          task.qs_pending = false;
          if (--qs_outstanding_ == 0 && gp_waiting_for_readers_)
            sim_.schedule(at > sim_.now() ? at : sim_.now(), handler_id_, kGracePeriodEnd);
        }
        ++task.pc;
        break;
      case InstrKind::kSynchronizeRcu: {
        bool started = false;
        task.waiting_gp = rcu_->request(at, started);
        ++rcu_->stats().synchronize_calls;
        if (started) sim_.schedule(rcu_->provisional_end(), handler_id_, kGracePeriodEnd);
        task.blocked = true;
        task.sleeping = true;
        task.blocked_since = at;
        return;  // the grace period's end resumes us
      }
      case InstrKind::kPoolAlloc:
        // Above the low watermark: take the pages and skip direct reclaim.
        task.pc = task.pools[in.slot]->try_take(at, in.count) ? in.jump : task.pc + 1;
        break;
      case InstrKind::kPoolReclaimed:
        task.pools[in.slot]->reclaimed(at, in.aux, in.count);
        ++task.pc;
        break;
      case InstrKind::kCallRcu: {
        bool started = false;
        const std::uint64_t gp = rcu_->request(at, started);
        ++rcu_->stats().callbacks_queued;
        if (started) sim_.schedule(rcu_->provisional_end(), handler_id_, kGracePeriodEnd);
        task.callbacks.push_back({gp, draw(task, in.time), at});
        ++task.pc;
        break;
      }
      default:
        throw std::logic_error("interpreter: unhandled instruction");
    }
  }
}

std::vector<ProfileEntry> Executor::profile() const {
  std::map<std::pair<std::string, std::string>, ProfileEntry> by_chain;
  for (std::size_t pc = 0; pc < program_.code.size(); ++pc) {
    if (time_ps_[pc] == 0) continue;
    const std::string chain = program_.chain(pc);
    auto& e = by_chain[{chain, program_.detail[pc]}];
    e.symbol = program_.symbols[program_.code[pc].symbol];
    e.chain = chain;
    e.detail = program_.detail[pc];
    e.time += Duration{time_ps_[pc]};
    switch (program_.code[pc].kind) {
      case InstrKind::kAcquire:
      case InstrKind::kRelease:
      case InstrKind::kLockrefFast:
        e.object_kind = "lock";
        e.synchronizing = true;
        break;
      case InstrKind::kAtomic:
      case InstrKind::kLoad:
      case InstrKind::kSumPerCpu:
      case InstrKind::kPercpuCount:
        e.object_kind = "line";
        e.synchronizing = true;
        break;
      case InstrKind::kSeqBegin:
      case InstrKind::kSeqRetry:
      case InstrKind::kSeqWriteBegin:
      case InstrKind::kSeqWriteEnd:
        e.object_kind = "seqcount";
        e.synchronizing = true;
        break;
      default:
        break;
    }
  }
  if (time_ps_.back() > 0) {
    ProfileEntry cb;
    cb.symbol = "rcu_do_batch";
    cb.chain = "rcu_do_batch <- rcu_process_callbacks";
    cb.time = Duration{time_ps_.back()};
    by_chain[{cb.chain, ""}] = cb;
  }
  std::vector<ProfileEntry> out;
  for (auto& [k, v] : by_chain) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time > b.time; });
  return out;
}

namespace {

// One row per declared lock, line, seqcount or pool: its instances' counters
// summed, as lock_stat reports a lock class.
template <class Report, class Decl, class Instance>
std::vector<Report> class_report(const std::vector<Decl>& decls, const std::vector<std::unique_ptr<Instance>>& instances,
                                 const std::vector<std::uint32_t>& slot_of_instance) {
  std::vector<Report> out(decls.size());
  for (std::size_t s = 0; s < out.size(); ++s) {
    out[s].name = decls[s].name;
    if constexpr (requires { out[s].scope; }) out[s].scope = decls[s].scope;
    if constexpr (requires { out[s].kind; }) out[s].kind = decls[s].kind;
  }
  for (std::size_t i = 0; i < instances.size(); ++i) {
    auto& r = out[slot_of_instance[i]];
    ++r.instances;
    r.stats.merge(instances[i]->stats());
  }
  return out;
}

}  // namespace

std::vector<LockReport> Executor::lock_report() const {
  return class_report<LockReport>(program_.locks, lock_instances_, lock_slot_of_instance_);
}
std::vector<LineReport> Executor::line_report() const {
  return class_report<LineReport>(program_.lines, line_instances_, line_slot_of_instance_);
}
std::vector<SeqReport> Executor::seq_report() const {
  return class_report<SeqReport>(program_.seqcounts, seq_instances_, seq_slot_of_instance_);
}
std::vector<PoolReport> Executor::pool_report() const {
  return class_report<PoolReport>(program_.pools, pool_instances_, pool_slot_of_instance_);
}

std::vector<std::string> Executor::blocked_tasks() const {
  std::vector<std::string> out;
  for (const auto& t : tasks_)
    if (t.blocked)
      out.push_back("cpu " + std::to_string(t.cpu) + " waiting for " + program_.detail[t.pc] + " at " +
                    program_.chain(t.pc));
  return out;
}

// Deadlock reports: who waits for what, where, and who holds it.
int Executor::waits_for_task(std::size_t t) const {
  const Task& task = tasks_[t];
  if (!task.blocked || program_.code[task.pc].kind != InstrKind::kAcquire) return -1;
  const int holder = exclusive_holder_[task.lock_ids[program_.code[task.pc].slot]];
  return holder < 0 ? -1 : task_of_cpu_[holder];
}

std::string Executor::describe_wait(std::size_t t) const {
  const Task& task = tasks_[t];
  const Instr& in = program_.code[task.pc];
  std::string s = "cpu " + std::to_string(task.cpu) + " waiting for ";
  if (in.kind == InstrKind::kAcquire) {
    const std::uint32_t id = task.lock_ids[in.slot];
    s += "lock '" + program_.locks[in.slot].name + "' at " + program_.chain(task.pc);
    if (exclusive_holder_[id] == task.cpu) s += " held by cpu " + std::to_string(task.cpu) + " itself";
    else if (exclusive_holder_[id] >= 0) s += " held by cpu " + std::to_string(exclusive_holder_[id]);
    else if (shared_holders_[id] > 0) s += " held by " + std::to_string(shared_holders_[id]) + " reader(s)";
  } else {
    s += (program_.detail[task.pc].empty() ? std::string("a grace period") : "'" + program_.detail[task.pc] + "'") +
         " at " + program_.chain(task.pc);
  }
  return s;
}

std::string Executor::wait_cycle() const {
  // Each blocked task waits for at most one other (the exclusive holder of
  // its lock): follow those edges from every task until a task repeats.
  std::vector<int> seen_from(tasks_.size(), -1);
  for (std::size_t start = 0; start < tasks_.size(); ++start) {
    int t = static_cast<int>(start);
    while (t >= 0 && seen_from[t] < 0) {
      seen_from[t] = static_cast<int>(start);
      t = waits_for_task(static_cast<std::size_t>(t));
    }
    if (t < 0 || seen_from[t] != static_cast<int>(start)) continue;
    // `t` is on a cycle: list it from its lowest CPU.
    std::vector<std::size_t> cycle{static_cast<std::size_t>(t)};
    for (int u = waits_for_task(static_cast<std::size_t>(t)); u != t; u = waits_for_task(static_cast<std::size_t>(u)))
      cycle.push_back(static_cast<std::size_t>(u));
    std::size_t first = 0;
    for (std::size_t i = 1; i < cycle.size(); ++i)
      if (tasks_[cycle[i]].cpu < tasks_[cycle[first]].cpu) first = i;
    std::string out;
    for (std::size_t i = 0; i < cycle.size(); ++i)
      out += (i ? "; " : "") + describe_wait(cycle[(first + i) % cycle.size()]);
    std::size_t others = 0;
    for (const auto& task : tasks_) others += task.blocked;
    others -= cycle.size();
    if (others > 0) out += " (and " + std::to_string(others) + " more CPUs waiting)";
    return out;
  }
  return {};
}

std::string Executor::waits(std::size_t max_listed) const {
  std::string out;
  std::size_t n = 0;
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (!tasks_[t].blocked) continue;
    if (n++ < max_listed) out += (out.empty() ? "" : "; ") + describe_wait(t);
  }
  if (n > max_listed) out += " (and " + std::to_string(n - max_listed) + " more CPUs waiting)";
  return out;
}

}  // namespace vfssim::models
