// The registry of lock kinds: one row per kind a scenario may declare, with
// everything the loader, the compiler, the executor and the docs need to
// know about it, and AnyLock, the closed set of their models. A new
// primitive is its model file plus its row here (its class in LockModels,
// its row in lock_kind_table()); no other code compares kind names.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/kernel/free_lock.h"
#include "models/kernel/lock.h"
#include "models/kernel/mutex.h"
#include "models/kernel/rwlock.h"
#include "models/kernel/rwsem.h"
#include "models/kernel/spinlocks.h"

namespace vfssim::models {

struct LockDecl;

// A lock model outside the registry, reached through virtual calls: the
// tests' deliberately broken or recording locks (ExecutorConfig's
// lock_factory). No scenario's kind makes one.
class ExternalLock : public Lock {
 public:
  virtual ~ExternalLock() = default;
  virtual std::optional<Time> acquire(int cpu, Time now, LockMode mode) = 0;
  virtual Released release(int cpu, Time now, LockMode mode) = 0;
  virtual void take_more(std::vector<Grant>& into) { Lock::take_more(into); }
  virtual bool held() const { return Lock::held(); }
  virtual CmpxchgOutcome cmpxchg_word(int cpu, Time now, const CmpxchgLoop& loop) {
    return Lock::cmpxchg_word(cpu, now, loop);
  }
  virtual void holder_sleeps(int cpu, Time from, Time until) { Lock::holder_sleeps(cpu, from, until); }
  virtual CacheLine* word_line() { return Lock::word_line(); }
};

// Every class a row of lock_kind_table() makes (the spinlocks first: the
// kinds of the hottest loops), then the tests' ExternalLock.
using LockModels = std::variant<McsSpinlock, QSpinlock, TicketSpinlock, TasSpinlock, CnaSpinlock, Mutex, VersionedMutex,
                                Rwsem, RwLock, BrLock, FreeLock, std::unique_ptr<ExternalLock>>;

// One lock instance, of any kind: the interface of lock.h, dispatched on
// the kind by a chain of index tests the compiler turns into a switch, each
// case a direct call of the model's member (no virtual call, except into an
// ExternalLock).
class AnyLock {
  // The dispatch (first: the members below deduce their types from it).
  static ExternalLock& unwrap(std::unique_ptr<ExternalLock>& p) { return *p; }
  static const ExternalLock& unwrap(const std::unique_ptr<ExternalLock>& p) { return *p; }
  template <class M>
  static M& unwrap(M& m) {
    return m;
  }
  template <std::size_t I = 0, class Self, class F>
  [[gnu::always_inline]] static decltype(auto) dispatch(Self& self, F& f) {
    if constexpr (I + 1 < std::variant_size_v<LockModels>) {
      if (self.model_.index() != I) return dispatch<I + 1>(self, f);
    }
    return f(unwrap(*std::get_if<I>(&self.model_)));
  }
  template <class F>
  [[gnu::always_inline]] decltype(auto) visit(F&& f) {
    return dispatch(*this, f);
  }
  template <class F>
  [[gnu::always_inline]] decltype(auto) visit(F&& f) const {
    return dispatch(*this, f);
  }


 public:
  template <class M, class... Args>
  explicit AnyLock(std::in_place_type_t<M> kind, Args&&... args) : model_(kind, std::forward<Args>(args)...) {}
  explicit AnyLock(std::unique_ptr<ExternalLock> external) : model_(std::move(external)) {}

  // Inlined into the interpreter's steps: the switch there, a direct call of the model.
  [[gnu::always_inline]] std::optional<Time> acquire(int cpu, Time now, LockMode mode) {
    return visit([&](auto& m) { return m.acquire(cpu, now, mode); });
  }
  [[gnu::always_inline]] Released release(int cpu, Time now, LockMode mode) {
    return visit([&](auto& m) { return m.release(cpu, now, mode); });
  }
  void take_more(std::vector<Grant>& into) {
    visit([&](auto& m) { m.take_more(into); });
  }
  bool held() const { return visit([](const auto& m) { return m.held(); }); }
  CmpxchgOutcome cmpxchg_word(int cpu, Time now, const CmpxchgLoop& loop) {
    return visit([&](auto& m) { return m.cmpxchg_word(cpu, now, loop); });
  }
  void holder_sleeps(int cpu, Time from, Time until) {
    visit([&](auto& m) { m.holder_sleeps(cpu, from, until); });
  }
  CacheLine* word_line() {
    return visit([](auto& m) { return m.word_line(); });
  }

  // The model's lock_stat counters (lock.h).
  const Lock& model() const {
    return visit([](const auto& m) -> const Lock& { return m; });
  }
  const LockStats& stats() const { return model().stats(); }
  const LockStats& mode_stats(LockMode m) const { return model().mode_stats(m); }
  void reset_stats() {
    visit([](auto& m) { m.reset_stats(); });
  }

  // The model, when it is an M (tests).
  template <class M>
  M* get_if() {
    return std::get_if<M>(&model_);
  }
  const LockModels& models() const { return model_; }

 private:
  LockModels model_;
};

// A key a lock declaration may carry beyond `kind` and `scope`; a kind's
// row lists the ones it takes (the loader refuses the others).
struct LockKey {
  const char* name;
  const char* value;        // what it takes, with its default
  const char* description;  // one line, for docs
};
const std::vector<LockKey>& lock_keys();

// A kernel version's rules for a sleeping lock (`behaviour: NAME`): the
// switches it sets; a lock's own switches override them. The first row of
// a kind is the base when a lock gives switches without a behaviour.
struct LockBehaviour {
  const char* kind;  // mutex or rwsem
  const char* name;  // v4.19, ...
  bool handoff;
  bool reader_spin;
  bool reader_steal;
  bool wake_all_readers;
  const char* rules;  // one line, for docs: what the version does, with its commits
  // rwsem only, no switch of their own (rwsem.h):
  bool spin_on_readers = false;  // writers spin on a reader owner, 10-25 us (7d43f1ce9dd0)
  bool adaptive = false;         // RD_NONSPINNABLE after a writer's spin timed out (5cfd92e12e13)
  bool handoff_spin = false;     // the HANDOFF writer spins on the owner (91d2a812dfb9)
};
const std::vector<LockBehaviour>& lock_behaviours();
// The row of (kind, name), or nullptr; "v4.19, v5.3, v6.1": a kind's names.
const LockBehaviour* find_lock_behaviour(const std::string& kind, const std::string& name);
std::string lock_behaviour_names(const std::string& kind);

struct LockKind {
  const char* name;         // as written in scenario files
  const char* description;  // one line, for docs and errors
  // A spinlock: waiters spin; its word may carry a lockref count or data
  // (`lines: {X: {on: LOCK}}`), and it may be a dentry's d_lock.
  bool spinlock;
  bool sleeps;              // waiters may sleep: without `spin: true` they need `wake:`
  bool default_spin;        // sleeps: whether waiters spin unless `spin:` says otherwise
  bool read_write;          // has a shared (read) mode: `mode: read` is allowed
  // What perf shows: waiting (acquiring) and releasing, exclusive then shared.
  const char* wait_symbol;
  const char* wait_symbol_shared;
  const char* release_symbol;
  const char* release_symbol_shared;
  std::unique_ptr<AnyLock> (*make)(const LockDecl&, LockContext);
  std::vector<const char*> keys;  // of lock_keys(): the ones this kind takes
  // Its handoff depends on the NUMA node of the waiters (CNA): on a machine
  // of one node it is the kind it is built on, which the loader warns of.
  bool numa_aware = false;
  // Not a spinlock, but one word on one cache line that data may share
  // (`lines: {X: {on: LOCK}}`): struct mutex's owner beside wait_lock,
  // rw_semaphore's count beside its owner field, rwlock_t's word. Spinlocks
  // always have one.
  bool word_line = false;
  // What perf shows for an acquisition that finds the lock free, when it is
  // not `wait_symbol`: qspinlock's fast path is the cmpxchg inlined in
  // _raw_spin_lock; only a waiter enters queued_spin_lock_slowpath.
  const char* fast_symbol = nullptr;

  bool takes(const std::string& key) const;
  bool has_word_line() const { return spinlock || word_line; }
};

// Every kind, in the order docs list them.
const std::vector<LockKind>& lock_kind_table();
// The row of `name`, or nullptr.
const LockKind* find_lock_kind(const std::string& name);
// "tas, ticket, mcs, ..." (for messages).
std::string lock_kind_names(bool spinlocks_only = false);
// "tas, ..., mutex, rwsem, rwlock": the kinds data may be `on:`.
std::string lock_kinds_with_word_line();
// "mutex and rwsem": the kinds that take lock key `key` (for messages).
std::string lock_kinds_taking(const std::string& key);

}  // namespace vfssim::models
