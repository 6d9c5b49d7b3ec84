// Uncertainty bands (docs/uncertainty.md): `vfssim run --uncertainty N`
// draws N samples of a scenario's ranges (its estimated constants,
// models/scenario/scenario.h Range) by Latin hypercube, runs every sweep
// point once per sample, and gives each curve point the 10th, 50th and
// 90th percentiles of the sampled rates (its band) and the constants that
// move it most (Spearman's rank correlation).
//
// The draws depend only on (seed, N, the ranges' names and bounds): a
// sample is the same whatever worker runs it, and every sample runs with
// the seed of replication 0, so a band holds the constants' effect alone
// (common random numbers) and a range with lo == hi gives a zero-width
// band at the plain run's rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/experiment/point_result.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

// The most samples a run may draw (each runs every point once).
constexpr int kMaxUncertaintySamples = 100000;

// Latin hypercube on [0, 1)^K: `n` rows of `names.size()` coordinates; for
// each name, the n coordinates fall one in each stratum [j/n, (j+1)/n)
// (a permutation drawn from the seed and that name), uniform within it.
std::vector<std::vector<double>> latin_hypercube(int n, const std::vector<std::string>& names, std::uint64_t seed);

// A range's value at the unit coordinate u: uniform in [lo, hi], or
// log-uniform when lo > 0 and hi / lo > 3 (a range spanning several
// factors, where "twice or half" are equally likely).
double range_value_at(const Range& r, double u);

// Whether a sample draws anything: a range that is not a fitted constant
// (fitted ones are re-fitted to their figure, refit.h, not drawn).
bool draws_ranges(const Scenario& sc);

// The N samples of the scenario's ranges (Scenario::ranges, by name).
std::vector<RangeSample> draw_samples(const Scenario& sc, int n, std::uint64_t seed);

// The q-quantile (0..1) of `v`, linearly interpolated between order
// statistics (Hyndman-Fan type 7, numpy's default).
double quantile(std::vector<double> v, double q);

// Spearman's rank correlation of x and y (Pearson's of their ranks, ties
// given their mean rank); 0 when either is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Fills the band of a curve point from its sample_rates, and its
// sensitivity from the samples' values of each range (`samples` as
// draw_samples gives them, `ranges` the scenario's).
void summarize_samples(CurvePoint& cp, const std::vector<Range>& ranges, const std::vector<RangeSample>& samples);

}  // namespace vfssim::models
