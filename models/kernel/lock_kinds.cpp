#include "models/kernel/lock_kinds.h"

#include "models/scenario/scenario.h"

namespace vfssim::models {

namespace {

template <class L, class... Args>
std::unique_ptr<AnyLock> make(Args&&... args) {
  return std::make_unique<AnyLock>(std::in_place_type<L>, std::forward<Args>(args)...);
}

template <class L>
std::unique_ptr<AnyLock> make_plain(const LockDecl&, LockContext ctx) {
  return make<L>(ctx);
}

}  // namespace

const std::vector<LockKind>& lock_kind_table() {
  static const std::vector<LockKind> table{
      {"tas", "test-and-test-and-set spinlock: a random waiter wins after the spinners' re-reads", true, false, false,
       false, "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock",
       make_plain<TasSpinlock>, {}},
      {"ticket", "ticket spinlock: FIFO, every waiter spins on the one word", true, false, false, false,
       "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock", make_plain<TicketSpinlock>, {}},
      {"mcs", "MCS queue lock: FIFO, each waiter spins on its own node", true, false, false, false,
       "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock", make_plain<McsSpinlock>, {}},
      {"qspinlock", "queued spinlock (locked byte, pending bit, MCS queue): kernel/locking/qspinlock.c", true, false,
       false, false, "queued_spin_lock_slowpath", "queued_spin_lock_slowpath", "_raw_spin_unlock",
       "_raw_spin_unlock", make_plain<QSpinlock>, {}, false, false, "_raw_spin_lock"},
      {"cna", "compact NUMA-aware qspinlock: the holder passes to a waiter on its node (secondary queue, threshold)",
       true, false, false, false, "queued_spin_lock_slowpath", "queued_spin_lock_slowpath",
       "_raw_spin_unlock", "_raw_spin_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<AnyLock> {
         return make<CnaSpinlock>(ctx, d.threshold);
       },
       {"threshold"},
       true,
       false,
       "_raw_spin_lock"},
      {"mutex", "struct mutex: fast path, optimistic spinning on the owner (OSQ), or sleeping waiters", false, true,
       true, false, "mutex_lock", "mutex_lock", "mutex_unlock", "mutex_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<AnyLock> {
         const Duration wake = d.wake_latency > Duration{0} ? d.wake_latency : ctx.topo->wake_latency();
         if (d.versioned)
           return make<VersionedMutex>(ctx, MutexRules{d.spin, d.handoff}, wake, d.wake_shape, ctx.topo->context_switch());
         return make<Mutex>(ctx, d.spin, wake, d.wake_shape);
       },
       {"spin", "wake", "wake_shape", "behaviour", "handoff"},
       false,
       true},
      {"rwsem", "rw_semaphore: a count word on one line; readers share it, waiters sleep unless spin: true", false,
       true, false, true, "down_write", "down_read", "up_write", "up_read",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<AnyLock> {
         const Duration wake = d.wake_latency > Duration{0} ? d.wake_latency : ctx.topo->wake_latency();
         if (d.versioned) {
           RwsemRules rules;
           rules.writer_spin = d.spin;
           rules.spin_on_readers = d.spin && d.spin_on_readers;
           rules.reader_spin = d.reader_spin;
           rules.adaptive = d.adaptive;
           rules.handoff = d.handoff;
           rules.handoff_spin = d.handoff && d.spin && d.handoff_spin;
           rules.wake_all_readers = d.wake_all_readers;
           rules.reader_steal = d.reader_steal;
           return make<Rwsem>(ctx, rules, wake, d.wake_shape, ctx.topo->context_switch());
         }
         return make<RwLock>(ctx, !d.spin, false, wake, d.wake_shape);
       },
       {"spin", "wake", "wake_shape", "behaviour", "handoff", "reader_spin", "reader_steal", "wake_readers"},
       false,
       true},
      {"rwlock", "rwlock_t: a spinning reader/writer lock (fair: false for the old reader-preferring one)", false,
       false, false, true, "_raw_write_lock", "_raw_read_lock", "_raw_write_unlock", "_raw_read_unlock",
       [](const LockDecl& d, LockContext ctx) -> std::unique_ptr<AnyLock> {
         return make<RwLock>(ctx, false, d.reader_preference, Duration{0});
       },
       {"fair"},
       false,
       true},
      {"brlock", "brlock/lglock: per-CPU spinlocks, a reader takes its own, a writer takes all", false, false, false,
       true, "_raw_spin_lock", "_raw_spin_lock", "br_write_unlock", "br_read_unlock", make_plain<BrLock>, {}},
      // What-if runs only (design review): not declarable in a scenario.
      {FreeLock::kKind, "what-if: a lock that costs nothing and excludes nothing", false, false, false, true,
       "_raw_spin_lock", "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_unlock",
       [](const LockDecl&, LockContext) -> std::unique_ptr<AnyLock> { return make<FreeLock>(); }, {}},
  };
  return table;
}

const std::vector<LockKey>& lock_keys() {
  static const std::vector<LockKey> keys{
      {"spin", "true|false (mutex: true, rwsem: false, by behaviour: true)", "waiters spin on a running owner (optimistic spinning)"},
      {"wake", "TIME (the machine's wake_latency)",
       "the scheduler's wake-up latency of a sleeping waiter (its mean): overrides the machine preset's"},
      {"wake_shape", "erlang2|fixed (erlang2)",
       "each wake-up's latency: an Erlang-2 draw of mean `wake` (p50 0.84x, p99 3.3x), or exactly `wake` (models/kernel/wake_latency.h)"},
      {"fair", "true|false (true)", "false: the old reader-preferring rwlock_t (readers pass queued writers)"},
      {"threshold", "TIME (1ms)", "CNA: how long the secondary queue's head may be passed over"},
      {"behaviour", "mutex: v4.9|v4.10|v6.1; rwsem: v4.19|cf69482d62d9^|7d43f1ce9dd0|v5.3|v5.11|v6.1 (none: the version-less model)",
       "the kernel version's rules, by release or commit (the table below); the switches override them"},
      {"handoff", "true|false (per behaviour)",
       "the handoff bit: a starved waiter gets the lock next (mutex: after one stolen wake-up; rwsem: after 4ms)"},
      {"reader_spin", "true|false (per behaviour)",
       "readers spin on a running writer owner and take a reader-owned lock past queued waiters (v5.3 to v5.10)"},
      {"reader_steal", "true|false (per behaviour)", "a reader takes a free lock past queued waiters, unless handoff is set (v5.3 on)"},
      {"wake_readers", "leading|all (per behaviour)",
       "a wake-up grants the readers before the first writer, or up to 256 from the whole queue (v5.3 on)"},
  };
  return keys;
}

const std::vector<LockBehaviour>& lock_behaviours() {
  // Releases, and the commits of a release's development that published
  // measurements name (git's NAME^: the tree just before that commit).
  static const std::vector<LockBehaviour> table{
      {"mutex", "v4.9", false, false, false, false,
       "spinning on a running owner (0d66bf6d3514); wake-and-retry, a running task steals the lock, no bound"},
      {"mutex", "v4.10", true, false, false, false,
       "v4.9 + MUTEX_FLAG_HANDOFF (9d659ae14b54): the woken head that lost sets it, spins (Waiman Long, v4.10), gets the next unlock"},
      {"mutex", "v6.1", true, false, false, false, "the rules of v4.10 (unchanged since in what the model covers)"},
      {"rwsem", "v4.19", false, false, false, false,
       "rwsem-xadd.c (to v5.2): writers spin on a running writer or a free word (4fc828e24cd9), a reader owner (left after "
       "up_read) stops them; a running writer steals a free word; readers sleep; the waker grants the leading readers, "
       "racing a spinning writer for the word; no handoff"},
      {"rwsem", "cf69482d62d9^", true, false, false, true,
       "v5.3-rc, Waiman Long's rework through 'Clarify usage of owner's nonspinnable bit': the count scheme, HANDOFF after "
       "4 ms (4f23dbc1e657), up to 256 readers woken (d3681e269fff); readers sleep, a reader owner stops spinning writers"},
      {"rwsem", "7d43f1ce9dd0", true, true, false, true,
       "+ readers spin on a writer and take a reader-owned word past the queue (cf69482d62d9), writers spin on a reader "
       "owner 10-25 us then set NONSPINNABLE (7d43f1ce9dd0)",
       true},
      {"rwsem", "v5.3", true, true, false, true,
       "7d43f1ce9dd0 + adaptive disabling of reader spinning (5cfd92e12e13): RD_NONSPINNABLE after a writer's spin on "
       "readers timed out; the rules to v5.10",
       true, true},
      {"rwsem", "v5.11", true, false, true, true,
       "v5.3 - reader spinning and its adaptive disabling (617f3ef95177); a slow-path reader steals a word no reader "
       "holds (1a728dff855a)",
       true},
      {"rwsem", "v6.1", true, false, true, true,
       "v5.11 + the HANDOFF writer spins on a running writer owner and takes the freed word (91d2a812dfb9)", true, false,
       true},
  };
  return table;
}

const LockBehaviour* find_lock_behaviour(const std::string& kind, const std::string& name) {
  for (const auto& b : lock_behaviours())
    if (kind == b.kind && name == b.name) return &b;
  return nullptr;
}

std::string lock_behaviour_names(const std::string& kind) {
  std::string out;
  for (const auto& b : lock_behaviours())
    if (kind == b.kind) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

bool LockKind::takes(const std::string& key) const {
  for (const char* k : keys)
    if (key == k) return true;
  return false;
}

std::string lock_kinds_taking(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& k : lock_kind_table())
    if (k.takes(key)) names.push_back(k.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
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

std::string lock_kinds_with_word_line() {
  std::string out;
  for (const auto& k : lock_kind_table()) {
    if (std::string(k.name) == FreeLock::kKind || !k.has_word_line()) continue;
    out += (out.empty() ? "" : ", ") + std::string(k.name);
  }
  return out;
}

}  // namespace vfssim::models
