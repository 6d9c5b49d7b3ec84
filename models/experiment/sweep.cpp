// Sweeps under control: the plan checked before anything runs, per-point
// budgets, cancellation, results carried over from an interrupted run, and
// each curve point handed out as soon as its last replication finishes.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "models/codepath/program.h"
#include "models/experiment/experiment.h"
#include "models/experiment/point_run.h"
#include "models/experiment/refit.h"
#include "models/experiment/uncertainty.h"
#include "sim/parallel.h"

namespace vfssim::models {

namespace {

// Events per chunk between checks of the budgets: a few tens of
// milliseconds of engine work, so a wall-time budget or a Ctrl-C takes
// effect promptly.
constexpr std::uint64_t kChunkEvents = 1u << 18;
// Local steps per chunk: an event may run many of them (a task runs ahead
// of the clock through compute steps), about as much work as kChunkEvents.
constexpr std::uint64_t kChunkWork = 1u << 22;

std::string at_clock(const sim::Simulation& sim, sim::Time end) {
  return "at " + sim::format_duration(sim.now() - sim::kTimeZero) + " of simulated time (the run ends at " +
         sim::format_duration(end - sim::kTimeZero) + ")";
}

}  // namespace

sim::StopReason run_within_limits(sim::Simulation& sim, sim::Time end, const PointLimits& limits,
                                  std::chrono::steady_clock::time_point wall_start, std::string& limit_stop) {
  for (;;) {
    std::uint64_t chunk = kChunkEvents;
    if (limits.max_events > 0) {
      const std::uint64_t used = sim.events_executed();
      if (used >= limits.max_events) {
        limit_stop = "event budget exceeded: " + std::to_string(limits.max_events) + " events " + at_clock(sim, end);
        return sim::StopReason::kEventBudget;
      }
      chunk = std::min(chunk, limits.max_events - used);
    }
    const sim::StopReason why = sim.run(sim::RunLimits{end, chunk, kChunkWork});
    if (why != sim::StopReason::kEventBudget) return why;
    if (limits.cancelled && limits.cancelled()) {
      limit_stop = "cancelled " + at_clock(sim, end);
      return sim::StopReason::kRequested;
    }
    if (limits.max_wall_seconds > 0) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      if (wall > limits.max_wall_seconds) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", limits.max_wall_seconds);
        limit_stop = std::string("wall-time budget exceeded: ") + secs + " s of wall-clock time " + at_clock(sim, end);
        return sim::StopReason::kRequested;
      }
    }
  }
}

std::string stop_description(sim::StopReason why, const std::string& limit_stop, const Executor& exec) {
  if (!limit_stop.empty()) return limit_stop;
  if (!exec.model_stop().empty()) return exec.model_stop();
  // CPUs each waiting for a lock the next one holds: none can ever go on,
  // whether or not the rest of the machine still runs.
  const std::string cycle = exec.wait_cycle();
  if (!cycle.empty()) return "deadlock: " + cycle;
  if (why == sim::StopReason::kQueueEmpty) {
    const std::string waits = exec.waits(4);
    if (!waits.empty()) return "deadlock: " + waits;  // blocked for good with nothing left to wake them
    return sim::to_string(sim::StopReason::kTimeLimit);  // every task ran past the end of the window
  }
  return sim::to_string(why);
}

bool deadlocked(const PointResult& p) { return p.stop.rfind("deadlock", 0) == 0; }

bool finished(const PointResult& p) { return p.stop == sim::to_string(sim::StopReason::kTimeLimit) || deadlocked(p); }

bool finished(const CurvePoint& cp) {
  if (cp.reps.empty()) return false;
  for (const auto& r : cp.reps)
    if (!finished(r)) return false;
  for (double x : cp.sample_rates)  // a sample not run (or stopped by its budget)
    if (std::isnan(x)) return false;
  return true;
}

void summarize(CurvePoint& cp) {
  const double n = static_cast<double>(cp.reps.size());
  double sum = 0;
  cp.events = 0;
  for (const auto& r : cp.reps) {
    sum += r.ops_per_sec;
    cp.events += r.events;
  }
  cp.ops_per_sec = cp.reps.empty() ? 0.0 : sum / n;
  double ss = 0;
  for (const auto& r : cp.reps) ss += (r.ops_per_sec - cp.ops_per_sec) * (r.ops_per_sec - cp.ops_per_sec);
  cp.stddev = cp.reps.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
}

namespace {

std::string share_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

// A sweep runs each (strategy, variant, CPU count) once: a name or count
// listed twice would make two curve rows of one point.
template <class T>
void refuse_duplicates(const std::vector<T>& list, const char* what) {
  for (std::size_t i = 0; i < list.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (list[i] == list[j]) {
        std::string v;
        if constexpr (std::is_same_v<T, std::string>) v = "'" + list[i] + "'";
        else v = std::to_string(list[i]);
        throw std::invalid_argument(std::string(what) + " " + v + " is listed twice");
      }
}

}  // namespace

SweepPlan plan_sweep(const Scenario& scenario, const SweepSpec& spec) {
  refuse_duplicates(spec.strategies, "strategy");
  refuse_duplicates(spec.variants, "variant");
  refuse_duplicates(spec.cpus, "CPU count");
  std::vector<std::string> strategies = spec.strategies;
  if (strategies.empty())
    for (const auto& s : scenario.strategies) strategies.push_back(s.name);
  for (const auto& s : strategies) (void)scenario.strategy(s);  // throws on unknown names
  check_what_ifs(scenario, strategies, spec.what_ifs);
  std::vector<std::string> variants = spec.variants;
  if (variants.empty()) variants.push_back("default");

  SweepPlan plan;
  plan.reps = spec.reps < 1 ? 1 : spec.reps;
  for (const auto& s : strategies)
    for (const auto& vn : variants) {
      const Variant v = resolve_variant(scenario, vn);
      const Topology topo(v.machine);
      // Compile errors (a repeat expanded too far, a parameter out of
      // range) are bad input: report them before any point runs.
      const Program program = compile_program(scenario.strategy(s), v.workload, v.params);
      // The executor stops a run after kMaxZeroTimeIterations zero-time
      // iterations in a row as a stall; below 1% of iterations taking time
      // that would stop a valid run by chance (0.99^10000 is 2e-44), so such
      // a loop is refused here with the reason. Each role's loop apart.
      const auto marks = v.workload.loop_marks();
      for (std::size_t role = 0; role < marks.size(); ++role) {
        const double stalled = zero_time_probability(program, spec.what_ifs.free_locks, role);
        if (stalled <= Executor::kMaxZeroTimeShare) continue;
        const std::string where = "one iteration of the loop of " +
                                  (v.workload.roles.empty() ? "" : "role '" + v.workload.roles[role].name + "' of ") +
                                  "strategy '" + s + "'" + (vn == "default" ? "" : " in variant '" + vn + "'");
        if (stalled >= 1.0)
          throw ScenarioError(marks[role],
                              where + " takes no simulated time (every step it can reach is zero time" +
                                  (spec.what_ifs.free_locks.empty() ? "" : ", with the what-if's free locks") +
                                  "): the run would never advance",
                              "a step that takes time (compute: 1ns, a lock, an atomic) that the loop reaches");
        throw ScenarioError(marks[role],
                            where + " takes simulated time with probability " + share_text(1 - stalled) +
                                " only (branches around every timed step): the run would stall at one instant",
                            "at least " + share_text(1 - Executor::kMaxZeroTimeShare) +
                                " of iterations taking time (a timed step outside the branches)");
      }
      const std::vector<int> cpus = spec.cpus.empty() ? v.workload.cpus : spec.cpus;
      for (int c : cpus) {
        if (c < 1 || c > topo.num_cpus())
          throw std::invalid_argument("cannot run on " + std::to_string(c) + " CPUs: machine " + topo.name() + " has " +
                                      std::to_string(topo.num_cpus()));
        // The profile's 100% is CPUs x window, and every CPU's time is
        // summed in picoseconds: keep that inside the int64 clock.
        const double cpu_ps = static_cast<double>((v.workload.warmup + v.workload.duration).count()) * c;
        if (cpu_ps > 2e18)
          throw std::invalid_argument("variant '" + vn + "' at " + std::to_string(c) + " CPUs simulates " +
                                      sim::format_duration(v.workload.warmup + v.workload.duration) +
                                      " on every CPU: more than the 2e18 ps (about 550 CPU-hours) of CPU time a "
                                      "point can count; shorten the warmup and duration");
        // Roles that do not fit this CPU count (a --cpus list the file's sweep does not have): at the role.
        (void)assign_roles(v.workload, topo, Scenario::place_tasks(topo, v.workload, c));
        CurvePoint cp;
        cp.strategy = s;
        cp.variant = vn;
        cp.cpus = c;
        cp.reps.resize(plan.reps);
        plan.curve.push_back(std::move(cp));
        for (int r = 0; r < plan.reps; ++r) {
          plan.points.push_back(PointSpec{s, c, r, rep_seed(spec.seed, r), vn});
          plan.cost.push_back(cpu_ps);
          apply_what_ifs(scenario, spec.what_ifs, plan.points.back());
        }
      }
    }
  return plan;
}

std::vector<CurvePoint> run_sweep(const Scenario& scenario, const SweepSpec& spec, const ProgressFn& progress,
                                  const SweepControl& control) {
  SweepPlan plan = plan_sweep(scenario, spec);
  std::vector<CurvePoint>& curve = plan.curve;
  const int reps = plan.reps;
  // --uncertainty: job plan.points.size() + c * n + i runs curve point c's
  // replication 0 on sample i.
  const int n = spec.uncertainty;
  if (n < 0 || n > kMaxUncertaintySamples)
    throw std::invalid_argument("--uncertainty must be from 0 to " + std::to_string(kMaxUncertaintySamples));
  const std::size_t sample_base = plan.points.size();

  std::vector<std::size_t> todo;  // indices into plan.points, then sample jobs
  std::vector<int> left(curve.size(), reps + n);
  for (std::size_t c = 0; c < curve.size(); ++c) {
    if (control.preload && control.preload(curve[c])) {
      left[c] = 0;
      continue;
    }
    for (int r = 0; r < reps; ++r) todo.push_back(c * reps + r);
    curve[c].sample_rates.assign(n, std::nan(""));  // a preloaded point has its stored samples (older rows: its stored band)
    for (int i = 0; i < n; ++i) todo.push_back(sample_base + c * n + i);
  }
  // Longest first: taken in plan order, the biggest CPU counts come last
  // and one worker runs the last of them while the others idle. Each job
  // writes its own slot, so the order changes nothing in the results.
  std::stable_sort(todo.begin(), todo.end(), [&](std::size_t a, std::size_t b) {
    const auto cost = [&](std::size_t i) {
      return plan.cost[i >= sample_base ? (i - sample_base) / n * reps : i];
    };
    return cost(a) > cost(b);
  });

  // Each sample's scenario, its fitted constants re-fitted (refit.h): job
  // i of the first n makes sample i, and a point's job on sample i comes
  // after it: the re-fits and the points of the samples made run side by
  // side. When every point was preloaded (--resume) only the
  // drawn values are needed (the sensitivities read them), and no re-fit
  // runs.
  const bool runs_samples = std::any_of(todo.begin(), todo.end(), [&](std::size_t i) { return i >= sample_base; });
  const std::size_t makes = static_cast<std::size_t>(n);
  const std::vector<RangeSample> drawn = n > 0 ? draw_samples(scenario, n, spec.seed) : std::vector<RangeSample>{};
  std::vector<RangeSample> samples = drawn;  // as made (spare draws, re-fits) once made
  std::vector<SampledScenario> sampled(makes);
  std::vector<int> sample_left(makes, 0);  // point jobs still to read sample i's re-fit simulations
  std::vector<std::vector<std::size_t>> after(makes + todo.size());
  for (std::size_t k = 0; k < todo.size(); ++k)
    if (todo[k] >= sample_base) {
      const std::size_t i = (todo[k] - sample_base) % makes;
      after[makes + k].push_back(i);
      ++sample_left[i];
    }

  std::mutex mutex;  // guards curve, left, done, the samples' simulations and the callbacks
  std::size_t done = 0;
  std::atomic<bool> out_of_budget{false};
  PointLimits limits = control.limits;
  sim::parallel_for_after(
      makes + todo.size(), spec.jobs == 0 ? sim::default_jobs() : spec.jobs, after,
      [&](std::size_t job) {
        if (job < makes) {
          sampled[job] = sampled_scenario(scenario, n, spec.seed, static_cast<int>(job), control.limits, runs_samples, &drawn);
          int simulations = 0;
          for (const auto& f : sampled[job].fits) simulations += f.evaluations;
          std::lock_guard<std::mutex> lk(mutex);
          samples[job] = sampled[job].sample;
          if (control.on_sample) control.on_sample(static_cast<int>(job), simulations);
          return;
        }
        const std::size_t i = todo[job - makes];
        const bool is_sample = i >= sample_base;
        const std::size_t c = is_sample ? (i - sample_base) / n : i / reps;
        const int sample = is_sample ? static_cast<int>((i - sample_base) % n) : -1;
        const PointSpec& ps = is_sample ? plan.points[c * reps] : plan.points[i];
        if (control.on_start) control.on_start(ps);
        PointResult res;
        if (is_sample) {
          // A simulation the sample's re-fits ran is not run again.
          const Scenario& sc = sampled[sample].scenario;
          const std::string fingerprint = sampled[sample].points.empty() ? std::string() : point_fingerprint(sc, ps);
          std::unique_lock<std::mutex> lk(mutex);
          const auto it = sampled[sample].points.find(fingerprint);
          const bool ran = it != sampled[sample].points.end();
          if (ran) res = it->second, res.spec = ps;
          lk.unlock();
          if (!ran) res = run_point(sc, ps, limits);
        } else {
          res = run_point(scenario, ps, limits);
        }
        const bool ok = finished(res);
        // A point that ran out of its budget is a sign for the rest: stop
        // launching (points already running finish or hit their own).
        if (!ok && (!control.limits.cancelled || !control.limits.cancelled())) out_of_budget = true;
        std::lock_guard<std::mutex> lk(mutex);
        CurvePoint& cp = curve[c];
        if (is_sample) {
          if (ok) cp.sample_rates[sample] = res.ops_per_sec;
          if (--sample_left[sample] == 0) sampled[sample].points.clear();
          if (progress) progress(++done, todo.size(), res);
        } else {
          cp.reps[i % reps] = std::move(res);
          if (progress) progress(++done, todo.size(), cp.reps[i % reps]);
        }
        if (--left[c] == 0 && finished(cp)) {
          summarize(cp);
          summarize_samples(cp, scenario.ranges, samples);
          if (control.finish_point) control.finish_point(cp);
          if (control.on_curve_point) control.on_curve_point(cp);
        }
      },
      [&] { return out_of_budget.load() || (control.limits.cancelled && control.limits.cancelled()); });

  for (std::size_t c = 0; c < curve.size(); ++c) {
    summarize(curve[c]);
    if (!finished(curve[c])) continue;
    summarize_samples(curve[c], scenario.ranges, samples);
    if (control.finish_point) control.finish_point(curve[c]);
  }
  return curve;
}

}  // namespace vfssim::models
