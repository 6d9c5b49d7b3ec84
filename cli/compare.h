// `vfssim compare FILE --base A --new B [--cpus N] [--reps N] [--variant V] [--json]`:
// two strategies of a scenario at one CPU count, side by side in the
// format of the 0-day robot's (LKP) comparisons, with each one's
// bottleneck and next bottleneck (results/review.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/experiment/experiment.h"
#include "results/store.h"

namespace vfssim::report {

int cmd_compare(const std::vector<std::string>& args);

// The LKP rows of two sides' replications of a point: throughput (named
// `throughput_metric`), the top perf-profile chains and lock_stat wait
// totals, each as mean, %stddev and %change (base, neu, variant and cpus
// left empty for the caller). `vfssim compare` and `vfssim diff`.
// One row as compare --json and diff --json print it (change_pct null when undefined; change_pp,
// percentage points, for perf-profile rows, null for others).
nlohmann::json lkp_row_json(const Store::ComparisonRow& r);

std::vector<Store::ComparisonRow> lkp_rows(const std::vector<models::PointResult>& base_reps,
                                           const std::vector<models::PointResult>& new_reps,
                                           const std::string& throughput_metric);

// The rows in LKP's layout (the 0-day robot's comparison table), under
// the two sides' labels: `vfssim compare` and `vfssim diff`.
void print_lkp_table(std::ostream& os, const std::string& base_label, const std::string& new_label,
                     const std::vector<Store::ComparisonRow>& rows);

// Mean, and sample standard deviation over the mean in percent (LKP's %stddev).
double mean(const std::vector<double>& v);
double stddev_pct(const std::vector<double>& v);

}  // namespace vfssim::report
