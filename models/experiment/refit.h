// A sample of the ranges, and the fitted constants re-fitted to it.
//
// A fitted constant (`{estimate: E, range: [LO, HI], fit: FIGURE}`,
// scenario.h Range::fit) was tuned until FIGURE came out of the model with
// the other constants at their estimates. Under --uncertainty those move,
// and a fit kept as written would no longer match its figure: the sampled
// band at the fitted point would hold the drift of a broken fit, and every
// prediction would inherit it. As the one-point fit is part of the model,
// each sample re-does it: it searches the constant in [LO, HI] until
// FIGURE's predicted value equals its reported one, with the sample's
// other values fixed. A figure that cannot be matched in [LO, HI] keeps
// the bound that comes closest (FitResult::converged false).
//
// Only the fitted figure's points are run (replication 0's seed, as every
// sample runs), and the search depends on the sample alone: the same
// sample gives the same fit on any worker. The simulations of the value it
// ends at are the sample's own: kept (SampledScenario::points), they are
// not run again for the sample's curve or figures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

struct FitResult {
  std::string constant, figure;
  double value = 0;      // the re-fitted value (picoseconds for a time)
  double predicted = 0;  // the figure's predicted value with it
  double reported = 0;
  int evaluations = 0;   // simulations of the figure's points
  bool converged = false;
};

// Results of points of one sample, by point_fingerprint: the re-fits'
// simulations, kept so that a point of the sampled scenario with the same
// fingerprint (the same simulation, replication 0's seed) is not run again.
using SamplePoints = std::map<std::string, PointResult>;

// Relative error of a re-fit figure accepted as a match: well inside any
// tolerance a figure gives (the search stops there).
constexpr double kRefitTolerance = 0.01;
// The most evaluations one re-fit may take.
constexpr int kMaxRefitEvaluations = 16;

// `sample` with each fitted constant of `base` re-fitted (one pass, in
// the ranges' name order); the fitted values are written into `sample`.
// Returns the sampled scenario (sample_scenario) with them. `points`: the
// simulations of the returned scenario's points the searches ran (those
// of values they did not keep are dropped).
Scenario refit_sample(const Scenario& base, RangeSample& sample, std::uint64_t seed, const PointLimits& limits = {},
                      std::vector<FitResult>* fits = nullptr, SamplePoints* points = nullptr);

// Sample `i` of the `n` an uncertainty sweep seeded `seed` draws: row i of
// the Latin hypercube, or, where the loader refuses it (independent ranges
// may contradict a machine's constraints together), row i of the first of
// up to kSpareHypercubes spare hypercubes that it accepts; then its fits.
struct SampledScenario {
  Scenario scenario;
  RangeSample sample;        // the drawn values and the re-fitted ones
  int refused = 0;           // rows refused before this one
  std::vector<FitResult> fits;
  SamplePoints points;       // the re-fits' simulations of `scenario`'s points
};
constexpr int kSpareHypercubes = 8;
// `refit` false: the drawn values only (what the sensitivities read).
// `drawn`: draw_samples(scenario, n, seed), when the caller drew the
// hypercube once for all its samples (else each call draws all n rows:
// O(n) per sample, O(n^2) for a sweep).
SampledScenario sampled_scenario(const Scenario& scenario, int n, std::uint64_t seed, int i, const PointLimits& limits = {},
                                 bool refit = true, const std::vector<RangeSample>* drawn = nullptr);

}  // namespace vfssim::models
