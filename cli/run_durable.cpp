#include "cli/run_durable.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "cli/options.h"
#include "cli/progress.h"
#include "results/report.h"

namespace po = boost::program_options;

namespace vfssim::report {

namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int sig) { g_signal = sig; }

// SIGINT and SIGTERM set a flag while a sweep runs; a second one kills the
// process as usual (SA_RESETHAND): what is committed stays committed.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string where(const models::CurvePoint& cp) {
  return series_name(cp.strategy, cp.variant) + " @ " + count_of(static_cast<std::size_t>(cp.cpus), "CPU");
}

// The curve points a sweep plans, in order, and its --free/--private
// what-ifs: with the resolved scenario (--set applied), seed and
// replications, what identifies a run to --resume.
std::string sweep_key(const models::SweepPlan& plan, const models::WhatIfs& w, int uncertainty) {
  std::string key;
  for (const auto& cp : plan.curve)
    key += (key.empty() ? "" : " ") + cp.strategy + "/" + cp.variant + "@" + std::to_string(cp.cpus);
  for (const auto& n : w.free_locks) key += " free:" + n;
  for (const auto& n : w.private_lines) key += " private:" + n;
  if (uncertainty > 0) key += " uncertainty:" + std::to_string(uncertainty);
  return key;
}

std::uint64_t parse_max_events(const std::string& s) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty() || !(v >= 0) || v > 1.8e19 || v != static_cast<double>(static_cast<std::uint64_t>(v)))
    throw po::error("--max-events: '" + s + "' is not a whole number of events (expected e.g. 2e9, or 0 for no limit)");
  return static_cast<std::uint64_t>(v);
}

std::string command_line(const std::vector<std::string>& args) {
  std::string s = "vfssim run";
  for (const auto& a : args) {
    if (a == "--resume") continue;
    const bool plain = !a.empty() && a.find_first_of(" \t'\"\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
      s += " " + a;
    } else {
      std::string q;
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += " '" + q + "'";
    }
  }
  return s + " --resume";
}

}  // namespace

void add_budget_options(po::options_description& opts, BudgetOptions& budget) {
  opts.add_options()
    ("max-events", po::value(&budget.max_events)->default_value(budget.max_events),
     "engine events allowed per point (0: no limit); a point past it stops with an error")
    ("max-wall", po::value(&budget.max_wall_seconds)->default_value(budget.max_wall_seconds),
     "wall-clock seconds allowed per point (0: no limit)");
}

models::PointLimits point_limits(const BudgetOptions& budget) {
  models::PointLimits limits;
  limits.max_events = parse_max_events(budget.max_events);
  if (!(budget.max_wall_seconds >= 0))
    throw po::error("--max-wall must be 0 (no limit) or a positive number of seconds");
  limits.max_wall_seconds = budget.max_wall_seconds;
  return limits;
}

namespace {

void explain_budget(const std::string& stop, std::ostream& err) {
  if (stop.rfind("event budget", 0) == 0)
    err << "  raise --max-events (0: no limit), or shorten the scenario's warmup and duration\n";
  else if (stop.rfind("wall-time budget", 0) == 0)
    err << "  raise --max-wall (0: no limit), or shorten the scenario's warmup and duration\n";
}

}  // namespace

bool report_budget_stops(const std::vector<models::PointResult>& results, const std::string& command,
                         std::ostream& err) {
  bool any = false;
  for (const auto& r : results) {
    if (r.stop.empty() || models::finished(r)) continue;
    any = true;
    err << "vfssim " << command << ": " << r.spec.strategy << "/" << r.spec.variant << " @ " << r.spec.cpus
        << " CPUs rep " << r.spec.rep << ": " << r.stop << "\n";
    explain_budget(r.stop, err);
  }
  return any;
}

void add_durable_options(po::options_description& opts, DurableOptions& o) {
  add_budget_options(opts, o.budget);
  opts.add_options()
    ("resume", "complete the latest run of the same resolved scenario (machine, extends, every parameter), "
               "tool version, seed, replications, strategies, variants and CPUs in the database: points already "
               "stored are not run again");
}

bool SweepOutcome::complete() const {
  if (signal != 0) return false;
  for (const auto& cp : curve)
    if (!models::finished(cp)) return false;
  return true;
}

SweepOutcome run_durable_sweep(const models::Scenario& sc, const models::SweepSpec& spec, const DurableOptions& o) {
  const models::PointLimits budget = point_limits(o.budget);
  models::SweepPlan plan;
  try {
    plan = models::plan_sweep(sc, spec);  // bad input stops here, before the database is touched
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }

  SweepOutcome out;
  out.db = o.db;
  out.args = o.args;
  std::map<std::tuple<std::string, std::string, int>, models::CurvePoint> earlier;
  if (o.db.empty()) {
    if (o.resume) throw po::error("--resume needs the results database the run is stored in (--db PATH)");
  } else {
    out.store = std::make_unique<Store>(o.db);
    const std::string joined = join_args(o.args);
    const std::string key = sweep_key(plan, spec.what_ifs, spec.uncertainty);
    if (o.resume) {
      if (const auto id = out.store->find_run(sc, spec.seed, plan.reps, key)) {
        out.run_id = *id;
        out.was_done = out.store->run_status(*id) == "done";
        for (auto& cp : out.store->load_curve(*id))
          if (models::finished(cp) && static_cast<int>(cp.reps.size()) == plan.reps)
            earlier[{cp.strategy, cp.variant, cp.cpus}] = std::move(cp);
        if (!out.was_done) out.store->set_status(out.run_id, "running", 0);
        if (!o.quiet)
          std::cerr << "resuming run " << out.run_id << " in " << o.db << ": " << earlier.size() << " of "
                    << plan.curve.size() << " curve points already stored\n";
      } else if (!o.quiet) {
        std::cerr << "no earlier run of this sweep in " << o.db << ": starting a new one\n";
      }
    }
    if (out.run_id == 0) out.run_id = out.store->begin_run(sc, spec.seed, plan.reps, joined, key);
  }
  out.stored = earlier.size();

  models::SweepControl control;
  control.limits.max_events = budget.max_events;
  control.limits.max_wall_seconds = budget.max_wall_seconds;
  control.limits.cancelled = [] { return g_signal != 0; };
  control.preload = [&](models::CurvePoint& cp) {
    auto it = earlier.find({cp.strategy, cp.variant, cp.cpus});
    if (it == earlier.end()) return false;
    cp = it->second;
    return true;
  };
  if (o.model_error) control.finish_point = [&](models::CurvePoint& cp) { o.model_error->apply(cp); };
  if (out.store)
    control.on_curve_point = [&](const models::CurvePoint& cp) {
      try {
        out.store->add_point(out.run_id, cp);  // committed now: an interrupt later cannot lose it
      } catch (const StoreError& e) {
        // A full disk, a lost file: the point is lost, not the ones before
        // it. This is a run that failed (exit 1), not bad input.
        throw std::runtime_error("cannot store " + where(cp) + ": " + e.what() + "; " + std::to_string(out.stored) +
                                 " of " + std::to_string(plan.curve.size()) + " curve points are stored in run " +
                                 std::to_string(out.run_id) + " of " + o.db +
                                 "; once there is room, complete it with\n  " + command_line(out.args));
      }
      ++out.stored;
    };
  Progress bar(o.progress, plan.points.size() - earlier.size() * static_cast<std::size_t>(plan.reps),
               plan.reps > 1 ? "replication" : "point", std::cerr);
  control.on_start = [&bar](const models::PointSpec&) { bar.start(); };
  control.on_sample = [&bar](int sample, int simulations) {
    bar.note("sample " + std::to_string(sample) + " made" +
             (simulations > 0 ? ", its fitted constants re-fitted in " + count_of(static_cast<std::size_t>(simulations), "simulation")
                              : std::string()));
  };
  auto progress = [&bar](std::size_t, std::size_t total, const models::PointResult& p) {
    bar.set_total(total);
    bar.finish(series_name(p.spec.strategy, p.spec.variant) + " @ " + count_of(p.spec.cpus, "CPU"));
  };

  const auto t0 = std::chrono::steady_clock::now();
  {
    SignalGuard guard;
    try {
      out.curve = models::run_sweep(sc, spec, progress, control);
    } catch (const std::exception& e) {
      // A point that fails (a model invariant, a resource, the store) ends
      // the run: its row says so and why rather than "running"; the
      // finished points stay.
      if (out.store) {
        try {
          out.store->set_status(out.run_id, "failed",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                                e.what());
        } catch (const StoreError&) {
          // The disk that refused a point refuses this too; the error being
          // thrown says what is stored, and `history` shows the row
          // 'abandoned' once this process is gone.
        }
      }
      throw;
    }
    out.signal = g_signal;
  }
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

int finish_incomplete(SweepOutcome& out, std::ostream& err) {
  for (const auto& cp : out.curve)
    for (const auto& r : cp.reps)
      if (!r.stop.empty() && !models::finished(r) && r.stop.rfind("cancelled", 0) != 0) {
        err << "vfssim: " << where(cp) << (cp.reps.size() > 1 ? " rep " + std::to_string(r.spec.rep) : "") << ": "
            << r.stop << "\n";
        explain_budget(r.stop, err);
      }
  const char* what = out.signal == SIGINT ? "interrupted (SIGINT)" : out.signal == SIGTERM ? "terminated (SIGTERM)" : "stopped";
  if (out.store) {
    std::string reason = out.signal ? what : "";
    for (const auto& cp : out.curve)
      for (const auto& r : cp.reps)
        if (reason.empty() && !r.stop.empty() && !models::finished(r)) reason = where(cp) + ": " + r.stop;
    out.store->set_status(out.run_id, out.signal ? "interrupted" : "failed", out.wall, reason);
    err << "vfssim: " << what << ": " << out.stored << " of " << out.curve.size() << " curve points are stored in run "
        << out.run_id << " of " << out.db << "; to complete it, run\n  " << command_line(out.args) << "\n";
  } else {
    err << "vfssim: " << what << ": nothing was stored (--db '')\n";
  }
  return out.signal ? 128 + out.signal : 1;
}

int report_deadlocks(const SweepOutcome& out, std::ostream& err) {
  int status = 0;
  for (const auto& cp : out.curve)
    for (const auto& r : cp.reps)
      if (models::deadlocked(r)) {
        err << "vfssim: " << where(cp) << (cp.reps.size() > 1 ? " rep " + std::to_string(r.spec.rep) : "") << ": "
            << r.stop << "\n";
        status = 1;
      }
  return status;
}

}  // namespace vfssim::report
