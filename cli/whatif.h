// What-ifs from the command line (run, compare): --set KEY=VALUE edits the
// scenario before the loader checks it (models::Setting), --free LOCK and
// --private LINE remove a lock or a line's sharing in every strategy that
// has it (the --next-bottleneck what-ifs, models::WhatIfs).
#pragma once

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

namespace vfssim::report {

struct WhatIfOptions {
  std::vector<std::string> set, free_locks, private_lines;
  bool empty() const { return set.empty() && free_locks.empty() && private_lines.empty(); }
};

inline void add_what_if_options(boost::program_options::options_description& opts, WhatIfOptions& o) {
  namespace po = boost::program_options;
  opts.add_options()
    ("set", po::value(&o.set)->composing(),
     "KEY=VALUE (repeatable): set a parameter (NAME=VALUE) or a strategy's field "
     "(STRATEGY.locks.LOCK.kind=mcs) before the scenario is checked")
    ("free", po::value(&o.free_locks)->composing(),
     "LOCK (repeatable): make the lock free (no cost, no exclusion) in every strategy that has it")
    ("private", po::value(&o.private_lines)->composing(),
     "LINE (repeatable): make the cache line private to each task in every strategy that has it");
}

inline std::vector<models::Setting> settings_of(const WhatIfOptions& o) {
  std::vector<models::Setting> out;
  for (const auto& s : o.set) out.push_back(models::Setting{s, "--set"});
  return out;
}

// The --free and --private names, each checked against the strategies run:
// a name none of them declares is bad input naming its flag.
inline models::WhatIfs what_ifs_of(const WhatIfOptions& o, const models::Scenario& sc,
                                   const std::vector<std::string>& strategies) {
  models::WhatIfs w{o.free_locks, o.private_lines};
  for (const auto& n : o.free_locks) try {
      models::check_what_ifs(sc, strategies, models::WhatIfs{{n}, {}});
    } catch (const std::invalid_argument& e) {
      throw boost::program_options::error("--free '" + n + "': " + e.what());
    }
  for (const auto& n : o.private_lines) try {
      models::check_what_ifs(sc, strategies, models::WhatIfs{{}, {n}});
    } catch (const std::invalid_argument& e) {
      throw boost::program_options::error("--private '" + n + "': " + e.what());
    }
  return w;
}

// "--set nr_files=4, --free files_lock": the what-ifs a header names ("" for none).
inline std::string describe_what_ifs(const WhatIfOptions& o) {
  std::string out;
  for (const auto& s : o.set) out += (out.empty() ? "" : ", ") + std::string("--set ") + s;
  for (const auto& s : o.free_locks) out += (out.empty() ? "" : ", ") + std::string("--free ") + s;
  for (const auto& s : o.private_lines) out += (out.empty() ? "" : ", ") + std::string("--private ") + s;
  return out;
}

// {"set": [...], "free": [...], "private": [...]}: the what-ifs in JSON output.
inline nlohmann::json what_ifs_json(const WhatIfOptions& o) {
  return {{"set", o.set}, {"free", o.free_locks}, {"private", o.private_lines}};
}

}  // namespace vfssim::report
