// Deadlock and stall reports: who waits for what, where, and who holds it.
// Built from a snapshot of the tasks when a run stops, so the interpreter's
// hot path carries nothing for it.
#pragma once

#include <string>
#include <vector>

namespace vfssim::models {

struct TaskWait {
  int cpu = 0;
  bool blocked = false;
  bool on_lock = false;   // waits for a lock (else: a line, a seqcount, a grace period)
  std::string lock;       // the lock's name, when on_lock
  std::string detail;     // what the step touches ("" for a grace period)
  std::string chain;      // where it waits, perf-style
  int holder_cpu = -1;    // the lock's exclusive holder, -1 if none
  int holder_task = -1;   // that holder's task
  int readers = 0;        // the lock's shared holders
};

// "cpu N waiting for DETAIL at CHAIN", one per blocked task.
std::vector<std::string> blocked_tasks(const std::vector<TaskWait>& tasks);
// A cycle of CPUs each waiting for a lock the next one holds (a CPU taking
// a lock it holds is a cycle of one), listed from its lowest CPU, as "cpu 3
// waiting for lock 'B' at CHAIN held by cpu 5; cpu 5 waiting for lock 'A'
// at ... held by cpu 3"; empty when there is none.
std::string wait_cycle(const std::vector<TaskWait>& tasks);
// The first `max_listed` blocked tasks in that form, and how many more.
std::string waits(const std::vector<TaskWait>& tasks, std::size_t max_listed);

}  // namespace vfssim::models
