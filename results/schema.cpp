#include "results/schema.h"

#include <cmath>
#include <stdexcept>

#include "results/review.h"
#include "results/spread.h"

namespace vfssim::report::schema {

const char* to_string(Type t) {
  switch (t) {
    case Type::kInteger: return "integer";
    case Type::kReal: return "real";
    case Type::kText: return "text";
    case Type::kBool: return "bool";
    case Type::kTime: return "time";
  }
  return "?";
}

const char* sql_type(Type t) {
  switch (t) {
    case Type::kReal: return "REAL";
    case Type::kText: return "TEXT";
    default: return "INTEGER";  // integers, flags (0/1), times (picoseconds)
  }
}

std::int64_t as_int(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<std::int64_t>(*d);
  return 0;
}
double as_real(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return 0;
}
std::string as_text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return {};
}

bool all_null(const std::vector<Value>& values) {
  for (const auto& v : values)
    if (!std::holds_alternative<std::monostate>(v)) return false;
  return true;
}

nlohmann::json to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

models::Scope scope_named(const std::string& s) {
  for (auto sc : {models::Scope::kGlobal, models::Scope::kNode, models::Scope::kCpu, models::Scope::kProcess,
                  models::Scope::kTask, models::Scope::kObject})
    if (s == models::to_string(sc)) return sc;
  throw std::invalid_argument("unknown scope '" + s + "'");
}

namespace {

using models::ContentionPoint;
using models::CurvePoint;
using models::LockModeReport;
using models::LineReport;
using models::LockReport;
using models::PointResult;
using models::PoolReport;
using models::ProfileEntry;
using models::RcuStats;
using models::RoleReport;
using models::SeqReport;
using models::TaskStats;

// Getter and setter of a member, by the field's type. `M` is the member
// expression on the record `r`.
#define VFSSIM_INT(M)                                                                              \
  [](const R& r, const Context&) -> Value { return static_cast<std::int64_t>(r.M); },             \
      [](R& r, const Value& v) { r.M = static_cast<std::remove_reference_t<decltype(r.M)>>(as_int(v)); }
#define VFSSIM_REAL(M) \
  [](const R& r, const Context&) -> Value { return static_cast<double>(r.M); }, [](R& r, const Value& v) { r.M = as_real(v); }
#define VFSSIM_TEXT(M) \
  [](const R& r, const Context&) -> Value { return r.M; }, [](R& r, const Value& v) { r.M = as_text(v); }
#define VFSSIM_BOOL(M) \
  [](const R& r, const Context&) -> Value { return static_cast<bool>(r.M); }, [](R& r, const Value& v) { r.M = as_int(v) != 0; }
#define VFSSIM_TIME(M)                                                              \
  [](const R& r, const Context&) -> Value { return std::int64_t{r.M.count()}; }, \
      [](R& r, const Value& v) { r.M = sim::Duration{as_int(v)}; }
// A real that may be unmeasured (NaN: null), and a time that may be (nullopt: null).
#define VFSSIM_NAN_REAL(M)                                                                               \
  [](const R& r, const Context&) -> Value { return std::isnan(r.M) ? Value{} : Value{r.M}; },            \
      [](R& r, const Value& v) { r.M = std::holds_alternative<std::monostate>(v) ? std::nan("") : as_real(v); }
#define VFSSIM_OPT_TIME(M)                                                                                 \
  [](const R& r, const Context&) -> Value { return r.M ? Value{std::int64_t{r.M->count()}} : Value{}; },  \
      [](R& r, const Value& v) {                                                                           \
        r.M = std::holds_alternative<std::monostate>(v) ? std::nullopt : std::optional{sim::Duration{as_int(v)}}; \
      }
#define VFSSIM_SCOPE(M)                                                                              \
  [](const R& r, const Context&) -> Value { return std::string(models::to_string(r.M)); }, \
      [](R& r, const Value& v) { r.M = scope_named(as_text(v)); }

// A mean in microseconds, 0 when nothing was counted.
double mean_us(sim::Duration total, std::uint64_t n) {
  return n ? static_cast<double>(total.count()) * 1e-6 / static_cast<double>(n) : 0.0;
}

Value opt(const std::optional<double>& v) { return v ? Value{*v} : Value{}; }
// A band percentile: NaN (not sampled) is null.
Value band_value(double v) { return std::isnan(v) ? Value{} : Value{v}; }
double band_of(const Value& v) { return std::holds_alternative<std::monostate>(v) ? std::nan("") : as_real(v); }
int reps_of(const CurvePoint& cp) { return static_cast<int>(cp.reps.size()); }
std::optional<report::Bottleneck> bottleneck_of(const CurvePoint& cp) {
  return cp.reps.empty() ? std::nullopt : report::find_bottleneck(cp.reps);
}

template <class R>
std::vector<Field<R>> concat(std::vector<Field<R>> head, const std::vector<Field<R>>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// The /proc/lock_stat columns of a record with a `stats` (LockStats):
// a lock class's row and a read/write class's -R and -W rows.
template <class R>
std::vector<Field<R>> lock_stat_fields() {
  return {
    {"con_bounces", Type::kInteger, "acquisitions", "contended acquisitions whose line came from another CPU", VFSSIM_INT(stats.con_bounces)},
    {"contentions", Type::kInteger, "acquisitions", "acquisitions that had to wait", VFSSIM_INT(stats.contentions)},
    {"waittime_min", Type::kTime, "time", "shortest wait", VFSSIM_TIME(stats.wait_min)},
    {"waittime_max", Type::kTime, "time", "longest wait", VFSSIM_TIME(stats.wait_max)},
    {"waittime_total", Type::kTime, "time", "all waits", VFSSIM_TIME(stats.wait_total)},
    {"waittime_avg_us", Type::kReal, "us", "waittime_total / contentions (0 without contention)",
     [](const R& r, const Context&) -> Value { return mean_us(r.stats.wait_total, r.stats.contentions); }, nullptr,
     nullptr, false},
    {"acq_bounces", Type::kInteger, "acquisitions", "acquisitions whose line came from another CPU", VFSSIM_INT(stats.acq_bounces)},
    {"acquisitions", Type::kInteger, "acquisitions", "acquisitions in the window", VFSSIM_INT(stats.acquisitions)},
    {"holdtime_min", Type::kTime, "time", "shortest hold", VFSSIM_TIME(stats.hold_min)},
    {"holdtime_max", Type::kTime, "time", "longest hold", VFSSIM_TIME(stats.hold_max)},
    {"holdtime_total", Type::kTime, "time", "all holds", VFSSIM_TIME(stats.hold_total)},
    {"holdtime_avg_us", Type::kReal, "us", "holdtime_total / holds (0 without holds)",
     [](const R& r, const Context&) -> Value { return mean_us(r.stats.hold_total, r.stats.holds); }, nullptr,
     nullptr, false},
    {"holds", Type::kInteger, "intervals", "completed hold intervals (the hold-time average's denominator)", VFSSIM_INT(stats.holds)},
  };
}

}  // namespace

const Table<PointResult>& points() {
  using R = PointResult;
  static const Table<R> t{
      "points",
      "",
      "replication (one simulation)",
      {
          {"seed", Type::kInteger, "", "the replication's own seed (derived from the run seed and rep)", VFSSIM_INT(spec.seed)},
          {"ops_per_sec", Type::kReal, "ops/s", "loop iterations per simulated second, all CPUs", VFSSIM_REAL(ops_per_sec)},
          {"ops", Type::kInteger, "iterations", "loop iterations completed in the measurement window", VFSSIM_INT(ops)},
          {"events", Type::kInteger, "events", "engine events of the whole run", VFSSIM_INT(events)},
          {"window_seconds", Type::kReal, "s", "simulated measurement window", VFSSIM_REAL(window_seconds)},
          {"stop", Type::kText, "", "why the engine stopped: 'time-limit', 'deadlock: ...', or a budget", VFSSIM_TEXT(stop)},
          {"wall_seconds", Type::kReal, "s", "wall-clock time of the simulation (not deterministic)", VFSSIM_REAL(wall_seconds)},
          {"window_events", Type::kInteger, "events", "engine events inside the measurement window", VFSSIM_INT(window_events)},
          {"cpu_time", Type::kTime, "time", "CPUs x window: the profile's 100%", VFSSIM_TIME(cpu_time)},
      }};
  return t;
}

const Table<LockReport>& locks() {
  using R = LockReport;
  static const Table<R> t{
      "lock_stats",
      "lock_stat",
      "replication x lock class (the /proc/lock_stat row, summed over the lock's instances)",
      concat({
          {"name", Type::kText, "", "lock class", VFSSIM_TEXT(name), "lock"},
          {"kind", Type::kText, "", "lock kind (tas, ticket, mcs, qspinlock, mutex, rwsem, ...)", VFSSIM_TEXT(kind)},
          {"scope", Type::kText, "", "global, node, cpu, process, task or object", VFSSIM_SCOPE(scope)},
          {"instances", Type::kInteger, "", "instances of the lock on this machine", VFSSIM_INT(instances)},
      }, lock_stat_fields<R>()),
      &PointResult::locks};
  return t;
}

const Table<LockModeReport>& lock_modes() {
  using R = LockModeReport;
  static const Table<R> t{
      "lock_stat_rw",
      "lock_stat_rw",
      "replication x read/write lock class held shared x mode: lock_stat's NAME-R row, and NAME-W when also held "
      "exclusively",
      concat({
          {"name", Type::kText, "", "lock class", VFSSIM_TEXT(name), "lock"},
          {"mode", Type::kText, "", "W: exclusive (write) acquisitions, R: shared (read) ones", VFSSIM_TEXT(mode)},
      }, lock_stat_fields<R>()),
      &PointResult::lock_modes};
  return t;
}

const Table<ContentionPoint>& contention_points() {
  using R = ContentionPoint;
  static const Table<R> t{
      "contention_points",
      "contention_points",
      "replication x lock class x kind x acquire step (lock_stat's contention and contending points: at most 4 of "
      "each per class, most first)",
      {
          {"lock", Type::kText, "", "lock class", VFSSIM_TEXT(lock)},
          {"kind", Type::kText, "",
           "contention: the step whose acquire waited; contending: the step where the holder it waited for took the lock",
           VFSSIM_TEXT(kind)},
          {"step", Type::kInteger, "", "the acquire's index in the compiled code path (lock_stat prints an address)",
           VFSSIM_INT(step)},
          {"chain", Type::kText, "", "its call chain, 'sym <- caller <- ...'", VFSSIM_TEXT(chain)},
          {"contentions", Type::kInteger, "acquisitions", "acquisitions at this step that had to wait",
           VFSSIM_INT(contentions)},
      },
      &PointResult::contention_points};
  return t;
}

const Table<LineReport>& lines() {
  using R = LineReport;
  static const Table<R> t{
      "line_stats",
      "lines",
      "replication x cache line (summed over its instances)",
      {
          {"name", Type::kText, "", "cache line", VFSSIM_TEXT(name), "line"},
          {"scope", Type::kText, "", "global, node, cpu, process, task or object", VFSSIM_SCOPE(scope)},
          {"instances", Type::kInteger, "", "instances of the line on this machine", VFSSIM_INT(instances)},
          {"loads", Type::kInteger, "accesses", "loads", VFSSIM_INT(stats.loads)},
          {"rmws", Type::kInteger, "accesses", "stores and atomic read-modify-writes", VFSSIM_INT(stats.rmws)},
          {"bounces", Type::kInteger, "accesses", "requests that moved the line between CPUs", VFSSIM_INT(stats.bounces)},
          {"queue_wait", Type::kTime, "time", "time requests spent queued behind earlier ones", VFSSIM_TIME(stats.queue_wait)},
      },
      &PointResult::lines};
  return t;
}

const Table<SeqReport>& seqcounts() {
  using R = SeqReport;
  static const Table<R> t{
      "seqcount_stats",
      "seqcounts",
      "replication x seqcount (summed over its instances)",
      {
          {"name", Type::kText, "", "seqcount", VFSSIM_TEXT(name), "seqcount"},
          {"instances", Type::kInteger, "", "instances of the seqcount on this machine", VFSSIM_INT(instances)},
          {"reads", Type::kInteger, "sections", "read sections begun", VFSSIM_INT(stats.reads)},
          {"retries", Type::kInteger, "sections", "read sections that had to start again", VFSSIM_INT(stats.retries)},
          {"writes", Type::kInteger, "sections", "write sections", VFSSIM_INT(stats.writes)},
          {"begin_waits", Type::kInteger, "sections", "read sections that found a writer inside", VFSSIM_INT(stats.begin_waits)},
      },
      &PointResult::seqcounts};
  return t;
}

const Table<PoolReport>& pools() {
  using R = PoolReport;
  static const Table<R> t{
      "pool_stats",
      "pools",
      "replication x free-page pool (summed over its instances)",
      {
          {"name", Type::kText, "", "free-page pool", VFSSIM_TEXT(name), "pool"},
          {"scope", Type::kText, "", "global, node, cpu, process or task", VFSSIM_SCOPE(scope)},
          {"instances", Type::kInteger, "", "instances of the pool on this machine", VFSSIM_INT(instances)},
          {"allocations", Type::kInteger, "allocations", "allocation steps", VFSSIM_INT(stats.allocations)},
          {"direct_reclaims", Type::kInteger, "allocations",
           "allocations that found the pool below its low watermark (vmstat's allocstall)", VFSSIM_INT(stats.direct_reclaims)},
          {"pages_allocated", Type::kReal, "pages", "pages allocated", VFSSIM_REAL(stats.pages_allocated)},
          {"pages_reclaimed", Type::kReal, "pages", "pages given back by direct reclaim", VFSSIM_REAL(stats.pages_reclaimed)},
          {"pages_refilled", Type::kReal, "pages", "pages given back by kswapd", VFSSIM_REAL(stats.pages_refilled)},
      },
      &PointResult::pools};
  return t;
}

const Table<ProfileEntry>& profile() {
  using R = ProfileEntry;
  static const Table<R> t{
      "profile",
      "profile",
      "replication x code-path step (perf's report: largest share first)",
      {
          {"share", Type::kReal, "fraction", "time / the point's cpu_time",
           [](const R& r, const Context& c) -> Value {
             return c.cpu_time.count() > 0 ? static_cast<double>(r.time.count()) / static_cast<double>(c.cpu_time.count())
                                           : 0.0;
           }},
          {"chain", Type::kText, "", "call chain, 'sym <- caller <- caller's caller'", VFSSIM_TEXT(chain)},
          {"detail", Type::kText, "", "the lock or line the step touches, or ''", VFSSIM_TEXT(detail)},
          {"symbol", Type::kText, "", "kernel function of the step", VFSSIM_TEXT(symbol)},
          {"time", Type::kTime, "time", "CPU time over all CPUs in the window", VFSSIM_TIME(time)},
          {"object_kind", Type::kText, "", "what detail is: lock, line, seqcount, or ''", VFSSIM_TEXT(object_kind)},
          {"synchronizing", Type::kBool, "",
           "the time is spent synchronizing on detail (waiting, spinning, moving its line), not computing while holding it",
           VFSSIM_BOOL(synchronizing)},
      },
      &PointResult::profile};
  return t;
}

const Table<RcuStats>& rcu() {
  using R = RcuStats;
  static const Table<R> t{
      "rcu_stats",
      "rcu",
      "replication (one record: RCU's counters)",
      {
          {"grace_periods", Type::kInteger, "grace periods", "grace periods completed", VFSSIM_INT(grace_periods)},
          {"synchronize_calls", Type::kInteger, "calls", "synchronize_rcu calls", VFSSIM_INT(synchronize_calls)},
          {"callbacks_queued", Type::kInteger, "callbacks", "call_rcu callbacks queued", VFSSIM_INT(callbacks_queued)},
          {"callbacks_invoked", Type::kInteger, "callbacks", "call_rcu callbacks run", VFSSIM_INT(callbacks_invoked)},
          {"gp_total", Type::kTime, "time", "summed grace-period durations", VFSSIM_TIME(gp_total)},
      },
      nullptr,
      &PointResult::rcu};
  return t;
}

const Table<RoleReport>& roles() {
  using R = RoleReport;
  static const Table<R> t{
      "role_stats",
      "roles",
      "replication x role of the workload (none without roles)",
      {
          {"name", Type::kText, "", "role, as `workload: roles:` names it", VFSSIM_TEXT(name), "role"},
          {"tasks", Type::kInteger, "tasks", "tasks of the role at this point", VFSSIM_INT(tasks)},
          {"ops", Type::kInteger, "iterations", "the role's loop iterations in the window, its tasks together", VFSSIM_INT(ops)},
          {"ops_per_sec", Type::kReal, "ops/s", "the role's loop iterations per simulated second (the roles' ops add up to the point's)",
           VFSSIM_REAL(ops_per_sec)},
          {"ops_per_sec_min", Type::kReal, "ops/s", "the role's slowest task's loop iterations per simulated second",
           VFSSIM_NAN_REAL(tasks_stats.ops_per_sec_min)},
          {"ops_per_sec_median", Type::kReal, "ops/s", "the role's median task's (the mean of the middle two for an even count)",
           VFSSIM_NAN_REAL(tasks_stats.ops_per_sec_median)},
          {"ops_per_sec_max", Type::kReal, "ops/s", "the role's fastest task's", VFSSIM_NAN_REAL(tasks_stats.ops_per_sec_max)},
          {"fairness", Type::kReal, "ratio",
           "the role's ops_per_sec_max / ops_per_sec_min (null: one of its tasks completed none, starved)",
           VFSSIM_NAN_REAL(tasks_stats.fairness)},
          {"jain", Type::kReal, "index", "Jain's fairness index of the role's per-task rates (null: none completed any)",
           VFSSIM_NAN_REAL(tasks_stats.jain)},
      },
      &PointResult::roles,
      nullptr,
      true};
  return t;
}

const Table<TaskStats>& tasks() {
  using R = TaskStats;
  static const Table<R> t{
      "task_stats",
      "tasks",
      "replication (one record: the distribution over its tasks, whatever their role)",
      {
          {"ops_per_sec_min", Type::kReal, "ops/s", "the slowest task's loop iterations per simulated second",
           VFSSIM_NAN_REAL(ops_per_sec_min)},
          {"ops_per_sec_median", Type::kReal, "ops/s", "the median task's (the mean of the middle two for an even count)",
           VFSSIM_NAN_REAL(ops_per_sec_median)},
          {"ops_per_sec_max", Type::kReal, "ops/s", "the fastest task's", VFSSIM_NAN_REAL(ops_per_sec_max)},
          {"fairness", Type::kReal, "ratio",
           "ops_per_sec_max / ops_per_sec_min (1: every task as fast; null: a task completed none, starved)",
           VFSSIM_NAN_REAL(fairness)},
          {"jain", Type::kReal, "index",
           "Jain's fairness index of the per-task rates, (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one "
           "task did everything (null: no task completed any)",
           VFSSIM_NAN_REAL(jain)},
          {"latency_p50", Type::kTime, "time",
           "median per-op latency: an iteration's start (the task's previous iteration's end) to its end, over every "
           "iteration completed in the window, all tasks (log-linear histogram: within 0.4%; null: none completed)",
           VFSSIM_OPT_TIME(latency_p50)},
          {"latency_p99", Type::kTime, "time", "99th percentile of the per-op latency (null: none completed)",
           VFSSIM_OPT_TIME(latency_p99)},
          {"latency_p999", Type::kTime, "time", "99.9th percentile of the per-op latency (null: none completed)",
           VFSSIM_OPT_TIME(latency_p999)},
          {"latency_max", Type::kTime, "time", "the longest iteration (exact; null: none completed)",
           VFSSIM_OPT_TIME(latency_max)},
      },
      nullptr,
      &PointResult::tasks};
  return t;
}

const CurveFields& curve() {
  using R = CurvePoint;
  static const CurveFields t{
      "curve",
      {
          {"ops_per_sec", Type::kReal, "ops/s", "mean over the replications", VFSSIM_REAL(ops_per_sec)},
          {"stddev", Type::kReal, "ops/s",
           "sample standard deviation over the replications (0 with one replication: kept for compatibility; "
           "stddev_pct and ci95 are null then)",
           VFSSIM_REAL(stddev)},
          {"events", Type::kInteger, "events", "engine events, summed over the replications", VFSSIM_INT(events)},
          {"stddev_pct", Type::kReal, "%", "stddev / ops_per_sec (null with one replication)",
           [](const R& r, const Context&) -> Value { return opt(report::stddev_pct(r.ops_per_sec, r.stddev, reps_of(r))); }},
          {"ci95_lo", Type::kReal, "ops/s",
           "95% confidence interval of ops_per_sec, lower end: mean - t(0.975, n-1) stddev / sqrt(n), Student's t over "
           "the n replications (null with one)",
           [](const R& r, const Context&) -> Value {
             const auto ci = report::ci95(r.ops_per_sec, r.stddev, reps_of(r));
             return ci ? Value{ci->first} : Value{};
           },
           nullptr, nullptr, true, "ci95"},
          {"ci95_hi", Type::kReal, "ops/s", "95% confidence interval of ops_per_sec, upper end (null with one replication)",
           [](const R& r, const Context&) -> Value {
             const auto ci = report::ci95(r.ops_per_sec, r.stddev, reps_of(r));
             return ci ? Value{ci->second} : Value{};
           },
           nullptr, nullptr, true, "ci95"},
          // The bottleneck over the replications (results/review.h): JSON and
          // Python show it as the point's "bottleneck" object.
          {"bottleneck", Type::kText, "", "the bottleneck: the lock or line synchronized on most, above the threshold (null: none)",
           [](const R& r, const Context&) -> Value { const auto b = bottleneck_of(r); return b ? Value{b->name} : Value{}; },
           nullptr, nullptr, true, nullptr, false},
          {"bottleneck_kind", Type::kText, "", "lock or line (null: no bottleneck)",
           [](const R& r, const Context&) -> Value { const auto b = bottleneck_of(r); return b ? Value{b->kind} : Value{}; },
           nullptr, nullptr, true, nullptr, false},
          {"bottleneck_share", Type::kReal, "fraction", "the bottleneck's synchronizing time / CPU time",
           [](const R& r, const Context&) -> Value { const auto b = bottleneck_of(r); return b ? Value{b->share} : Value{}; },
           nullptr, nullptr, true, nullptr, false},
          {"bottleneck_margin", Type::kReal, "fraction", "the bottleneck's share minus the second's (null: no bottleneck)",
           [](const R& r, const Context&) -> Value { const auto b = bottleneck_of(r); return b ? Value{b->margin} : Value{}; },
           nullptr, nullptr, true, nullptr, false},
          // --uncertainty N (models/experiment/uncertainty.h): JSON and Python
          // "band": {"p10", "p50", "p90"}, absent without sampling.
          {"band_p10", Type::kReal, "ops/s",
           "--uncertainty: 10th percentile of the rate: the samples of the ranges with the model's error (null: not sampled)",
           [](const R& r, const Context&) -> Value { return band_value(r.band_p10); },
           [](R& r, const Value& v) { r.band_p10 = band_of(v); }, nullptr, true, "band", true, true, true},
          {"band_p50", Type::kReal, "ops/s", "--uncertainty: median rate, samples with the model's error (null: not sampled)",
           [](const R& r, const Context&) -> Value { return band_value(r.band_p50); },
           [](R& r, const Value& v) { r.band_p50 = band_of(v); }, nullptr, true, "band", true, true, true},
          {"band_p90", Type::kReal, "ops/s", "--uncertainty: 90th percentile of the rate, samples with the model's error (null: not sampled)",
           [](const R& r, const Context&) -> Value { return band_value(r.band_p90); },
           [](R& r, const Value& v) { r.band_p90 = band_of(v); }, nullptr, true, "band", true, true, true},
          // Stored so that --resume gives back the band, its parts and the
          // sensitivities from the samples themselves; JSON and Python show
          // them in those forms, not as this list.
          {"sample_rates", Type::kText, "ops/s",
           "--uncertainty: each sample's rate, in sample order, as a JSON list (null: not sampled)",
           [](const R& r, const Context&) -> Value {
             if (r.sample_rates.empty()) return Value{};
             nlohmann::json out = nlohmann::json::array();
             for (double v : r.sample_rates) out.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
             return Value{out.dump()};
           },
           [](R& r, const Value& v) {
             r.sample_rates.clear();
             if (const auto* text = std::get_if<std::string>(&v))
               for (const auto& x : nlohmann::json::parse(*text))
                 r.sample_rates.push_back(x.is_number() ? x.get<double>() : std::nan(""));
           },
           nullptr, true, nullptr, false},
      }};
  return t;
}

namespace {

template <class R>
nlohmann::ordered_json describe_fields(const std::vector<Field<R>>& fields) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::string group;
  int element = 0;
  for (const auto& f : fields) {
    element = f.group && group == f.group ? element + 1 : 0;
    group = f.group ? f.group : "";
    const nlohmann::ordered_json key = !f.shown ? nlohmann::ordered_json(nullptr)
                                       : f.group ? nlohmann::ordered_json(group + "[" + std::to_string(element) + "]")
                                                 : nlohmann::ordered_json(key_of(f));
    out.push_back({{"key", key},
                   {"name", f.name},
                   {"type", to_string(f.type)},
                   {"unit", f.type == Type::kTime ? "us (JSON, Python), ps (SQLite)" : f.unit},
                   {"description", f.description},
                   {"column", f.stored ? nlohmann::ordered_json(column_of(f)) : nlohmann::ordered_json(nullptr)},
                   {"sql_type", f.stored ? nlohmann::ordered_json(sql_type(f.type)) : nlohmann::ordered_json(nullptr)},
                   {"derived", f.set == nullptr}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json describe() {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  auto add = [&](const char* key, const char* sql, const char* rows, const auto& fields) {
    out[key] = {{"table", sql}, {"rows", rows}, {"fields", describe_fields(fields)}};
  };
  add("point", points().sql, points().description, points().fields);
  for_each_stats_table([&](const auto& t) { add(t.key, t.sql, t.description, t.fields); });
  add("curve", curve().sql, "run x strategy x variant x CPU count (the mean of its replications)", curve().fields);
  return out;
}

namespace {

Value from_json(const nlohmann::json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  return std::monostate{};
}

// The stored (read-back) fields of a record, by column name.
template <class R>
nlohmann::json pack_record(const std::vector<Field<R>>& fields, const R& r, const Context& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : fields)
    if (f.set) out[column_of(f)] = to_json(f.get(r, c));
  return out;
}

template <class R>
void unpack_record(const std::vector<Field<R>>& fields, const nlohmann::json& j, R& r) {
  if (!j.is_object()) throw std::invalid_argument("a packed record is not an object");
  for (const auto& f : fields)
    if (f.set) {
      const auto it = j.find(column_of(f));
      if (it == j.end()) throw std::invalid_argument(std::string("a packed record has no '") + column_of(f) + "'");
      f.set(r, from_json(*it));
    }
}

}  // namespace

nlohmann::json pack(const models::PointResult& p) {
  const Context c = context_of(p);
  nlohmann::json tables = nlohmann::json::object();
  for_each_stats_table([&](const auto& t) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto* r : rows_of(t, p)) rows.push_back(pack_record(t.fields, *r, c));
    tables[t.sql] = std::move(rows);
  });
  nlohmann::json out = {{"strategy", p.spec.strategy},       {"variant", p.spec.variant},
                        {"cpus", p.spec.cpus},               {"rep", p.spec.rep},
                        {"free_locks", p.spec.free_locks},   {"private_lines", p.spec.private_lines},
                        {"point", pack_record(points().fields, p, c)}, {"tables", std::move(tables)},
                        {"task_ops", p.task_ops}};
  if (p.spec.sample >= 0) out["sample"] = p.spec.sample;
  return out;
}

models::PointResult unpack(const nlohmann::json& j) {
  try {
    models::PointResult p;
    p.spec.strategy = j.at("strategy").get<std::string>();
    p.spec.variant = j.at("variant").get<std::string>();
    p.spec.cpus = j.at("cpus").get<int>();
    p.spec.rep = j.at("rep").get<int>();
    p.spec.free_locks = j.at("free_locks").get<std::vector<std::string>>();
    p.spec.private_lines = j.at("private_lines").get<std::vector<std::string>>();
    p.spec.sample = j.value("sample", -1);
    unpack_record(points().fields, j.at("point"), p);
    for_each_stats_table([&](const auto& t) {
      for (const auto& row : j.at("tables").at(t.sql)) unpack_record(t.fields, row, new_row(t, p));
    });
    p.task_ops = j.at("task_ops").get<std::vector<std::uint64_t>>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a packed point is malformed: ") + e.what());
  }
}

#undef VFSSIM_INT
#undef VFSSIM_REAL
#undef VFSSIM_TEXT
#undef VFSSIM_BOOL
#undef VFSSIM_TIME
#undef VFSSIM_SCOPE
#undef VFSSIM_NAN_REAL
#undef VFSSIM_OPT_TIME

}  // namespace vfssim::report::schema
