// The registry of lock kinds: one row per kind a scenario may declare, with
// everything the loader, the compiler, the executor and the docs need to
// know about it. A new primitive is its model file plus one row here; no
// other code compares kind names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/kernel/lock.h"

namespace vfssim::models {

struct LockDecl;

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
  std::unique_ptr<Lock> (*make)(const LockDecl&, LockContext);
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
