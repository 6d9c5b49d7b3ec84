#include "models/experiment/figure.h"

#include <limits>

namespace vfssim::models {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::vector<Expectation::PointRef> figure_reads(const Expectation& e) {
  std::vector<Expectation::PointRef> out;
  auto add = [&](Expectation::PointRef ref) {
    out.push_back(ref);
    if (e.metric == "speedup") {
      ref.cpus = 1;
      out.push_back(ref);
    }
  };
  if (e.kind == "peak") {
    for (int c : e.peak_cpus) {
      auto ref = e.new_point;
      ref.cpus = c;
      add(ref);
    }
    return out;
  }
  add(e.new_point);
  if (e.kind == "ratio" || e.kind == "change") add(e.base_point);
  return out;
}

double mean_ops(const std::vector<PointResult>& reps) {
  double ops = 0;
  for (const auto& r : reps) ops += r.ops_per_sec;
  return ops / static_cast<double>(reps.size());
}

// Whole frames: `nameidata_drop_rcu` is the chain that starts with that
// frame, not `nameidata_drop_rcu_last <- ...`.
bool chain_starts_with(const std::string& chain, const std::string& prefix) {
  if (chain.rfind(prefix, 0) != 0) return false;
  return chain.size() == prefix.size() || chain.compare(prefix.size(), 4, " <- ") == 0;
}

double point_metric(const std::vector<PointResult>& reps, const std::string& metric, int cpus) {
  const double ops = mean_ops(reps);
  if (metric == "ops_per_sec") return ops;
  if (metric == "us_per_op") return ops > 0 ? 1e6 * cpus / ops : std::numeric_limits<double>::infinity();
  const std::string prefix = metric.substr(std::string("share:").size());
  double share = 0;
  for (const auto& r : reps) {
    if (r.cpu_time.count() <= 0) continue;
    std::int64_t t = 0;
    for (const auto& p : r.profile)
      if (chain_starts_with(p.chain, prefix)) t += p.time.count();
    share += static_cast<double>(t) / static_cast<double>(r.cpu_time.count());
  }
  return share / static_cast<double>(reps.size());
}

double read_metric(const Expectation& e, const std::vector<const std::vector<PointResult>*>& reads, std::size_t k) {
  if (e.metric != "speedup") return point_metric(*reads[k], e.metric, figure_reads(e)[k].cpus);
  const double one = mean_ops(*reads[k + 1]);
  return one > 0 ? mean_ops(*reads[k]) / one : kNaN;
}

double figure_value(const Expectation& e, const std::vector<const std::vector<PointResult>*>& reads) {
  if (e.kind == "value") return read_metric(e, reads, 0);
  if (e.kind != "ratio" && e.kind != "change") return kNaN;
  const double base = read_metric(e, reads, e.metric == "speedup" ? 2 : 1);
  return base != 0 ? read_metric(e, reads, 0) / base : kNaN;
}

}  // namespace vfssim::models
