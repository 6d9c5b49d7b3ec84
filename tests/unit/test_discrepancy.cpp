// The model's error (results/discrepancy.h, issue 27): shrinkage weights,
// leave-one-case-out, and coverage on a synthetic corpus whose error
// distribution is known.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "results/discrepancy.h"

using namespace vfssim::report;

namespace {

DiscrepancyRecord rec(const std::string& scenario, const std::string& kind, const std::string& bound, double d) {
  return {scenario, scenario + "-" + std::to_string(d), kind, bound, d};
}

// `cases` cases of `per` value figures each; the model's log error is
// N(0, sigma) per figure plus a case effect N(0, tau) shared by its figures.
std::vector<FigureInput> synthetic(int cases, int per, double sigma, double tau, unsigned seed,
                                   const std::string& bound = "spinlock") {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sigma), shared(0, tau);
  std::vector<FigureInput> out;
  for (int c = 0; c < cases; ++c) {
    const double effect = tau > 0 ? shared(rng) : 0;
    for (int i = 0; i < per; ++i) {
      FigureInput f;
      // Appended, not "case" + to_string(c): GCC 12 at -O3 warns a false
      // -Wrestrict on operator+(const char*, string&&) (GCC bug 105329).
      f.scenario = "case";
      f.scenario += std::to_string(c);
      f.kind = "value";
      f.bound = bound;
      f.predicted = 1000.0 * (1 + i);
      f.reported = f.predicted * std::exp(effect + noise(rng));
      f.scored = true;
      std::string id = "f";
      id += std::to_string(i);
      f.record = DiscrepancyRecord{f.scenario, id, f.kind, f.bound,
                                   std::log(f.reported / f.predicted)};
      out.push_back(f);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("discrepancy: a class's weight is m / (m + k) for m cases, and its quantiles shrink toward the kind class's") {
  // One record a case here: m = n.
  std::vector<DiscrepancyRecord> r;
  for (int i = 0; i < 30; ++i) r.push_back(rec("a" + std::to_string(i), "value", "spinlock", 0.0));
  for (int i = 0; i < 5; ++i) r.push_back(rec("b" + std::to_string(i), "value", "line", 1.0));
  const Discrepancy d(r, 10);
  CHECK(d.count("value", "line") == 5);
  CHECK(d.weight("value", "line") == doctest::Approx(5.0 / 15));
  CHECK(d.weight("value", "spinlock") == doctest::Approx(30.0 / 40));
  CHECK(d.weight("value", "sleeping") == 0);
  CHECK(d.kind_weight("value") == doctest::Approx(35.0 / 45));
  // The line class is 1.0 throughout, the kind class has 5 of 35 at 1.0: its median is 0.
  // kind class's median (0) shrunk to all (the same records): 0; line: 1/3 * 1 + 2/3 * 0.
  CHECK(d.quantile("value", "line", 0.5) == doctest::Approx(5.0 / 15));
  // An empty class takes its kind class's; an empty kind class the pooled.
  CHECK(d.quantile("value", "sleeping", 0.5) == doctest::Approx(0.0));
  CHECK(d.quantile("ratio", "line", 0.5) == doctest::Approx(d.quantile("value", "uncontended", 0.5)));
  // k = 0: no shrinkage.
  CHECK(Discrepancy(r, 0).quantile("value", "line", 0.5) == doctest::Approx(1.0));
  // No records: no error (a zero-width model band).
  CHECK(Discrepancy({}, 10).quantile("value", "line", 0.9) == 0);
}

TEST_CASE("discrepancy: a new case errs by a case's offset plus a figure's residual (the two convolved)") {
  // Case a: 0 and 0.2 (offset 0.1); case b: 1.0 and 1.2 (offset 1.1). Residuals -0.1, 0.1, -0.1, 0.1.
  // A new case's figure: either offset plus any residual, equally likely:
  // {0, 0, 0.2, 0.2, 1.0, 1.0, 1.2, 1.2}.
  const std::vector<DiscrepancyRecord> r{rec("a", "value", "line", 0.0), rec("a", "value", "line", 0.2),
                                         rec("b", "value", "line", 1.0), rec("b", "value", "line", 1.2)};
  const Discrepancy d(r, 0);
  CHECK(d.count("value", "line") == 4);
  CHECK(d.quantile("value", "line", 1.0 / 9) == doctest::Approx(0.0));  // order statistic (8 + 1) p = 1
  CHECK(d.quantile("value", "line", 4.0 / 9) == doctest::Approx(0.2));
  CHECK(d.quantile("value", "line", 5.0 / 9) == doctest::Approx(1.0));
  CHECK(d.quantile("value", "line", 8.0 / 9) == doctest::Approx(1.2));
  // Weighted by cases, not records: 40 records of one case weigh as one case.
  std::vector<DiscrepancyRecord> many;
  for (int i = 0; i < 40; ++i) many.push_back(rec("one", "value", "spinlock", 0.01 * i));
  many.push_back(rec("x", "value", "line", 0.0));
  const Discrepancy m(many, 2);
  CHECK(m.weight("value", "spinlock") == doctest::Approx(1.0 / 3));
  CHECK(m.kind_weight("value") == doctest::Approx(2.0 / 4));
}

TEST_CASE("discrepancy: quantiles are predictive (order statistic (n + 1) p), not narrower than the records") {
  std::vector<DiscrepancyRecord> r;
  for (int i = 1; i <= 9; ++i) r.push_back(rec("s", "value", "line", i));
  const Discrepancy d(r, 0);
  CHECK(d.quantile("value", "line", 0.1) == doctest::Approx(1.0));  // (9 + 1) * 0.1 = the 1st
  CHECK(d.quantile("value", "line", 0.9) == doctest::Approx(9.0));
  CHECK(d.quantile("value", "line", 0.5) == doctest::Approx(5.0));
  CHECK(d.quantile("value", "line", 0.01) == doctest::Approx(1.0));  // clamped to the extremes
}

TEST_CASE("discrepancy: leave-one-case-out never uses a case's own figures") {
  auto figures = synthetic(12, 5, 0.3, 0.0, 7);
  const auto before = calibrate(figures, nullptr);
  // Case 3's own errors become enormous: its band must not move, every other case's may.
  for (auto& f : figures)
    if (f.scenario == "case3") {
      f.reported *= 50;
      f.record->log_error += std::log(50.0);
    }
  const auto after = calibrate(figures, nullptr);
  bool others_moved = false;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    if (figures[i].scenario == "case3") {
      CHECK(after[i].total.p10 == before[i].total.p10);
      CHECK(after[i].total.p90 == before[i].total.p90);
      CHECK(after[i].in80 == std::optional<bool>(false));  // its band, learned from the others, misses it
    } else if (after[i].total.p90 != before[i].total.p90) {
      others_moved = true;
    }
  }
  CHECK(others_moved);
  // A table is used as given: the case's own records are in it.
  std::vector<DiscrepancyRecord> all;
  for (const auto& f : figures) all.push_back(*f.record);
  const Discrepancy table(all);
  const auto with_table = calibrate(figures, &table);
  CHECK(with_table[0].total.p90 == doctest::Approx(with_table[5].total.p90 / figures[5].predicted * figures[0].predicted));
}

TEST_CASE("discrepancy: leave-one-case-out on a synthetic corpus of known error holds 50% and 80%") {
  // 40 cases of 6 figures, log error N(0, 0.4) per figure and N(0, 0.3) per case.
  const auto figures = synthetic(40, 6, 0.4, 0.3, 11);
  const auto bands = calibrate(figures, nullptr);
  const auto cov = calibration_coverage(figures, bands);
  const double c80 = cov["overall"]["coverage80"].get<double>();
  const double c50 = cov["overall"]["coverage50"].get<double>();
  CHECK(cov["overall"]["scored"].get<std::size_t>() == 240);
  CHECK(c80 > 0.72);
  CHECK(c80 < 0.88);
  CHECK(c50 > 0.40);
  CHECK(c50 < 0.60);
  // The 80% band of a N(0, 0.5) total is exp(2 * 1.2816 * 0.5) = x3.6 wide.
  const double width = cov["overall"]["median_width80"].get<double>();
  CHECK(width > 2.6);
  CHECK(width < 4.8);
  CHECK(cov["by_kind"].contains("value"));
  CHECK(cov["by_class"].contains("value/spinlock"));
}

TEST_CASE("discrepancy: parameter samples and the model's error combine (their convolution)") {
  const std::vector<double> g(kDiscrepancyGrid, std::log(2.0));  // the model is always 2x low
  const Band5 b = combine({1.0, 2.0, 3.0}, g);
  CHECK(b.p50 == doctest::Approx(4.0));
  CHECK(b.p10 == doctest::Approx(2.0));
  CHECK(b.p90 == doctest::Approx(6.0));
  // A symmetric error widens a band of one value.
  std::vector<DiscrepancyRecord> r;
  for (int i = -10; i <= 10; ++i) r.push_back(rec("s" + std::to_string(i), "ratio", "line", 0.05 * i));
  const Discrepancy d(r, 0);
  const Band5 m = combine({10.0}, d.grid("ratio", "line"));
  CHECK(m.p10 < 10.0);
  CHECK(m.p90 > 10.0);
  CHECK(m.p50 == doctest::Approx(10.0).epsilon(0.01));
  // compare's P(new > base): a ratio of 1 is a coin toss; 2x (beyond every error seen) is sure.
  CHECK(d.prob_above_one("ratio", "line", 1.0) == doctest::Approx(0.5).epsilon(0.05));
  CHECK(d.prob_above_one("ratio", "line", 2.0) == doctest::Approx(1.0));
  CHECK(d.prob_above_one("ratio", "line", 0.5) == doctest::Approx(0.0));
}
