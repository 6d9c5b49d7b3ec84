// The results database: an embedded SQLite file (default ./vfssim.db).
//
// Schema (docs/results-db.md), versioned with PRAGMA user_version and
// migrated forward on open:
//   runs        one row per `vfssim run`: scenario name, path, text and hash,
//               machine, seed, replications, arguments, tool version, wall time
//   curve       per (run, strategy, cpus): mean ops/s, stddev, events
//   points      per replication: ops/s, ops, events, stop reason
//   lock_stats  per replication and lock: /proc/lock_stat columns
//   profile     per replication and code-path step: CPU time and share
//   validations, validation_figures   `vfssim validate` results (schema 2)
//   fits        Amdahl and USL fits of each curve of a run (schema 2)
//   line_stats, seqcount_stats, rcu_stats   the rest of each replication, so
//               that --resume reads back what the sweep produced (schema 3)
//   pool_stats  per replication and free-page pool: allocations, direct
//               reclaims, pages (schema 4, which also adds validation_figures.bound)
//   comparisons `vfssim compare`'s LKP rows; its replications are a run (schema 5)
//   runs.resolved_scenario, resolved_hash   the scenario as resolved (schema 7)
//   runs.reason, host, pid   why a run failed or stopped; who wrote it (schema 8)
//   curve.stddev_pct, ci95_lo/hi, bottleneck*, comparisons.change_pp, lock_stat_rw,
//   contention_points   the spread, the bottleneck, lock_stat's -R/-W rows and contention points (schema 9)
//   role_stats  per replication and role: tasks, ops, ops/s (schema 10)
//   curve.band_p10/p50/p90   --uncertainty's band (schema 11)
//   curve.sample_rates       --uncertainty's rate of each sample, JSON (schema 13)
//   task_stats  per replication: per-task rates, fairness, per-op latency quantiles (schema 12)
//   role_stats.ops_per_sec_min/median/max, fairness, jain   a role's task distribution (schema 14)
// WAL mode; a run's rows are written in one transaction per curve point,
// as soon as the point finishes (cli/run_durable.cpp).
#pragma once

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 14;

  // Opens or creates the database and migrates it. A file that is not a
  // vfssim database (or is damaged) raises StoreError and is left untouched.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::int64_t begin_run(const models::Scenario& sc, std::uint64_t seed, int reps, const std::string& args);
  void add_point(std::int64_t run_id, const models::CurvePoint& cp);
  void finish_run(std::int64_t run_id, double wall_seconds);

  // Whether a file is there (history, show, diff and export never create one).
  static bool exists(const std::string& path);
  // Every stored run, compare and validation, oldest first.
  struct HistoryRow {
    std::string kind;  // run | compare | validate
    std::int64_t id = 0;
    // status: running | done | failed | interrupted, or abandoned: stored
    // 'running' by a process of this host that no longer exists.
    std::string created_at, scenario, machine, tool_version, status;
    std::string reason;  // why it failed or stopped; "" otherwise
    std::optional<std::uint64_t> seed;
    std::optional<int> replications;
    int count = 0;  // curve points (runs, compares) or figures (validations)
    std::optional<double> wall_seconds;
  };
  std::vector<HistoryRow> history();
  // A run's row (runs of `run` and `compare`).
  struct StoredRun {
    std::int64_t id = 0;
    std::string kind;  // run | compare
    std::string created_at, tool_version, scenario, scenario_path, scenario_hash, scenario_text, machine, args, sweep,
        status, resolved_hash, reason;  // status and reason as in HistoryRow
    std::uint64_t seed = 0;
    int replications = 0;
    std::optional<double> wall_seconds;
    std::optional<std::string> resolved_scenario;  // none for runs stored before schema 7
  };
  std::optional<StoredRun> stored_run(std::int64_t id);

  // `vfssim validate` (schema 2): one validations row, one row per figure.
  struct ValidationFigureRow {
    std::string scenario, figure;
    double reported = 0, predicted = 0;
    bool fitted = false, within_tolerance = false;
    std::optional<bool> direction_ok;  // NULL when the figure claims no direction
    double error = 0, tolerance = 0;
    std::string bound = "about";  // about | at_least | at_most
    std::string kind;             // value | ratio | change | peak | spread (schema 6)
    bool restated = false;        // the same simulation as a fitted figure or an earlier prediction
    std::string restates;         // ... that figure's id
    double factor = 1;            // max(p/r, r/p); stored NULL when infinite
    std::string stat;             // a spread's statistic (min_max, fairness, ...); '' (NULL) otherwise (schema 12)
  };
  std::int64_t add_validation(double wall_seconds, const std::string& summary_json,
                              const std::vector<ValidationFigureRow>& figures);
  // Scalability fits of a run's curves (schema 2); model "amdahl" or "usl".
  struct FitRow {
    std::string strategy, variant, model;
    double sigma = 0, kappa = 0, lambda = 0;
    double peak_cpus = 0;  // stored NULL when infinite (kappa = 0)
  };
  void add_fits(std::int64_t run_id, const std::vector<FitRow>& fits);
  // `vfssim compare` (schema 5): its LKP table, one row per metric, in order;
  // change_pct NaN (stored NULL) when the base is 0. A *_stddev_pct is 0
  // with one replication (not measured: the table leaves it blank).
  struct ComparisonRow {
    std::string base, neu, variant;
    int cpus = 0;
    std::string metric;
    double base_mean = 0, base_stddev_pct = 0, new_mean = 0, new_stddev_pct = 0, change_pct = 0;
    // A perf-profile row (values in % of cycles): new - base in percentage
    // points, as LKP prints it (schema 9); NaN for other rows (NULL).
    double change_pp = NAN;
    int base_reps = 0, new_reps = 0;  // replications behind each side (not stored)
  };
  void add_comparison(std::int64_t run_id, const std::vector<ComparisonRow>& rows);

  // Durable sweeps (schema 3; cli/store_durable.cpp). `sweep` names the
  // curve points a run plans, "strategy/variant@cpus ..." in order: with
  // the scenario hash, seed and replications it identifies a sweep.
  std::int64_t begin_run(const models::Scenario& sc, std::uint64_t seed, int reps, const std::string& args,
                         const std::string& sweep);
  // The latest run of that sweep, if any (vfssim run --resume): the same
  // resolved scenario (machine, extends, every parameter), tool version,
  // seed, replications and planned curve points.
  std::optional<std::int64_t> find_run(const models::Scenario& sc, std::uint64_t seed, int reps,
                                       const std::string& sweep);
  // The curve points stored for a run, in the sweep's planned order, each
  // with every replication as the sweep produced it (wall_seconds aside,
  // the same values).
  std::vector<models::CurvePoint> load_curve(std::int64_t run_id);
  // "running", "interrupted" or "failed" and why (reason "" for running);
  // adds this session's wall time.
  void set_status(std::int64_t run_id, const std::string& status, double wall_seconds,
                  const std::string& reason = "");
  std::string run_status(std::int64_t run_id);  // "" before schema 3

 private:
  void exec(const std::string& sql);
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT; an exception rolls back
  // and propagates. Returns what `body` returns.
  template <class Body>
  auto in_transaction(Body&& body) {
    exec("BEGIN IMMEDIATE");
    try {
      if constexpr (std::is_void_v<decltype(body())>) {
        body();
        exec("COMMIT");
      } else {
        auto result = body();
        exec("COMMIT");
        return result;
      }
    } catch (...) {
      // SQLite has already rolled back after some errors (a full disk,
      // SQLITE_FULL): a second ROLLBACK would fail and hide the real error.
      if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace vfssim::report
