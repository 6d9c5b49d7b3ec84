// What a run shows people and scripts: the curve table, a terminal chart,
// lock_stat and perf-style tables, and the JSON document of `--json`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

struct RunInfo {
  std::uint64_t seed = 1;
  int reps = 1;
  // Profile entries per point in the document (largest first); none: all
  // (the default: the same profile as Python and the database hold).
  std::optional<std::size_t> profile_top;
};

// The `vfssim run --json` document. Deterministic: no wall-clock field.
nlohmann::json run_json(const models::Scenario& sc, const RunInfo& info, const std::vector<models::CurvePoint>& curve);

// A point's stats as the document shows them, one key per table of
// results/schema.h: lock_stat, lock_stat_rw, contention_points, lines, seqcounts, pools, profile (its first
// `profile_top` entries; none: all), rcu.
nlohmann::json stats_json(const models::PointResult& p, std::optional<std::size_t> profile_top = std::nullopt);

// ops/s, stddev (% of the mean), the 95% CI (Student t; "-" for both with
// one replication), speedup over the curve's 1-CPU rate, efficiency.
// --uncertainty: {"samples": N, "ranges": [{"name", "unit", "estimate", "low", "high", "why"}]} (times in us).
nlohmann::json uncertainty_json(const models::Scenario& sc, int samples);
// --uncertainty-report: a point's ranges by |Spearman rho| with its rate: [{"constant", "rho"}].
nlohmann::json sensitivity_json(const models::CurvePoint& cp);
// The `top` constants that move each point most, under the curve table.
void print_sensitivity(std::ostream& os, const std::vector<models::CurvePoint>& curve, std::size_t top);
void print_curve_table(std::ostream& os, const std::vector<models::CurvePoint>& curve);
// ops/s against CPUs (log2 axis), one letter per strategy.
void print_chart(std::ostream& os, const std::vector<models::CurvePoint>& curve, int width = 64, int height = 18);
// One point's lock_stat as /proc/lock_stat prints it (lockdep_proc.c,
// version 0.4; times in microseconds): classes by contentions, -W/-R rows
// of read/write locks, contention and contending points.
void print_lock_stat(std::ostream& os, const models::PointResult& p);
// perf-report style: share of CPU time per step, with its call chain.
void print_profile(std::ostream& os, const models::PointResult& p, std::size_t top = 8);

std::string format_rate(double ops_per_sec);
// "strategy", or "strategy/variant" outside the default variant: one curve.
std::string series_name(const std::string& strategy, const std::string& variant);
// "1 CPU", "2 CPUs": n and the noun, plural unless n is 1.
std::string count_of(std::size_t n, const std::string& noun);

}  // namespace vfssim::report
