// Amdahl and USL fits of each curve of a run (the math is in
// models/experiment/fits.h): the `fits` of `vfssim run --json`, the lines
// under the human table, and the rows of the `fits` table of the store.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"
#include "models/experiment/fits.h"
#include "results/store.h"

namespace vfssim::report {

// Fewer CPU counts than this fit any curve exactly: no coefficients.
inline constexpr int kMinFitPoints = 3;

struct CurveFit {
  std::string strategy, variant;
  int points = 0;  // CPU counts fitted
  models::AmdahlFit amdahl;
  models::UslFit usl;
};

// One fit per (strategy, variant) curve, in curve order.
std::vector<CurveFit> fit_curves(const std::vector<models::CurvePoint>& curve);

// [{"strategy", "variant", "points", "amdahl": {"sigma", "lambda"},
//   "usl": {"sigma", "kappa", "lambda", "peak_cpus"}}]; an infinite
// peak_cpus (kappa = 0) is null; amdahl and usl are null with fewer than
// kMinFitPoints CPU counts.
nlohmann::json fits_json(const std::vector<CurveFit>& fits);

// Rows of the store's `fits` table: an "amdahl" and a "usl" row per curve
// with at least kMinFitPoints CPU counts.
std::vector<Store::FitRow> fit_rows(const std::vector<CurveFit>& fits);

void print_fits(std::ostream& os, const std::vector<CurveFit>& fits);

}  // namespace vfssim::report
