// What a reported figure reads from the model and the value it predicts:
// the one place a point's metric (ops/s, us per op, speedup, a profile
// share) is computed. results/validation.h scores figures with it, and
// refit.h matches fitted figures with it.
#pragma once

#include <string>
#include <vector>

#include "models/experiment/point_result.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

// The points a figure reads, in the order its metric uses them: the point
// (each of a peak's CPU counts), a ratio's or change's base after it, and
// for a speedup each point followed by its curve's 1-CPU point.
std::vector<Expectation::PointRef> figure_reads(const Expectation& e);

// Mean ops/s of a point's replications.
double mean_ops(const std::vector<PointResult>& reps);

// A point's metric over its replications (ops_per_sec, us_per_op,
// share:PREFIX); a speedup is read_metric's, over two reads.
// Whether the profile chain `chain` ("a <- b <- c") starts with the whole
// frames of `prefix` ("a <- b"): the `share:` metric's match.
bool chain_starts_with(const std::string& chain, const std::string& prefix);
double point_metric(const std::vector<PointResult>& reps, const std::string& metric, int cpus);

// The figure's metric at its k-th read (reads[i] the replications of
// figure_reads(e)[i]); a speedup divides by read k + 1, its 1-CPU point.
double read_metric(const Expectation& e, const std::vector<const std::vector<PointResult>*>& reads, std::size_t k);

// The predicted value of a value, ratio or change figure (1 + change) from
// its reads; NaN for other kinds, or when a ratio's base is zero.
double figure_value(const Expectation& e, const std::vector<const std::vector<PointResult>*>& reads);

}  // namespace vfssim::models
