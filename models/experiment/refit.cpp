#include "models/experiment/refit.h"

#include <algorithm>
#include <cmath>

#include "models/experiment/experiment.h"
#include "models/experiment/figure.h"
#include "models/experiment/uncertainty.h"
#include "sim/rng.h"

namespace vfssim::models {

namespace {

// The figure's predicted value with the constant at `x`; a point whose
// simulation `points` holds (a figure point the constant does not move, a
// value tried twice) is not run again.
double evaluate(const Scenario& base, RangeSample& sample, const Range& c, const Expectation& e, double x,
                std::uint64_t seed, const PointLimits& limits, SamplePoints& points) {
  sample[c.name] = c.time ? std::round(x) : x;
  const Scenario sc = sample_scenario(base, sample);
  const Expectation* fig = nullptr;
  for (const auto& f : sc.expect)
    if (f.id == e.id) fig = &f;
  std::vector<std::vector<PointResult>> runs;
  for (const auto& ref : figure_reads(*fig)) {
    const PointSpec spec{ref.strategy, ref.cpus, 0, rep_seed(seed, 0), ref.variant};
    const std::string fingerprint = point_fingerprint(sc, spec);
    auto it = points.find(fingerprint);
    if (it == points.end()) it = points.emplace(fingerprint, run_point(sc, spec, limits)).first;
    runs.push_back({it->second});
  }
  std::vector<const std::vector<PointResult>*> reads;
  for (const auto& r : runs) reads.push_back(&r);
  return figure_value(*fig, reads);
}

// Solves log g(u) = log reported for u = log(value) in [log lo, log hi]:
// secant steps from the written value, then regula falsi (Illinois) once a
// sign change brackets the root. The figure is monotone in its constant in
// every fit we know of; a flat or non-finite figure stops the search.
FitResult refit_one(const Scenario& base, RangeSample& sample, const Range& c, const Expectation& e, std::uint64_t seed,
                    const PointLimits& limits, SamplePoints& points) {
  FitResult out{c.name, e.id, c.estimate, 0, e.reported, 0, false};
  const double lo = std::log(c.lo), hi = std::log(c.hi), target = std::log(e.reported);
  const double tol = std::log1p(std::min(kRefitTolerance, e.tolerance / 4));
  double best_err = INFINITY;
  auto h = [&](double u) {
    const double x = std::exp(std::clamp(u, lo, hi));
    const double g = evaluate(base, sample, c, e, x, seed, limits, points);
    ++out.evaluations;
    const double r = g > 0 && std::isfinite(g) ? std::log(g) - target : NAN;
    if (std::isfinite(r) && std::abs(r) < best_err) {
      best_err = std::abs(r);
      out.value = c.time ? std::round(x) : x;
      out.predicted = g;
    }
    return r;
  };
  double u0 = std::log(c.estimate), h0 = h(u0);
  if (!std::isfinite(h0) || std::abs(h0) <= tol) {
    out.converged = std::isfinite(h0);
  } else {
    // A second point 10% away, inside the range (a range narrower than
    // that is searched from its other end).
    const double u1_first = std::clamp(u0 + (u0 + 0.1 <= hi ? 0.1 : -0.1), lo, hi);
    double u1 = u1_first == u0 ? (u0 == lo ? hi : lo) : u1_first;
    double h1 = u1 == u0 ? h0 : h(u1);
    bool bracketed = false;
    while (std::isfinite(h1) && std::abs(h1) > tol && out.evaluations < kMaxRefitEvaluations) {
      if (h0 * h1 < 0) bracketed = true;
      if (h1 == h0) break;  // the figure does not move with the constant here
      double u2 = u1 - h1 * (u1 - u0) / (h1 - h0);
      if (!bracketed) {
        u2 = std::clamp(u2, lo, hi);
        if (u2 == u1) break;  // the root lies past a bound
        u0 = u1, h0 = h1;
        u1 = u2, h1 = h(u2);
        continue;
      }
      // [u0, u1] brackets the root: the new point replaces u1, and u0
      // becomes the old u1 if the sign changed there; a u0 kept again has
      // its h halved (Illinois), so the bracket shrinks from both ends.
      const double h2 = h(u2);
      if (!std::isfinite(h2)) break;
      if (h2 * h1 < 0) u0 = u1, h0 = h1;
      else h0 /= 2;
      u1 = u2, h1 = h2;
    }
    out.converged = best_err <= tol;
  }
  sample[c.name] = out.value;
  return out;
}

}  // namespace

Scenario refit_sample(const Scenario& base, RangeSample& sample, std::uint64_t seed, const PointLimits& limits,
                      std::vector<FitResult>* fits, SamplePoints* points) {
  SamplePoints run;
  for (const auto& c : base.ranges) {
    if (c.fit.empty()) continue;
    const Expectation* e = nullptr;
    for (const auto& f : base.expect)
      if (f.id == c.fit) e = &f;
    const FitResult r = refit_one(base, sample, c, *e, seed, limits, run);
    if (fits) fits->push_back(r);
  }
  Scenario sc = sample_scenario(base, sample);
  if (points)
    // The fitted figures' points as the sample has them: the simulations
    // of the constants' other values are not the sample's.
    for (const auto& e : sc.expect) {
      if (!e.fitted) continue;
      for (const auto& ref : figure_reads(e)) {
        const PointSpec spec{ref.strategy, ref.cpus, 0, rep_seed(seed, 0), ref.variant};
        if (auto it = run.find(point_fingerprint(sc, spec)); it != run.end()) points->insert(run.extract(it));
      }
    }
  return sc;
}

SampledScenario sampled_scenario(const Scenario& scenario, int n, std::uint64_t seed, int i, const PointLimits& limits,
                                 bool refit, const std::vector<RangeSample>* drawn) {
  SampledScenario out;
  for (int k = 0;; ++k) {
    // Spare hypercube k (k > 0) has a seed of its own; row i of it.
    const std::uint64_t s = k == 0 ? seed : sim::stable_hash("uncertainty spare " + std::to_string(k) + " " + std::to_string(seed));
    out.sample = k == 0 && drawn ? drawn->at(static_cast<std::size_t>(i)) : draw_samples(scenario, n, s).at(static_cast<std::size_t>(i));
    try {
      out.scenario = sample_scenario(scenario, out.sample);
      break;
    } catch (const ScenarioError& e) {  // the ranges are each valid; two of them drawn together may not be
      if (++out.refused <= kSpareHypercubes) continue;
      throw ScenarioError(e.mark(), "sample " + std::to_string(i) + " of " + std::to_string(n) + " of the ranges, and " +
                                        std::to_string(kSpareHypercubes) + " spare draws of it: " + e.problem(),
                          e.expected() + " (narrow the ranges so that every value in them is valid together)");
    }
  }
  bool fitted = false;
  if (refit)
    for (const auto& c : scenario.ranges) fitted = fitted || !c.fit.empty();
  if (fitted) out.scenario = refit_sample(scenario, out.sample, seed, limits, &out.fits, &out.points);
  return out;
}

}  // namespace vfssim::models
