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

struct LockKind {
  const char* name;         // as written in scenario files
  const char* description;  // one line, for docs and errors
  // A spinlock: waiters spin; its word may carry a lockref count or data
  // (`lines: {X: {on: LOCK}}`), and it may be a dentry's d_lock.
  bool spinlock;
  bool sleeps;              // waiters may sleep: takes `spin:` and `wake:`
  bool default_spin;        // sleeps: whether waiters spin unless `spin:` says otherwise
  bool read_write;          // has a shared (read) mode: `mode: read` is allowed
  bool fairness;            // takes `fair:` (rwlock_t)
  bool numa_threshold;      // takes `threshold:` (CNA's intra-node handoff limit)
  // What perf shows: waiting (acquiring) and releasing, exclusive then shared.
  const char* wait_symbol;
  const char* wait_symbol_shared;
  const char* release_symbol;
  const char* release_symbol_shared;
  std::unique_ptr<Lock> (*make)(const LockDecl&, LockContext);
};

// Every kind, in the order docs list them.
const std::vector<LockKind>& lock_kind_table();
// The row of `name`, or nullptr.
const LockKind* find_lock_kind(const std::string& name);
// "tas, ticket, mcs, ..." (for messages).
std::string lock_kind_names(bool spinlocks_only = false);

}  // namespace vfssim::models
