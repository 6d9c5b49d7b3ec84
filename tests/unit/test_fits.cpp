// Amdahl and USL fits (models/experiment/fits.h): exact recovery of the
// parameters of synthetic curves, the non-negativity clamps, the peak.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "models/experiment/fits.h"

using namespace vfssim::models;

namespace {

std::vector<CurveSample> usl_curve(double sigma, double kappa, double lambda, const std::vector<double>& cpus) {
  const UslFit truth{sigma, kappa, lambda};
  std::vector<CurveSample> out;
  for (double n : cpus) out.push_back({n, truth(n)});
  return out;
}

const std::vector<double> kPowers = {1, 2, 4, 8, 16, 32, 64};

}  // namespace

TEST_CASE("USL fit recovers sigma, kappa and lambda of a synthetic curve exactly") {
  struct Case {
    double sigma, kappa, lambda;
  };
  for (const Case c : {Case{0.05, 0.001, 250000}, Case{0.3, 0.0002, 1e6}, Case{0.0, 0.01, 42}, Case{0.02, 0.0, 3e5},
                       Case{0.0, 0.0, 1000}}) {
    CAPTURE(c.sigma);
    CAPTURE(c.kappa);
    const UslFit f = fit_usl(usl_curve(c.sigma, c.kappa, c.lambda, kPowers));
    CHECK(f.sigma == doctest::Approx(c.sigma).epsilon(1e-9));
    CHECK(f.kappa == doctest::Approx(c.kappa).epsilon(1e-9));
    CHECK(f.lambda == doctest::Approx(c.lambda).epsilon(1e-12));
  }
}

TEST_CASE("USL fit without an N = 1 point fits lambda too") {
  const UslFit f = fit_usl(usl_curve(0.08, 0.0005, 123456, {2, 6, 12, 24, 48, 96}));
  CHECK(f.sigma == doctest::Approx(0.08).epsilon(1e-9));
  CHECK(f.kappa == doctest::Approx(0.0005).epsilon(1e-9));
  CHECK(f.lambda == doctest::Approx(123456).epsilon(1e-9));
}

TEST_CASE("Amdahl fit recovers sigma and lambda of an Amdahl curve exactly") {
  for (double sigma : {0.0, 0.01, 0.1, 0.5}) {
    CAPTURE(sigma);
    const AmdahlFit f = fit_amdahl(usl_curve(sigma, 0.0, 5e5, kPowers));
    CHECK(f.sigma == doctest::Approx(sigma).epsilon(1e-9));
    CHECK(f.lambda == doctest::Approx(5e5));
    CHECK(f(64) == doctest::Approx(5e5 * 64 / (1 + sigma * 63)));
  }
}

TEST_CASE("the peak of a USL curve is sqrt((1-sigma)/kappa)") {
  const UslFit f = fit_usl(usl_curve(0.1, 0.001, 1e5, kPowers));
  CHECK(f.peak_cpus() == doctest::Approx(std::sqrt(0.9 / 0.001)).epsilon(1e-9));
  // The fitted curve is highest at the integer next to the peak.
  const double peak = f.peak_cpus();
  CHECK(f(std::floor(peak)) > f(std::floor(peak) - 2));
  CHECK(f(std::ceil(peak)) > f(std::ceil(peak) + 2));
  CHECK(std::isinf(fit_usl(usl_curve(0.1, 0.0, 1e5, kPowers)).peak_cpus()));
  CHECK(UslFit{1.2, 0.01, 1}.peak_cpus() == 1);
}

TEST_CASE("fits clamp sigma and kappa at zero") {
  // Superlinear scaling (C(N) > N): unconstrained sigma would be negative.
  std::vector<CurveSample> super;
  for (double n : kPowers) super.push_back({n, 100 * std::pow(n, 1.1)});
  const UslFit u = fit_usl(super);
  CHECK(u.sigma == 0);
  CHECK(u.kappa == 0);
  CHECK(fit_amdahl(super).sigma == 0);
  // A curve bending up after a plateau: negative kappa is refused, sigma stays.
  std::vector<CurveSample> bend = usl_curve(0.2, 0.0, 1000, kPowers);
  bend.back().rate *= 1.5;
  const UslFit b = fit_usl(bend);
  CHECK(b.kappa == 0);
  CHECK(b.sigma > 0);
  CHECK(b.sigma < 0.2);
}

TEST_CASE("degenerate curves give finite fits") {
  CHECK(fit_usl({}).lambda == 0);
  const UslFit one = fit_usl({{1, 500}});
  CHECK(one.lambda == 500);
  CHECK(one.sigma == 0);
  CHECK(one.kappa == 0);
  const UslFit zero = fit_usl({{1, 500}, {2, 0}, {4, 900}});  // a zero rate is ignored
  CHECK(std::isfinite(zero.sigma));
  CHECK(std::isfinite(zero.kappa));
}
