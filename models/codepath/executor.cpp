#include "models/codepath/executor.h"

#include <algorithm>
#include <map>

#include "models/kernel/mutex.h"
#include "models/kernel/rwlock.h"
#include "models/kernel/spinlocks.h"

namespace vfssim::models {

std::unique_ptr<Lock> make_lock(const LockDecl& decl, LockContext ctx) {
  if (decl.kind == "tas") return std::make_unique<TasSpinlock>(ctx);
  if (decl.kind == "ticket") return std::make_unique<TicketSpinlock>(ctx);
  if (decl.kind == "mcs") return std::make_unique<McsSpinlock>(ctx);
  if (decl.kind == "mutex") return std::make_unique<Mutex>(ctx, decl.spin, decl.wake_latency);
  if (decl.kind == "rwsem") return std::make_unique<RwLock>(ctx, "rwsem", !decl.spin, false, decl.wake_latency);
  if (decl.kind == "rwlock") return std::make_unique<RwLock>(ctx, "rwlock", false, decl.reader_preference, Duration{0});
  if (decl.kind == "brlock") return std::make_unique<BrLock>(ctx);
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
  tasks_.resize(n);
  lock_table_.resize(n * nlocks);
  lock_id_table_.resize(n * nlocks);
  line_table_.resize(n * nlines);
  task_of_cpu_.assign(topo_.num_cpus(), -1);

  std::map<std::pair<std::uint32_t, int>, std::uint32_t> lock_index, line_index;
  for (std::size_t t = 0; t < n; ++t) {
    Task& task = tasks_[t];
    task.cpu = config_.cpus[t];
    if (task.cpu < 0 || task.cpu >= topo_.num_cpus()) throw std::invalid_argument("task placed on a CPU the machine lacks");
    task_of_cpu_[task.cpu] = static_cast<int>(t);
    task.rng = sim::RngStream(config_.seed, "task", static_cast<std::uint64_t>(t));
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
      const int key = instance_key(d.scope, topo_, config_.tasks, static_cast<int>(t), task.cpu);
      auto [it, inserted] = line_index.try_emplace({s, key}, static_cast<std::uint32_t>(line_instances_.size()));
      if (inserted) {
        line_instances_.push_back(std::make_unique<CacheLine>());
        line_slot_of_instance_.push_back(s);
      }
      line_table_[t * nlines + s] = line_instances_[it->second].get();
    }
  }
  for (std::size_t t = 0; t < n; ++t) {
    tasks_[t].locks = lock_table_.data() + t * nlocks;
    tasks_[t].lock_ids = lock_id_table_.data() + t * nlocks;
    tasks_[t].lines = line_table_.data() + t * nlines;
  }
  exclusive_holder_.assign(lock_instances_.size(), -1);
  shared_holders_.assign(lock_instances_.size(), 0);
  last_release_.assign(lock_instances_.size(), sim::Time{});
  time_ps_.assign(program_.code.size(), 0);
}

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
  if (e.kind == kWarmupEnd) {
    reset_window();
    return;
  }
  run(static_cast<std::size_t>(e.arg), sim.now(), true);
}

void Executor::reset_window() {
  measuring_ = true;
  events_before_window_ = sim_.events_executed();
  window_iterations_ = 0;
  for (auto& t : tasks_) t.window_iterations = 0;
  for (auto& l : lock_instances_) l->reset_stats();
  for (auto& l : line_instances_) l->reset_stats();
  std::fill(time_ps_.begin(), time_ps_.end(), 0);
}

sim::Duration Executor::draw(Task& task, const TimeDist& d) {
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
void Executor::granted(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
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

void Executor::released(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
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

// The interpreter loop. `at` is the task's local clock; compute steps
// advance it without events, shared steps wait for the global clock. A task
// resumed by a release (`from_event` false) runs only local steps before it
// schedules, so hand-overs never nest.
void Executor::run(std::size_t t, sim::Time at, bool from_event) {
  Task& task = tasks_[t];
  const Instr* code = program_.code.data();
  bool ended_iteration = false;
  for (;;) {
    const Instr& in = code[task.pc];
    if (in.kind != InstrKind::kCompute && in.kind != InstrKind::kEndIteration &&
        (at > sim_.now() || !from_event)) {
      sim_.schedule(at, handler_id_, kResume, t);
      return;
    }
    switch (in.kind) {
      case InstrKind::kCompute: {
        const Duration d = draw(task, in.time);
        time_ps_[task.pc] += d.count();
        at += d;
        break;
      }
      case InstrKind::kAcquire: {
        const std::uint32_t id = task.lock_ids[in.slot];
        if (exclusive_holder_[id] == task.cpu)
          throw InvariantViolation("cpu " + std::to_string(task.cpu) + " takes lock '" +
                                   program_.locks[in.slot].name + "' it already holds (self-deadlock) at " +
                                   program_.chain(task.pc));
        sim::Time g;
        if (!task.locks[in.slot]->acquire(task.cpu, at, in.mode, g)) {
          task.blocked = true;
          task.blocked_since = at;
          return;  // the release that hands over the lock resumes us
        }
        granted(id, task.cpu, g, in.mode);
        time_ps_[task.pc] += (g - at).count();
        at = g;
        break;
      }
      case InstrKind::kRelease: {
        const std::uint32_t id = task.lock_ids[in.slot];
        released(id, task.cpu, at, in.mode);
        woken_.clear();
        const sim::Time done = task.locks[in.slot]->release(task.cpu, at, in.mode, woken_);
        time_ps_[task.pc] += (done - at).count();
        // Hand over: each woken task resumes at its grant time. It only
        // runs compute steps before scheduling, so running it now is safe.
        // A woken task that was only told to retry re-runs its acquire.
        // The nested run() executes no shared step, so woken_ stays ours.
        for (std::size_t w = 0; w < woken_.size(); ++w) {
          const Grant gr = woken_[w];
          const int wt = task_of_cpu_[gr.cpu];
          Task& other = tasks_[wt];
          const Instr& their = code[other.pc];
          if (!gr.slept) time_ps_[other.pc] += (gr.at - other.blocked_since).count();
          other.blocked = false;
          if (!gr.retry) {
            granted(id, gr.cpu, gr.at, their.mode);
            ++other.pc;
          }
          run(static_cast<std::size_t>(wt), gr.at, false);
        }
        at = done;
        break;
      }
      case InstrKind::kAtomic: {
        const sim::Time done = task.lines[in.slot]->rmw(topo_, task.cpu, at);
        time_ps_[task.pc] += (done - at).count();
        at = done;
        break;
      }
      case InstrKind::kLoad: {
        const sim::Time done = task.lines[in.slot]->load(topo_, task.cpu, at);
        time_ps_[task.pc] += (done - at).count();
        at = done;
        break;
      }
      case InstrKind::kEndIteration:
        if (measuring_ && at > config_.warmup && at <= config_.end) {
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
    }
    ++task.pc;
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
  }
  std::vector<ProfileEntry> out;
  for (auto& [k, v] : by_chain) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time > b.time; });
  return out;
}

std::vector<LockReport> Executor::lock_report() const {
  std::vector<LockReport> out(program_.locks.size());
  for (std::size_t s = 0; s < out.size(); ++s) {
    out[s].name = program_.locks[s].name;
    out[s].kind = program_.locks[s].kind;
    out[s].scope = program_.locks[s].scope;
  }
  for (std::size_t i = 0; i < lock_instances_.size(); ++i) {
    auto& r = out[lock_slot_of_instance_[i]];
    ++r.instances;
    r.stats.merge(lock_instances_[i]->stats());
  }
  return out;
}

std::vector<LineReport> Executor::line_report() const {
  std::vector<LineReport> out(program_.lines.size());
  for (std::size_t s = 0; s < out.size(); ++s) {
    out[s].name = program_.lines[s].name;
    out[s].scope = program_.lines[s].scope;
  }
  for (std::size_t i = 0; i < line_instances_.size(); ++i) {
    auto& r = out[line_slot_of_instance_[i]];
    ++r.instances;
    const auto& st = line_instances_[i]->stats();
    r.stats.loads += st.loads;
    r.stats.rmws += st.rmws;
    r.stats.bounces += st.bounces;
    r.stats.queue_wait += st.queue_wait;
  }
  return out;
}

std::vector<std::string> Executor::blocked_tasks() const {
  std::vector<std::string> out;
  for (const auto& t : tasks_)
    if (t.blocked)
      out.push_back("cpu " + std::to_string(t.cpu) + " waiting for " + program_.detail[t.pc] + " at " +
                    program_.chain(t.pc));
  return out;
}

}  // namespace vfssim::models
