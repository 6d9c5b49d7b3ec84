// The results store's side of durable sweeps: runs identified by their
// sweep (for --resume), the per-point details of schemas 3 and 4, and curve points
// read back exactly as they were written.
#include <map>
#include <tuple>

#include "results/sql_statement.h"
#include "results/store.h"

namespace vfssim::report {

namespace {

models::Scope scope_of(const std::string& s) {
  for (auto sc : {models::Scope::kGlobal, models::Scope::kNode, models::Scope::kCpu, models::Scope::kProcess,
                  models::Scope::kTask})
    if (s == models::to_string(sc)) return sc;
  throw StoreError("unknown scope '" + s + "' in the results database");
}

}  // namespace

void Store::add_point_details(std::int64_t run_id, const models::CurvePoint& cp) {
  Sql lines(db_,
            "INSERT INTO line_stats(run_id, strategy, variant, cpus, rep, line, scope, instances, loads, rmws, "
            "bounces, queue_wait_ps) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  Sql seqs(db_,
           "INSERT INTO seqcount_stats(run_id, strategy, variant, cpus, rep, seqcount, instances, reads, retries, "
           "writes, begin_waits) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  Sql pools(db_,
            "INSERT INTO pool_stats(run_id, strategy, variant, cpus, rep, pool, scope, instances, allocations, "
            "direct_reclaims, pages_allocated, pages_reclaimed, pages_refilled) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Sql rcu(db_,
          "INSERT INTO rcu_stats(run_id, strategy, variant, cpus, rep, grace_periods, synchronize_calls, "
          "callbacks_queued, callbacks_invoked, gp_total_ps) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& r : cp.reps) {
    for (const auto& l : r.lines) {
      bind_key(lines, run_id, cp, r.spec.rep);
      lines.bind(6, l.name).bind(7, std::string(models::to_string(l.scope))).bind(8, static_cast<std::int64_t>(l.instances));
      lines.bind(9, static_cast<std::int64_t>(l.stats.loads)).bind(10, static_cast<std::int64_t>(l.stats.rmws));
      lines.bind(11, static_cast<std::int64_t>(l.stats.bounces)).bind(12, l.stats.queue_wait.count());
      lines.run();
    }
    for (const auto& q : r.seqcounts) {
      bind_key(seqs, run_id, cp, r.spec.rep);
      seqs.bind(6, q.name).bind(7, static_cast<std::int64_t>(q.instances));
      seqs.bind(8, static_cast<std::int64_t>(q.stats.reads)).bind(9, static_cast<std::int64_t>(q.stats.retries));
      seqs.bind(10, static_cast<std::int64_t>(q.stats.writes)).bind(11, static_cast<std::int64_t>(q.stats.begin_waits));
      seqs.run();
    }
    for (const auto& q : r.pools) {
      bind_key(pools, run_id, cp, r.spec.rep);
      pools.bind(6, q.name).bind(7, std::string(models::to_string(q.scope))).bind(8, static_cast<std::int64_t>(q.instances));
      pools.bind(9, static_cast<std::int64_t>(q.stats.allocations));
      pools.bind(10, static_cast<std::int64_t>(q.stats.direct_reclaims));
      pools.bind(11, q.stats.pages_allocated).bind(12, q.stats.pages_reclaimed).bind(13, q.stats.pages_refilled);
      pools.run();
    }
    bind_key(rcu, run_id, cp, r.spec.rep);
    rcu.bind(6, static_cast<std::int64_t>(r.rcu.grace_periods)).bind(7, static_cast<std::int64_t>(r.rcu.synchronize_calls));
    rcu.bind(8, static_cast<std::int64_t>(r.rcu.callbacks_queued)).bind(9, static_cast<std::int64_t>(r.rcu.callbacks_invoked));
    rcu.bind(10, r.rcu.gp_total.count());
    rcu.run();
  }
}

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

std::optional<std::int64_t> Store::find_run(const std::string& scenario_hash, std::uint64_t seed, int reps,
                                            const std::string& sweep) {
  Sql q(db_,
        "SELECT max(id) FROM runs WHERE scenario_hash=? AND seed=? AND replications=? AND sweep=?");
  q.bind(1, scenario_hash).bind(2, static_cast<std::int64_t>(seed)).bind(3, static_cast<std::int64_t>(reps)).bind(4, sweep);
  if (q.step() && !q.null(0)) return q.i64(0);
  return std::nullopt;
}

void Store::set_status(std::int64_t run_id, const std::string& status, double wall_seconds) {
  Sql s(db_, "UPDATE runs SET status=?, wall_seconds=coalesce(wall_seconds, 0)+? WHERE id=?");
  s.bind(1, status).bind(2, wall_seconds).bind(3, run_id);
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
    Sql q(db_, "SELECT strategy, variant, cpus, ops_per_sec, stddev, events FROM curve WHERE run_id=? ORDER BY rowid");
    q.bind(1, run_id);
    while (q.step()) {
      models::CurvePoint cp;
      cp.strategy = q.text(0);
      cp.variant = q.text(1);
      cp.cpus = static_cast<int>(q.i64(2));
      cp.ops_per_sec = q.f64(3);
      cp.stddev = q.f64(4);
      cp.events = q.u64(5);
      index[{cp.strategy, cp.variant, cp.cpus}] = curve.size();
      curve.push_back(std::move(cp));
    }
  }
  // Each row of a per-replication table (its first columns strategy,
  // variant, cpus, rep), handed over with the replication it belongs to;
  // rows of points not in the curve are skipped.
  auto each_rep_row = [&](const char* select, const auto& read) {
    Sql q(db_, select);
    q.bind(1, run_id);
    while (q.step()) {
      auto it = index.find({q.text(0), q.text(1), static_cast<int>(q.i64(2))});
      if (it == index.end()) continue;
      auto& reps = curve[it->second].reps;
      const auto rep = static_cast<std::size_t>(q.i64(3));
      if (rep >= reps.size()) reps.resize(rep + 1);
      read(q, reps[rep]);
    }
  };
  each_rep_row("SELECT strategy, variant, cpus, rep, seed, ops_per_sec, ops, events, window_seconds, stop, wall_seconds, "
               "window_events, cpu_time_ps FROM points WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 r.spec.strategy = q.text(0);
                 r.spec.variant = q.text(1);
                 r.spec.cpus = static_cast<int>(q.i64(2));
                 r.spec.rep = static_cast<int>(q.i64(3));
                 r.spec.seed = q.u64(4);
                 r.ops_per_sec = q.f64(5);
                 r.ops = q.u64(6);
                 r.events = q.u64(7);
                 r.window_seconds = q.f64(8);
                 r.stop = q.text(9);
                 r.wall_seconds = q.f64(10);
                 r.window_events = q.u64(11);
                 r.cpu_time = models::Duration{q.i64(12)};
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, lock, kind, scope, instances, con_bounces, contentions, "
               "waittime_min_ps, waittime_max_ps, waittime_total_ps, acq_bounces, acquisitions, holdtime_min_ps, "
               "holdtime_max_ps, holdtime_total_ps, holds FROM lock_stats WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 models::LockReport l;
                 l.name = q.text(4);
                 l.kind = q.text(5);
                 l.scope = scope_of(q.text(6));
                 l.instances = static_cast<int>(q.i64(7));
                 auto& s = l.stats;
                 s.con_bounces = q.u64(8);
                 s.contentions = q.u64(9);
                 s.wait_min = models::Duration{q.i64(10)};
                 s.wait_max = models::Duration{q.i64(11)};
                 s.wait_total = models::Duration{q.i64(12)};
                 s.acq_bounces = q.u64(13);
                 s.acquisitions = q.u64(14);
                 s.hold_min = models::Duration{q.i64(15)};
                 s.hold_max = models::Duration{q.i64(16)};
                 s.hold_total = models::Duration{q.i64(17)};
                 s.holds = q.u64(18);
                 r.locks.push_back(std::move(l));
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, symbol, chain, detail, time_ps, object_kind, synchronizing "
               "FROM profile WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 models::ProfileEntry e;
                 e.symbol = q.text(4);
                 e.chain = q.text(5);
                 e.detail = q.text(6);
                 e.time = models::Duration{q.i64(7)};
                 e.object_kind = q.text(8);
                 e.synchronizing = q.i64(9) != 0;
                 r.profile.push_back(std::move(e));
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, line, scope, instances, loads, rmws, bounces, queue_wait_ps "
               "FROM line_stats WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 models::LineReport l;
                 l.name = q.text(4);
                 l.scope = scope_of(q.text(5));
                 l.instances = static_cast<int>(q.i64(6));
                 l.stats.loads = q.u64(7);
                 l.stats.rmws = q.u64(8);
                 l.stats.bounces = q.u64(9);
                 l.stats.queue_wait = models::Duration{q.i64(10)};
                 r.lines.push_back(std::move(l));
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, seqcount, instances, reads, retries, writes, begin_waits "
               "FROM seqcount_stats WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 models::SeqReport s;
                 s.name = q.text(4);
                 s.instances = static_cast<int>(q.i64(5));
                 s.stats.reads = q.u64(6);
                 s.stats.retries = q.u64(7);
                 s.stats.writes = q.u64(8);
                 s.stats.begin_waits = q.u64(9);
                 r.seqcounts.push_back(std::move(s));
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, pool, scope, instances, allocations, direct_reclaims, "
               "pages_allocated, pages_reclaimed, pages_refilled FROM pool_stats WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 models::PoolReport p;
                 p.name = q.text(4);
                 p.scope = scope_of(q.text(5));
                 p.instances = static_cast<int>(q.i64(6));
                 p.stats.allocations = q.u64(7);
                 p.stats.direct_reclaims = q.u64(8);
                 p.stats.pages_allocated = q.f64(9);
                 p.stats.pages_reclaimed = q.f64(10);
                 p.stats.pages_refilled = q.f64(11);
                 r.pools.push_back(std::move(p));
               });
  each_rep_row("SELECT strategy, variant, cpus, rep, grace_periods, synchronize_calls, callbacks_queued, "
               "callbacks_invoked, gp_total_ps FROM rcu_stats WHERE run_id=? ORDER BY rowid",
               [&](Sql& q, models::PointResult& r) {
                 r.rcu.grace_periods = q.u64(4);
                 r.rcu.synchronize_calls = q.u64(5);
                 r.rcu.callbacks_queued = q.u64(6);
                 r.rcu.callbacks_invoked = q.u64(7);
                 r.rcu.gp_total = models::Duration{q.i64(8)};
               });
  return curve;
}

}  // namespace vfssim::report
