#include "models/codepath/wait_report.h"

namespace vfssim::models {

namespace {

// The task holding the lock task `t` waits for, or -1.
int waits_for_task(const std::vector<TaskWait>& tasks, std::size_t t) {
  const TaskWait& w = tasks[t];
  if (!w.blocked || !w.on_lock) return -1;
  return w.holder_task;
}

std::string describe_wait(const TaskWait& w) {
  std::string s = "cpu " + std::to_string(w.cpu) + " waiting for ";
  if (w.on_lock) {
    s += "lock '" + w.lock + "' at " + w.chain;
    if (w.holder_cpu == w.cpu) s += " held by cpu " + std::to_string(w.cpu) + " itself";
    else if (w.holder_cpu >= 0) s += " held by cpu " + std::to_string(w.holder_cpu);
    else if (w.readers > 0) s += " held by " + std::to_string(w.readers) + " reader(s)";
  } else {
    s += (w.detail.empty() ? std::string("a grace period") : "'" + w.detail + "'") + " at " + w.chain;
  }
  return s;
}

}  // namespace

std::vector<std::string> blocked_tasks(const std::vector<TaskWait>& tasks) {
  std::vector<std::string> out;
  for (const auto& w : tasks)
    if (w.blocked) out.push_back("cpu " + std::to_string(w.cpu) + " waiting for " + w.detail + " at " + w.chain);
  return out;
}

std::string wait_cycle(const std::vector<TaskWait>& tasks) {
  // Each blocked task waits for at most one other (the exclusive holder of
  // its lock): follow those edges from every task until a task repeats.
  std::vector<int> seen_from(tasks.size(), -1);
  for (std::size_t start = 0; start < tasks.size(); ++start) {
    int t = static_cast<int>(start);
    while (t >= 0 && seen_from[t] < 0) {
      seen_from[t] = static_cast<int>(start);
      t = waits_for_task(tasks, static_cast<std::size_t>(t));
    }
    if (t < 0 || seen_from[t] != static_cast<int>(start)) continue;
    std::vector<std::size_t> cycle{static_cast<std::size_t>(t)};
    for (int u = waits_for_task(tasks, static_cast<std::size_t>(t)); u != t;
         u = waits_for_task(tasks, static_cast<std::size_t>(u)))
      cycle.push_back(static_cast<std::size_t>(u));
    std::size_t first = 0;
    for (std::size_t i = 1; i < cycle.size(); ++i)
      if (tasks[cycle[i]].cpu < tasks[cycle[first]].cpu) first = i;
    std::string out;
    for (std::size_t i = 0; i < cycle.size(); ++i)
      out += (i ? "; " : "") + describe_wait(tasks[cycle[(first + i) % cycle.size()]]);
    std::size_t others = 0;
    for (const auto& w : tasks) others += w.blocked;
    others -= cycle.size();
    if (others > 0) out += " (and " + std::to_string(others) + " more CPUs waiting)";
    return out;
  }
  return {};
}

std::string waits(const std::vector<TaskWait>& tasks, std::size_t max_listed) {
  std::string out;
  std::size_t n = 0;
  for (const auto& w : tasks) {
    if (!w.blocked) continue;
    if (n++ < max_listed) out += (out.empty() ? "" : "; ") + describe_wait(w);
  }
  if (n > max_listed) out += " (and " + std::to_string(n - max_listed) + " more CPUs waiting)";
  return out;
}

}  // namespace vfssim::models
