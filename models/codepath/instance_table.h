// The instances of one kind of shared object (locks, lines, seqcounts,
// pools) and, for every task, which instance each declared slot resolves to.
//
// A declaration has a scope (global, per node, per CPU, per process, per
// task): tasks whose scope key is equal share one instance. The table is
// built task by task, slot by slot, so instance ids follow first use and
// are the same from run to run. Rows are flat (task * slots + slot) and the
// interpreter keeps a pointer to its task's row: one load per step.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace vfssim::models {

template <class T>
class InstanceTable {
 public:
  // key(t, s): the scope key of slot `s` for task `t`. resolve(t, s): a
  // pointer to an object owned elsewhere (a line that is a lock's word), or
  // nullptr; make(s, key): a new instance.
  template <class Key, class Resolve, class Make>
  void build(std::size_t tasks, std::size_t slots, Key key, Resolve resolve, Make make) {
    slots_ = slots;
    by_task_.assign(tasks * slots, nullptr);
    ids_.assign(tasks * slots, kNoInstance);
    std::map<std::pair<std::size_t, int>, std::uint32_t> index;
    for (std::size_t t = 0; t < tasks; ++t) {
      for (std::size_t s = 0; s < slots; ++s) {
        if (T* external = resolve(t, s)) {
          by_task_[t * slots + s] = external;
          continue;
        }
        const int k = key(t, s);
        auto [it, inserted] = index.try_emplace({s, k}, static_cast<std::uint32_t>(instances_.size()));
        if (inserted) {
          instances_.push_back(make(s, k));
          slot_of_.push_back(static_cast<std::uint32_t>(s));
        }
        by_task_[t * slots + s] = instances_[it->second].get();
        ids_[t * slots + s] = it->second;
      }
    }
  }
  template <class Key, class Make>
  void build(std::size_t tasks, std::size_t slots, Key key, Make make) {
    build(tasks, slots, key, [](std::size_t, std::size_t) -> T* { return nullptr; }, make);
  }

  static constexpr std::uint32_t kNoInstance = ~std::uint32_t{0};

  T* const* row(std::size_t task) { return by_task_.data() + task * slots_; }
  const std::uint32_t* id_row(std::size_t task) const { return ids_.data() + task * slots_; }
  T* at(std::size_t task, std::size_t slot) const { return by_task_[task * slots_ + slot]; }

  std::size_t size() const { return instances_.size(); }
  const T& instance(std::size_t id) const { return *instances_[id]; }
  T& instance(std::size_t id) { return *instances_[id]; }
  std::uint32_t slot_of(std::size_t id) const { return slot_of_[id]; }
  const std::vector<std::unique_ptr<T>>& instances() const { return instances_; }
  const std::vector<std::uint32_t>& slots_of_instances() const { return slot_of_; }

 private:
  std::size_t slots_ = 0;
  std::vector<std::unique_ptr<T>> instances_;
  std::vector<std::uint32_t> slot_of_;  // instance -> its declaration's slot
  std::vector<T*> by_task_;             // task * slots + slot -> instance
  std::vector<std::uint32_t> ids_;      // the same, as instance ids
};

}  // namespace vfssim::models
