// The executor's reports: lock_stat's class and mode rows, its contention
// points, the lines', seqcounts' and pools' counters, and the snapshot of
// waiting tasks the deadlock and stall reports read (wait_report.h).
#include "models/codepath/executor.h"

#include <algorithm>

namespace vfssim::models {

namespace {

// One row per declared lock, line, seqcount or pool: its instances' counters
// summed, as lock_stat reports a lock class.
template <class Report, class Decl, class Instance>
std::vector<Report> class_report(const std::vector<Decl>& decls, const InstanceTable<Instance>& table) {
  std::vector<Report> out(decls.size());
  for (std::size_t s = 0; s < out.size(); ++s) {
    out[s].name = decls[s].name;
    if constexpr (requires { out[s].scope; }) out[s].scope = decls[s].scope;
    if constexpr (requires { out[s].kind; }) out[s].kind = decls[s].kind;
  }
  for (std::size_t i = 0; i < table.size(); ++i) {
    auto& r = out[table.slot_of(i)];
    ++r.instances;
    r.stats.merge(table.instance(i).stats());
  }
  return out;
}

}  // namespace

std::vector<LockReport> Executor::lock_report() const { return class_report<LockReport>(program_.locks, locks_); }
std::vector<LockModeReport> Executor::lock_mode_report() const {
  std::vector<LockStats> by_mode[2];
  for (auto& v : by_mode) v.resize(program_.locks.size());
  for (std::size_t i = 0; i < locks_.size(); ++i)
    for (int m = 0; m < 2; ++m)
      by_mode[m][locks_.slot_of(i)].merge(locks_.instance(i).mode_stats(m ? LockMode::kShared : LockMode::kExclusive));
  std::vector<LockModeReport> out;
  for (std::size_t s = 0; s < program_.locks.size(); ++s) {
    const LockStats& w = by_mode[0][s];
    const LockStats& r = by_mode[1][s];
    // As lock_stat: a class held only exclusively has its plain row.
    if (r.holds == 0) continue;
    if (w.holds) out.push_back({program_.locks[s].name, "W", w});
    out.push_back({program_.locks[s].name, "R", r});
  }
  return out;
}

std::vector<ContentionPoint> Executor::contention_points() const {
  std::vector<ContentionPoint> out;
  for (std::size_t slot = 0; slot < program_.locks.size(); ++slot)
    for (const auto* counts : {&contended_at_, &contending_at_}) {
      std::vector<ContentionPoint> points;
      for (std::size_t pc = 0; pc < counts->size(); ++pc) {
        const Instr& in = program_.code[pc];
        if ((*counts)[pc] == 0 || in.kind != InstrKind::kAcquire || in.slot != slot) continue;
        points.push_back({program_.locks[slot].name, counts == &contended_at_ ? "contention" : "contending",
                          static_cast<int>(pc), program_.chain(pc), (*counts)[pc]});
      }
      std::stable_sort(points.begin(), points.end(),
                       [](const auto& a, const auto& b) { return a.contentions > b.contentions; });
      for (std::size_t i = 0; i < points.size() && i < kContentionPoints; ++i) out.push_back(std::move(points[i]));
    }
  return out;
}

std::vector<LineReport> Executor::line_report() const { return class_report<LineReport>(program_.lines, lines_); }
std::vector<SeqReport> Executor::seq_report() const { return class_report<SeqReport>(program_.seqcounts, seqs_); }
std::vector<PoolReport> Executor::pool_report() const { return class_report<PoolReport>(program_.pools, pools_); }

std::vector<TaskWait> Executor::wait_snapshot() const {
  std::vector<TaskWait> out(tasks_.size());
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    const Task& task = tasks_[t];
    TaskWait& w = out[t];
    w.cpu = task.cpu;
    w.blocked = task.blocked;
    w.detail = program_.detail[task.pc];
    w.chain = program_.chain(task.pc);
    const Instr& in = program_.code[task.pc];
    if (in.kind != InstrKind::kAcquire) continue;
    const std::uint32_t id = task.lock_ids[in.slot];
    w.on_lock = true;
    w.lock = program_.locks[in.slot].name;
    w.holder_cpu = checker_->exclusive_holder(id);
    w.holder_task = w.holder_cpu < 0 ? -1 : task_of_cpu_[w.holder_cpu];
    w.readers = checker_->readers(id);
  }
  return out;
}

}  // namespace vfssim::models
