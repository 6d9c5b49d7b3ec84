// The results store's side of durable sweeps: runs identified by their
// sweep (for --resume), and curve points read back exactly as they were
// written (every table of the result schema, results/schema.h).
#include <algorithm>
#include <map>
#include <tuple>

#include "results/sql_statement.h"
#include "results/store.h"

namespace vfssim::report {

std::int64_t Store::begin_run(const models::Scenario& sc, std::uint64_t seed, int reps, const std::string& args,
                              const std::string& sweep) {
  return in_transaction([&] {
    const std::int64_t id = begin_run(sc, seed, reps, args);
    Sql s(db_, "UPDATE runs SET sweep=?, status='running' WHERE id=?");
    s.bind(1, sweep).bind(2, id);
    s.run();
    return id;
  });
}

std::optional<std::int64_t> Store::find_run(const models::Scenario& sc, std::uint64_t seed, int reps,
                                            const std::string& sweep) {
  Sql q(db_,
        "SELECT max(id) FROM runs WHERE resolved_hash=? AND tool_version=? AND seed=? AND replications=? AND sweep=?");
  q.bind(1, sc.resolved_hash).bind(2, std::string(VFSSIM_VERSION)).bind(3, static_cast<std::int64_t>(seed));
  q.bind(4, static_cast<std::int64_t>(reps)).bind(5, sweep);
  if (q.step() && !q.null(0)) return q.i64(0);
  return std::nullopt;
}

void Store::set_status(std::int64_t run_id, const std::string& status, double wall_seconds,
                       const std::string& reason) {
  // The process that sets a run going again owns it from now on.
  Sql s(db_, "UPDATE runs SET status=?, wall_seconds=coalesce(wall_seconds, 0)+?, reason=?, host=?, pid=? WHERE id=?");
  s.bind(1, status).bind(2, wall_seconds);
  if (reason.empty()) s.bind_null(3);
  else s.bind(3, reason);
  s.bind(4, this_host()).bind(5, static_cast<std::int64_t>(getpid())).bind(6, run_id);
  s.run();
}

std::string Store::run_status(std::int64_t run_id) {
  Sql q(db_, "SELECT coalesce(status, '') FROM runs WHERE id=?");
  q.bind(1, run_id);
  return q.step() ? q.text(0) : std::string();
}

std::vector<models::CurvePoint> Store::load_curve(std::int64_t run_id) {
  using Key = std::tuple<std::string, std::string, int>;
  std::map<Key, std::size_t> index;
  std::vector<models::CurvePoint> curve;
  {
    const auto& cf = schema::curve();
    std::string cols = "strategy, variant, cpus";
    for (const auto& f : cf.fields)  // the columns read_record reads: the stored fields it can set
      if (f.stored && f.set) cols += ", " + schema::column_of(f);
    Sql q(db_, ("SELECT " + cols + " FROM " + cf.sql + " WHERE run_id=? ORDER BY rowid").c_str());
    q.bind(1, run_id);
    while (q.step()) {
      models::CurvePoint cp;
      cp.strategy = q.text(0);
      cp.variant = q.text(1);
      cp.cpus = static_cast<int>(q.i64(2));
      read_record(q, 3, cf.fields, cp);
      index[{cp.strategy, cp.variant, cp.cpus}] = curve.size();
      curve.push_back(std::move(cp));
    }
  }
  // Each row of a per-replication table of the result schema (its first
  // columns strategy, variant, cpus, rep) read into the replication it
  // belongs to; rows of points not in the curve are skipped.
  auto read_all = [&](const auto& table) {
    Sql q(db_, select_sql(table).c_str());
    q.bind(1, run_id);
    while (q.step()) {
      auto it = index.find({q.text(0), q.text(1), static_cast<int>(q.i64(2))});
      if (it == index.end()) continue;
      auto& reps = curve[it->second].reps;
      const auto rep = static_cast<std::size_t>(q.i64(3));
      if (rep >= reps.size()) reps.resize(rep + 1);
      models::PointResult& r = reps[rep];
      r.spec.strategy = q.text(0);
      r.spec.variant = q.text(1);
      r.spec.cpus = static_cast<int>(q.i64(2));
      r.spec.rep = static_cast<int>(rep);
      read_record(q, 4, table.fields, schema::new_row(table, r));
    }
  };
  read_all(schema::points());
  schema::for_each_stats_table(read_all);
  // Points are committed as they finish; give them back in the order the
  // sweep planned them (runs.sweep: "strategy/variant@cpus ..."), as the
  // run printed them.
  std::string sweep;
  {
    Sql q(db_, "SELECT coalesce(sweep, '') FROM runs WHERE id=?");
    q.bind(1, run_id);
    if (q.step()) sweep = q.text(0);
  }
  std::map<std::string, std::size_t> planned;
  std::size_t start = 0;
  while (start < sweep.size()) {
    const std::size_t end = std::min(sweep.find(' ', start), sweep.size());
    planned.emplace(sweep.substr(start, end - start), planned.size());
    start = end + 1;
  }
  auto rank = [&](const models::CurvePoint& cp) {
    const auto it = planned.find(cp.strategy + "/" + cp.variant + "@" + std::to_string(cp.cpus));
    return it == planned.end() ? planned.size() : it->second;
  };
  std::stable_sort(curve.begin(), curve.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return curve;
}

}  // namespace vfssim::report
