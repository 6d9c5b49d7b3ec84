#include "results/review.h"

#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/parallel.h"

namespace vfssim::report {

using nlohmann::json;

std::optional<Bottleneck> find_bottleneck(const std::vector<models::PointResult>& reps) {
  // CPU time spent synchronizing on each lock or line (the profile's
  // acquire, release, atomic and load time: queueing for the lock, spinning,
  // and moving its cache line, which is where a read-mostly rwsem's cost
  // is), summed over replications, in first-seen order. Time computing
  // while holding a lock is the holder's work, not a wait.
  std::vector<std::pair<Bottleneck, std::int64_t>> waits;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  std::int64_t cpu_time = 0;
  auto add = [&](const std::string& kind, const std::string& name, std::int64_t wait) {
    auto [it, inserted] = index.try_emplace({kind, name}, waits.size());
    if (inserted) waits.push_back({Bottleneck{name, kind, 0}, 0});
    waits[it->second].second += wait;
  };
  for (const auto& r : reps) {
    cpu_time += r.cpu_time.count();
    for (const auto& e : r.profile)
      if (e.synchronizing && (e.object_kind == "lock" || e.object_kind == "line") && !e.detail.empty())
        add(e.object_kind, e.detail, e.time.count());
  }
  const std::pair<Bottleneck, std::int64_t>* best = nullptr;
  const std::pair<Bottleneck, std::int64_t>* second = nullptr;
  for (const auto& w : waits) {
    if (w.second <= 0) continue;
    if (!best || w.second > best->second) {
      second = best;
      best = &w;
    } else if (!second || w.second > second->second) {
      second = &w;
    }
  }
  if (!best || cpu_time <= 0) return std::nullopt;
  auto share = [&](const std::pair<Bottleneck, std::int64_t>* w) {
    return w ? static_cast<double>(w->second) / static_cast<double>(cpu_time) : 0.0;
  };
  if (share(best) < kBottleneckThreshold) return std::nullopt;
  Bottleneck b = best->first;
  b.share = share(best);
  b.margin = b.share - share(second);
  return b;
}

json bottleneck_json(const std::optional<Bottleneck>& b) {
  if (!b) return nullptr;
  return json{{"name", b->name}, {"kind", b->kind}, {"share", b->share}, {"margin", b->margin}};
}

std::string describe(const std::optional<Bottleneck>& b) {
  char buf[128];
  if (!b) {
    std::snprintf(buf, sizeof buf, "nothing waits %.0f%% of CPU time or more", 100.0 * kBottleneckThreshold);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.2f%% of CPU time synchronizing, %.2f points ahead of the next", 100.0 * b->share,
                100.0 * b->margin);
  return b->name + " (" + b->kind + ", " + buf + ")";
}

std::vector<WhatIf> next_bottlenecks(const models::Scenario& sc,
                                     const std::vector<const std::vector<models::PointResult>*>& groups,
                                     unsigned jobs, const models::PointLimits& limits, int depth) {
  std::vector<WhatIf> out(groups.size());
  // current[g]: the replications whose bottleneck the next step removes.
  std::vector<std::vector<models::PointResult>> current(groups.size());
  std::vector<std::optional<Bottleneck>> now(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    now[g] = find_bottleneck(*groups[g]);
    out[g].removed = now[g];
  }
  for (int step = 0; step < depth; ++step) {
    std::vector<models::PointSpec> specs;
    std::vector<std::size_t> group_of;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!now[g]) continue;
      for (const auto& r : step == 0 ? *groups[g] : current[g]) {
        models::PointSpec s = r.spec;  // carries the removals of the steps before
        if (now[g]->kind == "lock") s.free_locks.push_back(now[g]->name);
        else s.private_lines.push_back(now[g]->name);
        specs.push_back(std::move(s));
        group_of.push_back(g);
      }
    }
    if (specs.empty()) break;
    std::vector<models::PointResult> results(specs.size());
    sim::parallel_for(specs.size(), jobs == 0 ? sim::default_jobs() : jobs,
                      [&](std::size_t i) { results[i] = models::run_point(sc, specs[i], limits); });
    for (const auto& r : results)
      if (!r.stop.empty() && !models::finished(r))
        throw std::runtime_error("the run of " + r.spec.strategy + "/" + r.spec.variant + " @ " +
                                 std::to_string(r.spec.cpus) + " CPUs without its bottleneck stopped: " + r.stop +
                                 " (raise --max-events / --max-wall)");
    std::vector<std::vector<models::PointResult>> by_group(groups.size());
    for (std::size_t i = 0; i < results.size(); ++i) by_group[group_of[i]].push_back(std::move(results[i]));
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (by_group[g].empty()) continue;
      ChainStep c{*now[g], 0, find_bottleneck(by_group[g])};
      for (const auto& r : by_group[g]) c.ops_per_sec += r.ops_per_sec;
      c.ops_per_sec /= static_cast<double>(by_group[g].size());
      if (step == 0) {
        out[g].ops_per_sec = c.ops_per_sec;
        out[g].next = c.next;
      }
      now[g] = c.next;
      out[g].chain.push_back(std::move(c));
      current[g] = std::move(by_group[g]);
    }
  }
  return out;
}

json bottleneck_chain_json(const WhatIf& w) {
  json out = json::array();
  for (const auto& c : w.chain) {
    json j = bottleneck_json(c.removed);
    j["ops_per_sec_without"] = c.ops_per_sec;
    out.push_back(std::move(j));
  }
  const std::optional<Bottleneck>& last = w.chain.empty() ? w.removed : w.chain.back().next;
  if (last) {
    json j = bottleneck_json(last);
    j["ops_per_sec_without"] = nullptr;
    out.push_back(std::move(j));
  }
  return out;
}

void print_bottleneck(std::ostream& os, const std::vector<models::PointResult>& reps, const WhatIf* what_if) {
  os << "bottleneck: " << describe(find_bottleneck(reps)) << "\n";
  if (!what_if) return;
  if (what_if->chain.size() > 1) {
    os << "bottleneck chain:";
    const json chain = bottleneck_chain_json(*what_if);
    for (std::size_t i = 0; i < chain.size(); ++i) os << (i ? " -> " : " ") << chain[i]["name"].get<std::string>();
    os << "\n";
  }
  std::string without;  // the removals so far: "A made free, B made private"
  for (const auto& c : what_if->chain) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f", c.ops_per_sec);
    without += (without.empty() ? "" : ", ") + c.removed.name + (c.removed.kind == "lock" ? " made free" : " made private");
    os << "with " << without << ": " << rate << " ops/s, next bottleneck: " << describe(c.next) << "\n";
  }
}

}  // namespace vfssim::report
