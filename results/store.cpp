#include "results/store.h"

#include "results/sql_statement.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cmath>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace vfssim::report {

namespace {

// Migrations: entry i takes the schema from version i to i+1.
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  scenario TEXT NOT NULL,
  scenario_path TEXT NOT NULL,
  scenario_hash TEXT NOT NULL,
  scenario_text TEXT NOT NULL,
  machine TEXT NOT NULL,
  seed INTEGER NOT NULL,
  replications INTEGER NOT NULL,
  args TEXT NOT NULL,
  wall_seconds REAL
);
CREATE TABLE curve (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  ops_per_sec REAL NOT NULL,
  stddev REAL NOT NULL,
  events INTEGER NOT NULL,
  PRIMARY KEY (run_id, strategy, variant, cpus)
);
CREATE TABLE points (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  ops_per_sec REAL NOT NULL,
  ops INTEGER NOT NULL,
  events INTEGER NOT NULL,
  window_seconds REAL NOT NULL,
  stop TEXT NOT NULL,
  wall_seconds REAL NOT NULL,
  PRIMARY KEY (run_id, strategy, variant, cpus, rep)
);
CREATE TABLE lock_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  lock TEXT NOT NULL,
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  instances INTEGER NOT NULL,
  con_bounces INTEGER NOT NULL,
  contentions INTEGER NOT NULL,
  waittime_min_ps INTEGER NOT NULL,
  waittime_max_ps INTEGER NOT NULL,
  waittime_total_ps INTEGER NOT NULL,
  acq_bounces INTEGER NOT NULL,
  acquisitions INTEGER NOT NULL,
  holdtime_min_ps INTEGER NOT NULL,
  holdtime_max_ps INTEGER NOT NULL,
  holdtime_total_ps INTEGER NOT NULL
);
CREATE TABLE profile (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  symbol TEXT NOT NULL,
  chain TEXT NOT NULL,
  detail TEXT NOT NULL,
  time_ps INTEGER NOT NULL,
  share REAL NOT NULL
);
)sql",
    // 2: `vfssim validate` results and the scalability fits of runs.
    R"sql(
CREATE TABLE validations (
  id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  wall_seconds REAL,
  summary_json TEXT NOT NULL
);
CREATE TABLE validation_figures (
  validation_id INTEGER NOT NULL REFERENCES validations(id),
  scenario TEXT NOT NULL,
  figure TEXT NOT NULL,
  reported REAL NOT NULL,
  predicted REAL,
  fitted INTEGER NOT NULL,
  within_tolerance INTEGER NOT NULL,
  direction_ok INTEGER,
  error REAL,
  tolerance REAL NOT NULL
);
CREATE TABLE fits (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  model TEXT NOT NULL,
  sigma REAL NOT NULL,
  kappa REAL NOT NULL,
  lambda REAL NOT NULL,
  peak_cpus REAL
);
)sql",
    // 3: durable sweeps (--resume) and every field of a point, so that a
    // resumed run prints what an uninterrupted one does.
    R"sql(
ALTER TABLE runs ADD COLUMN sweep TEXT;
ALTER TABLE runs ADD COLUMN status TEXT;
ALTER TABLE points ADD COLUMN window_events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE points ADD COLUMN cpu_time_ps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lock_stats ADD COLUMN holds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profile ADD COLUMN object_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE profile ADD COLUMN synchronizing INTEGER NOT NULL DEFAULT 0;
CREATE TABLE line_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  line TEXT NOT NULL,
  scope TEXT NOT NULL,
  instances INTEGER NOT NULL,
  loads INTEGER NOT NULL,
  rmws INTEGER NOT NULL,
  bounces INTEGER NOT NULL,
  queue_wait_ps INTEGER NOT NULL
);
CREATE TABLE seqcount_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  seqcount TEXT NOT NULL,
  instances INTEGER NOT NULL,
  reads INTEGER NOT NULL,
  retries INTEGER NOT NULL,
  writes INTEGER NOT NULL,
  begin_waits INTEGER NOT NULL
);
CREATE TABLE rcu_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  grace_periods INTEGER NOT NULL,
  synchronize_calls INTEGER NOT NULL,
  callbacks_queued INTEGER NOT NULL,
  callbacks_invoked INTEGER NOT NULL,
  gp_total_ps INTEGER NOT NULL
);
CREATE INDEX runs_by_sweep ON runs(scenario_hash, seed, replications, sweep);
)sql",
    R"sql(
CREATE TABLE pool_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  pool TEXT NOT NULL,
  scope TEXT NOT NULL,
  instances INTEGER NOT NULL,
  allocations INTEGER NOT NULL,
  direct_reclaims INTEGER NOT NULL,
  pages_allocated REAL NOT NULL,
  pages_reclaimed REAL NOT NULL,
  pages_refilled REAL NOT NULL
);
ALTER TABLE validation_figures ADD COLUMN bound TEXT NOT NULL DEFAULT 'about';
)sql",
    R"sql(
CREATE TABLE comparisons (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  base TEXT NOT NULL,
  new TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  row INTEGER NOT NULL,
  metric TEXT NOT NULL,
  base_mean REAL NOT NULL,
  base_stddev_pct REAL NOT NULL,
  new_mean REAL NOT NULL,
  new_stddev_pct REAL NOT NULL,
  change_pct REAL,
  PRIMARY KEY (run_id, row)
);
)sql",
    // 6: restated figures (the same simulation as a fitted one, or as an
    // earlier prediction: shown, not scored), the factor, the figure kind.
    R"sql(
ALTER TABLE validation_figures ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE validation_figures ADD COLUMN restated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE validation_figures ADD COLUMN restates TEXT;
ALTER TABLE validation_figures ADD COLUMN factor REAL;
)sql",
    // 7: the resolved scenario of a run (presets inlined, extends applied,
    // every parameter spelled out) and its hash: --resume's key with the
    // tool version, and `vfssim show RUN --resolved`.
    R"sql(
ALTER TABLE runs ADD COLUMN resolved_scenario TEXT;
ALTER TABLE runs ADD COLUMN resolved_hash TEXT;
CREATE INDEX runs_by_resolved ON runs(resolved_hash, tool_version, seed, replications, sweep);
)sql",
    // 8: why a run failed or stopped (its status says that it did), and
    // the host and process that wrote it, so that `history` can tell a
    // run still going from one whose process died (status 'running' left
    // behind by a crash or a kill -9: shown as 'abandoned').
    R"sql(
ALTER TABLE runs ADD COLUMN reason TEXT;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN pid INTEGER;
)sql",
    // 9: the spread of a curve point (stddev_pct, Student-t 95% interval),
    // compare's percentage-point change of profile rows,
    // its bottleneck with the margin to the second, lock_stat's -R/-W rows
    // of read/write locks and its contention points. Older rows keep NULL
    // in the new curve columns.
    R"sql(
ALTER TABLE comparisons ADD COLUMN change_pp REAL;
ALTER TABLE curve ADD COLUMN stddev_pct REAL;
ALTER TABLE curve ADD COLUMN ci95_lo REAL;
ALTER TABLE curve ADD COLUMN ci95_hi REAL;
ALTER TABLE curve ADD COLUMN bottleneck TEXT;
ALTER TABLE curve ADD COLUMN bottleneck_kind TEXT;
ALTER TABLE curve ADD COLUMN bottleneck_share REAL;
ALTER TABLE curve ADD COLUMN bottleneck_margin REAL;
CREATE TABLE lock_stat_rw (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  lock TEXT NOT NULL,
  mode TEXT NOT NULL,
  con_bounces INTEGER NOT NULL,
  contentions INTEGER NOT NULL,
  waittime_min_ps INTEGER NOT NULL,
  waittime_max_ps INTEGER NOT NULL,
  waittime_total_ps INTEGER NOT NULL,
  acq_bounces INTEGER NOT NULL,
  acquisitions INTEGER NOT NULL,
  holdtime_min_ps INTEGER NOT NULL,
  holdtime_max_ps INTEGER NOT NULL,
  holdtime_total_ps INTEGER NOT NULL,
  holds INTEGER NOT NULL
);
CREATE TABLE contention_points (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  lock TEXT NOT NULL,
  kind TEXT NOT NULL,
  step INTEGER NOT NULL,
  chain TEXT NOT NULL,
  contentions INTEGER NOT NULL
);
)sql",
    // 10: ops/s per role of a workload with roles (one row per role).
    R"sql(
CREATE TABLE role_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  role TEXT NOT NULL,
  tasks INTEGER NOT NULL,
  ops INTEGER NOT NULL,
  ops_per_sec REAL NOT NULL
);
)sql",
    // 11: --uncertainty's band of a curve point (NULL: not sampled).
    R"sql(
ALTER TABLE curve ADD COLUMN band_p10 REAL;
ALTER TABLE curve ADD COLUMN band_p50 REAL;
ALTER TABLE curve ADD COLUMN band_p90 REAL;
)sql",
    // 12: the distribution over a replication's tasks (per-task rates,
    // fairness, per-op latency quantiles; runs stored before have no row:
    // read back, their figures are null), and the statistic a spread
    // figure reports (NULL for the other kinds and older rows).
    R"sql(
CREATE TABLE task_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  strategy TEXT NOT NULL,
  variant TEXT NOT NULL,
  cpus INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  ops_per_sec_min REAL,
  ops_per_sec_median REAL,
  ops_per_sec_max REAL,
  fairness REAL,
  jain REAL,
  latency_p50_ps INTEGER,
  latency_p99_ps INTEGER,
  latency_p999_ps INTEGER,
  latency_max_ps INTEGER
);
ALTER TABLE validation_figures ADD COLUMN stat TEXT;
)sql",
    // 13: --uncertainty's sample rates of a curve point (a JSON list; NULL:
    // not sampled, or stored before: --resume then keeps its stored band
    // and has no sensitivities for it).
    R"sql(
ALTER TABLE curve ADD COLUMN sample_rates TEXT;
)sql",
    // 14: the distribution over a role's tasks (readers and writers apart;
    // NULL: stored before, or a task of the role completed none).
    R"sql(
ALTER TABLE role_stats ADD COLUMN ops_per_sec_min REAL;
ALTER TABLE role_stats ADD COLUMN ops_per_sec_median REAL;
ALTER TABLE role_stats ADD COLUMN ops_per_sec_max REAL;
ALTER TABLE role_stats ADD COLUMN fairness REAL;
ALTER TABLE role_stats ADD COLUMN jain REAL;
)sql",
};

constexpr int kMigrationCount = sizeof(kMigrations) / sizeof(kMigrations[0]);
static_assert(kMigrationCount == Store::kSchemaVersion);

// The tables the migrations create, by name (each "CREATE TABLE NAME (").
std::vector<std::string> schema_tables() {
  std::vector<std::string> out;
  const std::string create = "CREATE TABLE ";
  for (const char* m : kMigrations) {
    const std::string text = m;
    for (auto at = text.find(create); at != std::string::npos; at = text.find(create, at + 1)) {
      const auto from = at + create.size();
      out.push_back(text.substr(from, text.find_first_of(" (", from) - from));
    }
  }
  return out;
}

// "2026-11-30T08:00:00Z": when a row was written.
std::string utc_now() {
  char when[32];
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return when;
}

// A run row left 'running' by a process of this host that no longer
// exists: it crashed or was killed without a chance to say so. (A row of
// another host cannot be checked from here and stays 'running'.)
bool abandoned(const std::string& status, const std::string& host, std::optional<std::int64_t> pid) {
  if (status != "running" || !pid || host.empty() || host != this_host()) return false;
  return kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

Store::Store(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(path + ": cannot open the results database: " + msg);
  }
  sqlite3_busy_timeout(db_, 30000);
  try {
    // A foreign or damaged file fails here, before anything is written.
    int version = -1;
    bool has_tables = false, has_runs = false;
    {
      // One statement, one snapshot: another process may be creating the
      // schema right now, and its tables must not be seen without its version.
      Sql q(db_,
            "SELECT user_version, (SELECT count(*) FROM sqlite_master), "
            "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs') FROM pragma_user_version");
      if (q.step()) {
        version = static_cast<int>(q.i64(0));
        has_tables = q.i64(1) > 0;
        has_runs = q.i64(2) > 0;
      }
    }
    // vfssim's own: empty (version 0, no tables), or a version it wrote
    // (1..) with its runs table. Anything else is left untouched: no
    // tables added, no switch to WAL.
    if ((has_tables && version == 0) || version < 0 || (version > 0 && !has_runs))
      throw StoreError(path + ": this SQLite file is not a vfssim results database (user_version " +
                       std::to_string(version) + (has_runs ? "" : ", no runs table") + "); give another --db path");
    if (version > kSchemaVersion)
      throw StoreError(path + ": results database schema " + std::to_string(version) +
                       " is newer than this vfssim understands (" + std::to_string(kSchemaVersion) + ")");
    // Two processes switching a new file to WAL at once both hold a read
    // lock and want the write lock: SQLite refuses one at once, without
    // its busy handler. Retry for as long as the busy timeout.
    for (int attempt = 0;; ++attempt) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) break;
      if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || attempt >= 3000)
        throw StoreError(sqlite_error(db_));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    exec("PRAGMA foreign_keys=ON");
    for (int v = version; v < kSchemaVersion; ++v) {
      exec("BEGIN IMMEDIATE");
      // Another process may have migrated the file while this one waited.
      int now = v;
      {
        Sql q(db_, "PRAGMA user_version");
        if (q.step()) now = static_cast<int>(q.i64(0));
      }
      if (now > v) {
        exec("COMMIT");
        v = now - 1;
        continue;
      }
      exec(kMigrations[v]);
      exec("PRAGMA user_version=" + std::to_string(v + 1));
      exec("COMMIT");
    }
    // A file of this schema with a table missing (dropped by hand, a damaged
    // copy) is refused here, as a foreign one is, not at its first write
    // into that table (where SQLite's error reads like a full disk).
    std::string missing;
    for (const auto& table : schema_tables()) {
      Sql q(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
      q.bind(1, table);
      if (q.step() && q.i64(0) == 0) missing += (missing.empty() ? "" : ", ") + table;
    }
    if (!missing.empty())
      throw StoreError(path + ": this vfssim results database (schema " + std::to_string(kSchemaVersion) +
                       ") has no table " + missing + "; give another --db path, or restore the file");
  } catch (const StoreError&) {
    sqlite3_close(db_);
    db_ = nullptr;
    // Every message names the file: the refusals above by `path`,
    // SQLite's errors by its full name (sqlite_error).
    throw;
  }
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);  // the same text as sqlite3_errmsg's
    throw StoreError(sqlite_error(db_));
  }
}

std::int64_t Store::begin_run(const models::Scenario& sc, std::uint64_t seed, int reps, const std::string& args) {
  const std::string when = utc_now();
  Sql s(db_,
              "INSERT INTO runs(created_at, tool_version, scenario, scenario_path, scenario_hash, scenario_text, "
              "machine, seed, replications, args, resolved_scenario, resolved_hash, host, pid) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, when).bind(2, std::string(VFSSIM_VERSION)).bind(3, sc.name).bind(4, sc.path);
  s.bind(5, sc.hash).bind(6, sc.text).bind(7, sc.machine_name).bind(8, static_cast<std::int64_t>(seed));
  s.bind(9, static_cast<std::int64_t>(reps)).bind(10, args).bind(11, sc.resolved_text).bind(12, sc.resolved_hash);
  s.bind(13, this_host()).bind(14, static_cast<std::int64_t>(getpid()));
  s.run();
  return sqlite3_last_insert_rowid(db_);
}

void Store::add_point(std::int64_t run_id, const models::CurvePoint& cp) {
  in_transaction([&] {
    // The curve row and every replication's rows of every table of the
    // result schema (results/schema.h).
    const auto& cf = schema::curve();
    std::string cols = "run_id, strategy, variant, cpus", marks = "?,?,?,?";
    for (const auto& f : cf.fields) {
      cols += ", " + schema::column_of(f);
      marks += ",?";
    }
    Sql c(db_, (std::string("INSERT INTO ") + cf.sql + "(" + cols + ") VALUES (" + marks + ")").c_str());
    c.bind(1, run_id).bind(2, cp.strategy).bind(3, cp.variant).bind(4, static_cast<std::int64_t>(cp.cpus));
    bind_record(c, 5, cf.fields, cp, {});
    c.run();
    auto insert_all = [&](const auto& table) {
      Sql s(db_, insert_sql(table).c_str());
      for (const auto& r : cp.reps)
        for (const auto* row : schema::rows_of(table, r)) {
          bind_key(s, run_id, cp, r.spec.rep);
          bind_record(s, 6, table.fields, *row, schema::context_of(r));
          s.run();
        }
    };
    insert_all(schema::points());
    schema::for_each_stats_table(insert_all);
  });
}

void Store::add_comparison(std::int64_t run_id, const std::vector<ComparisonRow>& rows) {
  in_transaction([&] {
    Sql s(db_,
          "INSERT INTO comparisons(run_id, base, new, variant, cpus, row, metric, base_mean, base_stddev_pct, "
          "new_mean, new_stddev_pct, change_pct, change_pp) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      s.bind(1, run_id).bind(2, r.base).bind(3, r.neu).bind(4, r.variant).bind(5, static_cast<std::int64_t>(r.cpus));
      s.bind(6, static_cast<std::int64_t>(i)).bind(7, r.metric).bind(8, r.base_mean).bind(9, r.base_stddev_pct);
      s.bind(10, r.new_mean).bind(11, r.new_stddev_pct).bind_real(12, r.change_pct).bind_real(13, r.change_pp);
      s.run();
    }
  });
}

void Store::finish_run(std::int64_t run_id, double wall_seconds) {
  Sql s(db_, "UPDATE runs SET wall_seconds=coalesce(wall_seconds, 0)+?, status='done' WHERE id=?");
  s.bind(1, wall_seconds).bind(2, run_id);
  s.run();
}

bool Store::exists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f) std::fclose(f);
  return f != nullptr;
}

std::vector<Store::HistoryRow> Store::history() {
  std::vector<HistoryRow> out;
  // Runs (a compare's run has comparison rows), then validations, by time.
  Sql q(db_,
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM comparisons c WHERE c.run_id=r.id) THEN 'compare' ELSE 'run' END, "
        "r.id, r.created_at, r.scenario, r.machine, r.tool_version, r.seed, r.replications, "
        "(SELECT count(*) FROM curve c WHERE c.run_id=r.id), coalesce(r.status, ''), r.wall_seconds, "
        "coalesce(r.reason, ''), coalesce(r.host, ''), r.pid FROM runs r "
        "UNION ALL SELECT 'validate', v.id, v.created_at, '', '', v.tool_version, NULL, NULL, "
        "(SELECT count(*) FROM validation_figures f WHERE f.validation_id=v.id), 'done', v.wall_seconds, '', '', NULL "
        "FROM validations v ORDER BY 3, 1 DESC, 2");
  while (q.step()) {
    HistoryRow h;
    h.kind = q.text(0);
    h.id = q.i64(1);
    h.created_at = q.text(2);
    h.scenario = q.text(3);
    h.machine = q.text(4);
    h.tool_version = q.text(5);
    if (!q.null(6)) h.seed = q.u64(6);
    if (!q.null(7)) h.replications = static_cast<int>(q.i64(7));
    h.count = static_cast<int>(q.i64(8));
    h.status = q.text(9);
    if (!q.null(10)) h.wall_seconds = q.f64(10);
    h.reason = q.text(11);
    if (abandoned(h.status, q.text(12), q.null(13) ? std::nullopt : std::optional(q.i64(13)))) h.status = "abandoned";
    out.push_back(std::move(h));
  }
  return out;
}

std::optional<Store::StoredRun> Store::stored_run(std::int64_t id) {
  Sql q(db_,
        "SELECT r.id, r.created_at, r.tool_version, r.scenario, r.scenario_path, r.scenario_hash, r.scenario_text, "
        "r.machine, r.seed, r.replications, r.args, r.wall_seconds, coalesce(r.sweep, ''), coalesce(r.status, ''), "
        "r.resolved_scenario, coalesce(r.resolved_hash, ''), "
        "EXISTS (SELECT 1 FROM comparisons c WHERE c.run_id=r.id), coalesce(r.reason, ''), coalesce(r.host, ''), r.pid "
        "FROM runs r WHERE r.id=?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  StoredRun r;
  r.id = q.i64(0);
  r.created_at = q.text(1);
  r.tool_version = q.text(2);
  r.scenario = q.text(3);
  r.scenario_path = q.text(4);
  r.scenario_hash = q.text(5);
  r.scenario_text = q.text(6);
  r.machine = q.text(7);
  r.seed = q.u64(8);
  r.replications = static_cast<int>(q.i64(9));
  r.args = q.text(10);
  if (!q.null(11)) r.wall_seconds = q.f64(11);
  r.sweep = q.text(12);
  r.status = q.text(13);
  if (!q.null(14)) r.resolved_scenario = q.text(14);
  r.resolved_hash = q.text(15);
  r.kind = q.i64(16) ? "compare" : "run";
  r.reason = q.text(17);
  if (abandoned(r.status, q.text(18), q.null(19) ? std::nullopt : std::optional(q.i64(19)))) r.status = "abandoned";
  return r;
}

std::int64_t Store::add_validation(double wall_seconds, const std::string& summary_json,
                                   const std::vector<ValidationFigureRow>& figures) {
  const std::string when = utc_now();
  return in_transaction([&] {
    Sql v(db_, "INSERT INTO validations(created_at, tool_version, wall_seconds, summary_json) VALUES (?,?,?,?)");
    v.bind(1, when).bind(2, std::string(VFSSIM_VERSION)).bind(3, wall_seconds).bind(4, summary_json);
    v.run();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    Sql f(db_,
                "INSERT INTO validation_figures(validation_id, scenario, figure, reported, predicted, fitted, "
                "within_tolerance, direction_ok, error, tolerance, bound, kind, restated, restates, factor, stat) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& r : figures) {
      f.bind(1, id).bind(2, r.scenario).bind(3, r.figure).bind(4, r.reported).bind_real(5, r.predicted);
      f.bind(6, static_cast<std::int64_t>(r.fitted)).bind(7, static_cast<std::int64_t>(r.within_tolerance));
      if (r.direction_ok) f.bind(8, static_cast<std::int64_t>(*r.direction_ok));
      else f.bind_real(8, NAN);
      f.bind_real(9, r.error).bind(10, r.tolerance).bind(11, r.bound).bind(12, r.kind);
      f.bind(13, static_cast<std::int64_t>(r.restated));
      if (r.restated) f.bind(14, r.restates);
      else f.bind_real(14, NAN);
      f.bind_real(15, r.factor);
      if (r.stat.empty()) f.bind_null(16);
      else f.bind(16, r.stat);
      f.run();
    }
    return id;
  });
}

void Store::add_fits(std::int64_t run_id, const std::vector<FitRow>& fits) {
  in_transaction([&] {
    Sql f(db_,
                "INSERT INTO fits(run_id, strategy, variant, model, sigma, kappa, lambda, peak_cpus) "
                "VALUES (?,?,?,?,?,?,?,?)");
    for (const auto& r : fits) {
      f.bind(1, run_id).bind(2, r.strategy).bind(3, r.variant).bind(4, r.model);
      f.bind(5, r.sigma).bind(6, r.kappa).bind(7, r.lambda).bind_real(8, r.peak_cpus);
      f.run();
    }
  });
}

}  // namespace vfssim::report
