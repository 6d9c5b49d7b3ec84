// The executor's instances: every declared object made by scope, and each
// task's rows of the tables (executor.h); rebound per iteration for the
// per-object ones (pick_objects).
#include "models/codepath/executor.h"

namespace vfssim::models {

std::unique_ptr<AnyLock> make_lock(const LockDecl& decl, LockContext ctx) {
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
    case Scope::kObject: return 0;  // rebound per iteration (Executor::pick_objects)
  }
  return 0;
}

int object_count(Scope scope, const ObjectSet& o) { return scope == Scope::kObject ? static_cast<int>(o.objects.value) : 0; }

}  // namespace

// Every declared object, instantiated by scope; then each task's rows.
void Executor::build_instances() {
  const std::size_t n = tasks_.size();
  auto key = [this](auto decls) {
    return [this, decls](std::size_t t, std::size_t s) {
      return instance_key((*decls)[s].scope, topo_, config_.tasks, static_cast<int>(t), tasks_[t].cpu);
    };
  };
  auto objects = [](auto decls) {
    return [decls](std::size_t s) { return object_count((*decls)[s].scope, (*decls)[s].objects); };
  };
  auto no_external = [](std::size_t, std::size_t) -> AnyLock* { return nullptr; };
  locks_.build(n, program_.locks.size(), key(&program_.locks), no_external, [this](std::size_t s, int k) {
    const auto& d = program_.locks[s];
    return config_.lock_factory(d, LockContext{&topo_, sim::RngStream(config_.seed, "lock:" + d.name, static_cast<std::uint64_t>(k))});
  }, objects(&program_.locks));
  acquired_at_.assign(locks_.size(), 0);
  contended_at_.assign(program_.code.size(), 0);
  contending_at_.assign(program_.code.size(), 0);
  // A line declared `on: LOCK` is the word's line of this task's instance of that lock.
  auto on_lock = [this](std::size_t t, std::size_t s) -> CacheLine* {
    const auto& d = program_.lines[s];
    if (d.on.empty()) return nullptr;
    std::size_t ls = 0;
    while (program_.locks[ls].name != d.on) ++ls;
    CacheLine* word = locks_.at(t, ls)->word_line();
    if (!word) throw std::invalid_argument("line '" + d.name + "' is on lock '" + d.on + "', which has no word line");
    return word;
  };
  // shared_by: N consecutive task indices (or CPU numbers) to one instance.
  auto line_key = [this, k = key(&program_.lines)](std::size_t t, std::size_t s) { return k(t, s) / program_.lines[s].shared_by; };
  lines_.build(n, program_.lines.size(), line_key, on_lock,
               [](std::size_t, int) { return std::make_unique<CacheLine>(); }, objects(&program_.lines));
  seqs_.build(n, program_.seqcounts.size(), key(&program_.seqcounts),
              [](std::size_t, std::size_t) -> SeqCount* { return nullptr; },
              [this](std::size_t, int) { return config_.seq_factory(topo_); }, objects(&program_.seqcounts));
  pools_.build(n, program_.pools.size(), key(&program_.pools), [this](std::size_t s, int) {
    const auto& d = program_.pools[s];
    return std::make_unique<FreePages>(d.low.value, d.high.value, d.refill.value);
  });
  for (std::size_t t = 0; t < n; ++t) {
    tasks_[t].locks = locks_.row(t);
    tasks_[t].lock_ids = locks_.id_row(t);
    tasks_[t].lines = lines_.row(t);
    tasks_[t].seqs = seqs_.row(t);
    tasks_[t].seq_ids = seqs_.id_row(t);
    tasks_[t].pools = pools_.row(t);
  }
}

void Executor::pick_objects(std::size_t t) {
  if (picks_.empty()) return;
  picks_.pick(t, cold_[t].iteration, cold_[t].pick_rng);
  for (const ObjectPicks::Slot& os : picks_.slots()) {
    const int k = picks_.picked(os.picker);
    switch (os.table) {
      case ObjectPicks::Table::kLock: locks_.rebind(t, os.slot, k); break;
      case ObjectPicks::Table::kLine: lines_.rebind(t, os.slot, k); break;
      case ObjectPicks::Table::kSeq: seqs_.rebind(t, os.slot, k); break;
    }
  }
  for (const auto& [line, lock] : picks_.lines_on_locks()) lines_.rebind_external(t, line, locks_.at(t, lock)->word_line());
}

std::unique_ptr<SeqCount> make_seqcount(const Topology& topo) { return std::make_unique<SeqCount>(topo); }

}  // namespace vfssim::models
