// The interpreter's checker, independent of the lock and seqcount models:
// it keeps its own record of who holds what and when seqcount writes ran,
// and throws InvariantViolation when a model breaks
//   - mutual exclusion: an exclusive holder is alone;
//   - reader-writer exclusion: readers share only with readers;
//   - ordering: an exclusive grant never precedes the release it follows;
//   - seqcount safety: a reader never accepts a read that overlapped a
//     write, and writers never overlap (the lock that serialises them is
//     the scenario's job, so two inside at once is an error).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/kernel/lock.h"
#include "sim/time.h"

namespace vfssim::models {

class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class InvariantChecker {
 public:
  // `lock_names`: per lock instance; `seqcounts`: how many seqcount instances.
  InvariantChecker(std::vector<std::string> lock_names, std::size_t seqcounts);

  // Inline: the interpreter calls them on every acquisition and release.
  [[gnu::always_inline]] void granted(std::uint32_t lock, int cpu, sim::Time at, LockMode mode);
  [[gnu::always_inline]] void released(std::uint32_t lock, int cpu, sim::Time at, LockMode mode);
  int exclusive_holder(std::uint32_t lock) const { return held_[lock].exclusive_holder; }
  int readers(std::uint32_t lock) const { return held_[lock].shared_holders; }

  // A seqcount's write epoch: odd while a writer is inside.
  std::uint64_t epoch(std::uint32_t seq) const { return write_epoch_[seq]; }
  void write_begin(std::uint32_t seq, const std::string& name);
  void write_end(std::uint32_t seq) { ++write_epoch_[seq]; }
  // A reader that began at epoch `begun` accepts its read now.
  void accept_read(std::uint32_t seq, std::uint64_t begun, const std::string& name, int cpu) const;

 private:
  // The violations' messages, out of line: granted() and released() run on
  // every acquisition and stay small enough to inline.
  [[noreturn, gnu::cold, gnu::noinline]] void fail_granted_while_held(std::uint32_t id, int cpu) const;
  [[noreturn, gnu::cold, gnu::noinline]] void fail_granted_to_writer(std::uint32_t id, int cpu, sim::Time at) const;
  [[noreturn, gnu::cold, gnu::noinline]] void fail_released(std::uint32_t id, int cpu, LockMode mode) const;

  // What the checker knows of one lock instance: one record, so that a
  // grant or a release touches one line.
  struct Held {
    int exclusive_holder = -1;  // cpu, or -1
    int shared_holders = 0;
    sim::Time last_release{};
  };
  std::vector<std::string> lock_names_;
  std::vector<Held> held_;
  std::vector<std::uint64_t> write_epoch_;
};

inline void InvariantChecker::granted(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  Held& h = held_[id];
  if (h.exclusive_holder >= 0) [[unlikely]]
    fail_granted_while_held(id, cpu);
  if (mode == LockMode::kShared) {
    ++h.shared_holders;
    return;
  }
  if (h.shared_holders > 0 || at < h.last_release) [[unlikely]]
    fail_granted_to_writer(id, cpu, at);
  h.exclusive_holder = cpu;
}

inline void InvariantChecker::released(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  Held& h = held_[id];
  if (mode == LockMode::kShared) {
    if (h.shared_holders <= 0) [[unlikely]]
      fail_released(id, cpu, mode);
    --h.shared_holders;
  } else {
    if (h.exclusive_holder != cpu) [[unlikely]]
      fail_released(id, cpu, mode);
    h.exclusive_holder = -1;
  }
  if (h.last_release < at) h.last_release = at;
}

}  // namespace vfssim::models
