#include "models/kernel/lock_kinds.h"

#include "models/kernel/free_lock.h"
#include "models/kernel/mutex.h"
#include "models/kernel/rwlock.h"
#include "models/kernel/spinlocks.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

namespace {

template <class L>
std::unique_ptr<Lock> make_plain(const LockDecl&, LockContext ctx) {
  return std::make_unique<L>(ctx);
}

}  // namespace

const std::vector<LockKind>& lock_kind_table() {
  static const std::vector<LockKind> table{
      {"tas", "test-and-test-and-set spinlock: a random waiter wins after the spinners' re-reads", true, false, false,
       false, false, false, "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock",
       make_plain<TasSpinlock>},
      {"ticket", "ticket spinlock: FIFO, every waiter spins on the one word", true, false, false, false, false, false,
       "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock", make_plain<TicketSpinlock>},
      {"mcs", "MCS queue lock: FIFO, each waiter spins on its own node", true, false, false, false, false, false,
       "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock", make_plain<McsSpinlock>},
      {"qspinlock", "queued spinlock (locked byte, pending bit, MCS queue): kernel/locking/qspinlock.c", true, false,
       false, false, false, false, "queued_spin_lock_slowpath", "queued_spin_lock_slowpath", "_raw_spin_unlock",
       "_raw_spin_unlock", make_plain<QSpinlock>},
      {"cna", "compact NUMA-aware qspinlock: the holder passes to a waiter on its node (secondary queue, threshold)",
       true, false, false, false, false, true, "queued_spin_lock_slowpath", "queued_spin_lock_slowpath",
       "_raw_spin_unlock", "_raw_spin_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<Lock> {
         return std::make_unique<CnaSpinlock>(ctx, d.threshold);
       }},
      {"mutex", "struct mutex: fast path, optimistic spinning on the owner (OSQ), or sleeping waiters", false, true,
       true, false, false, false, "mutex_lock", "mutex_lock", "mutex_unlock", "mutex_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<Lock> {
         return std::make_unique<Mutex>(ctx, d.spin, d.wake_latency);
       }},
      {"rwsem", "rw_semaphore: a count word on one line; readers share it, waiters sleep unless spin: true", false,
       true, false, true, false, false, "down_write", "down_read", "up_write", "up_read",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<Lock> {
         return std::make_unique<RwLock>(ctx, !d.spin, false, d.wake_latency);
       }},
      {"rwlock", "rwlock_t: a spinning reader/writer lock (fair: false for the old reader-preferring one)", false,
       false, false, true, true, false, "_raw_write_lock", "_raw_read_lock", "_raw_write_unlock", "_raw_read_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<Lock> {
         return std::make_unique<RwLock>(ctx, false, d.reader_preference, Duration{0});
       }},
      {"brlock", "brlock/lglock: per-CPU spinlocks, a reader takes its own, a writer takes all", false, false, false,
       true, false, false, "_raw_spin_lock", "_raw_spin_lock", "br_write_unlock", "br_read_unlock", make_plain<BrLock>},
      // What-if runs only (design review): not declarable in a scenario.
      {FreeLock::kKind, "what-if: a lock that costs nothing and excludes nothing", false, false, false, true, false,
       false, "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock",
       [](const LockDecl&, LockContext) -> std::unique_ptr<Lock> { return std::make_unique<FreeLock>(); }},
  };
  return table;
}

const LockKind* find_lock_kind(const std::string& name) {
  for (const auto& k : lock_kind_table())
    if (name == k.name) return &k;
  return nullptr;
}

std::string lock_kind_names(bool spinlocks_only) {
  std::string out;
  for (const auto& k : lock_kind_table()) {
    if (std::string(k.name) == FreeLock::kKind || (spinlocks_only && !k.spinlock)) continue;
    out += (out.empty() ? "" : ", ") + std::string(k.name);
  }
  return out;
}

}  // namespace vfssim::models
