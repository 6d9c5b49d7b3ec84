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
// WAL mode; a run's rows are written in one transaction per curve point.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 1;

  // Opens or creates the database and migrates it. A file that is not a
  // vfssim database (or is damaged) raises StoreError and is left untouched.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::int64_t begin_run(const models::Scenario& sc, std::uint64_t seed, int reps, const std::string& args);
  void add_point(std::int64_t run_id, const models::CurvePoint& cp);
  void finish_run(std::int64_t run_id, double wall_seconds);

  struct RunRow {
    std::int64_t id;
    std::string created_at, scenario, machine, tool_version;
    std::uint64_t seed;
    int points;
    double wall_seconds;
  };
  std::vector<RunRow> runs();

 private:
  void exec(const std::string& sql);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace vfssim::report
