// `vfssim run` made robust: per-point budgets, a sweep whose every curve
// point is committed as it finishes, SIGINT/SIGTERM that stop launching
// points and keep what is done, and --resume to complete a run.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "results/discrepancy.h"
#include "results/store.h"
#include "models/experiment/experiment.h"

namespace vfssim::report {

// --max-events and --max-wall, as given (checked by point_limits).
struct BudgetOptions {
  std::string max_events = "2e9";  // engine events per point; 0: no limit
  double max_wall_seconds = 600;   // wall-clock seconds per point; 0: no limit
};

struct DurableOptions {
  BudgetOptions budget;
  bool resume = false;
  bool quiet = false;               // no notes on stderr (resuming, ...)
  bool progress = false;            // draw progress (cli/progress.h decides)
  std::string db;                  // "" stores nothing
  std::vector<std::string> args;   // the command line after `run`, stored with the run
  // --uncertainty: widens each band by the model's error before the point
  // is stored (null: the parameters' band alone).
  const ModelError* model_error = nullptr;
};

// --max-events, --max-wall, --resume.
void add_durable_options(boost::program_options::options_description& opts, DurableOptions& o);

// --max-events and --max-wall for commands that run points directly
// (validate, compare), and the limits they mean; bad values raise
// boost::program_options::error.
void add_budget_options(boost::program_options::options_description& opts, BudgetOptions& budget);
models::PointLimits point_limits(const BudgetOptions& budget);
// Prints every point that ran out of its budget and how to raise it, for
// `command`; true if one did (the command then exits 1 and uses nothing).
bool report_budget_stops(const std::vector<models::PointResult>& results, const std::string& command,
                         std::ostream& err);

struct SweepOutcome {
  std::vector<models::CurvePoint> curve;
  std::unique_ptr<Store> store;  // null with --db ''
  std::int64_t run_id = 0;
  std::string db;
  std::vector<std::string> args;
  std::size_t stored = 0;        // curve points in the database for this run, old and new
  bool was_done = false;         // --resume found the run already complete (status done)
  int signal = 0;                // SIGINT or SIGTERM that interrupted the sweep, else 0
  double wall = 0;               // this session's wall-clock seconds
  // Every curve point ran to its end (or deadlocked) and nothing interrupted the sweep.
  bool complete() const;
};

// Checks the sweep (bad input throws before the database is opened), opens
// the store, finds the run to resume, and runs the sweep committing each
// curve point as its last replication finishes.
SweepOutcome run_durable_sweep(const models::Scenario& sc, const models::SweepSpec& spec, const DurableOptions& o);

// For a sweep that is not complete(): says what stopped it, what is stored
// and how to resume; marks the run interrupted or failed. Returns the exit
// status: 128 + the signal, or 1.
int finish_incomplete(SweepOutcome& out, std::ostream& err);

// For a complete sweep: prints every deadlocked point's stop. Returns the
// exit status: 1 if a point deadlocked, else 0.
int report_deadlocks(const SweepOutcome& out, std::ostream& err);

}  // namespace vfssim::report
