// Results helpers: the Student-t quantile and the replication interval
// (results/spread.h), the bottleneck threshold and margin
// (results/review.h), and lock_stat's layout (results/report.h).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/report.h"
#include "results/review.h"
#include "results/spread.h"

using namespace vfssim;

TEST_CASE("t quantiles match the published table (two-sided 95%: p = 0.975)") {
  // NIST/SEMATECH e-Handbook, table of upper critical values of t (1.3.6.7.2).
  struct Row {
    int df;
    double t;
  };
  for (const Row r : {Row{1, 12.706}, Row{2, 4.303}, Row{3, 3.182}, Row{4, 2.776}, Row{9, 2.262}, Row{29, 2.045},
                      Row{100, 1.984}})
    CHECK(report::t_quantile(0.975, r.df) == doctest::Approx(r.t).epsilon(5e-4));
  CHECK(report::t_quantile(0.95, 4) == doctest::Approx(2.132).epsilon(5e-4));
  // The normal limit.
  CHECK(report::t_quantile(0.975, 1000000) == doctest::Approx(1.960).epsilon(5e-4));
  CHECK_THROWS_AS(report::t_quantile(0.975, 0), std::invalid_argument);
  CHECK_THROWS_AS(report::t_quantile(1.0, 3), std::invalid_argument);
}

TEST_CASE("the 95% interval is mean -+ t * s / sqrt(n); none with one replication") {
  CHECK_FALSE(report::ci95(100, 0, 1).has_value());
  CHECK_FALSE(report::stddev_pct(100, 0, 1).has_value());
  CHECK_FALSE(report::stddev_pct(0, 1, 3).has_value());
  const auto ci = report::ci95(100, 10, 5);  // t(0.975, 4) = 2.776: half width 2.776 * 10 / sqrt(5) = 12.42
  REQUIRE(ci.has_value());
  CHECK(ci->first == doctest::Approx(100 - 12.415).epsilon(1e-4));
  CHECK(ci->second == doctest::Approx(100 + 12.415).epsilon(1e-4));
  CHECK(*report::stddev_pct(200, 10, 2) == doctest::Approx(5.0));
}

namespace {

models::PointResult point_with_waits(std::vector<std::pair<std::string, std::int64_t>> waits, std::int64_t cpu_time) {
  models::PointResult p;
  p.cpu_time = sim::Duration{cpu_time};
  for (const auto& [name, t] : waits) {
    models::ProfileEntry e;
    e.detail = name;
    e.object_kind = "lock";
    e.synchronizing = true;
    e.time = sim::Duration{t};
    p.profile.push_back(e);
  }
  return p;
}

}  // namespace

TEST_CASE("a bottleneck is named only at 5% of CPU time or more, with its margin over the second") {
  CHECK(report::kBottleneckThreshold == 0.05);
  // 4.9% synchronizing: no bottleneck.
  CHECK_FALSE(report::find_bottleneck({point_with_waits({{"fd_array", 49}}, 1000)}).has_value());
  const auto b = report::find_bottleneck({point_with_waits({{"a", 300}, {"b", 120}, {"c", 10}}, 1000)});
  REQUIRE(b.has_value());
  CHECK(b->name == "a");
  CHECK(b->share == doctest::Approx(0.30));
  CHECK(b->margin == doctest::Approx(0.18));
  // Alone: the margin is its whole share.
  const auto alone = report::find_bottleneck({point_with_waits({{"a", 60}}, 1000)});
  REQUIRE(alone.has_value());
  CHECK(alone->margin == doctest::Approx(0.06));
  CHECK(report::bottleneck_json(b)["margin"].get<double>() == doctest::Approx(0.18));
}

TEST_CASE("lock_stat prints as /proc/lock_stat: version line, separators, 40-wide names, the kernel's order") {
  models::PointResult p;
  auto lock = [](std::string name, std::uint64_t contentions, std::uint64_t acquisitions) {
    models::LockReport l;
    l.name = std::move(name);
    l.stats.contentions = contentions;
    l.stats.acquisitions = acquisitions;
    l.stats.holds = acquisitions;
    l.stats.wait_total = sim::Duration{contentions * 2'500'000};  // 2.5 us each
    l.stats.hold_total = sim::Duration{acquisitions * 1'000'000};
    return l;
  };
  p.locks = {lock("few", 3, 100), lock("a_rather_long_lock_class_name_of_36c", 50, 60), lock("none", 0, 7)};
  p.contention_points = {{"few", "contention", 12, "mutex_lock <- kernfs_iop_lookup", 3}};
  std::ostringstream os;
  report::print_lock_stat(os, p);
  std::vector<std::string> lines;
  std::istringstream in(os.str());
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() >= 10);
  CHECK(lines[0] == "lock_stat version 0.4");
  const std::string dashes(40 + 1 + 12 * 15, '-');
  CHECK(lines[1] == dashes);
  CHECK(lines[2].substr(0, 41) == std::string(30, ' ') + "class name ");
  CHECK(lines[2].find("holdtime-avg") == lines[2].size() - 12);
  CHECK(lines[3] == dashes);
  CHECK(lines[4].empty());
  // Most contentions first; every name ends at column 40 with its ':'.
  CHECK(lines[5].find("a_rather_long_lock_class_name_of_36c:") == 4);
  CHECK(lines[6].find("few:") == 37);
  // Under "few": a dash line as long as the name, ending at column 40, then its contention point.
  CHECK(lines[7] == std::string(37, ' ') + "---");
  CHECK(lines[8].substr(0, 40) == std::string(37, ' ') + "few");
  CHECK(lines[8].find("[<step 12>] mutex_lock <- kernfs_iop_lookup") != std::string::npos);
  CHECK(lines[9].empty());
  CHECK(lines[10] == std::string(40 + 1 + 12 * 15, '.'));
  CHECK(lines[12].find("none:") == 36);
  // Every row has 12 right-aligned columns of 14 characters after the name, one space apart,
  // ending where the header's titles end.
  for (const std::size_t r : {std::size_t{5}, std::size_t{6}, std::size_t{12}}) {
    CHECK(lines[r].size() == lines[2].size());
    for (std::size_t k = 0; k < 12; ++k) {
      const std::size_t end = 41 + 15 * k + 13;
      CHECK(lines[r][end] != ' ');
      CHECK(lines[2][end] != ' ');
      if (k < 11) CHECK(lines[r][end + 1] == ' ');
    }
  }
  CHECK(lines[6].find("           2.50") != std::string::npos);  // waittime-avg 2.5 us, two decimals
}
