// Which object each per-object declaration (`scope: object`) of a task
// touches in an iteration (ObjectSet's rules: task, round_robin, uniform,
// zipf). Declarations with the same objects and pick share one picker, so
// they pick the same object (a dentry and its d_lock); a line declared
// `on:` a per-object lock follows that lock's object.
//
// Picks are made between iterations, when the task holds no lock and is
// in no read section; the executor then rebinds the task's rows of its
// instance tables (InstanceTable::rebind) to the picked instances.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/codepath/program.h"
#include "sim/rng.h"

namespace vfssim::models {

class ObjectPicks {
 public:
  enum class Table : std::uint8_t { kLock, kLine, kSeq };
  // A per-object slot of one of the executor's tables, and its picker.
  struct Slot {
    Table table;
    std::uint32_t slot;
    std::uint32_t picker;
  };

  explicit ObjectPicks(const Program& program);

  bool empty() const { return slots_.empty(); }
  // Task `t`'s objects for its iteration `iteration` (0 first), one per
  // picker; a uniform or zipf picker draws once from `rng` per call.
  void pick(std::size_t t, std::uint64_t iteration, sim::RngStream& rng);
  // The object the last pick() chose for `picker`.
  int picked(std::uint32_t picker) const { return picked_[picker]; }
  const std::vector<Slot>& slots() const { return slots_; }
  // (line slot, lock slot): lines `on:` a per-object lock.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& lines_on_locks() const { return on_locks_; }

 private:
  struct Picker {
    ObjectSet set;
    int n = 1;
    std::vector<double> cdf;  // zipf: P(object <= k)
  };
  template <class Decl>
  void add(Table table, const std::vector<Decl>& decls);

  std::vector<Picker> pickers_;
  std::vector<Slot> slots_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> on_locks_;
  bool random_ = false;      // a uniform or zipf picker: one draw per iteration
  std::vector<int> picked_;  // per picker
};

}  // namespace vfssim::models
