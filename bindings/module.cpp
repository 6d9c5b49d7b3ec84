// The `vfssim` Python module's native part (_vfssim).
//
// It runs the same engine as the CLI, in-process. A scenario is loaded
// once into a NativeScenario (the validated models::Scenario) and run as
// often as wanted; runs release the GIL, sweeps use all cores through the
// engine's parallel sweep, and results come back as plain dicts and lists
// that vfssim/*.py turn into objects and pandas DataFrames.
//
// Long runs stay interruptible: the engine runs on a helper thread while
// the calling thread waits with the GIL released, waking every 50 ms (or
// when a point finishes) to deliver progress callbacks and to check for
// Ctrl-C, both with the GIL held. A Python exception there (a callback
// that raises, KeyboardInterrupt) cancels the sweep: no new point starts,
// points in flight stop at their next chunk of events, and the exception
// is raised once the engine has stopped.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <type_traits>

#include "results/discrepancy.h"
#include "results/fits.h"
#include "results/report.h"
#include "results/review.h"
#include "results/schema.h"
#include "results/score.h"
#include "results/validation.h"
#include "models/experiment/experiment.h"
#include "models/experiment/refit.h"
#include "models/experiment/fits.h"
#include "models/experiment/uncertainty.h"
#include "models/scenario/scenario.h"
#include "sim/parallel.h"

namespace py = pybind11;
using namespace vfssim;

namespace {

using ScenarioPtr = std::shared_ptr<const models::Scenario>;

// pybind11 passes None as a null holder: the entry points take the
// scenario through this, so None is a TypeError, not a null dereference.
const models::Scenario& scenario_of(const ScenarioPtr& sc) {
  if (!sc) throw py::type_error("scenario is None: expected a NativeScenario (vfssim.Scenario(...).native)");
  return *sc;
}

double us(sim::Duration d) { return static_cast<double>(d.count()) * 1e-6; }

// ---------------------------------------------------------------------------
// Results as Python data (the GIL is held).

py::object value_py(const report::schema::Value& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>) return py::none();
        else return py::cast(x);
      },
      v);
}

// One record as a dict, keyed as in the JSON document (results/schema.h).
template <class R>
py::dict record_dict(const std::vector<report::schema::Field<R>>& fields, const R& r,
                     const report::schema::Context& c) {
  py::dict d;
  for (const auto& v : report::schema::shown_record(fields, r, c)) {
    if (v.optional && report::schema::all_null(v.values)) continue;
    if (!v.list) {
      d[py::str(v.key)] = value_py(v.values.front());
      continue;
    }
    if (v.object) {
      py::dict obj;
      for (std::size_t i = 0; i < v.values.size(); ++i) obj[py::str(v.names[i])] = value_py(v.values[i]);
      d[py::str(v.key)] = obj;
      continue;
    }
    py::list list;
    for (const auto& x : v.values) list.append(value_py(x));
    d[py::str(v.key)] = report::schema::all_null(v.values) ? py::object(py::none()) : py::object(list);
  }
  return d;
}

// As bottleneck_json: {"name", "kind", "share", "margin"} or None.
py::object bottleneck_obj(const std::optional<report::Bottleneck>& b) {
  if (!b) return py::none();
  return py::module_::import("json").attr("loads")(report::bottleneck_json(b).dump());
}

py::dict point_dict(const models::PointResult& p) {
  namespace schema = report::schema;
  py::dict d;
  d["strategy"] = p.spec.strategy;
  d["variant"] = p.spec.variant;
  d["cpus"] = p.spec.cpus;
  d["rep"] = p.spec.rep;
  d["free_locks"] = p.spec.free_locks;
  d["private_lines"] = p.spec.private_lines;
  const schema::Context c = schema::context_of(p);
  // seed, ops_per_sec, ..., cpu_time_us; then lock_stat, lines, seqcounts, pools, profile, rcu.
  d.attr("update")(record_dict(schema::points().fields, p, c));
  d["finished"] = models::finished(p);
  d["deadlocked"] = models::deadlocked(p);
  schema::for_each_stats_table([&](const auto& t) {
    const auto rows = schema::rows_of(t, p);
    if (!t.list) {
      d[t.key] = record_dict(t.fields, *rows.front(), c);
      return;
    }
    py::list list;
    for (const auto* r : rows) list.append(record_dict(t.fields, *r, c));
    d[t.key] = list;
  });
  d["bottleneck"] = bottleneck_obj(report::find_bottleneck({p}));
  // The result itself, for find_bottleneck / next_bottlenecks over several points.
  d["native"] = std::make_shared<models::PointResult>(p);
  return d;
}

using NativePoint = std::shared_ptr<models::PointResult>;

std::vector<models::PointResult> unwrap(const std::vector<NativePoint>& points) {
  std::vector<models::PointResult> out;
  for (const auto& p : points) {
    if (!p) throw std::invalid_argument("a point is None");
    out.push_back(*p);
  }
  return out;
}

py::dict curve_dict(const models::CurvePoint& cp) {
  py::dict d;
  d["strategy"] = cp.strategy;
  d["variant"] = cp.variant;
  d["cpus"] = cp.cpus;
  d.attr("update")(record_dict(report::schema::curve().fields, cp, {}));  // ops_per_sec, stddev, events
  d["finished"] = models::finished(cp);
  py::list reps;
  for (const auto& r : cp.reps) reps.append(point_dict(r));
  d["reps"] = reps;
  d["bottleneck"] = bottleneck_obj(cp.reps.empty() ? std::nullopt : report::find_bottleneck(cp.reps));
  if (!cp.sample_rates.empty()) {  // --uncertainty: as the document's sensitivity, and each sample's rate
    py::list sens;
    for (const auto& [name, rho] : cp.sensitivity) sens.append(py::dict(py::arg("constant") = name, py::arg("rho") = rho));
    d["sensitivity"] = sens;
    d["sample_rates"] = cp.sample_rates;
  }
  return d;
}

// ---------------------------------------------------------------------------
// Running the engine off the calling thread.

// One finished point, for the progress callback.
struct ProgressEvent {
  std::size_t done = 0, total = 0;
  std::string strategy, variant;
  int cpus = 0, rep = 0;
  double ops_per_sec = 0;
};

// Runs `work` on a helper thread while this thread (which holds the GIL
// on entry and on return) waits with the GIL released. Progress events
// the work posts are handed to `callback` on this thread with the GIL
// held. A Python exception from the callback or a pending signal
// (KeyboardInterrupt) sets the flag cancel_check() reads, which the work
// polls, and is raised once the work has returned; an exception of the
// work itself is rethrown as is. The callback is not called again after
// an exception.
class Runner {
 public:
  explicit Runner(py::object callback) : callback_(std::move(callback)) {}

  void post(ProgressEvent e) {
    {
      std::lock_guard<std::mutex> lk(mutex_);
      queue_.push_back(std::move(e));
    }
    cv_.notify_one();
  }
  std::function<bool()> cancel_check() const {
    return [this] { return cancelled_.load(std::memory_order_relaxed); };
  }

  void run(const std::function<void()>& work) {
    std::exception_ptr work_error, py_error;
    {
      py::gil_scoped_release release;
      std::thread worker([&] {
        try {
          work();
        } catch (...) {
          work_error = std::current_exception();
        }
        {
          std::lock_guard<std::mutex> lk(mutex_);
          finished_ = true;
        }
        cv_.notify_one();
      });
      for (;;) {
        std::deque<ProgressEvent> events;
        bool finished = false;
        {
          std::unique_lock<std::mutex> lk(mutex_);
          cv_.wait_for(lk, std::chrono::milliseconds(50), [&] { return finished_ || !queue_.empty(); });
          events.swap(queue_);
          finished = finished_;
        }
        if (!py_error) {
          py::gil_scoped_acquire acquire;
          try {
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            if (!callback_.is_none())
              for (const auto& e : events) {
                py::dict info;
                info["strategy"] = e.strategy;
                info["variant"] = e.variant;
                info["cpus"] = e.cpus;
                info["rep"] = e.rep;
                info["ops_per_sec"] = e.ops_per_sec;
                callback_(e.done, e.total, info);
              }
          } catch (...) {
            py_error = std::current_exception();
            cancelled_ = true;
          }
        }
        if (finished) break;
      }
      worker.join();
    }
    if (py_error) std::rethrow_exception(py_error);
    if (work_error) std::rethrow_exception(work_error);
  }

 private:
  py::object callback_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<ProgressEvent> queue_;
  bool finished_ = false;
  std::atomic<bool> cancelled_{false};
};

models::SweepSpec make_spec(const std::vector<std::string>& strategies, const std::vector<std::string>& variants,
                            const std::vector<int>& cpus, int reps, std::uint64_t seed, unsigned jobs,
                            int uncertainty = 0) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1, not " + std::to_string(reps));
  if (uncertainty < 0 || uncertainty > models::kMaxUncertaintySamples)
    throw std::invalid_argument("uncertainty must be from 0 to " + std::to_string(models::kMaxUncertaintySamples) +
                                ", not " + std::to_string(uncertainty));
  models::SweepSpec spec;
  spec.strategies = strategies;
  spec.variants = variants;
  spec.cpus = cpus;
  spec.reps = reps;
  spec.seed = seed;
  spec.jobs = jobs;
  spec.uncertainty = uncertainty;
  return spec;
}

// uncertainty=N samples the scenario's ranges: refused, as `vfssim run --uncertainty` refuses it,
// on a scenario with none to draw (N plain runs per point would give bands of no width).
void check_uncertainty(const models::Scenario& sc, int uncertainty) {
  if (uncertainty > 0 && !models::draws_ranges(sc))
    throw std::invalid_argument("uncertainty=" + std::to_string(uncertainty) + ": scenario '" + sc.name +
                                "' has no ranges to sample (docs/scenario-format.md, \"Ranges\"" +
                                (sc.ranges.empty() ? ")" : "; its fitted constants are re-fitted to their figures, not drawn)"));
}

// uncertainty=N: the model's error that widens each band, as `vfssim run
// --uncertainty` widens it (results/discrepancy.h); without the corpus's
// table a RuntimeWarning says the bands are the parameters' alone, as the
// CLI says it on stderr. Called with the GIL held.
std::optional<report::ModelError> model_error_of(int uncertainty) {
  if (uncertainty <= 0) return std::nullopt;
  try {
    return report::ModelError();
  } catch (const std::runtime_error& e) {
    const std::string text = std::string("the bands are the parameters' alone: ") + e.what();
    if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) throw py::error_already_set();
    return std::nullopt;
  }
}

std::vector<models::CurvePoint> sweep_curve(const models::Scenario& sc, const models::SweepSpec& spec,
                                            const py::object& progress) {
  Runner runner(progress);
  std::vector<models::CurvePoint> curve;
  models::SweepControl control;
  control.limits.cancelled = runner.cancel_check();
  const auto model_error = model_error_of(spec.uncertainty);
  if (model_error) control.finish_point = [&](models::CurvePoint& cp) { model_error->apply(cp); };
  const models::ProgressFn on_point = [&](std::size_t done, std::size_t total, const models::PointResult& p) {
    runner.post(ProgressEvent{done, total, p.spec.strategy, p.spec.variant, p.spec.cpus, p.spec.rep, p.ops_per_sec});
  };
  runner.run([&] { curve = models::run_sweep(sc, spec, on_point, control); });
  // No budgets are set and a cancelled sweep raised above: every point ran.
  for (const auto& cp : curve)
    for (const auto& r : cp.reps)
      if (!models::finished(r))
        throw std::runtime_error("point " + cp.strategy + "/" + cp.variant + "@" + std::to_string(cp.cpus) +
                                 " did not finish: " + (r.stop.empty() ? std::string("not run") : r.stop));
  return curve;
}

// One point to run: (strategy, variant, cpus, rep, free_locks, private_lines), and for a job of an
// uncertainty sweep the sample of the ranges it runs (Python: a 7th element).
using PointTuple = std::tuple<std::string, std::string, int, int, std::vector<std::string>, std::vector<std::string>>;
struct Job {
  PointTuple point;
  int sample = -1;
};

// `h` as a T, or a TypeError naming `what` it is and the type it must be (pybind11's own
// says only "Unable to cast Python instance to C++ type").
template <class T>
T cast_field(const py::handle& h, const std::string& what, const char* type) {
  // A str is a sequence of str: as a list of names it would be its characters.
  if constexpr (std::is_same_v<T, std::vector<std::string>>)
    if (py::isinstance<py::str>(h)) throw py::type_error(what + " must be " + type + ", not a str");
  try {
    return h.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(what + " must be " + type + ", not " + py::str(h.get_type().attr("__name__")).cast<std::string>() +
                         " " + py::repr(h).cast<std::string>());
  }
}

Job job_of(const py::handle& h) {
  const auto t = cast_field<py::tuple>(h, "a point", "a tuple");
  if (t.size() != 6 && t.size() != 7)
    throw std::invalid_argument("a point is (strategy, variant, cpus, rep, free_locks, private_lines[, sample]), not " +
                                std::to_string(t.size()) + " values");
  Job j;
  j.point = PointTuple{cast_field<std::string>(t[0], "the strategy of a point", "a str"),
                       cast_field<std::string>(t[1], "the variant of a point", "a str"),
                       cast_field<int>(t[2], "the cpus of a point", "an int"),
                       cast_field<int>(t[3], "the rep of a point", "an int"),
                       cast_field<std::vector<std::string>>(t[4], "the free_locks of a point", "a list of str"),
                       cast_field<std::vector<std::string>>(t[5], "the private_lines of a point", "a list of str")};
  if (t.size() == 7) j.sample = cast_field<int>(t[6], "the sample of a point", "an int");
  return j;
}

std::vector<Job> jobs_of(const py::iterable& points) {
  std::vector<Job> out;
  for (const auto& p : points) out.push_back(job_of(p));
  return out;
}

py::tuple job_tuple(const models::PointSpec& p) {
  if (p.sample < 0) return py::make_tuple(p.strategy, p.variant, p.cpus, p.rep, p.free_locks, p.private_lines);
  return py::make_tuple(p.strategy, p.variant, p.cpus, p.rep, p.free_locks, p.private_lines, p.sample);
}

// Sample i of an uncertainty sweep's n (seeded `seed`) of a scenario, kept
// for the process: a worker (a process pool's, a Dask worker) is sent one
// (sample, point) job at a time, and building a sample re-fits its fitted
// constants (models/experiment/refit.h), which runs simulations. Keyed by
// the resolved scenario's hash, so the same key is the same scenario;
// cleared when it holds kMaxCachedSamples (a sample is a few kB; a caller
// keeps its shared_ptr through a clear).
std::shared_ptr<const models::Scenario> cached_sample(const models::Scenario& sc, int n, std::uint64_t seed, int i) {
  constexpr std::size_t kMaxCachedSamples = 4096;
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, std::uint64_t, int>, std::shared_ptr<const models::Scenario>> cache;
  const auto key = std::make_tuple(sc.resolved_hash, n, seed, i);
  {
    std::lock_guard<std::mutex> lk(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto made = std::make_shared<const models::Scenario>(models::sampled_scenario(sc, n, seed, i).scenario);
  std::lock_guard<std::mutex> lk(mutex);
  if (cache.size() >= kMaxCachedSamples) cache.clear();
  return cache.emplace(key, std::move(made)).first->second;
}

// Runs independent points on `jobs` workers (0: all cores), each seeded
// rep_seed(seed, rep) as in a sweep, after checking them as a sweep would
// (names, CPU counts, every program compiled).
std::vector<models::PointResult> run_points(const models::Scenario& sc, const std::vector<Job>& points,
                                            std::uint64_t seed, unsigned jobs, const py::object& progress,
                                            int uncertainty = 0) {
  std::vector<models::PointSpec> specs;
  std::map<std::pair<std::string, std::string>, std::vector<int>> groups;
  std::map<int, std::shared_ptr<const models::Scenario>> sampled;  // each sample's scenario (cached_sample)
  for (const auto& job : points) {
    const auto& [strategy, variant, cpus, rep, free_locks, private_lines] = job.point;
    if (rep < 0) throw std::invalid_argument("rep must be at least 0, not " + std::to_string(rep));
    models::PointSpec spec{strategy, cpus, rep, models::rep_seed(seed, rep), variant};
    spec.free_locks = free_locks;
    spec.private_lines = private_lines;
    if (job.sample >= 0) {
      if (job.sample >= uncertainty || rep != 0)
        throw std::invalid_argument("sample " + std::to_string(job.sample) + " (rep " + std::to_string(rep) +
                                    ") is not a job of a sweep with uncertainty=" + std::to_string(uncertainty));
      spec.sample = job.sample;
      if (!sampled.count(job.sample)) sampled.emplace(job.sample, cached_sample(sc, uncertainty, seed, job.sample));
    }
    specs.push_back(std::move(spec));
    auto& counts = groups[{strategy, variant}];  // each CPU count once: the plan refuses repeats
    if (std::find(counts.begin(), counts.end(), cpus) == counts.end()) counts.push_back(cpus);
  }
  for (const auto& [key, cpus] : groups) {
    if (!sc.has_variant(key.second))
      throw std::invalid_argument("scenario '" + sc.name + "' has no variant '" + key.second + "'");
    (void)models::plan_sweep(sc, make_spec({key.first}, {key.second}, cpus, 1, seed, 1));
  }
  Runner runner(progress);
  models::PointLimits limits;
  limits.cancelled = runner.cancel_check();
  std::vector<models::PointResult> results(specs.size());
  runner.run([&] {
    std::mutex mutex;
    std::size_t done = 0;
    sim::parallel_for(
        specs.size(), jobs == 0 ? sim::default_jobs() : jobs,
        [&](std::size_t i) {
          results[i] = models::run_point(specs[i].sample < 0 ? sc : *sampled.at(specs[i].sample), specs[i], limits);
          results[i].spec.sample = specs[i].sample;
          std::lock_guard<std::mutex> lk(mutex);
          const auto& p = results[i];
          runner.post(ProgressEvent{++done, specs.size(), p.spec.strategy, p.spec.variant, p.spec.cpus, p.spec.rep,
                                    p.ops_per_sec});
        },
        runner.cancel_check());
  });
  for (const auto& r : results)
    if (!models::finished(r))
      throw std::runtime_error("point " + r.spec.strategy + "/" + r.spec.variant + "@" + std::to_string(r.spec.cpus) +
                               " did not finish: " + (r.stop.empty() ? std::string("not run") : r.stop));
  return results;
}

// A sweep's curve from its points run elsewhere (a distributed sweep):
// each result placed as its replication of its curve point, as run_sweep
// places it; every planned point must be there exactly once.
std::vector<models::CurvePoint> curve_of(const models::Scenario& sc, const models::SweepSpec& spec,
                                         std::vector<models::PointResult> results) {
  auto plan = models::plan_sweep(sc, spec);
  const int n = spec.uncertainty;
  std::map<std::tuple<std::string, std::string, int>, models::CurvePoint*> index;
  for (auto& cp : plan.curve) {
    cp.reps.assign(static_cast<std::size_t>(plan.reps), models::PointResult{});
    cp.sample_rates.assign(static_cast<std::size_t>(n), std::nan(""));
    index[{cp.strategy, cp.variant, cp.cpus}] = &cp;
  }
  std::set<std::tuple<std::string, std::string, int, int, int>> seen;
  for (auto& r : results) {
    const auto it = index.find({r.spec.strategy, r.spec.variant, r.spec.cpus});
    if (it == index.end() || r.spec.rep < 0 || r.spec.rep >= plan.reps || r.spec.sample >= n ||
        (r.spec.sample >= 0 && r.spec.rep != 0) ||
        !seen.insert({r.spec.strategy, r.spec.variant, r.spec.cpus, r.spec.rep, r.spec.sample}).second)
      throw std::invalid_argument("point " + r.spec.strategy + "/" + r.spec.variant + "@" +
                                  std::to_string(r.spec.cpus) + " rep " + std::to_string(r.spec.rep) +
                                  (r.spec.sample >= 0 ? " sample " + std::to_string(r.spec.sample) : "") +
                                  " is not a point of this sweep, or is given twice");
    if (r.spec.sample >= 0) it->second->sample_rates[static_cast<std::size_t>(r.spec.sample)] = r.ops_per_sec;
    else it->second->reps[static_cast<std::size_t>(r.spec.rep)] = std::move(r);
  }
  const std::size_t expected = plan.points.size() + plan.curve.size() * static_cast<std::size_t>(n);
  if (seen.size() != expected)
    throw std::invalid_argument("the sweep has " + std::to_string(expected) + " points; " +
                                std::to_string(seen.size()) + " were given");
  std::vector<models::RangeSample> samples;  // the values drawn (a refused row's spare), as the sweep ran them
  const auto drawn = n > 0 ? models::draw_samples(sc, n, spec.seed) : std::vector<models::RangeSample>{};
  for (int i = 0; i < n; ++i) samples.push_back(models::sampled_scenario(sc, n, spec.seed, i, {}, false, &drawn).sample);
  const auto model_error = model_error_of(n);
  for (auto& cp : plan.curve) {
    models::summarize(cp);
    models::summarize_samples(cp, sc.ranges, samples);
    if (model_error) model_error->apply(cp);
  }
  return plan.curve;
}

// The `vfssim run --json` document of a sweep (with the curves' fits, as the CLI prints it).
// indent as nlohmann's dump: -1 one line, 2 as `vfssim run --json` prints it.
std::string document_json(const models::Scenario& sc, const models::SweepSpec& spec,
                          const std::vector<models::CurvePoint>& curve, std::optional<std::size_t> profile_top,
                          int indent = -1, bool sensitivity = false) {
  auto doc = report::run_json(sc, report::RunInfo{spec.seed, spec.reps, profile_top}, curve);
  doc["fits"] = report::fits_json(report::fit_curves(curve));
  if (spec.uncertainty > 0) doc["uncertainty"] = report::uncertainty_json(sc, spec.uncertainty);
  // The band's parts, as `vfssim run --uncertainty --json` gives them.
  if (const auto model_error = model_error_of(spec.uncertainty))
    for (std::size_t i = 0; i < curve.size(); ++i) {
      models::CurvePoint cp = curve[i];
      if (const auto parts = model_error->apply(cp)) {
        doc["points"][i]["band_parameters"] = parts->parameters.to_json();
        doc["points"][i]["band_model"] = parts->model.to_json();
      }
    }
  if (sensitivity)  // as `vfssim run --uncertainty-report`
    for (std::size_t i = 0; i < curve.size(); ++i) doc["points"][i]["sensitivity"] = report::sensitivity_json(curve[i]);
  return doc.dump(indent);
}

std::vector<models::CurveSample> samples(const std::vector<double>& cpus, const std::vector<double>& rates) {
  if (cpus.size() != rates.size())
    throw std::invalid_argument("cpus and throughput differ in length (" + std::to_string(cpus.size()) + " and " +
                                std::to_string(rates.size()) + ")");
  std::vector<models::CurveSample> pts;
  for (std::size_t i = 0; i < cpus.size(); ++i) pts.push_back(models::CurveSample{cpus[i], rates[i]});
  return pts;
}

int machine_cpus(const models::TopologySpec& m) {
  long n = 1;
  for (const auto& l : m.levels) n *= l.count;
  return static_cast<int>(n);
}

py::dict variant_info(const models::Scenario& sc, const std::string& name) {
  const models::Variant v = models::resolve_variant(sc, name);
  py::dict d;
  d["name"] = v.name;
  d["description"] = v.description;
  d["machine"] = v.machine_name.empty() ? v.machine.name : v.machine_name;
  d["machine_cpus"] = machine_cpus(v.machine);
  d["cpus"] = v.workload.cpus;
  d["loop"] = v.workload.loop;
  py::dict roles;  // role name -> its loop (empty without roles)
  for (const auto& r : v.workload.roles) roles[py::str(r.name)] = r.loop;
  d["roles"] = roles;
  d["tasks"] = v.workload.tasks == models::TaskKind::kThread ? "thread" : "process";
  d["placement"] = models::to_string(v.workload.placement);
  d["warmup_us"] = us(v.workload.warmup);
  d["duration_us"] = us(v.workload.duration);
  py::dict params;
  for (const auto& [k, p] : v.params) {
    switch (p.type) {
      case models::ParamValue::Type::kBool: params[k.c_str()] = p.flag; break;
      case models::ParamValue::Type::kNumber: params[k.c_str()] = p.number; break;
      case models::ParamValue::Type::kTime: params[k.c_str()] = sim::format_duration(p.time); break;
    }
  }
  d["params"] = params;
  return d;
}

py::list expectations(const models::Scenario& sc) {
  py::list out;
  auto ref = [](const models::Expectation::PointRef& p) {
    py::dict d;
    d["strategy"] = p.strategy;
    d["variant"] = p.variant;
    d["cpus"] = p.cpus;
    return d;
  };
  for (const auto& e : sc.expect) {
    py::dict d;
    d["figure"] = e.id;
    d["kind"] = e.kind;
    d["metric"] = e.metric;
    d["new"] = ref(e.new_point);
    d["base"] = e.kind == "value" ? py::object(py::none()) : py::object(ref(e.base_point));
    d["reported"] = e.reported;
    d["tolerance"] = e.tolerance;
    d["bound"] = e.bound;
    d["fitted"] = e.fitted;
    d["source"] = e.source;
    d["line"] = e.mark.line;
    out.append(d);
  }
  return out;
}

py::dict strategy_info(const models::Scenario& sc, const std::string& name) {
  const models::Strategy& s = sc.strategy(name);
  py::dict d;
  d["name"] = s.name;
  d["description"] = s.description;
  d["extends"] = s.extends;
  py::dict locks;
  for (const auto& [k, l] : s.locks) {
    py::dict x;
    x["kind"] = l.kind;
    x["scope"] = models::to_string(l.scope);
    x["line"] = l.mark.line;
    locks[k.c_str()] = x;
  }
  d["locks"] = locks;
  py::dict lines;
  for (const auto& [k, l] : s.lines) lines[k.c_str()] = models::to_string(l.scope);
  d["lines"] = lines;
  std::vector<std::string> ops;
  for (const auto& [k, o] : s.ops) ops.push_back(k);
  d["ops"] = ops;
  d["hz"] = s.hz;
  return d;
}

}  // namespace

PYBIND11_MODULE(_vfssim, m) {
  m.doc() =
      "Native core of vfssim: the discrete-event simulator of Linux VFS locking.\n\n"
      "Use the `vfssim` package (Scenario, Sweep, ...) rather than this module directly.";
  static py::exception<models::ScenarioError> scenario_error(m, "ScenarioError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const models::ScenarioError& e) {
      PyObject* type = scenario_error.ptr();
      py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(type, "s", e.what()));
      exc.attr("file") = e.mark().file;
      exc.attr("line") = e.mark().line;
      exc.attr("column") = e.mark().column;
      exc.attr("problem") = e.problem();
      exc.attr("expected") = e.expected();
      PyErr_SetObject(type, exc.ptr());
    }
  });

  py::class_<models::Scenario, std::shared_ptr<models::Scenario>>(
      m, "NativeScenario",
      "A scenario parsed and validated by the C++ loader (models::Scenario); immutable.\n"
      "Built by load_scenario_file() or load_scenario_string(); vfssim.Scenario keeps one.")
      .def_property_readonly("name", [](const models::Scenario& s) { return s.name; })
      .def_property_readonly("description", [](const models::Scenario& s) { return s.description; })
      .def_property_readonly("path", [](const models::Scenario& s) { return s.path; },
                             "the file it came from, or the name given to load_scenario_string")
      .def_property_readonly("text", [](const models::Scenario& s) { return s.text; }, "the YAML text loaded")
      .def_property_readonly("hash", [](const models::Scenario& s) { return s.hash; }, "fnv1a64 of the text, hex")
      .def_property_readonly("resolved_text", [](const models::Scenario& s) { return s.resolved_text; },
                             "the scenario resolved by the loader (YAML): machine presets inlined, `extends` applied,\n"
                             "every variant's parameters and CPU list spelled out; it loads back to the same simulations")
      .def_property_readonly("resolved_hash", [](const models::Scenario& s) { return s.resolved_hash; },
                             "fnv1a64 of resolved_text, hex")
      .def_property_readonly("warnings", [](const models::Scenario& s) { return s.warnings; },
                             "what the loader accepted but warns of, each 'FILE:LINE:COL: warning: ...'")
      .def_property_readonly("machine_name", [](const models::Scenario& s) { return s.machine_name; })
      .def_property_readonly("machine_cpus", [](const models::Scenario& s) { return machine_cpus(s.machine); })
      .def_property_readonly("strategies",
                             [](const models::Scenario& s) {
                               std::vector<std::string> v;
                               for (const auto& x : s.strategies) v.push_back(x.name);
                               return v;
                             },
                             "strategy names, in file order")
      .def_property_readonly("variants",
                             [](const models::Scenario& s) {
                               std::vector<std::string> v;
                               for (const auto& x : s.variants) v.push_back(x.name);
                               return v;
                             },
                             "variant names, 'default' first")
      .def("variant_info", &variant_info, py::arg("name") = "default",
           "The resolved variant: machine, CPU count, default CPU list, loop, parameter values.")
      .def("strategy_info", &strategy_info, py::arg("name"),
           "The resolved strategy (extends applied): locks {name: {kind, scope}}, lines {name: scope}, op names.")
      .def("expectations", &expectations, "The expect: figures as parsed by the loader (list of dicts).")
      .def("__repr__", [](const models::Scenario& s) {
        return "<NativeScenario '" + s.name + "' from " + s.path + ", hash " + s.hash + ">";
      })
      // Pickled as its resolved text (self-contained: presets inlined), with
      // the text, path and hash it was loaded from: a worker on another
      // machine, without the presets, rebuilds the same simulations.
      .def(py::pickle(
          [](const models::Scenario& s) { return py::make_tuple(s.resolved_text, s.text, s.path, s.hash); },
          [](const py::tuple& t) {
            if (t.size() != 4) throw std::invalid_argument("a pickled NativeScenario is a 4-tuple");
            const auto field = [&](std::size_t i, const char* name) {
              return cast_field<std::string>(t[i], std::string("the ") + name + " of a pickled NativeScenario", "a str");
            };
            auto sc = std::make_shared<models::Scenario>(
                models::load_scenario_string(field(0, "resolved text"), field(2, "path")));
            sc->text = field(1, "text");
            sc->path = field(2, "path");
            sc->hash = field(3, "hash");
            return sc;
          }));

  py::class_<models::PointResult, std::shared_ptr<models::PointResult>>(
      m, "NativePoint", "One simulated point's full result (models::PointResult), for find_bottleneck().")
      .def_property_readonly("strategy", [](const models::PointResult& p) { return p.spec.strategy; })
      .def_property_readonly("variant", [](const models::PointResult& p) { return p.spec.variant; })
      .def_property_readonly("cpus", [](const models::PointResult& p) { return p.spec.cpus; })
      .def_property_readonly("rep", [](const models::PointResult& p) { return p.spec.rep; })
      .def_property_readonly("ops_per_sec", [](const models::PointResult& p) { return p.ops_per_sec; })
      .def("__repr__", [](const models::PointResult& p) {
        return "<NativePoint " + p.spec.strategy + "/" + p.spec.variant + "@" + std::to_string(p.spec.cpus) + " rep " +
               std::to_string(p.spec.rep) + ">";
      })
      .def("to_dict", [](const models::PointResult& p) { return point_dict(p); },
           "The point's dict, as run_points() returns it.")
      // Pickled through the result schema (results/schema.h, pack/unpack).
      .def(py::pickle([](const models::PointResult& p) { return report::schema::pack(p).dump(); },
                      [](const std::string& text) {
                        return std::make_shared<models::PointResult>(
                            report::schema::unpack(nlohmann::json::parse(text)));
                      }));

  m.def(
      "sweep_plan",
      [](const ScenarioPtr& sc, const std::vector<std::string>& strategies, const std::vector<std::string>& variants,
         const std::vector<int>& cpus, int reps, std::uint64_t seed, int uncertainty) {
        const auto spec = make_spec(strategies, variants, cpus, reps, seed, 1, uncertainty);
        check_uncertainty(scenario_of(sc), uncertainty);
        const auto plan = models::plan_sweep(scenario_of(sc), spec);
        py::list out;
        for (const auto& p : plan.points) out.append(job_tuple(models::PointSpec{p.strategy, p.cpus, p.rep, 0, p.variant}));
        // The sample jobs after them, as run_sweep orders them: curve point, then sample.
        for (std::size_t c = 0; c < plan.curve.size(); ++c)
          for (int i = 0; i < uncertainty; ++i) {
            models::PointSpec p = plan.points[c * static_cast<std::size_t>(plan.reps)];
            p.free_locks.clear();
            p.private_lines.clear();
            p.sample = i;
            out.append(job_tuple(p));
          }
        return out;
      },
      py::arg("scenario"), py::arg("strategies") = std::vector<std::string>{},
      py::arg("variants") = std::vector<std::string>{}, py::arg("cpus") = std::vector<int>{}, py::arg("reps") = 1,
      py::arg("seed") = 1, py::arg("uncertainty") = 0,
      "The points a sweep runs, in order, as run_points() takes them (checked as sweep() checks them):\n"
      "what a distributed sweep sends to its workers. With uncertainty=N, then one job per curve point and\n"
      "sample: (strategy, variant, cpus, 0, [], [], sample).");
  m.def(
      "assemble_sweep",
      [](const ScenarioPtr& sc, const std::vector<std::string>& strategies, const std::vector<std::string>& variants,
         const std::vector<int>& cpus, int reps, std::uint64_t seed, const std::vector<NativePoint>& points,
         bool as_document, std::optional<std::size_t> profile_top, int indent, int uncertainty, bool sensitivity) -> py::object {
        const auto spec = make_spec(strategies, variants, cpus, reps, seed, 1, uncertainty);
        const auto curve = curve_of(scenario_of(sc), spec, unwrap(points));
        if (as_document) return py::str(document_json(scenario_of(sc), spec, curve, profile_top, indent, sensitivity));
        py::list out;
        for (const auto& cp : curve) out.append(curve_dict(cp));
        return out;
      },
      py::arg("scenario"), py::arg("strategies"), py::arg("variants"), py::arg("cpus"), py::arg("reps"),
      py::arg("seed"), py::arg("points"), py::arg("document") = false, py::arg("profile_top") = py::none(),
      py::arg("indent") = -1, py::arg("uncertainty") = 0, py::arg("sensitivity") = false,
      "The curve of a sweep from its points' results (every point of sweep_plan(), in any order): what\n"
      "sweep() returns, or with document=True the `vfssim run --json` document as text. The same bytes as a\n"
      "local sweep.");

  m.def(
      "find_bottleneck",
      [](const std::vector<NativePoint>& points) { return bottleneck_obj(report::find_bottleneck(unwrap(points))); },
      py::arg("points"),
      "The bottleneck over the replications of a point (results/review.h): the lock or line with the most\n"
      "CPU time synchronizing on it, as {name, kind, share}, or None when nothing synchronizes.");
  m.def(
      "next_bottlenecks",
      [](const ScenarioPtr& sc, const std::vector<std::vector<NativePoint>>& groups, unsigned jobs) {
        std::vector<std::vector<models::PointResult>> held;
        for (const auto& g : groups) held.push_back(unwrap(g));
        std::vector<const std::vector<models::PointResult>*> ptrs;
        for (const auto& g : held) ptrs.push_back(&g);
        std::vector<report::WhatIf> what_if;
        Runner runner{py::none()};
        runner.run([&] { what_if = report::next_bottlenecks(scenario_of(sc), ptrs, jobs); });
        py::list out;
        for (const auto& w : what_if) {
          py::dict d;
          d["bottleneck"] = bottleneck_obj(w.removed);
          d["next_bottleneck"] = bottleneck_obj(w.next);
          d["ops_per_sec_without"] = w.removed ? py::object(py::float_(w.ops_per_sec)) : py::object(py::none());
          out.append(d);
        }
        return out;
      },
      py::arg("scenario"), py::arg("groups"), py::arg("jobs") = 0u,
      "For each group (the replications of one point): its bottleneck, the point run again (same seeds)\n"
      "with it removed (a lock made free, a line private), that run's mean ops/s and its bottleneck\n"
      "(results/review.h, as `vfssim run --next-bottleneck`).");

  m.def(
      "load_scenario_string",
      [](const std::string& text, const std::string& name, const std::vector<std::string>& machine_dirs) {
        return std::make_shared<models::Scenario>(models::load_scenario_string(text, name, machine_dirs));
      },
      py::arg("text"), py::arg("name") = "<string>", py::arg("machine_dirs") = std::vector<std::string>{},
      "Parses and validates scenario YAML text; `name` stands for the file in error messages.\n"
      "Machine presets are looked up in machine_dirs, then beside `name`, $VFSSIM_MACHINES and the source tree.\n"
      "Raises ScenarioError (file, line, column, problem, expected).");
  m.def(
      "load_scenario_file",
      [](const std::string& path, const std::vector<std::string>& machine_dirs) {
        return std::make_shared<models::Scenario>(models::load_scenario_file(path, machine_dirs));
      },
      py::arg("path"), py::arg("machine_dirs") = std::vector<std::string>{},
      "Loads and validates a scenario file. Raises ScenarioError.");
  m.def("find_machine_file", &models::find_machine_file, py::arg("name"), py::arg("dirs") = std::vector<std::string>{},
        "Path of the machine preset NAME (dirs, $VFSSIM_MACHINES, the source tree's scenarios/machines), or ''.");
  m.def("lock_kinds", &models::lock_kinds, "The lock kinds a scenario may declare.");
  m.def("scenarios_dir", &models::scenarios_dir,
        "The directory of the scenarios that come with vfssim (seed/, validation/, machines/): "
        "$VFSSIM_SCENARIOS, the installed copy, or the source tree.");
  m.def("rep_seed", &models::rep_seed, py::arg("seed"), py::arg("rep"),
        "The seed of replication `rep` of a run seeded `seed`.");
  m.def(
      "score_figure",
      [](const std::string& kind, double reported, double tolerance, const std::string& bound, double predicted) {
        const auto s = report::score_figure(kind, reported, tolerance, bound, predicted);
        py::dict d;
        d["error"] = s.error;
        d["factor"] = s.factor;
        d["within"] = s.within;
        d["direction_ok"] = s.direction_ok ? py::object(py::bool_(*s.direction_ok)) : py::object(py::none());
        return d;
      },
      py::arg("kind"), py::arg("reported"), py::arg("tolerance"), py::arg("bound"), py::arg("predicted"),
      "Scores one expected figure as `vfssim validate` does (results/score.h): {error, within, direction_ok}.");

  m.def(
      "validate",
      [](const ScenarioPtr& sc, std::uint64_t seed, int reps, unsigned jobs, py::object progress) {
        if (!sc) throw std::invalid_argument("validate: the scenario is None");
        if (reps < 1) throw std::invalid_argument("reps must be at least 1, not " + std::to_string(reps));
        const report::Validation validation({sc.get()});
        if (const auto conflicts = validation.fit_conflicts(); !conflicts.empty())
          throw std::invalid_argument("one fitted figure per configuration: " + conflicts.front());
        std::vector<Job> specs;
        for (const auto& p : validation.points())
          for (int r = 0; r < reps; ++r)
            specs.push_back(Job{PointTuple{p.ref.strategy, p.ref.variant, p.ref.cpus, r, {}, {}}});
        auto results = run_points(scenario_of(sc), specs, seed, jobs, progress);
        std::vector<std::vector<models::PointResult>> grouped(validation.points().size());
        for (std::size_t i = 0; i < results.size(); ++i)
          grouped[i / static_cast<std::size_t>(reps)].push_back(std::move(results[i]));
        const auto figures = validation.score(grouped);
        nlohmann::json figs = nlohmann::json::array();
        for (const auto& f : figures) figs.push_back(validation.figure_json(f));
        return nlohmann::json{{"figures", figs}, {"summary", report::Validation::summarize(figures, std::nullopt).to_json()}}
            .dump();
      },
      py::arg("scenario"), py::arg("seed") = 1, py::arg("reps") = 1, py::arg("jobs") = 0, py::arg("progress") = py::none(),
      "Scores the scenario's expected figures as `vfssim validate --json` does (results/validation.h): that JSON\n"
      "document (figures and summary) as text.");
  m.def(
      "sweep",
      [](const ScenarioPtr& sc, const std::vector<std::string>& strategies, const std::vector<std::string>& variants,
         const std::vector<int>& cpus, int reps, std::uint64_t seed, unsigned jobs, py::object progress,
         int uncertainty) {
        const auto spec = make_spec(strategies, variants, cpus, reps, seed, jobs, uncertainty);
        check_uncertainty(scenario_of(sc), uncertainty);
        const auto curve = sweep_curve(scenario_of(sc), spec, progress);
        py::list out;
        for (const auto& cp : curve) out.append(curve_dict(cp));
        return out;
      },
      py::arg("scenario"), py::arg("strategies") = std::vector<std::string>{},
      py::arg("variants") = std::vector<std::string>{}, py::arg("cpus") = std::vector<int>{}, py::arg("reps") = 1,
      py::arg("seed") = 1, py::arg("jobs") = 0u, py::arg("progress") = py::none(), py::arg("uncertainty") = 0,
      "Runs every (strategy, variant, cpus, rep) point on `jobs` workers (0: all cores) with the GIL released.\n"
      "Returns one dict per curve point (strategy, variant, cpus order) with its replications' full results.\n"
      "progress(done, total, info) is called on this thread once per finished point; an exception in it\n"
      "(or Ctrl-C) cancels the sweep and is raised once the workers have stopped.");
  m.def(
      "run_point",
      [](const ScenarioPtr& sc, const std::string& strategy, int cpus, const std::string& variant, std::uint64_t seed,
         int rep, const std::vector<std::string>& free_locks, const std::vector<std::string>& private_lines) {
        const auto results = run_points(scenario_of(sc), {Job{PointTuple{strategy, variant, cpus, rep, free_locks, private_lines}}},
                                        seed, 1, py::none());
        return point_dict(results.front());
      },
      py::arg("scenario"), py::arg("strategy"), py::arg("cpus"), py::arg("variant") = "default", py::arg("seed") = 1,
      py::arg("rep") = 0, py::arg("free_locks") = std::vector<std::string>{},
      py::arg("private_lines") = std::vector<std::string>{},
      "Runs one point (replication `rep` of a run seeded `seed`: the same numbers as that point of a sweep)\n"
      "with the GIL released. free_locks become free (no cost, no exclusion), private_lines private per task.");
  m.def(
      "run_points",
      [](const ScenarioPtr& sc, const py::iterable& points, std::uint64_t seed, unsigned jobs, py::object progress,
         int uncertainty) {
        const auto results = run_points(scenario_of(sc), jobs_of(points), seed, jobs, progress, uncertainty);
        py::list out;
        for (const auto& r : results) out.append(point_dict(r));
        return out;
      },
      py::arg("scenario"), py::arg("points"), py::arg("seed") = 1, py::arg("jobs") = 0u,
      py::arg("progress") = py::none(), py::arg("uncertainty") = 0,
      "Runs independent points [(strategy, variant, cpus, rep, free_locks, private_lines), ...] on `jobs`\n"
      "workers (0: all cores), each seeded as replication `rep` of a sweep seeded `seed`; returns their\n"
      "results in order. Progress and cancellation as in sweep().");
  m.def(
      "document",
      [](const ScenarioPtr& sc, const std::vector<int>& cpus, std::uint64_t seed, int reps,
         const std::vector<std::string>& strategies, unsigned jobs, const std::vector<std::string>& variants,
         py::object progress, std::optional<std::size_t> profile_top, int uncertainty, bool sensitivity) {
        const auto spec = make_spec(strategies, variants, cpus, reps, seed, jobs, uncertainty);
        check_uncertainty(scenario_of(sc), uncertainty);
        const auto curve = sweep_curve(scenario_of(sc), spec, progress);
        return document_json(scenario_of(sc), spec, curve, profile_top, -1, sensitivity);
      },
      py::arg("scenario"), py::arg("cpus") = std::vector<int>{}, py::arg("seed") = 1, py::arg("reps") = 1,
      py::arg("strategies") = std::vector<std::string>{}, py::arg("jobs") = 0u,
      py::arg("variants") = std::vector<std::string>{}, py::arg("progress") = py::none(),
      py::arg("profile_top") = py::none(), py::arg("uncertainty") = 0, py::arg("sensitivity") = false,
      "Runs a sweep; returns the `vfssim run --json` document as text (profile_top: as --json-profile-top;\n"
      "None: every profile entry).");
  m.def(
      "run_json",
      [](const std::string& path, const std::vector<int>& cpus, std::uint64_t seed, int reps,
         const std::vector<std::string>& strategies, unsigned jobs, const std::vector<std::string>& variants,
         std::optional<std::size_t> profile_top) {
        const models::Scenario sc = models::load_scenario_file(path);
        const auto spec = make_spec(strategies, variants, cpus, reps, seed, jobs);
        const auto curve = sweep_curve(sc, spec, py::none());
        return document_json(sc, spec, curve, profile_top);
      },
      py::arg("path"), py::arg("cpus") = std::vector<int>{}, py::arg("seed") = 1, py::arg("reps") = 1,
      py::arg("strategies") = std::vector<std::string>{}, py::arg("jobs") = 0u,
      py::arg("variants") = std::vector<std::string>{}, py::arg("profile_top") = py::none(),
      "Runs a scenario file's sweep; returns the `vfssim run --json` document as text.");

  m.def(
      "fit_usl",
      [](const std::vector<double>& cpus, const std::vector<double>& rates) {
        const models::UslFit f = models::fit_usl(samples(cpus, rates));
        py::dict d;
        d["sigma"] = f.sigma;
        d["kappa"] = f.kappa;
        d["lambda"] = f.lambda;
        d["peak_cpus"] = f.peak_cpus();
        return d;
      },
      py::arg("cpus"), py::arg("throughput"),
      "USL fit (models/experiment/fits.h): {sigma, kappa, lambda, peak_cpus}; sigma, kappa >= 0.");
  m.def(
      "fit_amdahl",
      [](const std::vector<double>& cpus, const std::vector<double>& rates) {
        const models::AmdahlFit f = models::fit_amdahl(samples(cpus, rates));
        py::dict d;
        d["sigma"] = f.sigma;
        d["lambda"] = f.lambda;
        return d;
      },
      py::arg("cpus"), py::arg("throughput"), "Amdahl fit (models/experiment/fits.h): {sigma, lambda}; sigma >= 0.");

  m.def(
      "result_schema",
      [] { return py::module_::import("json").attr("loads")(report::schema::describe().dump()); },
      "The result schema (results/schema.h): per record type ('point', 'lock_stat', 'lines', 'seqcounts',\n"
      "'pools', 'profile', 'rcu', 'roles', 'tasks', 'curve') its SQLite table, what a row is, and its fields in order, each\n"
      "{key (JSON and Python), name, type, unit, description, column (SQLite; None: not stored), derived}.");

  m.attr("__version__") = VFSSIM_VERSION;
  m.attr("NO_DIRECTION") = report::kNoDirection;
}
