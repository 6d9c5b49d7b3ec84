// Amdahl and Universal Scalability Law fits of a throughput curve X(N).
//
//   USL:     X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1))
//   Amdahl:  X(N) = lambda N / (1 + sigma (N-1))            (kappa = 0)
//
// sigma is contention (the serial fraction), kappa coherency (crosstalk:
// the cost that grows with pairs of CPUs and makes a curve retrograde),
// lambda the rate of one CPU. Fitted as Gunther does it (N. J. Gunther,
// "Guerrilla Capacity Planning", Springer 2007, ch. 5-6; "A General Theory
// of Computational Scalability Based on Rational Functions",
// arXiv:0808.1431): with the relative capacity C(N) = X(N)/X(1), the
// deviation from linearity
//
//   N/C(N) - 1 = sigma (N-1) + kappa N (N-1)
//
// is linear in (sigma, kappa) with no intercept: ordinary least squares
// (Eigen) constrained to sigma, kappa >= 0 (the best of the feasible
// active sets, which is exact non-negative least squares for two
// unknowns). lambda = X(1).
//
// A curve without an N = 1 point has no X(1): then N/X(N) = 1/lambda +
// (sigma/lambda)(N-1) + (kappa/lambda) N (N-1) is fitted for all three,
// with the same non-negativity on sigma and kappa.
//
// The USL peak is at N* = sqrt((1 - sigma)/kappa): infinite when kappa = 0
// (the curve never turns down), 1 when sigma >= 1.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace vfssim::models {

struct CurveSample {
  double cpus = 1;  // N
  double rate = 0;  // X(N)
};

struct AmdahlFit {
  double sigma = 0;
  double lambda = 0;
  double operator()(double n) const { return lambda * n / (1 + sigma * (n - 1)); }
};

struct UslFit {
  double sigma = 0;
  double kappa = 0;
  double lambda = 0;
  double operator()(double n) const { return lambda * n / (1 + sigma * (n - 1) + kappa * n * (n - 1)); }
  double peak_cpus() const {
    if (sigma >= 1) return 1;
    if (kappa <= 0) return std::numeric_limits<double>::infinity();
    return std::sqrt((1 - sigma) / kappa);
  }
};

namespace fit_detail {

// Least squares A x ~ b with x[j] >= 0 for the columns j flagged in
// `nonneg` (at most a few: every active set is tried and the feasible one
// with the smallest residual wins).
inline Eigen::VectorXd nonneg_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                            const std::vector<bool>& nonneg) {
  const int k = static_cast<int>(a.cols());
  std::vector<int> constrained;
  for (int j = 0; j < k; ++j)
    if (nonneg[static_cast<std::size_t>(j)]) constrained.push_back(j);
  Eigen::VectorXd best = Eigen::VectorXd::Zero(k);
  double best_residual = std::numeric_limits<double>::infinity();
  const unsigned subsets = 1u << constrained.size();
  for (unsigned mask = 0; mask < subsets; ++mask) {
    // Columns fixed at zero: the constrained ones whose bit is set.
    std::vector<int> free_cols;
    for (int j = 0; j < k; ++j) {
      bool zero = false;
      for (std::size_t c = 0; c < constrained.size(); ++c)
        if (constrained[c] == j && (mask >> c & 1u)) zero = true;
      if (!zero) free_cols.push_back(j);
    }
    Eigen::VectorXd x = Eigen::VectorXd::Zero(k);
    if (!free_cols.empty()) {
      Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(free_cols.size()));
      for (std::size_t c = 0; c < free_cols.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = a.col(free_cols[c]);
      const Eigen::VectorXd xs = sub.colPivHouseholderQr().solve(b);
      for (std::size_t c = 0; c < free_cols.size(); ++c) x[free_cols[c]] = xs[static_cast<Eigen::Index>(c)];
    }
    bool feasible = true;
    for (int j : constrained)
      if (x[j] < 0) feasible = false;
    if (!feasible) continue;
    const double residual = (a * x - b).squaredNorm();
    // Ties (exact fits) go to the set with more free columns: mask 0 first.
    if (!std::isfinite(best_residual) || residual < best_residual - 1e-12 * (1 + best_residual)) {
      best_residual = residual;
      best = x;
    }
  }
  // Round-off: a constrained term whose whole contribution is below 1e-9 of
  // the data is zero (an exact Amdahl curve must fit kappa = 0, not 1e-20).
  const double scale = b.cwiseAbs().maxCoeff();
  for (int j : constrained)
    if (std::abs(best[j]) * a.col(j).cwiseAbs().maxCoeff() <= 1e-9 * scale) best[j] = 0;
  return best;
}

// X(1): the mean rate of the samples at N = 1, or 0 when there are none.
inline double rate_at_one(const std::vector<CurveSample>& pts) {
  double sum = 0;
  int n = 0;
  for (const auto& p : pts)
    if (p.cpus == 1) {
      sum += p.rate;
      ++n;
    }
  return n ? sum / n : 0.0;
}

// Fits (sigma, kappa, lambda); with_kappa false gives Amdahl.
inline UslFit fit(const std::vector<CurveSample>& all, bool with_kappa) {
  std::vector<CurveSample> pts;
  for (const auto& p : all)
    if (p.cpus >= 1 && p.rate > 0 && std::isfinite(p.rate)) pts.push_back(p);
  UslFit f;
  if (pts.empty()) return f;
  const double x1 = rate_at_one(pts);
  const auto rows = static_cast<Eigen::Index>(pts.size());
  if (x1 > 0) {
    // Gunther: N/C(N) - 1 = sigma (N-1) + kappa N (N-1), through the origin.
    const int k = with_kappa ? 2 : 1;
    Eigen::MatrixXd a(rows, k);
    Eigen::VectorXd b(rows);
    for (Eigen::Index i = 0; i < rows; ++i) {
      const double n = pts[static_cast<std::size_t>(i)].cpus;
      const double c = pts[static_cast<std::size_t>(i)].rate / x1;
      a(i, 0) = n - 1;
      if (with_kappa) a(i, 1) = n * (n - 1);
      b[i] = n / c - 1;
    }
    const Eigen::VectorXd x = nonneg_least_squares(a, b, std::vector<bool>(static_cast<std::size_t>(k), true));
    f.sigma = x[0];
    f.kappa = with_kappa ? x[1] : 0.0;
    f.lambda = x1;
    return f;
  }
  // No X(1): N/X(N) = 1/lambda + (sigma/lambda)(N-1) + (kappa/lambda) N (N-1).
  const int k = with_kappa ? 3 : 2;
  Eigen::MatrixXd a(rows, k);
  Eigen::VectorXd b(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double n = pts[static_cast<std::size_t>(i)].cpus;
    a(i, 0) = 1;
    a(i, 1) = n - 1;
    if (with_kappa) a(i, 2) = n * (n - 1);
    b[i] = n / pts[static_cast<std::size_t>(i)].rate;
  }
  std::vector<bool> nonneg(static_cast<std::size_t>(k), true);
  nonneg[0] = false;
  const Eigen::VectorXd x = nonneg_least_squares(a, b, nonneg);
  if (x[0] <= 0) {  // degenerate: fall back to linear scaling from the smallest N
    std::size_t lo = 0;
    for (std::size_t i = 1; i < pts.size(); ++i)
      if (pts[i].cpus < pts[lo].cpus) lo = i;
    f.lambda = pts[lo].rate / pts[lo].cpus;
    return f;
  }
  f.lambda = 1 / x[0];
  f.sigma = x[1] / x[0];
  f.kappa = with_kappa ? x[2] / x[0] : 0.0;
  return f;
}

}  // namespace fit_detail

inline UslFit fit_usl(const std::vector<CurveSample>& pts) { return fit_detail::fit(pts, true); }

inline AmdahlFit fit_amdahl(const std::vector<CurveSample>& pts) {
  const UslFit u = fit_detail::fit(pts, false);
  return AmdahlFit{u.sigma, u.lambda};
}

}  // namespace vfssim::models
