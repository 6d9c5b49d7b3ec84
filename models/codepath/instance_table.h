// The instances of one kind of shared object (locks, lines, seqcounts,
// pools) and, for every task, which instance each declared slot resolves to.
//
// A declaration has a scope (global, per node, per CPU, per process, per
// task, per object): tasks whose scope key is equal share one instance. A
// per-object slot's row entry changes between loop iterations (rebind). The table is
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
  // objects(s): how many instances a slot of scope object has (0 for the
  // other scopes): all are made after the tasks' first ones, keys 0..N-1,
  // so that rebind() can move a task to any of them between iterations.
  template <class Key, class Resolve, class Make, class Objects>
  void build(std::size_t tasks, std::size_t slots, Key key, Resolve resolve, Make make, Objects objects) {
    slots_ = slots;
    by_task_.assign(tasks * slots, nullptr);
    ids_.assign(tasks * slots, kNoInstance);
    auto instance = [&](std::size_t s, int k) {
      auto [it, inserted] = index_.try_emplace({s, k}, static_cast<std::uint32_t>(instances_.size()));
      if (inserted) {
        instances_.push_back(make(s, k));
        slot_of_.push_back(static_cast<std::uint32_t>(s));
      }
      return it->second;
    };
    for (std::size_t t = 0; t < tasks; ++t) {
      for (std::size_t s = 0; s < slots; ++s) {
        if (T* external = resolve(t, s)) {
          by_task_[t * slots + s] = external;
          continue;
        }
        const std::uint32_t id = instance(s, key(t, s));
        by_task_[t * slots + s] = instances_[id].get();
        ids_[t * slots + s] = id;
      }
    }
    for (std::size_t s = 0; s < slots; ++s)
      for (int k = 0, n = objects(s); k < n; ++k) (void)instance(s, k);
  }
  template <class Key, class Resolve, class Make>
  void build(std::size_t tasks, std::size_t slots, Key key, Resolve resolve, Make make) {
    build(tasks, slots, key, resolve, make, [](std::size_t) { return 0; });
  }

  // Task `task`'s slot `slot` now touches the instance of scope key `key`
  // (one build() made), or `external`.
  void rebind(std::size_t task, std::size_t slot, int key) {
    const std::uint32_t id = index_.at({slot, key});
    by_task_[task * slots_ + slot] = instances_[id].get();
    ids_[task * slots_ + slot] = id;
  }
  void rebind_external(std::size_t task, std::size_t slot, T* external) { by_task_[task * slots_ + slot] = external; }
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
  std::map<std::pair<std::size_t, int>, std::uint32_t> index_;  // (slot, scope key) -> instance
  std::vector<std::unique_ptr<T>> instances_;
  std::vector<std::uint32_t> slot_of_;  // instance -> its declaration's slot
  std::vector<T*> by_task_;             // task * slots + slot -> instance
  std::vector<std::uint32_t> ids_;      // the same, as instance ids
};

}  // namespace vfssim::models
