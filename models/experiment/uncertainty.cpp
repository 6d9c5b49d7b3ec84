#include "models/experiment/uncertainty.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "sim/rng.h"

namespace vfssim::models {

std::vector<std::vector<double>> latin_hypercube(int n, const std::vector<std::string>& names, std::uint64_t seed) {
  if (n < 1) throw std::invalid_argument("a Latin hypercube needs at least 1 sample, not " + std::to_string(n));
  std::vector<std::vector<double>> out(n, std::vector<double>(names.size()));
  for (std::size_t k = 0; k < names.size(); ++k) {
    // One stream per constant, named by it: adding a range elsewhere in the
    // file does not change this one's draws.
    sim::RngStream rng(seed, "uncertainty:" + names[k], static_cast<std::uint64_t>(n));
    std::vector<int> stratum(n);
    std::iota(stratum.begin(), stratum.end(), 0);
    for (int i = n - 1; i > 0; --i) std::swap(stratum[i], stratum[rng.below(static_cast<std::uint64_t>(i) + 1)]);
    for (int i = 0; i < n; ++i) out[i][k] = (stratum[i] + rng.uniform()) / n;
  }
  return out;
}

double range_value_at(const Range& r, double u) {
  if (r.lo > 0 && r.hi / r.lo > 3) return r.lo * std::pow(r.hi / r.lo, u);
  return r.lo + u * (r.hi - r.lo);
}

bool draws_ranges(const Scenario& sc) {
  return std::any_of(sc.ranges.begin(), sc.ranges.end(), [](const Range& r) { return r.fit.empty(); });
}

std::vector<RangeSample> draw_samples(const Scenario& sc, int n, std::uint64_t seed) {
  // Fitted constants are not drawn: each sample re-fits them (refit.h).
  std::vector<const Range*> drawn;
  std::vector<std::string> names;
  for (const auto& r : sc.ranges)
    if (r.fit.empty()) {
      drawn.push_back(&r);
      names.push_back(r.name);
    }
  const auto unit = latin_hypercube(n, names, seed);
  std::vector<RangeSample> out(n);
  for (int i = 0; i < n; ++i)
    for (std::size_t k = 0; k < drawn.size(); ++k) out[i][names[k]] = range_value_at(*drawn[k], unit[i][k]);
  return out;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

namespace {

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mean = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

void summarize_samples(CurvePoint& cp, const std::vector<Range>& ranges, const std::vector<RangeSample>& samples) {
  if (cp.sample_rates.empty()) return;
  cp.band_p10 = quantile(cp.sample_rates, 0.10);
  cp.band_p50 = quantile(cp.sample_rates, 0.50);
  cp.band_p90 = quantile(cp.sample_rates, 0.90);
  cp.sensitivity.clear();
  for (const auto& r : ranges) {
    if (!r.fit.empty()) continue;  // re-fitted, not drawn: it follows the others
    std::vector<double> x;
    for (const auto& s : samples) {
      const auto it = s.find(r.name);
      x.push_back(it == s.end() ? r.estimate : it->second);
    }
    cp.sensitivity.push_back({r.name, spearman(x, cp.sample_rates)});
  }
  // |rho| largest first; ties by name, so the order is stable.
  std::stable_sort(cp.sensitivity.begin(), cp.sensitivity.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second) > std::abs(b.second);
  });
}

}  // namespace vfssim::models
