// SMT siblings share a core's execution resources: a compute step (and a
// lock hold, which is one) takes longer while other threads of its core run
// their code paths too. A sibling waiting for a lock does not count: asleep
// it is off the core, and spinning it sits in `pause`, which Intel
// introduced with Hyper-Threading to hand the core to the sibling (and
// measured per-function times, as seed 004's profile, already include such
// siblings). The sibling's state is read when the step starts and the step
// keeps that rate (compute runs ahead of the clock); so a lock's new holder
// counts the sibling that just handed it over as busy, though that
// sibling's next step may be to wait again.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "models/hardware/topology.h"

namespace vfssim::models {

class SmtSlowdown {
 public:
  SmtSlowdown(const Topology& topo, const std::vector<int>& cpu_of_task) : siblings_(cpu_of_task.size()) {
    std::map<int, std::vector<std::size_t>> on_core;
    for (std::size_t t = 0; t < cpu_of_task.size(); ++t) on_core[topo.core_of(cpu_of_task[t])].push_back(t);
    for (const auto& [core, ts] : on_core)
      for (const std::size_t t : ts)
        for (const std::size_t u : ts)
          if (u != t) siblings_[t].push_back(u);
    slowdown_.push_back(1.0);
    for (int busy = 1; busy <= topo.num_cpus() / topo.num_cores(); ++busy) slowdown_.push_back(topo.compute_slowdown(busy));
  }

  bool has_siblings(std::size_t t) const { return !siblings_[t].empty(); }
  // `d` of task `t`'s compute, stretched by its core's busy threads now;
  // running(u) says whether sibling task u runs code (is not waiting).
  template <class Running>
  Duration stretch(std::size_t t, Duration d, Running running) const {
    const auto& sib = siblings_[t];
    if (sib.empty()) return d;
    std::size_t busy = 1;
    for (const std::size_t u : sib) busy += running(u);
    const double slow = slowdown_[busy];
    if (slow == 1.0) return d;
    return Duration{static_cast<std::int64_t>(static_cast<double>(d.count()) * slow + 0.5)};
  }

 private:
  std::vector<std::vector<std::size_t>> siblings_;  // per task: the tasks on its core's other threads
  std::vector<double> slowdown_;                    // by busy threads of a core (1..threads per core)
};

}  // namespace vfssim::models
