#include "results/fits.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace vfssim::report {

using nlohmann::json;

std::vector<CurveFit> fit_curves(const std::vector<models::CurvePoint>& curve) {
  std::vector<CurveFit> out;
  std::vector<std::vector<models::CurveSample>> samples;
  for (const auto& cp : curve) {
    std::size_t i = 0;
    while (i < out.size() && !(out[i].strategy == cp.strategy && out[i].variant == cp.variant)) ++i;
    if (i == out.size()) {
      out.push_back(CurveFit{cp.strategy, cp.variant, 0, {}, {}});
      samples.emplace_back();
    }
    samples[i].push_back({static_cast<double>(cp.cpus), cp.ops_per_sec});
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].points = static_cast<int>(samples[i].size());
    out[i].amdahl = models::fit_amdahl(samples[i]);
    out[i].usl = models::fit_usl(samples[i]);
  }
  return out;
}

json fits_json(const std::vector<CurveFit>& fits) {
  json out = json::array();
  for (const auto& f : fits) {
    const double peak = f.usl.peak_cpus();
    if (f.points < kMinFitPoints) {  // two points fit anything: no coefficients
      out.push_back(json{{"strategy", f.strategy}, {"variant", f.variant}, {"amdahl", nullptr}, {"usl", nullptr},
                         {"points", f.points}});
      continue;
    }
    out.push_back(json{{"strategy", f.strategy},
                       {"variant", f.variant},
                       {"points", f.points},
                       {"amdahl", json{{"sigma", f.amdahl.sigma}, {"lambda", f.amdahl.lambda}}},
                       {"usl", json{{"sigma", f.usl.sigma},
                                    {"kappa", f.usl.kappa},
                                    {"lambda", f.usl.lambda},
                                    {"peak_cpus", std::isfinite(peak) ? json(peak) : json(nullptr)}}}});
  }
  return out;
}

std::vector<Store::FitRow> fit_rows(const std::vector<CurveFit>& fits) {
  std::vector<Store::FitRow> out;
  for (const auto& f : fits) {
    if (f.points < kMinFitPoints) continue;
    out.push_back(Store::FitRow{f.strategy, f.variant, "amdahl", f.amdahl.sigma, 0.0, f.amdahl.lambda,
                                std::numeric_limits<double>::infinity()});
    out.push_back(Store::FitRow{f.strategy, f.variant, "usl", f.usl.sigma, f.usl.kappa, f.usl.lambda, f.usl.peak_cpus()});
  }
  return out;
}

void print_fits(std::ostream& os, const std::vector<CurveFit>& fits) {
  if (fits.empty()) return;
  char line[200];
  os << "\nscalability fits (Amdahl; USL, Gunther: X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)))\n";
  std::snprintf(line, sizeof line, "%-28s %12s %12s %12s %12s %14s\n", "curve", "amdahl sigma", "usl sigma",
                "usl kappa", "lambda ops/s", "usl peak CPUs");
  os << line;
  for (const auto& f : fits) {
    const std::string name = f.variant == "default" ? f.strategy : f.strategy + "/" + f.variant;
    if (f.points < kMinFitPoints) {
      std::snprintf(line, sizeof line, "%-28s  no fit: %d CPU count%s (a fit needs at least %d)\n", name.c_str(),
                    f.points, f.points == 1 ? "" : "s", kMinFitPoints);
      os << line;
      continue;
    }
    const double peak = f.usl.peak_cpus();
    char peak_text[32];
    if (std::isfinite(peak)) std::snprintf(peak_text, sizeof peak_text, "%.1f", peak);
    else std::snprintf(peak_text, sizeof peak_text, "inf");
    std::snprintf(line, sizeof line, "%-28s %12.4g %12.4g %12.4g %12.0f %14s\n", name.c_str(), f.amdahl.sigma,
                  f.usl.sigma, f.usl.kappa, f.usl.lambda, peak_text);
    os << line;
  }
}

}  // namespace vfssim::report
