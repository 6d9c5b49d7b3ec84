// `vfssim probe`: what a run is asked (Options) and what it measured
// (Results), which the writers (output.h) turn into files.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/common.h"
#include "probe/line.h"
#include "probe/lock_rates.h"
#include "probe/topology.h"

namespace vfssim::probe {

struct Options {
  std::string out;
  std::vector<int> cpus;
  bool cpus_given = false;
  double seconds = 20;
  bool quiet = false;
};

struct Results {
  std::string host, model, date, when;
  bool vm = false;
  Model topo;
  std::vector<LocalCosts> local;
  Caches caches;  // of the first probed CPU
  LlcHit llc;     // bytes == 0: not measured
  double local_hit = 0, local_atomic = 0, local_fadd = 0;
  std::vector<std::vector<Pair>> pairs;  // [model a][model b]
  std::vector<Contended> contended;
  Loops loops;
  Stat think_all;  // the think loop on all CPUs at once
  std::map<std::string, Loss> preempted;  // what other tasks took, per phase
  std::map<std::string, int> retries;     // points measured again, per phase
  std::string unstable;                   // why the matrix looks unstable, or empty
  std::vector<int> counts;  // thread counts of (b) and (c)
  double lock_point_ns = 0;  // time budget of one lock point
  std::map<std::string, std::vector<LockPoint>> locks;
  double wall = 0;
};

}  // namespace vfssim::probe
